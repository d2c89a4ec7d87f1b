"""Options shared by ``toolsift eval --reranker`` and ``toolsift train reranker``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

__all__ = ["RerankerChoice", "reranker_training_options"]


@dataclass(frozen=True)
class RerankerChoice:
    """The reranker to train: its recipe, and the local base model (a folder, or a GGUF file)."""

    config: Any  # RerankerTrainingConfig, imported lazily to keep --help fast
    base_model: Path
    gguf_file: str | None


def _resolve(kind: str, base: Path | None) -> tuple[Path, str | None]:
    if base is None:
        if kind == "cross-encoder":
            from toolsift.ranker.rerankers import bundled_minilm_path

            return bundled_minilm_path(), None
        from toolsift.llm.server import bundled_smollm2_path

        gguf = bundled_smollm2_path()
        return gguf.parent, gguf.name
    if base.is_file() and base.suffix == ".gguf":
        return base.parent, base.name
    return base, None


def reranker_training_options(*, required: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Adds the reranker options; the command receives ``reranker: RerankerChoice | None``."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @click.option("--reranker", "reranker_kind", type=click.Choice(["cross-encoder", "tool-rank"]),
                      required=required, default="cross-encoder" if required else None,
                      show_default=required,
                      help="Train a second-stage reranker on top of MFTR: a cross-encoder (sentence-transformers) "
                           "or Tool-Rank (LoRA on a causal LM, P(true) from the true/false logits).")
        @click.option("--reranker-base", type=click.Path(exists=True, path_type=Path),
                      help="Local model to start from. Default: the bundled all-MiniLM-L6-v2 BERT (cross-encoder) "
                           "or the bundled SmolLM2-135M-Instruct GGUF (tool-rank).")
        @click.option("--rerank-top", type=click.IntRange(1, 1000), default=20, show_default=True,
                      help="M: how many of MFTR's best the reranker rescores.")
        @click.option("--reranker-epochs", type=click.IntRange(1, 100), default=1, show_default=True)
        @click.option("--reranker-negatives", type=click.IntRange(1, 1000), default=7, show_default=True,
                      help="MFTR's top wrong tools per training query.")
        @click.option("--reranker-lr", type=float, help="Learning rate (default 3e-5 cross-encoder, 2e-4 LoRA).")
        @click.option("--reranker-batch-size", type=click.IntRange(1, 4096), default=16, show_default=True)
        @click.option("--reranker-max-length", type=click.IntRange(32, 8192),
                      help="Token budget per (query, tool) pair (default 256 cross-encoder, 384 tool-rank).")
        @click.option("--reranker-device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True)
        @functools.wraps(command)
        def wrapper(*args: Any, reranker_kind: str | None, reranker_base: Path | None, rerank_top: int,
                    reranker_epochs: int, reranker_negatives: int, reranker_lr: float | None,
                    reranker_batch_size: int, reranker_max_length: int | None, reranker_device: str,
                    **kwargs: Any) -> Any:
            choice = None
            if reranker_kind is not None:
                from toolsift.ranker.reranker_training import RerankerTrainingConfig

                base, gguf = _resolve(reranker_kind, reranker_base)
                config = RerankerTrainingConfig(
                    kind=reranker_kind,  # type: ignore[arg-type]
                    epochs=reranker_epochs,
                    learning_rate=reranker_lr,
                    batch_size=reranker_batch_size,
                    max_length=reranker_max_length or (256 if reranker_kind == "cross-encoder" else 384),
                    negatives=reranker_negatives,
                    rerank_top=rerank_top,
                    device=reranker_device,
                )
                choice = RerankerChoice(config, base, gguf)
            return command(*args, reranker=choice, **kwargs)

        return wrapper

    return decorate
