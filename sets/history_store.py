"""PTR's history in OpenSearch: tool bundles, the past queries that used them, and the three lookups
the set recommender makes against them.

* :meth:`HistoryStore.acquire` — bundle acquisition (PTR §3.1): a request is matched against every
  bundle by BM25 over the bundle's text (its past queries and tool names) and by a vote of the
  request's nearest past queries (k-NN; each neighbour adds its cosine to its bundle). Both signals
  are returned per bundle; how they are weighed is the recommender's (calibrated) choice.
* :meth:`HistoryStore.query_votes` — the *historical query correlation* view of PTR's multi-view
  re-ranking: the tools of the past queries nearest to one need, by summed cosine.
* :meth:`HistoryStore.cooccurrence` — the *contextual tool expansion* view: for each given tool, how
  often every other tool shares a bundle with it (a terms aggregation per tool).

The index is written by :func:`toolsift.sets.history_import.index_history`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError

from toolsift.errors import ConfigError
from toolsift.sets.history_doc import history_alias
from toolsift.opensearch import cap_terms, cosine_from_lucene
from toolsift.query.scope import tenant_clause
from toolsift.records import Bundle

__all__ = ["AcquiredBundle", "HistoryStore"]


@dataclass(frozen=True)
class AcquiredBundle:
    """One bundle a request reached, with both acquisition signals (0 where a signal missed it)."""

    bundle: Bundle
    vote: float
    bm25: float


class HistoryStore:
    """Reads one catalog's history index (``<catalog alias>-history``).

    Args:
        client: a connected client.
        catalog_alias: the catalog's alias; the history alias is derived from it.
        vote_k: how many nearest past queries vote in :meth:`acquire` and :meth:`query_votes`.
        bundle_depth: how many bundles BM25 returns in :meth:`acquire`.
        alias: read this history alias instead of ``<catalog_alias>-history`` (calibration).
        tenant: the caller's tenant: only bundles and past queries it may see are read (inside
            every lookup's query); None: all of them.

    Raises:
        ConfigError: the history index does not exist (name the command that builds it).
    """

    def __init__(
        self, client: OpenSearch, catalog_alias: str, *, vote_k: int = 10, bundle_depth: int = 20, alias: str | None = None,
        tenant: str | None = None,
    ) -> None:
        self.client = client
        self.tenant = tenant
        self.alias = alias or history_alias(catalog_alias)
        self.vote_k = vote_k
        self.bundle_depth = bundle_depth
        try:
            mapping = client.indices.get_mapping(index=self.alias)
        except NotFoundError:
            raise ConfigError(
                f"no history index {self.alias!r}: build it with `toolsift history load DATASET_DIR --index "
                f"{catalog_alias}` (or search without --set history: cold start)"
            ) from None
        index_name = next(iter(mapping))
        self.meta: dict[str, Any] = mapping[index_name]["mappings"].get("_meta", {}).get("toolsift", {})

    @staticmethod
    def exists(client: OpenSearch, catalog_alias: str) -> bool:
        return bool(client.indices.exists_alias(name=history_alias(catalog_alias)))

    @property
    def calibrated(self) -> Mapping[str, Any]:
        """The PTR parameters calibrated on this history when it was built (empty if none)."""
        return dict(self.meta.get("ptr", {}))

    # --- lookups ----------------------------------------------------------------------------------
    def acquire(self, text: str, vector: Sequence[float]) -> list[AcquiredBundle]:
        """Bundles reached by the request's nearest past queries or by BM25 over bundle texts."""
        answers = self._msearch([self._knn_body(vector), {
            "size": self.bundle_depth, "_source": ["bundle_id", "tools"],
            "query": {"bool": {"must": [{"match": {"text": cap_terms(text)}}],
                               "filter": self._visible("bundle")}},
        }])
        tools: dict[str, tuple[str, ...]] = {}
        vote: dict[str, float] = defaultdict(float)
        for hit in answers[0]["hits"]["hits"]:
            b = hit["_source"]["bundle_id"]
            tools[b] = tuple(hit["_source"]["tools"])
            vote[b] += cosine_from_lucene(float(hit["_score"]))
        bm25: dict[str, float] = {}
        for hit in answers[1]["hits"]["hits"]:
            b = hit["_source"]["bundle_id"]
            tools[b] = tuple(hit["_source"]["tools"])
            bm25[b] = float(hit["_score"])
        return [AcquiredBundle(Bundle(b, tools[b]), vote.get(b, 0.0), bm25.get(b, 0.0)) for b in tools]

    def query_votes(self, vectors: Sequence[Sequence[float]]) -> list[dict[str, float]]:
        """Per vector (one per need): tool → summed cosine of the nearest past queries that used it."""
        out = []
        for answer in self._msearch([self._knn_body(vector) for vector in vectors]):
            votes: dict[str, float] = defaultdict(float)
            for hit in answer["hits"]["hits"]:
                for tool in hit["_source"]["tools"]:
                    votes[tool] += cosine_from_lucene(float(hit["_score"]))
            out.append(dict(votes))
        return out

    def cooccurrence(self, tools: Sequence[str], size: int = 50) -> dict[str, dict[str, int]]:
        """Per tool: the tools sharing bundles with it → in how many bundles (one terms aggregation each,
        all in one ``msearch``)."""
        answers = self._msearch([{
            "size": 0,
            "query": {"bool": {"filter": [*self._visible("bundle"), {"term": {"tools": tool}}]}},
            "aggs": {"tools": {"terms": {"field": "tools", "size": size + 1}}},
        } for tool in tools])
        return {
            tool: {b["key"]: int(b["doc_count"]) for b in answer["aggregations"]["tools"]["buckets"] if b["key"] != tool}
            for tool, answer in zip(tools, answers)
        }

    def _msearch(self, searches: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """The answers of several searches on the history index in one round trip; any error raises."""
        if not searches:
            return []
        body: list[dict[str, Any]] = []
        for search in searches:
            body += [{"index": self.alias}, search]
        answers: list[dict[str, Any]] = self.client.msearch(body=body)["responses"]
        for answer in answers:
            if "error" in answer:
                raise ConfigError(f"history index {self.alias!r} rejected the lookup: {answer['error']}")
        return answers

    def _knn_body(self, vector: Sequence[float]) -> dict[str, Any]:
        return {
            "size": self.vote_k, "_source": ["bundle_id", "tools"],
            "query": {"knn": {"vector": {"vector": list(vector), "k": max(self.vote_k, 50),
                                         "filter": {"bool": {"filter": self._visible("query")}}}}},
        }

    def _visible(self, kind: str) -> list[dict[str, Any]]:
        """Documents of ``kind`` the caller's tenant may see."""
        clauses: list[dict[str, Any]] = [{"term": {"kind": kind}}]
        if self.tenant is not None:
            clauses.append(tenant_clause(self.tenant))
        return clauses
