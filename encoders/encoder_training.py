"""Tool-Embed: fine-tuning the sentence encoder as a tool retriever (Tool-DE, section 2.3).

InfoNCE over a batch: each request is scored against every tool text in the batch — its own tool,
the other requests' tools (in-batch negatives, "tools from other queries"), and one hard negative per
request where the data has them (a tool of the same candidate list or toolkit, not gold), else a
random tool of the catalog. Cosine similarity times ``scale`` (sentence-transformers'
MultipleNegativesRankingLoss: 20, i.e. a temperature of 0.05) goes through a softmax whose target is
the request's own tool. A column that is gold for the request by another pair (the request has
several tools, or two requests share one) is masked out: it is not a negative.

AdamW, linear warm-up and decay, one epoch by default (Tool-DE: one), gradient clipping at 1.0. A plain
torch loop on the sentence-transformers model, the rerankers' own (:func:`.reranker_training.train_steps`).
CUDA when present, CPU otherwise.

Every weight is tuned by default. With ``lora_rank`` > 0 only LoRA adapters on the attention and
feed-forward projections are (peft; the word embeddings and the base weights stay as they are): the
adapter is a few MB where the model is 87, so it can ship inside the package, and the returned model
has it merged in (the same arithmetic as a full model at serving time).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from toolsift.errors import ConfigError
from toolsift.ranker.reranker_training import train_steps

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = ["LORA_TARGETS", "EmbedExample", "EmbedderTrainingConfig", "EmbedderTrainingOutcome", "train_embedder",
           "infonce_loss"]


#: The BERT projections a LoRA adapter is put on: attention (query, key, value, output) and feed-forward.
LORA_TARGETS: tuple[str, ...] = ("query", "key", "value", "dense")


@dataclass(frozen=True)
class EmbedExample:
    """One training example: a request, its tool's text, and a negative tool text.

    ``gold`` holds every tool id that is relevant to the request (masked when another example's tool
    in the batch is one of them); ``tool_id`` and ``negative_id`` identify the two texts.
    """

    query: str
    positive: str
    tool_id: str
    negative: str
    negative_id: str
    gold: frozenset[str]


@dataclass(frozen=True)
class EmbedderTrainingConfig:
    """How the encoder is trained (recorded in its artifact).

    Args:
        epochs: passes over the examples (Tool-DE: one).
        learning_rate: AdamW's peak rate.
        batch_size: requests per step (each brings a positive and a negative text).
        scale: the cosine similarities' multiplier (1 / temperature).
        max_length: token budget per text (the model's own when None).
        warmup: share of the steps spent warming up.
        seed: for the order of the examples.
        device: ``auto`` (CUDA when present), ``cpu`` or ``cuda``.
        lora_rank: 0 tunes every weight; r > 0 tunes LoRA adapters of rank r only.
        lora_alpha: LoRA's scaling numerator (default 2 r); lora_dropout: on the adapters' input.
    """

    epochs: int = 1
    learning_rate: float = 5e-5
    batch_size: int = 32
    scale: float = 20.0
    max_length: int | None = None
    warmup: float = 0.1
    seed: int = 42
    device: str = "auto"
    lora_rank: int = 0
    lora_alpha: int | None = None
    lora_dropout: float = 0.1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class EmbedderTrainingOutcome:
    """The trained encoder (adapters merged in) and how training went; ``adapter_dir``: the LoRA
    adapter alone, saved by peft (None when every weight was tuned)."""

    model: SentenceTransformer
    examples: int
    steps: int
    epoch_losses: list[float]
    seconds: float
    device: str
    adapter_dir: Path | None = None


def infonce_loss(queries: torch.Tensor, documents: torch.Tensor, mask: torch.Tensor, scale: float) -> torch.Tensor:
    """InfoNCE of ``queries`` (n × d) against ``documents`` (m × d, m ≥ n; row i's positive is column i).

    Embeddings are L2-normalised here; ``mask`` (n × m, True = not a negative) drops columns that are
    relevant to a request by another example. The positive column itself is never masked.
    """
    q = torch.nn.functional.normalize(queries, dim=-1)
    d = torch.nn.functional.normalize(documents, dim=-1)
    logits = scale * q @ d.T
    n = q.shape[0]
    own = torch.zeros_like(mask)
    own[torch.arange(n), torch.arange(n)] = True
    logits = logits.masked_fill(mask & ~own, float("-inf"))
    return torch.nn.functional.cross_entropy(logits, torch.arange(n, device=logits.device))


def batch_mask(batch: Sequence[EmbedExample]) -> torch.Tensor:
    """True where a batch column (positives, then negatives) is a tool relevant to the row's request."""
    columns = [e.tool_id for e in batch] + [e.negative_id for e in batch]
    return torch.tensor([[c in e.gold for c in columns] for e in batch], dtype=torch.bool)


def _batches(examples: Sequence[EmbedExample], size: int, rng: random.Random) -> list[list[EmbedExample]]:
    """Shuffled batches in which no request appears twice (its second tool waits for another batch)."""
    order = list(examples)
    rng.shuffle(order)
    batches: list[list[EmbedExample]] = []
    pending = order
    while pending:
        later: list[EmbedExample] = []
        batch: list[EmbedExample] = []
        seen: set[str] = set()
        for example in pending:
            if example.query in seen:
                later.append(example)
                continue
            batch.append(example)
            seen.add(example.query)
            if len(batch) == size:
                batches.append(batch)
                batch, seen = [], set()
        if batch:
            batches.append(batch)
        pending = later
    return batches


def train_embedder(
    base_model: str | Path,
    examples: Sequence[EmbedExample],
    config: EmbedderTrainingConfig = EmbedderTrainingConfig(),
    *,
    progress: Callable[[str, int, int], None] | None = None,
) -> EmbedderTrainingOutcome:
    """Fine-tune the sentence-transformers model in ``base_model`` (a local folder) on ``examples``."""
    from sentence_transformers import SentenceTransformer

    from toolsift.encoders.embedding import no_progress_bars, resolve_device

    if len(examples) < 2:
        raise ConfigError("embedder training needs at least two (request, tool) pairs")
    started = time.perf_counter()
    device = resolve_device(config.device, setting="--device")
    rng = random.Random(config.seed)
    torch.manual_seed(config.seed)
    with no_progress_bars():
        model = SentenceTransformer(str(base_model), device=device, local_files_only=True)
    served_length = model.max_seq_length
    if config.max_length:
        model.max_seq_length = config.max_length
    peft_model = None
    if config.lora_rank:
        from peft import LoraConfig, get_peft_model

        lora = LoraConfig(r=config.lora_rank, lora_alpha=config.lora_alpha or 2 * config.lora_rank,
                          lora_dropout=config.lora_dropout, target_modules=list(LORA_TARGETS))
        base: Any = model[0].model  # the Transformer module's Hugging Face model
        peft_model = get_peft_model(base, lora)
        model[0].model = peft_model
    model.train()
    parameters = [p for p in model.parameters() if p.requires_grad]
    per_epoch = len(_batches(examples, config.batch_size, random.Random(config.seed)))
    steps = config.epochs * per_epoch

    def embed(texts: list[str]) -> torch.Tensor:
        features = model.preprocess(texts)
        features = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in features.items()}
        out: torch.Tensor = model(features)["sentence_embedding"]
        return out

    def loss_of(batch: Sequence[EmbedExample]) -> torch.Tensor:
        queries = embed([e.query for e in batch])
        documents = embed([e.positive for e in batch] + [e.negative for e in batch])
        return infonce_loss(queries, documents, batch_mask(batch).to(queries.device), config.scale)

    losses = train_steps(parameters, lambda: _batches(examples, config.batch_size, rng), loss_of,
                         epochs=config.epochs, steps=steps, learning_rate=config.learning_rate, warmup=config.warmup,
                         progress=progress, label="embedder training steps")
    model.eval()
    adapter_dir = None
    if peft_model is not None:
        import tempfile

        adapter_dir = Path(tempfile.mkdtemp(prefix="toolsift-adapter-"))
        peft_model.save_pretrained(str(adapter_dir))
        model[0].model = peft_model.merge_and_unload()
    model.max_seq_length = served_length  # the saved model reads what the base model read,
    model.preprocess(["-"])  # and its tokenizer file records that truncation, not training's
    return EmbedderTrainingOutcome(model, len(examples), steps, losses, time.perf_counter() - started, device,
                                   adapter_dir)
