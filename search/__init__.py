"""The search backend: one request in, one ranked answer out, whoever asks (CLI, workbench, API).

Tool search over the multi-field index (:class:`Searcher`), Tool-to-Agent retrieval
(:mod:`toolsift.search.agents`), precise tool sets (:class:`SetRecommender`) and the query log.
"""

from __future__ import annotations

from toolsift.search.querylog import QueryLog
from toolsift.search.searcher import Level, Method, RequestedLevel, SearchResult, Searcher, tool_to_dict
from toolsift.search.sets import SetRecommender, SetResult

__all__ = [
    "Searcher",
    "SearchResult",
    "Method",
    "Level",
    "RequestedLevel",
    "tool_to_dict",
    "SetRecommender",
    "SetResult",
    "QueryLog",
]
