"""Ranking: the base rankers (MFTR with learned weights, fixed field weights), second-stage
rerankers (cross-encoder, Tool-Rank), Tool-to-Agent aggregation, PTR tool sets, training, and the
ranking pipeline with its HTTP service."""

from __future__ import annotations

import importlib
from typing import Any

#: Public name → the module that defines it; imported on first use (PEP 562), so importing one
#: module of the package does not load the rest (torch, FastAPI).
_EXPORTS: dict[str, str] = {
    "Ranker": "toolsift.ranker.types",
    "RankRequest": "toolsift.ranker.protocol",
    "RankResponse": "toolsift.ranker.protocol",
    "RankingService": "toolsift.ranker.protocol",
    "MFTRRanker": "toolsift.ranker.mftr",
    "MFTRWeights": "toolsift.ranker.mftr",
    "FieldWeightRanker": "toolsift.ranker.fusion",
    "RankingPipeline": "toolsift.ranker.pipeline",
    "WeightsArtifact": "toolsift.ranker.artifact",
    "load_artifact": "toolsift.ranker.artifact",
    "aggregate_to_agents": "toolsift.ranker.agents",
    "merge_steps": "toolsift.ranker.agents",
    "decide_level": "toolsift.ranker.agents",
    "PTRConfig": "toolsift.ranker.ptr",
    "ToolSet": "toolsift.ranker.ptr",
    "recommend_set": "toolsift.ranker.ptr",
    "HistoryStore": "toolsift.ranker.history",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
