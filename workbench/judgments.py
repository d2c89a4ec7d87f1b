"""Relevance judgments: a person's verdict on one tool for one query, kept in OpenSearch.

A judgment's id is a hash of (index, query, tool), so judging the same result again replaces the
verdict instead of adding a second one.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from opensearchpy import OpenSearch

from toolsift.opensearch import ensure_index
from toolsift.errors import BadQueryError
from toolsift.mappings.workbench import judgments_index_body

__all__ = ["Judgment", "JudgmentStore", "judgment_id"]

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


def judgment_id(index: str, query: str, tool_id: str) -> str:
    """The document id of the judgment of ``tool_id`` for ``query`` on ``index``."""
    key = "\x1f".join((index, " ".join(query.split()), tool_id))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


class JudgmentStore:
    """The judgments index; use :meth:`open` (creates it when missing)."""

    def __init__(self, client: OpenSearch, index: str) -> None:
        self.client = client
        self.index = index

    @classmethod
    def open(cls, client: OpenSearch, index: str) -> JudgmentStore:
        ensure_index(client, index, judgments_index_body())
        return cls(client, index)

    def record(self, judgment: Judgment) -> str:
        """Store (or replace) a judgment; visible to searches when this returns. Returns its id."""
        query = " ".join(judgment.query.split())
        if not query:
            raise BadQueryError("a judgment needs the query it judges")
        if len(query) > MAX_QUERY_CHARS:
            raise BadQueryError(f"a judged query may have at most {MAX_QUERY_CHARS} characters, got {len(query)}")
        if not judgment.tool_id:
            raise BadQueryError("a judgment needs the tool id it judges")
        doc_id = judgment_id(judgment.index, query, judgment.tool_id)
        doc = {**judgment.to_doc(), "query": query}
        self.client.index(index=self.index, id=doc_id, body=doc, params={"refresh": "wait_for"})
        return doc_id

    def delete(self, index: str, query: str, tool_id: str) -> bool:
        """Forget a judgment; False when there was none."""
        answer = self.client.delete(index=self.index, id=judgment_id(index, query, tool_id),
                                    params={"refresh": "wait_for"}, ignore=404)
        return bool(answer.get("result") == "deleted")

    def for_query(self, index: str, query: str) -> dict[str, bool]:
        """Tool id → relevant, for every judged tool of ``query`` on ``index``."""
        body = {"size": 1000, "query": {"bool": {"filter": [
            {"term": {"index": index}}, {"term": {"query.raw": " ".join(query.split())}}]}}}
        hits = self.client.search(index=self.index, body=body)["hits"]["hits"]
        return {h["_source"]["tool_id"]: bool(h["_source"]["relevant"]) for h in hits}

    def all(self, index: str, *, size: int = 10_000) -> list[Judgment]:
        """Every judgment made on ``index``, newest first."""
        body = {"size": size, "sort": [{"judged_at": "desc"}], "query": {"term": {"index": index}}}
        hits = self.client.search(index=self.index, body=body)["hits"]["hits"]
        return [Judgment.from_doc(h["_source"]) for h in hits]
