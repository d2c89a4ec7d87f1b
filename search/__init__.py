"""The search backend: one request in, one ranked answer out, whoever asks (CLI, workbench, API).

:class:`SearchBackend` takes a :class:`SearchRequest` (query, steps, level, top_k, weights and
reranker choices) and answers a :class:`SearchResponse`. Behind it: request shaping (steps,
decomposition, instruction, rewrite; :mod:`~toolsift.search.shaping`), tool search over the
multi-field index (:class:`Searcher`), Tool-to-Agent retrieval (:mod:`~toolsift.search.agents`),
precise tool sets (:class:`SetRecommender`) and the query log.
"""

from __future__ import annotations

from toolsift.search.backend import SearchBackend
from toolsift.search.querylog import QueryLog
from toolsift.search.records import (
    Level,
    Method,
    RequestedLevel,
    SearchLevel,
    SearchRequest,
    SearchResponse,
    SearchResult,
    SetResult,
    StepRanking,
    explanation,
    tool_to_dict,
    why,
)
from toolsift.search.planner import PlannerParams
from toolsift.search.searcher import Searcher
from toolsift.search.sets import SetRecommender

__all__ = [
    "SearchBackend",
    "SearchRequest",
    "SearchResponse",
    "SearchResult",
    "SearchLevel",
    "StepRanking",
    "Searcher",
    "Method",
    "Level",
    "RequestedLevel",
    "tool_to_dict",
    "explanation",
    "why",
    "PlannerParams",
    "SetRecommender",
    "SetResult",
    "QueryLog",
]
