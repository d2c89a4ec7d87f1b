"""The query log index: one document per search, for relevance tuning and latency dashboards.

Fields a dashboard filters or aggregates on are typed (``timestamp``, ``request``, ``level``,
``method``, ``retriever``, ``index``, ``ranker``, ``reranker``, ``weights_version``, ``source``,
``degraded``, ``latency_ms``, ``tool_ids``, ``top_tool``); the full answer — the structured query and
every returned tool with its per-field scores, contributions and missing parameters — is kept in
``answer``, stored but not indexed.
"""

from __future__ import annotations

from typing import Any

__all__ = ["QUERY_LOG_SCHEMA_VERSION", "query_log_index_body"]

QUERY_LOG_SCHEMA_VERSION = 1


def query_log_index_body() -> dict[str, Any]:
    """Settings and mappings of the query log index."""
    keyword = {"type": "keyword"}
    return {
        "settings": {"index": {"number_of_shards": 1, "number_of_replicas": 0}},
        "mappings": {
            "dynamic": "strict",
            "_meta": {"toolsift": {"schema": "querylog", "schema_version": QUERY_LOG_SCHEMA_VERSION}},
            "properties": {
                "timestamp": {"type": "date"},
                "request": {"type": "text", "fields": {"raw": {"type": "keyword", "ignore_above": 1024}}},
                "level": keyword, "method": keyword, "retriever": keyword, "index": keyword,
                "ranker": keyword, "reranker": keyword, "weights_version": keyword, "source": keyword,
                "degraded": {"type": "boolean"}, "degraded_reason": {"type": "text"},
                "latency_ms": {"type": "float"},
                "tool_ids": keyword, "top_tool": keyword, "agent_ids": keyword,
                "answer": {"type": "object", "enabled": False},
            },
        },
    }
