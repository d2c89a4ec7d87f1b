"""The query log index: one document per search, for relevance tuning and latency dashboards.

Fields a dashboard filters or aggregates on are typed (``timestamp``, ``request``, ``level``,
``method``, ``retriever``, ``index``, ``ranker``, ``reranker``, ``weights_version``, ``source``,
``degraded``, ``latency_ms``, ``tool_ids``, ``top_tool``); the full answer — the structured query and
every returned tool with its per-field scores, contributions and missing parameters — is kept in
``answer``, stored but not indexed. The mapping is derived from :class:`QueryLogDoc`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolsift.mappings.fields import doc_field
from toolsift.mappings.template import side_index_body

__all__ = ["QUERY_LOG_SCHEMA_VERSION", "QueryLogDoc", "query_log_index_body"]

QUERY_LOG_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class QueryLogDoc:
    """One logged search.

    Args:
        timestamp: when it ran (ISO 8601, UTC).
        request: the request text (``request.raw``: verbatim, for grouping).
        level, method, retriever, index, ranker, reranker, weights_version, source: how it ran.
        degraded: the answer came from a fallback; ``degraded_reason`` says why.
        latency_ms: the whole search's time.
        tool_ids, top_tool, agent_ids: what it returned, best first.
        answer: the full answer as the API returned it; stored, not indexed.
    """

    timestamp: str = doc_field("date", default="")
    request: str = doc_field("standard_text_raw", default="")
    level: str = doc_field("keyword", default="")
    method: str = doc_field("keyword", default="")
    retriever: str = doc_field("keyword", default="")
    index: str = doc_field("keyword", default="")
    ranker: str | None = doc_field("keyword")
    reranker: str | None = doc_field("keyword")
    weights_version: str | None = doc_field("keyword")
    source: str | None = doc_field("keyword")
    degraded: bool = doc_field("boolean", default=False)
    degraded_reason: str | None = doc_field("standard_text")
    latency_ms: float = doc_field("float", default=0.0)
    tool_ids: tuple[str, ...] = doc_field("keyword", factory=tuple)
    top_tool: str | None = doc_field("keyword")
    agent_ids: tuple[str, ...] = doc_field("keyword", factory=tuple)
    answer: dict[str, Any] = doc_field("stored", factory=dict)


def query_log_index_body() -> dict[str, Any]:
    """Settings and mappings of the query log index."""
    return side_index_body(QueryLogDoc, schema="querylog", schema_version=QUERY_LOG_SCHEMA_VERSION)
