"""Relevance judgments: a person's verdict on one tool for one query, kept in OpenSearch.

A judgment's id is a hash of (index, query, tool, tenant), so judging the same result again replaces
the verdict instead of adding a second one.

**Tenants.** A judgment belongs to its writer's tenant (``tenant``): a tenant's admin key writes that
tenant's, which only that tenant's keys (and all-tenant keys) see; an all-tenant key writes shared
ones (``*``), which every tenant sees on the tools it may see. Judgments written before the tenant was
recorded have none: only all-tenant keys see them (they count as the all-tenant keys' own).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Self

from opensearchpy import OpenSearch

from toolsift.access import ALL_TENANTS
from toolsift.opensearch import ensure_index
from toolsift.errors import BadQueryError, NotFoundError
from toolsift.mappings.workbench import judgments_index_body

__all__ = ["Judgment", "JudgmentStore", "TenantStore", "UnknownToolError", "judgment_id", "tenant_label", "tenant_scope"]

#: Longest query text a judgment may carry.
MAX_QUERY_CHARS = 4000


@dataclass(frozen=True)
class Judgment:
    """Is ``tool_id`` relevant to ``query`` on ``index``? ``grade`` is 1 when relevant, else 0."""

    index: str
    query: str
    tool_id: str
    relevant: bool
    tool_name: str = ""
    agent_id: str | None = None
    query_set: str | None = None
    source: str = "ui"
    weights_version: str | None = None
    judged_at: str = ""
    tenant: str = ALL_TENANTS

    @property
    def grade(self) -> int:
        return 1 if self.relevant else 0

    def to_doc(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["grade"] = self.grade
        doc["judged_at"] = self.judged_at or dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        return doc

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> Judgment:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in doc.items() if k in known})


class UnknownToolError(NotFoundError):
    """A judgment on a tool that does not exist or that its writer's tenant may not see (the same
    answer, so other tenants' tools are not revealed)."""

    field = "tool_id"


def judgment_id(index: str, query: str, tool_id: str, tenant: str = ALL_TENANTS) -> str:
    """The document id of ``tenant``'s judgment of ``tool_id`` for ``query`` on ``index`` (the
    all-tenant one keeps the id judgments had before tenants were recorded)."""
    parts = (index, " ".join(query.split()), tool_id) + (() if tenant == ALL_TENANTS else (tenant,))
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def tenant_label(tenant: str | None) -> str:
    """The ``tenant`` a record written by a caller of ``tenant`` carries (None, every tenant: ``*``)."""
    return ALL_TENANTS if tenant is None else tenant


def tenant_scope(tenant: str | None) -> list[dict[str, Any]]:
    """The filter of the workbench's records a caller of ``tenant`` sees: its tenant's and the shared
    ones (None, an all-tenant caller: every record, those with no tenant too)."""
    return [] if tenant is None else [{"terms": {"tenant": [tenant, ALL_TENANTS]}}]


#: The records an all-tenant caller's own work builds on: the shared ones and those with no tenant.
SHARED = {"bool": {"should": [{"term": {"tenant": ALL_TENANTS}},
                              {"bool": {"must_not": {"exists": {"field": "tenant"}}}}], "minimum_should_match": 1}}


class TenantStore:
    """A workbench index whose records carry their writer's ``tenant``; use :meth:`open`."""

    def __init__(self, client: OpenSearch, index: str) -> None:
        self.client = client
        self.index = index

    @staticmethod
    def index_body() -> dict[str, Any]:
        """The index's settings and mappings."""
        raise NotImplementedError

    @classmethod
    def open(cls, client: OpenSearch, index: str) -> Self:
        """The store of ``index``, created when missing; an index made before its records had a tenant
        gets the field (its old records have none)."""
        ensure_index(client, index, cls.index_body(), added_fields=("tenant",))
        return cls(client, index)


class JudgmentStore(TenantStore):
    """The judgments index; use :meth:`open` (creates it when missing)."""

    index_body = staticmethod(judgments_index_body)

    def record(self, judgment: Judgment) -> str:
        """Store (or replace) a judgment; visible to searches when this returns. Returns its id."""
        query = " ".join(judgment.query.split())
        if not query:
            raise BadQueryError("a judgment needs the query it judges")
        if len(query) > MAX_QUERY_CHARS:
            raise BadQueryError(f"a judged query may have at most {MAX_QUERY_CHARS} characters, got {len(query)}")
        if not judgment.tool_id:
            raise BadQueryError("a judgment needs the tool id it judges")
        doc_id = judgment_id(judgment.index, query, judgment.tool_id, judgment.tenant)
        doc = {**judgment.to_doc(), "query": query}
        self.client.index(index=self.index, id=doc_id, body=doc, params={"refresh": "wait_for"})
        return doc_id

    def delete(self, index: str, query: str, tool_id: str, tenant: str | None) -> bool:
        """Forget the judgment a caller of ``tenant`` made; False when there was none."""
        answer = self.client.delete(index=self.index, id=judgment_id(index, query, tool_id, tenant_label(tenant)),
                                    params={"refresh": "wait_for"}, ignore=404)
        return bool(answer.get("result") == "deleted")

    def for_query(self, index: str, query: str, tenant: str | None) -> dict[str, bool]:
        """Tool id → relevant, for every tool of ``query`` on ``index`` judged in what a caller of
        ``tenant`` sees (its tenant's verdict before a shared one)."""
        body = {"size": 1000, "query": {"bool": {"filter": [
            {"term": {"index": index}}, {"term": {"query.raw": " ".join(query.split())}}, *tenant_scope(tenant)]}}}
        hits = self.client.search(index=self.index, body=body)["hits"]["hits"]
        hits.sort(key=lambda h: tenant is not None and h["_source"].get("tenant") == tenant)  # its own win
        return {h["_source"]["tool_id"]: bool(h["_source"]["relevant"]) for h in hits}

    def all(self, index: str, *, tenant: str | None, size: int = 10_000) -> list[Judgment]:
        """Every judgment made on ``index`` that a caller of ``tenant`` sees, newest first."""
        return self._search(index, tenant_scope(tenant), size)

    def shared(self, index: str, *, size: int = 10_000) -> list[Judgment]:
        """The judgments on ``index`` that all-tenant callers made (and those with no tenant), newest first."""
        return self._search(index, [SHARED], size)

    def _search(self, index: str, scope: list[dict[str, Any]], size: int) -> list[Judgment]:
        body = {"size": size, "sort": [{"judged_at": "desc"}],
                "query": {"bool": {"filter": [{"term": {"index": index}}, *scope]}}}
        hits = self.client.search(index=self.index, body=body)["hits"]["hits"]
        return [Judgment.from_doc(h["_source"]) for h in hits]
