"""Learning MFTR's weights with the pairwise logistic loss (MFTR §3.4.3, §4.2).

Every (positive, hard negative) pair of a training query contributes
``log(1 + exp(−(S(q, t⁺) − S(q, t⁻))))``. The paper's recipe is the default: Adam, learning rate
0.1, 5 epochs, batches of 256 pairs, α = 15 fixed, the top-64 wrong tools by BM25 as negatives.
torch runs on CUDA when present, else on the CPU; the result is the same model either way.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch

from toolsift.config import FIELDS
from toolsift.encoders.embedding import resolve_device
from toolsift.records import FieldSignals
from toolsift.ranker.mftr import ALPHA, FeatureBatch, MFTRModel, MFTRWeights, features, prepared_features
from toolsift.errors import ConfigError

__all__ = ["TrainingQuery", "TrainingConfig", "TrainingOutcome", "train_mftr", "pick_device"]


@dataclass(frozen=True)
class TrainingQuery:
    """One training query's signals: its relevant tools and its hard negatives.

    ``weight`` scales each of its pairs' loss (feedback's inverse-propensity and influence caps,
    :mod:`toolsift.learning.feedback_pairs`); a benchmark's queries weigh 1, and with every weight 1 the
    loss is the paper's mean, bit for bit.
    """

    query_id: str
    positives: tuple[FieldSignals, ...]
    negatives: tuple[FieldSignals, ...]
    weight: float = 1.0
    #: Every candidate the serving ranker saw for this query (positives and negatives among them):
    #: what weights on the fixed ranker's scale normalise over. Empty: the positives and negatives.
    context: tuple[FieldSignals, ...] = ()


@dataclass(frozen=True)
class TrainingConfig:
    """The optimisation recipe; defaults are the MFTR paper's."""

    epochs: int = 5
    learning_rate: float = 0.1
    batch_size: int = 256
    alpha: float = ALPHA
    penalty: bool = True
    seed: int = 0
    device: str = "auto"
    #: Start values, as in MFTR's code: τ = 0.3, w_req = 0.2, w_opt = 0.1, field weights 0.
    init_field_weight: float = 0.0
    init_tau: float = 0.3
    init_w_req: float = 0.2
    init_w_opt: float = 0.1
    #: The features the model weighs: MFTR's four fields, optionally ``first_stage_rank`` too.
    features: tuple[str, ...] = FIELDS
    #: At least this many optimiser steps: few pairs (early feedback) get more epochs; 0: ``epochs`` exactly.
    min_steps: int = 0
    #: With a warm start, λ of the pull back to the start, λ·Σ(θ − θ₀)² over every parameter: little
    #: evidence moves the weights little (0: none).
    prior: float = 0.0


@dataclass(frozen=True)
class TrainingOutcome:
    """Learned weights plus how they were learned."""

    weights: MFTRWeights
    pairs: int
    epoch_losses: tuple[float, ...]
    device: str
    seconds: float


def pick_device(preference: str = "auto") -> torch.device:
    """``auto``: CUDA when a device is visible, else CPU; ``cpu`` / ``cuda`` force one (checked)."""
    return torch.device(resolve_device(preference, setting="device"))


def _pairs(
    queries: Sequence[TrainingQuery], kinds: Sequence[str], names: Sequence[str], start: MFTRWeights | None = None
) -> tuple[FeatureBatch, FeatureBatch, torch.Tensor | None]:
    """Every (positive, negative) pair of each query, and the pairs' weights (None: all 1); each
    candidate's features are built once. Starting from weights on the fixed ranker's scale, each
    query's features are normalised over its context (:func:`~toolsift.ranker.mftr.prepared_features`)."""
    candidates: list[FieldSignals] = []
    pos_index: list[int] = []
    neg_index: list[int] = []
    weights: list[float] = []
    normalised: list[FeatureBatch] = []
    scale = start.with_features(names) if start is not None and start.normalise else None
    width = max((len(c.parameters.get(k, ())) for q in queries for c in (*q.context, *q.positives, *q.negatives)
                 for k in kinds), default=0) if scale is not None else None
    for q in queries:
        if not (q.positives and q.negatives):
            continue
        start_at = len(candidates)
        if scale is not None:
            pair_ids = {c.doc_id for c in (*q.positives, *q.negatives)}
            context = [c for c in q.context if c.doc_id not in pair_ids]
            batch = prepared_features([*q.positives, *q.negatives, *context], scale, width=max(1, width or 0))
            normalised.append(batch.select(torch.arange(len(q.positives) + len(q.negatives))))
        candidates.extend((*q.positives, *q.negatives))
        first_negative = start_at + len(q.positives)
        for p in range(start_at, first_negative):
            for n in range(first_negative, len(candidates)):
                pos_index.append(p)
                neg_index.append(n)
                weights.append(q.weight)
    if scale is not None and normalised:
        batch = FeatureBatch(*(torch.cat(parts) for parts in zip(*(
            (b.fields, b.params, b.required, b.present) for b in normalised))))
    else:
        batch = features(candidates, kinds, names=names)
    pair_weights = None if all(w == 1.0 for w in weights) else torch.tensor(weights, dtype=torch.float32)
    return (batch.select(torch.tensor(pos_index, dtype=torch.long)),
            batch.select(torch.tensor(neg_index, dtype=torch.long)), pair_weights)


def train_mftr(
    queries: Sequence[TrainingQuery],
    kinds: Sequence[str],
    config: TrainingConfig = TrainingConfig(),
    start: MFTRWeights | None = None,
) -> TrainingOutcome:
    """Fit MFTR's weights on ``queries`` for the score ``kinds`` (``bm25``, ``dense`` or both).

    ``start``: warm-start from these weights (the ones serving now) instead of MFTR's initial values,
    pulled back to them by ``config.prior``; weights on the fixed ranker's scale stay on it (the
    result is normalised like them, and reads ``config.features``).

    Raises:
        ValueError: when no query has both a positive and a negative.
    """
    started = time.perf_counter()
    device = pick_device(config.device)
    if any(not q.weight >= 0.0 for q in queries):
        raise ConfigError("training queries: a weight must be a number >= 0")
    if start is not None and tuple(start.kinds) != tuple(kinds):
        raise ConfigError(f"the start weights read {list(start.kinds)} scores, the training {list(kinds)}")
    pos, neg, pair_weights = _pairs(queries, kinds, config.features, start)
    n = int(pos.fields.shape[0])
    if n == 0:
        raise ConfigError("no training pairs: every training query needs a relevant tool and a negative")
    pos, neg = pos.to(device), neg.to(device)
    if pair_weights is not None:
        pair_weights = pair_weights.to(device)
    initial = MFTRWeights.initial(
        kinds,
        penalty=config.penalty,
        features=config.features,
        field_weight=config.init_field_weight,
        tau=config.init_tau,
        w_req=config.init_w_req,
        w_opt=config.init_w_opt,
        alpha=config.alpha,
    )
    begin = replace(start.with_features(config.features), alpha=config.alpha) if start is not None else initial
    model = MFTRModel(begin).to(device)
    anchor = [p.detach().clone() for p in model.parameters()] if start is not None and config.prior > 0 else []
    optimiser = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    generator = torch.Generator().manual_seed(config.seed)
    losses = []
    epochs = max(config.epochs, -(-config.min_steps // -(-n // config.batch_size)))
    for _ in range(epochs):
        order = torch.randperm(n, generator=generator).to(device)
        total = 0.0
        for first in range(0, n, config.batch_size):
            index = order[first : first + config.batch_size]
            margin = model(pos.select(index)) - model(neg.select(index))
            per_pair = torch.nn.functional.softplus(-margin)  # log(1 + exp(−(S⁺ − S⁻)))
            loss = per_pair.mean() if pair_weights is None else (per_pair * pair_weights[index]).mean()
            if anchor:
                loss = loss + config.prior * sum(((p - a) ** 2).sum() for p, a in zip(model.parameters(), anchor))
            optimiser.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            optimiser.step()
            model.constrain()
            total += float(loss.detach()) * int(index.shape[0])
        losses.append(total / n)
    learned = model.cpu().to_weights()
    if start is not None:
        learned = replace(learned, normalise=start.normalise, derived_weight=start.derived_weight)
    return TrainingOutcome(
        weights=learned,
        pairs=n,
        epoch_losses=tuple(losses),
        device=str(device),
        seconds=time.perf_counter() - started,
    )
