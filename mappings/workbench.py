"""The workbench's indices: relevance judgments and query sets.

``toolsift-judgments`` holds one document per (index, query, tool): a person's verdict, relevant or
not, with when and where it was made; its fields are typed for Dashboards (``judged_at``,
``query.raw``, ``query_set``, ``index``, ``tool_id``, ``tool_name``, ``agent_id``, ``relevant``,
``grade``, ``source``, ``weights_version``, ``tenant``). ``toolsift-querysets`` holds one document
per query set: its name, the index it judges, where it came from, its ``tenant``, and its queries
with their relevant tools (stored, not indexed). ``tenant`` is the writer's: a tenant's key writes
its tenant's records, an all-tenant key writes ``*`` (shared); records written before it was
recorded have none. The mappings are derived from :class:`JudgmentDoc` and :class:`QuerySetDoc`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolsift.mappings.fields import doc_field
from toolsift.mappings.template import side_index_body

__all__ = [
    "WORKBENCH_SCHEMA_VERSION",
    "JudgmentDoc",
    "QuerySetDoc",
    "judgments_index_body",
    "query_sets_index_body",
]

#: 2: ``tenant`` (added to an older index's mapping when it opens).
WORKBENCH_SCHEMA_VERSION = 2


@dataclass(frozen=True)
class JudgmentDoc:
    """One person's verdict on one tool for one query of an index."""

    judged_at: str = doc_field("date", default="")
    query: str = doc_field("standard_text_raw", default="")
    query_set: str | None = doc_field("keyword")
    index: str = doc_field("keyword", default="")
    tool_id: str = doc_field("keyword", default="")
    tool_name: str | None = doc_field("keyword")
    agent_id: str | None = doc_field("keyword")
    relevant: bool = doc_field("boolean", default=False)
    grade: int | None = doc_field("integer")
    source: str | None = doc_field("keyword")
    weights_version: str | None = doc_field("keyword")
    tenant: str | None = doc_field("keyword")


@dataclass(frozen=True)
class QuerySetDoc:
    """One query set: its queries and their relevant tools are stored, not indexed."""

    name: str = doc_field("keyword", default="")
    index: str = doc_field("keyword", default="")
    origin: str = doc_field("keyword", default="")
    created: str = doc_field("date", default="")
    size: int = doc_field("integer", default=0)
    queries: tuple[dict[str, Any], ...] = doc_field("stored", factory=tuple)
    tenant: str | None = doc_field("keyword")


def judgments_index_body() -> dict[str, Any]:
    """Settings and mappings of the judgments index."""
    return side_index_body(JudgmentDoc, schema="judgments", schema_version=WORKBENCH_SCHEMA_VERSION)


def query_sets_index_body() -> dict[str, Any]:
    """Settings and mappings of the query-sets index."""
    return side_index_body(QuerySetDoc, schema="querysets", schema_version=WORKBENCH_SCHEMA_VERSION)
