"""Ranking: the base rankers (MFTR with learned weights, fixed field weights), second-stage
rerankers (cross-encoder, Tool-Rank), training, and the ranking pipeline with its HTTP service.
Tool-to-Agent aggregation is :mod:`toolsift.agents`'s, PTR tool sets :mod:`toolsift.sets`'."""

from __future__ import annotations

from toolsift.lazy import lazy_exports

#: Public name → the module that defines it, imported on first use (:mod:`toolsift.lazy`).
_EXPORTS: dict[str, str] = {
    "Ranker": "toolsift.ranker.types",
    "RankRequest": "toolsift.ranker.protocol",
    "RankResponse": "toolsift.ranker.protocol",
    "RankingService": "toolsift.ranker.protocol",
    "MFTRRanker": "toolsift.ranker.mftr",
    "MFTRWeights": "toolsift.ranker.mftr",
    "FieldWeightRanker": "toolsift.ranker.fusion",
    "RankingPipeline": "toolsift.ranker.ranking_pipeline",
    "WeightsArtifact": "toolsift.ranker.artifact",
    "load_artifact": "toolsift.ranker.artifact",
}

__all__ = list(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
