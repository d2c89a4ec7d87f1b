"""The query log index: one document per search, for relevance tuning and latency dashboards.

Fields a dashboard filters or aggregates on are typed (``timestamp``, ``request``, ``level``,
``method``, ``retriever``, ``index``, ``ranker``, ``reranker``, ``weights_version``, ``source``,
``degraded``, ``latency_ms``, ``tool_ids``, ``top_tool``); a search a front end answered under a
``request_id`` (the search API, the MCP server) is stored under that id, with the caller's ``tenant``
and ``key`` and the tools handed to it (``answered_ids``), so feedback can be checked against it. The full answer — the structured query and
every returned tool with its per-field scores, contributions and missing parameters — is kept in
``answer``, stored but not indexed. The mapping is derived from :class:`QueryLogDoc`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolsift.mappings.fields import doc_field
from toolsift.mappings.template import side_index_body

__all__ = ["QUERY_LOG_SCHEMA_VERSION", "QueryLogDoc", "query_log_index_body"]

#: 2: ``request_id``, ``tenant``, ``key``, ``answered_ids`` (added to an older index's mapping when it opens).
QUERY_LOG_SCHEMA_VERSION = 2


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
        request_id: the id the front end answered under (the document's id too); None: a search
            with no request id (the CLI, the workbench).
        tenant, key: whom that answer was given to (``*``: an all-tenant key) and its key's name.
        answered_ids: the tools that answer handed over (after the token budget), the only ones
            feedback on it may name.
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
    request_id: str | None = doc_field("keyword")
    tenant: str | None = doc_field("keyword")
    key: str | None = doc_field("keyword")
    answered_ids: tuple[str, ...] = doc_field("keyword", factory=tuple)


def query_log_index_body() -> dict[str, Any]:
    """Settings and mappings of the query log index."""
    return side_index_body(QueryLogDoc, schema="querylog", schema_version=QUERY_LOG_SCHEMA_VERSION)
