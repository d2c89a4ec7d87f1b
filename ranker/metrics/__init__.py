"""Tool-retrieval metrics that ir_measures lacks: Completeness@K (Tool-DE) and TRACC (PTR).

Both take the BEIR / ir_measures shapes: qrels ``{qid: {tool_id: grade}}``, runs
``{qid: {tool_id: score}}``; TRACC works on tool-id sets.
"""

from __future__ import annotations

from toolsift.ranker.metrics.completeness import (
    completeness_at_k,
    mean_completeness_at_k,
    rank_tools,
)
from toolsift.ranker.metrics.tracc import mean_tracc, tracc

__all__ = [
    "completeness_at_k",
    "mean_completeness_at_k",
    "rank_tools",
    "tracc",
    "mean_tracc",
]
