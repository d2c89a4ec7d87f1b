"""Query sets: the queries (with their relevant tools) a weight change is measured on.

A set belongs to one index (its tool ids are that index's). It is built from the workbench's
judgments, or imported from a benchmark folder in ``../shared/datasets`` (ToolRet, BEIR or
LiveMCPBench, read by :func:`toolsift.ingest.benchmarks.load_benchmark`); an imported set keeps
only the relevant tools the index holds, and says how many it dropped.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError

from toolsift.opensearch import ensure_index
from toolsift.errors import BadQueryError, CatalogError
from toolsift.mappings.workbench import query_sets_index_body
from toolsift.workbench.judgments import Judgment

__all__ = ["QueryCase", "QuerySet", "QuerySetStore", "from_benchmark", "from_judgments"]

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

    def qrels(self) -> dict[str, dict[str, int]]:
        return {q.query_id: dict(q.relevant) for q in self.queries if q.relevant}

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "index": self.index, "origin": self.origin, "size": len(self.queries),
                "created": self.created, "notes": self.notes}

    def to_doc(self) -> dict[str, Any]:
        return {
            "name": self.name, "index": self.index, "origin": self.origin, "size": len(self.queries),
            "created": self.created or dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "queries": {"cases": [{"id": q.query_id, "text": q.text, "relevant": q.relevant} for q in self.queries],
                        "notes": self.notes},
        }

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> QuerySet:
        body = doc.get("queries") or {}
        cases = tuple(QueryCase(str(c["id"]), str(c["text"]), {str(k): int(v) for k, v in c["relevant"].items()})
                      for c in body.get("cases", []))
        return cls(str(doc["name"]), str(doc["index"]), str(doc["origin"]), cases, str(doc.get("created", "")),
                   dict(body.get("notes") or {}))


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise BadQueryError(f"query set name {name!r}: use up to 100 letters, digits and . _ : + -")
    return name


def from_judgments(name: str, index: str, judgments: Sequence[Judgment]) -> QuerySet:
    """One query per judged query text; its relevant tools are those judged relevant.

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
                    notes={"judged_queries": len(cases), "without_relevant": sum(1 for c in cases if not c.relevant)})


def from_benchmark(path: Path, index: str, indexed_ids: set[str], *, name: str | None = None,
                   split: str = "test") -> QuerySet:
    """The queries and qrels of a benchmark folder, restricted to the tools ``index`` holds.

    Raises:
        CatalogError: the folder is not a benchmark, or none of its relevant tools is in the index
            (the set belongs to another catalog).
    """
    from toolsift.ingest.benchmarks import load_benchmark
    from toolsift.ingest.loaders.mcp import tool_id_for

    benchmark = load_benchmark(path, split=split, tool_id_for=tool_id_for)
    cases, dropped = [], 0
    for qid, text in benchmark.queries.items():
        relevant = benchmark.qrels.get(qid, {})
        kept = {t: g for t, g in relevant.items() if g > 0 and t in indexed_ids}
        dropped += sum(1 for t, g in relevant.items() if g > 0 and t not in indexed_ids)
        if kept:
            cases.append(QueryCase(qid, text, kept))
    if not cases:
        raise CatalogError(f"{path}: none of the benchmark's relevant tools is in index {index!r}; "
                           "import it into the index its catalog was ingested into")
    return QuerySet(check_name(name or benchmark.name), index, f"benchmark:{benchmark.path}", tuple(cases),
                    notes={"benchmark_queries": len(benchmark.queries), "kept": len(cases),
                           "relevant_tools_not_in_index": dropped})


class QuerySetStore:
    """The query-sets index; use :meth:`open` (creates it when missing)."""

    def __init__(self, client: OpenSearch, index: str) -> None:
        self.client = client
        self.index = index

    @classmethod
    def open(cls, client: OpenSearch, index: str) -> QuerySetStore:
        ensure_index(client, index, query_sets_index_body())
        return cls(client, index)

    @staticmethod
    def _id(index: str, name: str) -> str:
        return f"{index}:{name}"

    def save(self, query_set: QuerySet) -> None:
        self.client.index(index=self.index, id=self._id(query_set.index, query_set.name), body=query_set.to_doc(),
                          params={"refresh": "wait_for"})

    def get(self, index: str, name: str) -> QuerySet:
        try:
            doc = self.client.get(index=self.index, id=self._id(index, name))
        except NotFoundError:
            raise BadQueryError(f"no query set {name!r} for index {index!r}") from None
        return QuerySet.from_doc(doc["_source"])

    def list(self, index: str) -> list[dict[str, Any]]:
        """Summaries (name, origin, size, created) of the sets of ``index``."""
        body = {"size": 1000, "_source": ["name", "index", "origin", "size", "created"],
                "sort": [{"name": "asc"}], "query": {"term": {"index": index}}}
        return [h["_source"] for h in self.client.search(index=self.index, body=body)["hits"]["hits"]]
