"""The workbench's indices: relevance judgments and query sets.

``toolsift-judgments`` holds one document per (index, query, tool): a person's verdict, relevant or
not, with when and where it was made; its fields are typed for Dashboards (``judged_at``,
``query.raw``, ``query_set``, ``index``, ``tool_id``, ``tool_name``, ``agent_id``, ``relevant``,
``grade``, ``source``, ``weights_version``). ``toolsift-querysets`` holds one document per query set:
its name, the index it judges, where it came from, and its queries with their relevant tools
(stored, not indexed).
"""

from __future__ import annotations

from typing import Any

__all__ = ["WORKBENCH_SCHEMA_VERSION", "judgments_index_body", "query_sets_index_body"]

WORKBENCH_SCHEMA_VERSION = 1

_KEYWORD = {"type": "keyword"}
_SETTINGS = {"index": {"number_of_shards": 1, "number_of_replicas": 0}}


def judgments_index_body() -> dict[str, Any]:
    """Settings and mappings of the judgments index."""
    return {
        "settings": _SETTINGS,
        "mappings": {
            "dynamic": "strict",
            "_meta": {"toolsift": {"schema": "judgments", "schema_version": WORKBENCH_SCHEMA_VERSION}},
            "properties": {
                "judged_at": {"type": "date"},
                "query": {"type": "text", "fields": {"raw": {"type": "keyword", "ignore_above": 1024}}},
                "query_set": _KEYWORD, "index": _KEYWORD, "tool_id": _KEYWORD, "tool_name": _KEYWORD,
                "agent_id": _KEYWORD, "relevant": {"type": "boolean"}, "grade": {"type": "integer"},
                "source": _KEYWORD, "weights_version": _KEYWORD,
            },
        },
    }


def query_sets_index_body() -> dict[str, Any]:
    """Settings and mappings of the query-sets index."""
    return {
        "settings": _SETTINGS,
        "mappings": {
            "dynamic": "strict",
            "_meta": {"toolsift": {"schema": "querysets", "schema_version": WORKBENCH_SCHEMA_VERSION}},
            "properties": {
                "name": _KEYWORD, "index": _KEYWORD, "origin": _KEYWORD, "created": {"type": "date"},
                "size": {"type": "integer"},
                "queries": {"type": "object", "enabled": False},
            },
        },
    }
