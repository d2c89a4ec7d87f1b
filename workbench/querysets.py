"""Query sets: the queries (with their relevant tools) a weight change is measured on.

A set belongs to one index (its tool ids are that index's). It is built from the workbench's
judgments, or imported from a benchmark folder in ``../shared/datasets`` (ToolRet, BEIR or
LiveMCPBench, read by :func:`toolsift.ingest.benchmarks.load_benchmark`); an imported set keeps
only the relevant tools the index holds, and says how many it dropped.

**Tenants.** A set belongs to its writer's tenant (``tenant``), like a judgment
(:mod:`toolsift.workbench.judgments`): a tenant's set is seen by that tenant's keys and all-tenant
keys; an all-tenant key's set is shared (``*``) and seen by every tenant (searched, like everything,
in the reader's tenant). A tenant's set shadows a shared one of the same name. A set built from
judgments uses the judgments its writer sees — an all-tenant key's only the shared ones, since its set
is shared — and an imported one keeps only tools its writer may see.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch, helpers
from opensearchpy.exceptions import NotFoundError

from toolsift.access import ALL_TENANTS
from toolsift.errors import BadQueryError, CatalogError
from toolsift.ingest.benchmarks import Benchmark
from toolsift.mappings import F
from toolsift.mappings.workbench import query_sets_index_body
from toolsift.query.scope import tenant_clause
from toolsift.workbench.judgments import Judgment, TenantStore, tenant_scope

__all__ = ["QueryCase", "QuerySet", "QuerySetStore", "from_benchmark", "from_judgments", "indexed_tool_ids"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+-]{0,99}$")


@dataclass(frozen=True)
class QueryCase:
    """One query of a set and its relevant tools (tool id → grade)."""

    query_id: str
    text: str
    relevant: dict[str, int]


@dataclass(frozen=True)
class QuerySet:
    """A named list of judged queries for one index."""

    name: str
    index: str
    origin: str
    queries: tuple[QueryCase, ...]
    created: str = ""
    notes: dict[str, Any] = field(default_factory=dict)
    #: The writer's tenant (``*``: an all-tenant key's, shared).
    tenant: str = ALL_TENANTS

    def qrels(self) -> dict[str, dict[str, int]]:
        return {q.query_id: dict(q.relevant) for q in self.queries if q.relevant}

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "index": self.index, "origin": self.origin, "size": len(self.queries),
                "created": self.created, "notes": self.notes, "tenant": self.tenant}

    def to_doc(self) -> dict[str, Any]:
        return {
            "name": self.name, "index": self.index, "origin": self.origin, "size": len(self.queries),
            "created": self.created or dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "queries": {"cases": [{"id": q.query_id, "text": q.text, "relevant": q.relevant} for q in self.queries],
                        "notes": self.notes},
            "tenant": self.tenant,
        }

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> QuerySet:
        body = doc.get("queries") or {}
        cases = tuple(QueryCase(str(c["id"]), str(c["text"]), {str(k): int(v) for k, v in c["relevant"].items()})
                      for c in body.get("cases", []))
        return cls(str(doc["name"]), str(doc["index"]), str(doc["origin"]), cases, str(doc.get("created", "")),
                   dict(body.get("notes") or {}), str(doc.get("tenant") or ALL_TENANTS))


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise BadQueryError(f"query set name {name!r}: use up to 100 letters, digits and . _ : + -")
    return name


def from_judgments(name: str, index: str, judgments: Sequence[Judgment], *, tenant: str = ALL_TENANTS) -> QuerySet:
    """One query per judged query text; its relevant tools are those judged relevant (a set of ``tenant``).

    Queries with no tool judged relevant are kept (their NDCG is 0 for every ranking) only when
    some tool was judged; they say the index has nothing for them.
    """
    by_query: dict[str, dict[str, int]] = {}
    for j in judgments:
        if j.index != index:
            continue
        relevant = by_query.setdefault(j.query, {})
        if j.relevant:
            relevant[j.tool_id] = 1
    if not by_query:
        raise BadQueryError(f"no judgments on index {index!r} yet: judge some results first")
    cases = tuple(QueryCase(f"j{i + 1}", text, by_query[text]) for i, text in enumerate(sorted(by_query)))
    return QuerySet(check_name(name), index, "judgments", cases,
                    notes={"judged_queries": len(cases), "without_relevant": sum(1 for c in cases if not c.relevant)},
                    tenant=tenant)


def indexed_tool_ids(client: OpenSearch, index: str, tenant: str | None = None) -> set[str]:
    """The ids of ``index``'s tools ``tenant`` may see (None: all), what a set imported from a
    benchmark may keep."""
    scope = [tenant_clause(tenant)] if tenant is not None else []
    query = {"_source": False, "query": {"bool": {"filter": [{"term": {F.entity: "tool"}}, *scope]}}}
    return {hit["_id"] for hit in helpers.scan(client, index=index, query=query, size=1000)}


def from_benchmark(path: Path, index: str, indexed_ids: set[str], *, name: str | None = None,
                   split: str = "test", tenant: str = ALL_TENANTS, loaded: Benchmark | None = None) -> QuerySet:
    """The queries and qrels of a benchmark folder, restricted to the tools ``index`` holds (those
    ``tenant`` may see: ``indexed_ids``), as a set of ``tenant``. A tool the benchmark names as its
    catalog does is the index's tool of that id, else the one tool ``tenant`` sees under that id scoped
    to its tenants (:mod:`toolsift.mappings.scoped`). ``loaded``: the benchmark already read (``path`` names it).

    Raises:
        CatalogError: the folder is not a benchmark, or none of its relevant tools is in the index
            (the set belongs to another catalog).
    """
    from toolsift.ingest.benchmarks import load_benchmark
    from toolsift.ingest.loaders.mcp import tool_id_for
    from toolsift.mappings.scoped import plain_id

    benchmark = loaded or load_benchmark(path, split=split, tool_id_for=tool_id_for)
    scoped: dict[str, list[str]] = {}
    for doc_id in sorted(indexed_ids):
        if plain_id(doc_id) != doc_id:
            scoped.setdefault(plain_id(doc_id), []).append(doc_id)
    resolved = {t: t if t in indexed_ids else (scoped[t][0] if len(scoped.get(t, ())) == 1 else None)
                for rel in benchmark.qrels.values() for t in rel}
    cases, dropped = [], 0
    for qid, text in benchmark.queries.items():
        relevant = benchmark.qrels.get(qid, {})
        kept = {str(resolved[t]): g for t, g in relevant.items() if g > 0 and resolved[t] is not None}
        dropped += sum(1 for t, g in relevant.items() if g > 0 and resolved[t] is None)
        if kept:
            cases.append(QueryCase(qid, text, kept))
    if not cases:
        raise CatalogError(f"{path}: none of the benchmark's relevant tools is in index {index!r}; "
                           "import it into the index its catalog was ingested into")
    return QuerySet(check_name(name or benchmark.name), index, f"benchmark:{benchmark.path}", tuple(cases),
                    notes={"benchmark_queries": len(benchmark.queries), "kept": len(cases),
                           "relevant_tools_not_in_index": dropped}, tenant=tenant)


class QuerySetStore(TenantStore):
    """The query-sets index; use :meth:`open` (creates it when missing)."""

    index_body = staticmethod(query_sets_index_body)

    @staticmethod
    def _id(index: str, name: str, tenant: str) -> str:
        """A set's document id (a shared set keeps the id sets had before tenants were recorded)."""
        return f"{index}:{name}" if tenant == ALL_TENANTS else f"{tenant}/{index}:{name}"

    def save(self, query_set: QuerySet) -> None:
        self.client.index(index=self.index, id=self._id(query_set.index, query_set.name, query_set.tenant),
                          body=query_set.to_doc(), params={"refresh": "wait_for"})

    def get(self, index: str, name: str, tenant: str | None) -> QuerySet:
        """The set ``name`` of ``index`` as a caller of ``tenant`` finds it: its tenant's, else the shared
        one; an all-tenant caller: the shared one (or one with no tenant), else the only tenant's set of
        that name.

        Raises:
            BadQueryError: the caller sees no such set (the same answer whether or not another tenant
                has one), or, for an all-tenant caller, several tenants have one of that name.
        """
        missing = BadQueryError(f"no query set {name!r} for index {index!r}")
        if tenant is not None:
            for label in (tenant, ALL_TENANTS):
                found = self._get(self._id(index, name, label))
                if found is not None and found.get("tenant") == label:  # a set with no tenant is not shared
                    return QuerySet.from_doc(found)
            raise missing
        found = self._get(self._id(index, name, ALL_TENANTS))
        if found is not None:
            return QuerySet.from_doc(found)
        body = {"size": 10, "query": {"bool": {"filter": [{"term": {"index": index}}, {"term": {"name": name}}]}}}
        hits = self.client.search(index=self.index, body=body)["hits"]["hits"]
        if not hits:
            raise missing
        if len(hits) > 1:
            owners = sorted(str(h["_source"].get("tenant")) for h in hits)
            raise BadQueryError(f"query set {name!r} of index {index!r} is a set of several tenants "
                                f"({', '.join(owners)}); an all-tenant key compares on a name only one tenant uses")
        return QuerySet.from_doc(hits[0]["_source"])

    def _get(self, doc_id: str) -> dict[str, Any] | None:
        try:
            return dict(self.client.get(index=self.index, id=doc_id)["_source"])
        except NotFoundError:
            return None

    def list(self, index: str, tenant: str | None) -> list[dict[str, Any]]:
        """Summaries (name, origin, size, created, tenant) of the sets of ``index`` a caller of ``tenant``
        sees (a set with no tenant: ``tenant`` None)."""
        body = {"size": 1000, "_source": ["name", "index", "origin", "size", "created", "tenant"],
                "sort": [{"name": "asc"}],
                "query": {"bool": {"filter": [{"term": {"index": index}}, *tenant_scope(tenant)]}}}
        hits = self.client.search(index=self.index, body=body)["hits"]["hits"]
        return [{**h["_source"], "tenant": h["_source"].get("tenant")} for h in hits]
