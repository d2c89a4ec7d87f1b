"""The one ranker: base scoring (MFTR or fixed field weights) → a reranker on the top M → fusion.

:class:`RankingPipeline` answers a :class:`~toolsift.ranker.protocol.RankRequest` in-process; the
HTTP service (:mod:`toolsift.ranker.ranker_service`) runs the very same object, only collecting the
reranker's pairs of concurrent requests into shared batches between :meth:`RankingPipeline.base_pass`
and :meth:`RankingPipeline.fuse`. Results are the same either way.

Fusion, for the base ranker's top M candidates::

    score = (1 − λ) · minmax(base score) + λ · minmax(reranker score)      (min-max over the top M)

λ (``fusion_weight``) is learned on held-out training queries by ``toolsift eval`` / ``toolsift
train reranker`` (stored in the reranker artifact) or configured (``rerank_weight``). The remaining
candidates follow in the base ranker's order. Each result keeps its ``base_score`` and
``reranker_score``; ``contributions["reranker"]`` is the reranker's weighted term.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from toolsift.config import Settings
from toolsift.errors import ConfigError
from toolsift.ranker.artifact import WeightsArtifact
from toolsift.ranker.fusion import FieldWeightRanker, min_max
from toolsift.ranker.mftr import MFTRRanker
from toolsift.ranker.protocol import RankedResult, RankRequest, RankResponse
from toolsift.ranker.rerankers import Reranker
from toolsift.ranker.types import Ranker
from toolsift.records import RankedTool

__all__ = ["RankingPipeline", "BasePass", "candidate_text", "fuse_reranked", "ranking_pipeline"]

BasePass = tuple[list[RankedTool], list[tuple[str, str]]]

#: M when neither the settings nor a trained reranker's artifact say.
DEFAULT_RERANK_TOP = 20


def candidate_text(document: str, name: str) -> str:
    """What a reranker reads for a candidate: its fetched text, else its name alone."""
    return document or f"name: {name}"


class RankingPipeline:
    """Base ranker plus an optional second-stage reranker.

    Args:
        base: the candidate scorer (:class:`~toolsift.ranker.mftr.MFTRRanker` or
            :class:`~toolsift.ranker.fusion.FieldWeightRanker`).
        reranker: Tool-Rank or a cross-encoder; None ranks with ``base`` alone.
        rerank_top: M, how many of the base ranker's best the reranker scores.
        fusion_weight: λ, the reranker's share of the fused score (0: base only, 1: reranker only).
        weights_version: the learned weights' digest, reported with every answer.
    """

    def __init__(
        self,
        base: Ranker,
        reranker: Reranker | None = None,
        *,
        rerank_top: int = DEFAULT_RERANK_TOP,
        fusion_weight: float = 0.5,
        weights_version: str | None = None,
    ) -> None:
        if rerank_top < 1:
            raise ConfigError(f"rerank_top must be at least 1, got {rerank_top}")
        if not 0.0 <= fusion_weight <= 1.0:
            raise ConfigError(f"rerank_weight must be within [0, 1], got {fusion_weight}")
        self.base = base
        self.reranker = reranker
        self.rerank_top = rerank_top
        self.fusion_weight = fusion_weight
        self.weights_version = weights_version

    @classmethod
    def from_settings(cls, base: Ranker, settings: Settings, *, weights_version: str | None = None) -> RankingPipeline:
        """``base`` plus the ``reranker`` setting's model; λ and M from the settings, else the artifact's."""
        if not settings.reranker:
            return cls(base, None, rerank_top=settings.rerank_top or DEFAULT_RERANK_TOP, weights_version=weights_version)
        from toolsift.ranker.reranker_artifact import load_reranker

        loaded = load_reranker(settings.reranker, device=settings.reranker_device,
                               batch_size=settings.reranker_batch_size)
        weight = settings.rerank_weight
        if weight is None:
            weight = loaded.fusion_weight if loaded.fusion_weight is not None else 0.5
        top = settings.rerank_top or loaded.rerank_top or DEFAULT_RERANK_TOP
        return cls(base, loaded.reranker, rerank_top=top, fusion_weight=weight, weights_version=weights_version)

    @property
    def name(self) -> str:
        return f"{self.base.name}+{self.reranker.name}" if self.reranker else self.base.name

    def rank(self, request: RankRequest) -> RankResponse:
        """Rank the request's candidates (the in-process transport)."""
        started = time.perf_counter()
        ranked, pairs = self.base_pass(request)
        base_ms = (time.perf_counter() - started) * 1000
        t0 = time.perf_counter()
        scores = self.reranker.score_pairs(pairs) if self.reranker is not None and pairs else []
        rerank_ms = (time.perf_counter() - t0) * 1000
        response = self.fuse(request, ranked, scores)
        response.timings_ms.update(
            {"base": round(base_ms, 3), "rerank": round(rerank_ms, 3),
             "total": round((time.perf_counter() - started) * 1000, 3)}
        )
        return response

    def base_pass(self, request: RankRequest) -> BasePass:
        """The base ranking (as deep as the answer and the reranker need) and the reranker's pairs."""
        rerank = request.rerank and self.reranker is not None
        depth = max(request.top_k, self.rerank_top if rerank else 0)
        ranked = self.base.rank(request.signals(), depth)
        if not rerank:
            return ranked, []
        query = request.query_text
        documents = {c.doc_id: c.document for c in request.candidates}
        pairs = [(query, candidate_text(documents.get(t.doc_id, ""), t.name)) for t in ranked[: self.rerank_top]]
        return ranked, pairs

    def fuse(self, request: RankRequest, ranked: Sequence[RankedTool], scores: Sequence[float]) -> RankResponse:
        """Fuse the reranker's ``scores`` (for the first ``len(scores)`` of ``ranked``) into the answer."""
        m = len(scores)
        out = fuse_reranked(ranked, scores, self.fusion_weight)
        return RankResponse(
            results=[RankedResult.from_tool(t) for t in out[: request.top_k]],
            ranker=self.base.name,
            reranker=self.reranker.name if self.reranker is not None and m else None,
            reranked=m,
            fusion_weight=self.fusion_weight if m else None,
            weights_version=self.weights_version,
        )


def fuse_reranked(ranked: Sequence[RankedTool], scores: Sequence[float], fusion_weight: float) -> list[RankedTool]:
    """``ranked`` with a reranker's ``scores`` of its first ``len(scores)`` fused in (the module's rule).

    The head is ordered by the fused score; the rest keep the base order below it (their scores
    shifted by −1). Each fused result keeps its ``base_score`` and ``reranker_score``.
    """
    m = len(scores)
    if not m:
        return list(ranked)
    lam = fusion_weight
    base = [t.score for t in ranked[:m]]
    low, high = min(base), max(base)
    span = high - low
    head = []
    for t, b, r, raw in zip(ranked[:m], min_max(base), min_max(list(scores)), scores, strict=True):
        contributions = {**t.contributions, "reranker": lam * r}
        head.append(replace(t, score=(1 - lam) * b + lam * r, base_score=t.score, reranker_score=float(raw),
                            contributions=contributions))
    head.sort(key=lambda t: (-t.score, t.first_stage_rank or 1 << 30, t.doc_id))
    # The rest keep the base order, shifted by −1 so they stay below the reranked head.
    tail = [replace(t, score=(1 - lam) * ((t.score - low) / span if span > 1e-12 else 0.0) - 1.0, base_score=t.score)
            for t in ranked[m:]]
    return head + tail


def ranking_pipeline(
    settings: Settings, artifact: WeightsArtifact | None = None, base: Ranker | None = None
) -> RankingPipeline:
    """The one way a ranking pipeline is made from settings, for the search backend's in-process path
    and the ranker service alike: ``base`` (default: MFTR over ``artifact``'s learned weights, else the
    fixed ``field_weights``) plus the ``reranker`` setting's model; the weights' digest tags it."""
    if base is None:
        base = MFTRRanker(artifact.weights) if artifact is not None else FieldWeightRanker(settings.field_weights, settings.derived_weight)
    version = artifact.tag if artifact is not None else None
    return RankingPipeline.from_settings(base, settings, weights_version=version)
