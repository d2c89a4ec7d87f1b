"""Training the second-stage rerankers on (query, tool, label) pairs.

* Cross-encoder: the BERT under a sentence-transformers ``CrossEncoder`` (one logit) fine-tuned with
  binary cross-entropy, AdamW, linear warm-up and decay. A plain torch loop: sentence-transformers'
  own trainer needs the ``datasets`` package and adds nothing here.
* Tool-Rank: LoRA (peft) on a causal LM, Tool-DE's recipe: r = 32, α = 64, dropout 0.1 on every
  attention and MLP projection, one epoch, cross-entropy over the ``false`` / ``true`` next-token
  logits of the judging prompt (:class:`~toolsift.ranker.rerankers.ToolRankReranker`).

CUDA when present, CPU otherwise. The caller decides the pairs (positives from the qrels, hard
negatives from the first stage) and saves the result with
:class:`~toolsift.ranker.reranker_artifact.RerankerArtifact`.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

import torch

from toolsift.errors import ConfigError
from toolsift.ranker.rerankers import CrossEncoderReranker, RerankerKind, ToolRankReranker, load_causal_lm

__all__ = [
    "RerankPair",
    "RerankerTrainingConfig",
    "RerankerTrainingOutcome",
    "train_cross_encoder",
    "train_tool_rank",
    "LORA_TARGETS",
    "train_steps",
]

T = TypeVar("T")

#: The projections LoRA adapts (Llama/Qwen/SmolLM naming).
LORA_TARGETS: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass(frozen=True)
class RerankPair:
    """One training example: the request, a tool's reranker text, and whether the tool is relevant."""

    query: str
    document: str
    label: int


@dataclass(frozen=True)
class RerankerTrainingConfig:
    """How a reranker is trained (recorded in its artifact).

    Args:
        kind: ``cross-encoder`` or ``tool-rank``.
        epochs: passes over the pairs (Tool-DE: one).
        learning_rate: default 3e-5 for the cross-encoder, 2e-4 for LoRA.
        batch_size: pairs per optimiser step.
        max_length: token budget per pair.
        lora_r, lora_alpha, lora_dropout: Tool-DE's LoRA settings.
        negatives: hard negatives per training query (the caller's sampling).
        rerank_top: M, the candidates the trained reranker rescores.
        device: ``auto`` (CUDA when present), ``cpu`` or ``cuda``.
    """

    kind: RerankerKind = "cross-encoder"
    epochs: int = 1
    learning_rate: float | None = None
    batch_size: int = 16
    max_length: int = 256
    lora_r: int = 32
    lora_alpha: int = 64
    lora_dropout: float = 0.1
    negatives: int = 7
    rerank_top: int = 20
    warmup: float = 0.1
    seed: int = 42
    device: str = "auto"

    @property
    def lr(self) -> float:
        if self.learning_rate is not None:
            return self.learning_rate
        return 3e-5 if self.kind == "cross-encoder" else 2e-4

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "learning_rate": self.lr}


@dataclass(frozen=True)
class RerankerTrainingOutcome:
    """The trained reranker (ready to score) and how training went."""

    reranker: CrossEncoderReranker | ToolRankReranker
    pairs: int
    positives: int
    epoch_losses: list[float]
    seconds: float
    device: str


def _warmup_decay(optimiser: torch.optim.Optimizer, steps: int, warmup: float) -> torch.optim.lr_scheduler.LambdaLR:
    """Linear warm-up over the first ``warmup`` share of ``steps``, then linear decay to 0."""
    warm = max(1, int(steps * warmup))

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return max(0.0, (steps - step) / max(1, steps - warm))

    return torch.optim.lr_scheduler.LambdaLR(optimiser, factor)


def _batches(pairs: Sequence[RerankPair], size: int, rng: random.Random) -> list[list[RerankPair]]:
    order = list(pairs)
    rng.shuffle(order)
    return [order[i : i + size] for i in range(0, len(order), size)]


def _check(pairs: Sequence[RerankPair]) -> None:
    if not pairs:
        raise ConfigError("reranker training: no (query, tool) pairs; are the qrels and candidates empty?")
    if not any(p.label for p in pairs) or all(p.label for p in pairs):
        raise ConfigError("reranker training needs both relevant and irrelevant pairs")


def train_steps(
    parameters: list[torch.nn.Parameter],
    batches: Callable[[], Sequence[Sequence[T]]],
    loss_of: Callable[[Sequence[T]], torch.Tensor],
    *,
    epochs: int,
    steps: int,
    learning_rate: float,
    warmup: float,
    progress: Callable[[str, int, int], None] | None,
    label: str,
) -> list[float]:
    """The training loop the rerankers and the encoder share: AdamW (weight decay 0.01) over ``epochs``
    passes of ``batches()`` (called once per epoch), warm-up then linear decay over ``steps``, gradients
    clipped at 1.0; returns each epoch's mean loss. The caller seeds torch and its batches' RNG."""
    optimiser = torch.optim.AdamW(parameters, lr=learning_rate, weight_decay=0.01)
    scheduler = _warmup_decay(optimiser, steps, warmup)
    losses: list[float] = []
    done = 0
    for _ in range(epochs):
        total, count = 0.0, 0
        for batch in batches():
            loss = loss_of(batch)
            optimiser.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            torch.nn.utils.clip_grad_norm_(parameters, 1.0)
            optimiser.step()
            scheduler.step()
            total += float(loss.detach()) * len(batch)
            count += len(batch)
            done += 1
            if progress:
                progress(label, done, steps)
        losses.append(total / max(count, 1))
    return losses


def _loop(
    parameters: list[torch.nn.Parameter],
    pairs: Sequence[RerankPair],
    config: RerankerTrainingConfig,
    loss_of: Callable[[Sequence[RerankPair]], torch.Tensor],
    progress: Callable[[str, int, int], None] | None,
) -> list[float]:
    rng = random.Random(config.seed)
    torch.manual_seed(config.seed)
    return train_steps(parameters, lambda: _batches(pairs, config.batch_size, rng), loss_of, epochs=config.epochs,
                       steps=config.epochs * math.ceil(len(pairs) / config.batch_size), learning_rate=config.lr,
                       warmup=config.warmup, progress=progress, label="reranker training steps")


def train_cross_encoder(
    base_model: str | Path,
    pairs: Sequence[RerankPair],
    config: RerankerTrainingConfig = RerankerTrainingConfig(),
    *,
    progress: Callable[[str, int, int], None] | None = None,
) -> RerankerTrainingOutcome:
    """Fine-tune a cross-encoder from ``base_model`` (a local BERT-style folder) on ``pairs``."""
    _check(pairs)
    started = time.perf_counter()
    torch.manual_seed(config.seed)  # the new classification head is initialised from torch's RNG
    reranker = CrossEncoderReranker(base_model, device=config.device, max_length=config.max_length,
                                    batch_size=max(32, config.batch_size))
    model, tokenizer, device = reranker.model.model, reranker.model.tokenizer, reranker.device
    model.train()
    bce = torch.nn.BCEWithLogitsLoss()

    def loss_of(batch: Sequence[RerankPair]) -> torch.Tensor:
        enc = tokenizer([p.query for p in batch], [p.document for p in batch], padding=True, truncation="longest_first",
                        max_length=config.max_length, return_tensors="pt").to(device)
        logits = model(**enc).logits.view(-1).float()
        loss: torch.Tensor = bce(logits, torch.tensor([float(p.label) for p in batch], device=device))
        return loss

    losses = _loop([p for p in model.parameters() if p.requires_grad], pairs, config, loss_of, progress)
    model.eval()
    return RerankerTrainingOutcome(reranker, len(pairs), sum(p.label for p in pairs), losses,
                                   time.perf_counter() - started, str(device))


def train_tool_rank(
    base_model: str | Path,
    pairs: Sequence[RerankPair],
    config: RerankerTrainingConfig = RerankerTrainingConfig(kind="tool-rank", max_length=384),
    *,
    gguf_file: str | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> RerankerTrainingOutcome:
    """LoRA-tune a causal LM as Tool-Rank on ``pairs``; the returned reranker holds the peft model."""
    from peft import LoraConfig, get_peft_model

    _check(pairs)
    started = time.perf_counter()
    model, tokenizer = load_causal_lm(base_model, gguf_file=gguf_file, device=config.device)
    present = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
    targets = [t for t in LORA_TARGETS if t in present]
    if not targets:
        raise ConfigError(f"reranker training: {base_model} has none of the LoRA target modules {list(LORA_TARGETS)}")
    lora = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                      target_modules=targets, task_type="CAUSAL_LM")
    torch.manual_seed(config.seed)  # LoRA's A matrices are initialised from torch's RNG
    peft_model = get_peft_model(model, lora)
    reranker = ToolRankReranker(peft_model, tokenizer, max_length=config.max_length,
                                batch_size=max(8, config.batch_size))
    peft_model.train()
    ce = torch.nn.CrossEntropyLoss()
    device = reranker.device

    def loss_of(batch: Sequence[RerankPair]) -> torch.Tensor:
        two = reranker.answer_logits(reranker.encode([(p.query, p.document) for p in batch]))
        loss: torch.Tensor = ce(two, torch.tensor([p.label for p in batch], device=device))
        return loss

    losses = _loop([p for p in peft_model.parameters() if p.requires_grad], pairs, config, loss_of, progress)
    peft_model.eval()
    return RerankerTrainingOutcome(reranker, len(pairs), sum(p.label for p in pairs), losses,
                                   time.perf_counter() - started, str(device))
