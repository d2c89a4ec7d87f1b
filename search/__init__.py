"""The search backend: one request in, one ranked answer out, whoever asks (CLI, workbench, API).

:class:`SearchBackend` takes a :class:`SearchRequest` (query, steps, level, top_k, weights and
reranker choices) and answers a :class:`SearchResponse`. Behind it: request shaping (steps,
decomposition, instruction, rewrite; :mod:`~toolsift.search.shaping`), tool search over the
multi-field index (:class:`Searcher`), Tool-to-Agent retrieval (:mod:`~toolsift.agents.agent_search`),
precise tool sets (:class:`~toolsift.sets.recommender.SetRecommender`) and the query log
(:mod:`toolsift.learning.querylog`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolsift.lazy import lazy_exports

if TYPE_CHECKING:  # the names' real types for mypy; at run time they are imported on first use
    from toolsift.search.backend import SearchBackend as SearchBackend
    from toolsift.search.request import (
        Level as Level,
        Method as Method,
        RequestedLevel as RequestedLevel,
        SearchLevel as SearchLevel,
        SearchRequest as SearchRequest,
        SearchResponse as SearchResponse,
        SearchResult as SearchResult,
        SetResult as SetResult,
        StepRanking as StepRanking,
        explanation as explanation,
        tool_to_dict as tool_to_dict,
        why as why,
    )
    from toolsift.search.searcher import Searcher as Searcher
    from toolsift.search.planner import PlannerParams as PlannerParams

#: Public name → the module that defines it, imported on first use (:mod:`toolsift.lazy`). Lazy, so
#: that a capability's backend-layer module (``toolsift.agents.agent_search``, say) that imports one
#: of these modules does not run the whole backend's imports first.
_EXPORTS: dict[str, str] = {
    "SearchBackend": "toolsift.search.backend",
    **{name: "toolsift.search.request" for name in (
        "SearchRequest", "SearchResponse", "SearchResult", "SearchLevel", "StepRanking", "Method", "Level",
        "RequestedLevel", "tool_to_dict", "explanation", "why", "SetResult")},
    "Searcher": "toolsift.search.searcher",
    "PlannerParams": "toolsift.search.planner",
}

__all__ = list(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
