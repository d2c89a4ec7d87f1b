"""``toolsift search --set``: gather a request's evidence from OpenSearch and decide its tool set (PTR).

:class:`SetRecommender` makes every search the set decision needs — the request's retrieval on the
catalog, the history lookups (bundle acquisition, the nearest past queries of each need, bundle
co-occurrence) and the tool vectors for coverage — and hands the evidence to the pure decision in
:mod:`toolsift.sets.ptr`. Without a history index it runs the cold-start rule.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from toolsift.config import Retriever
from toolsift.encoders.embedding import Embedder
from toolsift.errors import BadQueryError, ConfigError
from toolsift.sets.history_import import index_history
from toolsift.mappings import F, vector_field
from toolsift.sets.history_doc import history_alias
from toolsift.opensearch import cosine_from_lucene, wire_vector
from toolsift.query.builder import knn_score_query
from toolsift.query.scope import UNSCOPED, Scope
from toolsift.query.decompose import split_needs
from toolsift.query.structured import StructuredQuery
from toolsift.sets.history_store import HistoryStore
from toolsift.sets.ptr import (
    PTRConfig,
    SetCandidate,
    SetEvidence,
    calibrate,
    calibrate_cold,
    recommend_set,
)
from toolsift.records import History
from toolsift.search.request import Method, SetResult
from toolsift.search.searcher import Searcher

__all__ = ["SetRecommender", "build_history", "encode_past_queries", "DEFAULT_SET_DEPTH", "DEFAULT_CALIBRATION_QUERIES"]

#: How many retrieved tools the set decision sees. The hybrid query min-max normalises each
#: sub-query over this many hits: 100 beat 30 by 0.008 TRACC on ToolLens training queries.
DEFAULT_SET_DEPTH = 100
#: Past queries held out to calibrate PTR's parameters when a history is built.
DEFAULT_CALIBRATION_QUERIES = 300
# Tools each need's own retrieval adds to the pool when the request has several needs.
_PER_NEED_DEPTH = 20
# Bundles whose tools get co-occurrence counts and vectors: the best few by each acquisition signal.
_BUNDLES_EXAMINED = 3


class SetRecommender:
    """PTR over one catalog index and (optionally) its history index.

    Args:
        searcher: the catalog searcher (its index, embedder and ranker).
        history: the history store; None for cold start.
        config: the decision's parameters; default: those calibrated into the history index, else
            :class:`PTRConfig`'s defaults.
        method, retriever, depth: the request's retrieval (default Full-Doc hybrid, 30 tools).
        scope: the caller's tenant (every retrieval and the coverage scoring stay inside it; the
            history store must be opened for the same tenant).
    """

    def __init__(
        self,
        searcher: Searcher,
        history: HistoryStore | None = None,
        config: PTRConfig | None = None,
        *,
        method: Method = "full-doc",
        retriever: Retriever = "hybrid",
        depth: int = DEFAULT_SET_DEPTH,
        scope: Scope = UNSCOPED,
    ) -> None:
        if searcher.embedder is None:
            raise ConfigError("set recommendation needs the searcher's embedding model (coverage is a cosine)")
        self.searcher = searcher
        self.embedder = searcher.embedder
        self.history = history
        self.config = config or (PTRConfig.from_dict(history.calibrated) if history else PTRConfig())
        self.method: Method = method
        self.retriever: Retriever = retriever
        self.depth = depth
        self.scope = scope

    def needs_of(self, query: str | StructuredQuery) -> list[str]:
        """The rewrite's tool needs when it gave several, else the rule-based split of the request
        (:func:`toolsift.query.decompose.split_needs`, the same split step-wise agent search uses)."""
        if isinstance(query, StructuredQuery) and len(query.tool_needs) > 1:
            return [str(n.user_intent) for n in query.tool_needs if n.user_intent] or [str(query.text)]
        return split_needs(str(query.text) if isinstance(query, StructuredQuery) else query)

    def gather(self, query: str | StructuredQuery, timings: dict[str, float] | None = None) -> SetEvidence:
        """Every OpenSearch lookup the decision needs, for one request."""
        timings = timings if timings is not None else {}
        text = query.text if isinstance(query, StructuredQuery) else query
        needs = self.needs_of(query)
        t0 = time.perf_counter()
        found = self.searcher.search(query, top_k=self.depth, method=self.method, retriever=self.retriever,
                                     scope=self.scope)
        candidates = tuple(SetCandidate(t.doc_id, t.name, t.score) for t in found.tools)
        t1 = time.perf_counter()
        matrix = self.embedder.encode_query([text, *needs])  # unit length
        t2 = time.perf_counter()
        bundles: tuple[Any, ...] = ()
        need_votes: list[dict[str, float]] = []
        cooccurrence: dict[str, dict[str, int]] = {}
        if self.history is not None:
            bundles = tuple(self.history.acquire(text, wire_vector(matrix[0])))
            need_votes = self.history.query_votes([wire_vector(v) for v in matrix[1:]])
            examined = {t for b in sorted(bundles, key=lambda b: -b.vote)[:_BUNDLES_EXAMINED] for t in b.bundle.tools}
            examined |= {t for b in sorted(bundles, key=lambda b: -b.bm25)[:_BUNDLES_EXAMINED] for t in b.bundle.tools}
            cooccurrence = self.history.cooccurrence(sorted(examined))
        t3 = time.perf_counter()
        wanted = {c.tool_id for c in candidates}
        if len(needs) > 1:  # each need's own retrieval, for the direct view and cold start
            for need in needs:
                wanted |= {t.doc_id for t in self.searcher.search(
                    need, top_k=_PER_NEED_DEPTH, method=self.method, retriever=self.retriever,
                    scope=self.scope).tools}
        wanted |= {t for b in bundles for t in b.bundle.tools}
        for votes in need_votes:
            wanted |= set(sorted(votes, key=lambda t: -votes[t])[: self.config.view_depth])
        for counts in cooccurrence.values():
            wanted |= set(sorted(counts, key=lambda t: -counts[t])[: self.config.view_depth])
        coverage, names = self._coverage(sorted(wanted), matrix[1:])
        timings.update({"retrieve": (t1 - t0) * 1000, "encode": (t2 - t1) * 1000, "history": (t3 - t2) * 1000,
                        "coverage": (time.perf_counter() - t3) * 1000})
        return SetEvidence(
            request=text, needs=tuple(needs), candidates=candidates, coverage_of=coverage, names=names,
            bundles=bundles, need_votes=tuple(need_votes), cooccurrence=cooccurrence,
        )

    def gather_many(
        self, queries: Sequence[str], progress: Callable[[str, int, int], None] | None = None, label: str = "queries"
    ) -> list[SetEvidence]:
        """:meth:`gather` for many requests, their texts and needs encoded up front in large batches."""
        self.embedder.prime([t for q in queries for t in (q, *self.needs_of(q))])
        out = []
        for done, query in enumerate(queries, start=1):
            out.append(self.gather(query))
            if progress:
                progress(label, done, len(queries))
        return out

    def recommend(self, query: str | StructuredQuery) -> SetResult:
        """The tool set for one request, each member with the need it covers and why it is there."""
        timings: dict[str, float] = {}
        started = time.perf_counter()
        evidence = self.gather(query, timings)
        t0 = time.perf_counter()
        tool_set = recommend_set(evidence, self.config)
        timings["decide"] = (time.perf_counter() - t0) * 1000
        timings["total"] = (time.perf_counter() - started) * 1000
        return SetResult(tool_set, self.config, self.history is not None, timings)

    def _scoped(self, query: dict[str, Any]) -> dict[str, Any]:
        clauses = self.scope.clauses()
        return {"bool": {"must": [query], "filter": clauses}} if clauses else query

    def _coverage(self, ids: Sequence[str], need_vectors: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, str]]:
        """tool id → cosine with each need, scored in OpenSearch (vectors stay out of ``_source``); and names."""
        if not ids:
            return {}, {}
        field_name = vector_field(F.full_doc)
        body: list[dict[str, Any]] = []
        for vector in need_vectors:
            body += [{"index": self.searcher.settings.index}, {
                "size": len(ids), "_source": [F.name], "query": self._scoped(knn_score_query(field_name, wire_vector(vector), ids=ids)),
            }]
        out: dict[str, np.ndarray] = {}
        names: dict[str, str] = {}
        for i, answer in enumerate(self.searcher.client.msearch(body=body)["responses"]):
            if "error" in answer:
                raise BadQueryError(f"coverage scoring failed on {self.searcher.settings.index!r}: {answer['error']}")
            for hit in answer["hits"]["hits"]:
                out.setdefault(hit["_id"], np.full(len(need_vectors), -1.0))[i] = cosine_from_lucene(float(hit["_score"]))
                names[hit["_id"]] = str((hit.get("_source") or {}).get(F.name, hit["_id"]))
        return out, names


def encode_past_queries(
    embedder: Embedder, history: History, progress: Callable[[str, int, int], None] | None = None
) -> dict[str, np.ndarray]:
    """past query id → its vector (the embedding model's query side), encoded in chunks of 1,024."""
    vectors: dict[str, np.ndarray] = {}
    for start in range(0, len(history.queries), 1024):  # chunked for the progress bar
        chunk = history.queries[start : start + 1024]
        vectors.update(zip((q.query_id for q in chunk), embedder.encode_query([q.text for q in chunk])))
        if progress:
            progress("past queries encoded", len(vectors), len(history.queries))
    return vectors


def build_history(
    searcher: Searcher,
    history: History,
    *,
    calibration_queries: int = DEFAULT_CALIBRATION_QUERIES,
    seed: int = 0,
    query_vectors: Mapping[str, np.ndarray] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> tuple[PTRConfig, dict[str, Any]]:
    """Index ``history`` for ``searcher``'s catalog, with PTR parameters calibrated on a held-out slice.

    ``calibration_queries`` past queries (a seeded sample) are held out; a temporary history index
    of the rest answers them, :func:`~toolsift.sets.ptr.calibrate` picks the parameters with the
    best TRACC against their own bundles, the temporary index is deleted, and the full history is
    indexed with those parameters in its ``_meta`` (where :class:`SetRecommender` reads them).

    ``query_vectors`` are the past queries' vectors when already encoded
    (:func:`encode_past_queries`); else they are encoded here.

    Returns:
        The calibrated parameters and a record of the calibration (queries, TRACC, seconds).
    """
    client, alias, embedder = searcher.client, searcher.settings.index, searcher.embedder
    if embedder is None:
        raise ConfigError("building a history needs the searcher's embedding model")
    started = time.perf_counter()
    names = {}  # bundle texts carry tool names: fetch them from the catalog
    tool_ids = sorted({t for b in history.bundles.values() for t in b.tools})
    for start in range(0, len(tool_ids), 500):
        answer = client.mget(index=alias, body={"ids": tool_ids[start : start + 500]}, params={"_source_includes": F.name})
        names.update({d["_id"]: str(d["_source"].get(F.name, "")) for d in answer["docs"] if d.get("found")})
    vectors = query_vectors if query_vectors is not None else encode_past_queries(embedder, history, progress)
    rng = random.Random(seed)
    held = rng.sample(list(history.queries), min(calibration_queries, len(history.queries) // 10))
    record: dict[str, Any] = {"held_out_queries": len(held), "seed": seed}
    config = PTRConfig()
    if held:
        calibration_alias = f"{history_alias(alias)}-calibration"
        index_history(client, alias, history.without({q.query_id for q in held}), embedder, tool_names=names,
                      alias=calibration_alias, query_vectors=vectors)
        try:
            store = HistoryStore(client, alias, alias=calibration_alias)
            evidence = SetRecommender(searcher, store, PTRConfig()).gather_many(
                [q.text for q in held], progress, label="calibration queries")
            gold = [history.bundles[q.bundle_id].tools for q in held]
            config, score = calibrate(evidence, gold)
            config, cold_score = calibrate_cold(evidence, gold, config)
            record["tracc"] = round(score, 4)
            record["cold_tracc"] = round(cold_score, 4)
        finally:
            client.indices.delete(index=f"{calibration_alias}-*", ignore_unavailable=True)
    record["seconds"] = round(time.perf_counter() - started, 1)
    index_history(client, alias, history, embedder, tool_names=names, query_vectors=vectors,
                  meta={"ptr": config.to_dict(), "calibration": record})
    return config, record
