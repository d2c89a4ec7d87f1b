"""Proposed weights: what the sliders set, and the ranking they give the same candidates.

The sliders tune the ranking the index's searches get. On an index of servers that is the
multi-need ranking (:mod:`toolsift.search.planner`): its own parameters, β (``server_weight``), M
(``prerequisite_tools``) and λ (``lexical_weight``, the whole request's words as a need), re-rank a search's kept per-text rankings with
:func:`~toolsift.search.planner.rank_planned` — what a search with them returns. Otherwise the
sliders are an :class:`~toolsift.ranker.mftr.MFTRWeights`: field weights per score kind, τ and
the missing-parameter penalty weights (required / optional) per kind, plus λ, the reranker's share,
when the ranking has a reranker. With learned weights in use they start from those; with the fixed
field weights they start from :meth:`MFTRWeights.from_field_weights`, which ranks exactly like the
fixed-weight ranker (normalised field scores), so an untouched slider changes nothing.

Re-ranking reads the candidates' field signals that the search already fetched (no OpenSearch round
trip): the first stage stays as it is until the weights are pushed to the index.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from toolsift.config import FIELDS
from toolsift.errors import BadQueryError
from toolsift.records import FieldSignals, kinds_for
from toolsift.query.structured import StructuredQuery
from toolsift.ranker.mftr import FeatureBatch, MFTRRanker, MFTRWeights
from toolsift.ranker.ranking_pipeline import RankingPipeline
from toolsift.ranker.protocol import RankRequest
from toolsift.ranker.rerankers import Reranker
from toolsift.records import RankedTool
from toolsift.ranker.artifact import WeightsArtifact
from toolsift.search.planner import MAX_LEXICAL_WEIGHT, PlannerParams
from toolsift.search.searcher import PLANNER_KEY

if TYPE_CHECKING:
    from toolsift.search import Searcher

__all__ = ["Proposal", "current_weights", "parse_weights", "parse_planner", "slider_ranges", "planner_ranges",
           "rank_with", "tuned_artifact", "CachedReranker"]

#: Most distinct (query, document) reranker scores a workbench remembers.
RERANK_CACHE_SIZE = 20_000


@dataclass(frozen=True)
class Proposal:
    """Weights to rank with, λ when there is a reranker (None: keep the ranking's own), and the
    multi-need parameters when that ranking answers the index's searches (None: it does not)."""

    weights: MFTRWeights
    rerank_weight: float | None = None
    planner: PlannerParams | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"weights": self.weights.to_dict(), "rerank_weight": self.rerank_weight,
                "planner": None if self.planner is None else self.planner.to_dict()}


def parse_planner(data: Mapping[str, Any] | None, like: PlannerParams | None) -> PlannerParams | None:
    """The browser's proposed multi-need parameters (a value left out: ``like``'s).

    Raises:
        BadQueryError: a bad value, or parameters for a ranking that is not the multi-need one (``like`` None).
    """
    if not data:
        return like
    if like is None:
        raise BadQueryError("planner: this index's searches are not ranked by the multi-need search "
                            "(no servers, or learned weights): there are no server_weight, prerequisite_tools or "
                            "lexical_weight to tune")
    return PlannerParams.from_dict(data, like)


def planner_ranges(params: PlannerParams) -> dict[str, list[float]]:
    """The [min, max, step] of the multi-need sliders (wide enough to double a value)."""
    beta = max(2.0, 2.0 * params.server_weight)
    return {"server_weight": [0.0, beta, beta / 200], "prerequisite_tools": [0, max(5, 2 * params.prerequisite_tools), 1],
            "lexical_weight": [0.0, MAX_LEXICAL_WEIGHT, MAX_LEXICAL_WEIGHT / 200]}


def current_weights(searcher: Searcher) -> MFTRWeights:
    """The weights ``searcher`` ranks with, as sliders: the learned or pushed ones, else its settings'
    fixed ones."""
    settings = searcher.settings
    if searcher.artifact is not None:
        return searcher.artifact.weights
    return MFTRWeights.from_field_weights(settings.field_weights, kinds_for(settings.retriever), settings.derived_weight)


def tuned_artifact(searcher: Searcher, proposal: Proposal, *, tuned_in: str,
                   metrics: Mapping[str, Any]) -> WeightsArtifact:
    """``proposal`` as a weights artifact (not yet saved) for ``searcher``'s index: what it was tuned in
    and from, the index, retriever and model, and the multi-need parameters when it carries them."""
    settings = searcher.settings
    return WeightsArtifact(
        weights=proposal.weights,
        config={
            "tuned_in": tuned_in, "tuned_from": searcher.weights_version or "fixed field weights",
            "index": settings.index, "retriever": settings.retriever,
            "embedding_model": searcher.index.embedding_model,
            "ranker": "field-weights-tuned" if proposal.weights.normalise else "mftr",
            "rerank_weight": proposal.rerank_weight,
            # tuned for the multi-need ranking: every searcher of the index plans with these
            **({PLANNER_KEY: proposal.planner.to_dict()} if proposal.planner is not None else {}),
        },
        metrics=dict(metrics),
    )


def parse_weights(data: Mapping[str, Any], like: MFTRWeights) -> MFTRWeights:
    """Weights from the browser, checked against the shape of ``like`` (same kinds and features).

    Raises:
        BadQueryError: naming the first missing or non-numeric value.
    """
    try:
        proposed = MFTRWeights.from_dict({**like.to_dict(), **data})
    except (KeyError, TypeError, ValueError) as exc:
        raise BadQueryError(f"weights: missing or malformed value {exc}") from exc
    if proposed.normalise != like.normalise:
        raise BadQueryError("weights: 'normalise' is the ranking's own; it cannot be changed here")
    if proposed.kinds != like.kinds or proposed.features != like.features:
        raise BadQueryError(f"weights: kinds {list(proposed.kinds)} / features {list(proposed.features)} do not "
                            f"match the ranking's {list(like.kinds)} / {list(like.features)}")
    if not 0.0 <= proposed.derived_weight <= 1.0:
        raise BadQueryError(f"weights: derived_weight must be within [0, 1], not {proposed.derived_weight}")
    for kind in proposed.kinds:
        values = [*proposed.field_weights[kind].values(), proposed.tau[kind], proposed.w_req[kind], proposed.w_opt[kind]]
        if not all(abs(v) < 1e6 for v in values):
            raise BadQueryError(f"weights: a {kind} value is out of range (|w| < 1e6)")
        if proposed.w_req[kind] < 0 or proposed.w_opt[kind] < 0:
            raise BadQueryError(f"weights: penalty weights must not be negative ({kind})")
    return proposed


def slider_ranges(weights: MFTRWeights) -> dict[str, dict[str, list[float]]]:
    """Per kind and parameter, the [min, max, step] of its slider (wide enough to double a value)."""
    out: dict[str, dict[str, list[float]]] = {}
    for kind in weights.kinds:
        ranges: dict[str, list[float]] = {}
        for f in weights.features:
            w = float(weights.field_weights[kind][f])
            top = max(1.0, 2.0 * abs(w))
            ranges[f] = [0.0 if weights.normalise else -top, top, top / 200]
        tau_top = 1.0 if kind == "dense" or weights.tau[kind] <= 1.0 else 2.0 * weights.tau[kind]
        ranges["tau"] = [0.0, tau_top, tau_top / 200]
        for name, table in (("w_req", weights.w_req), ("w_opt", weights.w_opt)):
            top = max(1.0, 2.0 * float(table[kind]))
            ranges[name] = [0.0, top, top / 200]
        out[kind] = ranges
    return out


class CachedReranker:
    """A reranker that remembers its scores, so moving a slider does not score the same pairs again."""

    def __init__(self, inner: Reranker, size: int = RERANK_CACHE_SIZE) -> None:
        self.inner = inner
        self.name = inner.name
        self.kind = inner.kind
        self.device: torch.device = inner.device
        self.batch_size = inner.batch_size
        self._scores: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        with self._lock:
            missing = list(dict.fromkeys(p for p in pairs if p not in self._scores))
            if missing:
                for pair, score in zip(missing, self.inner.score_pairs(missing)):
                    self._scores[pair] = float(score)
                while len(self._scores) > self._size:
                    self._scores.popitem(last=False)
            return [self._scores[p] for p in pairs]


def rank_with(
    proposal: Proposal,
    query: StructuredQuery,
    candidates: Sequence[FieldSignals],
    *,
    top_k: int,
    reranking: RankingPipeline | None = None,
    ranker: MFTRRanker | None = None,
    batch: FeatureBatch | None = None,
) -> list[RankedTool]:
    """The candidates ranked by ``proposal`` (and the reranker of ``reranking``, fused with λ).

    ``ranker``: an :class:`MFTRRanker` of ``proposal.weights`` to reuse across many queries;
    ``batch``: the candidates' prepared features (:meth:`MFTRRanker.prepare`), kept across proposals.
    """
    if not candidates:
        return []
    base = ranker or MFTRRanker(proposal.weights)
    if reranking is None or reranking.reranker is None:
        return base.rank(candidates, top_k, batch)
    lam = proposal.rerank_weight if proposal.rerank_weight is not None else reranking.fusion_weight
    pipeline = RankingPipeline(base, reranking.reranker, rerank_top=reranking.rerank_top, fusion_weight=lam)
    return pipeline.rank(RankRequest.build(query, candidates, top_k=top_k)).tools()


def shown_fields(weights: MFTRWeights) -> tuple[str, ...]:
    """The features a result's bars show (MFTR's fields first)."""
    return tuple(f for f in FIELDS if f in weights.features) + tuple(f for f in weights.features if f not in FIELDS)
