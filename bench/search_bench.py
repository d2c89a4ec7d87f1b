"""``toolsift bench``: ingest throughput and search latency, each next to references measured in the
same run on the same index, so the figures can be read against the floor they cannot beat.

Ingest: the benchmark's catalog into a fresh index (``toolsift-bench-<name>``), tools/s end to end
(load, normalise, embed, bulk index, refresh), next to the raw embedding rate of exactly the texts
ingest embedded (documents/s and texts/s of ``Embedder.encode_document`` alone).

Search: per query, wall-clock time of one call, one query at a time, after a warm-up. The query-embedding
cache is cleared before every call (warm-up and timed, outside the timed span), so each dense row and
the dense floor pay the same cold encoding of their query in every sample: no row, and no query, is
served an embedding computed for an earlier one (the model itself is loaded and warm). Rows:
- ``full-doc bm25``: the search backend (as every front end calls it, without a rewrite), BM25 on
  ``full_doc`` (HTTP + result parsing); no encoding;
- ``full-doc minilm``: the backend, cold query encoding + one k-NN query;
- ``multi-field bm25`` / ``minilm`` / ``hybrid``: the backend end to end — cold query encoding (dense
  kinds only), the first-stage request (hybrid query + pipeline), the exact per-field scores request,
  and ranking;
- reference ``raw bm25 match``: one plain ``match`` on ``full_doc`` through the client; no encoding;
- reference ``dense floor``: one cold ``Embedder.encode_query`` of the raw query (the call the backend
  makes) + one plain k-NN query through the client.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from toolsift.config import Settings
from toolsift.encoders.embedding import Embedder
from toolsift.ingest.benchmarks import load_benchmark
from toolsift.evaluation.runner import latency_summary
from toolsift.ingest.embed import document_texts
from toolsift.ingest.loaders import load_catalog
from toolsift.ingest.loaders.mcp import tool_id_for as mcp_tool_id
from toolsift.ingest.pipeline import ingest_catalog, normalised_records
from toolsift.mappings import AgentDoc, F, ToolDoc, vector_field
from toolsift.mappings.index import IndexManager
from toolsift.opensearch import cap_terms, wire_vector
from toolsift.search import SearchBackend, SearchRequest

__all__ = ["run_bench", "SEARCH_VARIANTS", "SAMPLING"]

SEARCH_VARIANTS: dict[str, str] = {
    "full-doc bm25": "SearchBackend: BM25 match on full_doc (HTTP + parsing); no encoding",
    "full-doc minilm": "SearchBackend: cold query encoding + k-NN on full_doc_vector (HTTP + parsing)",
    "multi-field bm25": "SearchBackend: first stage (bool BM25) + exact per-field scores + ranking; no encoding",
    "multi-field minilm": "SearchBackend: cold query encoding + first stage (hybrid k-NN, pipeline) + exact per-field scores + ranking",
    "multi-field hybrid": "SearchBackend: cold query encoding + first stage (hybrid BM25+k-NN, pipeline) + exact per-field scores + ranking",
    "reference: raw bm25 match": "client.search: one match on full_doc returning _source tool_id (HTTP, stored fields); no encoding",
    "reference: dense floor": "cold query encoding (Embedder.encode_query) + one plain k-NN query on full_doc_vector (HTTP)",
}
#: How every row's samples are taken (the figures' ``note``).
SAMPLING = ("one query at a time, wall clock, after warm-up; the query-embedding cache is cleared before every "
            "call, so every dense row and the dense floor pay one cold query encoding per sample; "
            "percentiles are nearest-rank")


def _embedding_rate(path: Path, fmt: str, embedder: Embedder, max_chars: int) -> dict[str, float]:
    # Rejected records are counted by the ingest report; only the documents ingest embedded count here.
    docs = [
        item
        for _, item in normalised_records(load_catalog(path, fmt), max_chars)
        if isinstance(item, (ToolDoc, AgentDoc))
    ]
    texts = list(dict.fromkeys(t for d in docs for t in document_texts(d)))
    embedder.encode_document(texts[:64])  # warm-up
    t0 = time.perf_counter()
    for start in range(0, len(texts), 64 * 8):
        embedder.encode_document(texts[start : start + 64 * 8])
    seconds = time.perf_counter() - t0
    return {
        "documents": len(docs),
        "texts": len(texts),
        "seconds": round(seconds, 3),
        "documents_per_s": round(len(docs) / seconds, 1),
        "texts_per_s": round(len(texts) / seconds, 1),
    }


def run_bench(
    client: OpenSearch,
    settings: Settings,
    embedder: Embedder,
    dataset_dir: Path,
    *,
    max_queries: int | None = None,
    warmup: int = 5,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Measure ingest and search on ``dataset_dir``; returns the figures as a JSON-able dict."""
    benchmark = load_benchmark(Path(dataset_dir), tool_id_for=mcp_tool_id)
    alias = "toolsift-bench-" + "".join(c if c.isalnum() else "-" for c in benchmark.name.lower())
    # the ingest row embeds every text, as the raw rate beside it does: the vector cache stays out of it
    bench_settings = settings.with_overrides(index=alias, vector_cache=False)
    IndexManager(client, alias).delete_all()

    report = ingest_catalog(client, bench_settings, embedder, benchmark.catalog_path, fmt=benchmark.catalog_format)
    n_docs = report.agents + report.tools
    ingest = {
        "documents": n_docs,
        "tools": report.tools,
        "agents": report.agents,
        "seconds": round(report.seconds, 3),
        "documents_per_s": round(n_docs / report.seconds, 1),
        "embed_seconds_inside_ingest": round(report.embed_seconds, 3),
        "includes": "load + normalise (two passes) + embed + bulk index + refresh, fresh index",
    }
    raw_embedding: dict[str, Any] = {
        **_embedding_rate(benchmark.catalog_path, benchmark.catalog_format, embedder, settings.max_field_chars),
        "includes": "Embedder.encode_document of the same distinct texts, nothing else",
    }

    backend = SearchBackend(client, bench_settings, embedder=embedder)

    def searched(method: str, retriever: str) -> Callable[[str], object]:
        return lambda q: backend.search(SearchRequest(query=q, method=method, retriever=retriever,  # type: ignore[arg-type]
                                                      rewrite=False))
    queries = list(benchmark.queries.values())
    if max_queries:
        queries = queries[:max_queries]

    def raw_bm25(q: str) -> None:
        client.search(index=alias, body={"size": 10, "_source": [F.tool_id], "query": {"match": {F.full_doc: cap_terms(q)}}})

    def dense_floor(q: str) -> None:
        vector = wire_vector(embedder.encode_query([q])[0])  # sent as the search backend sends its vectors
        client.search(
            index=alias,
            body={"size": 10, "_source": [F.tool_id], "query": {"knn": {vector_field(F.full_doc): {"vector": vector, "k": 10}}}},
        )

    variants: dict[str, Callable[[str], object]] = {
        "full-doc bm25": searched("full-doc", "bm25"),
        "full-doc minilm": searched("full-doc", "minilm"),
        "multi-field bm25": searched("multi-field", "bm25"),
        "multi-field minilm": searched("multi-field", "minilm"),
        "multi-field hybrid": searched("multi-field", "hybrid"),
        "reference: raw bm25 match": raw_bm25,
        "reference: dense floor": dense_floor,
    }
    search: dict[str, Any] = {}
    for name, call in variants.items():
        # Cleared before every call, outside the timed span: neither the warm-up, nor an earlier row, nor
        # an earlier (or repeated) query of this row leaves an embedding for a timed call to find.
        for q in queries[:warmup]:
            embedder.clear_query_cache()
            call(q)
        samples = []
        for i, q in enumerate(queries, start=1):
            embedder.clear_query_cache()
            t0 = time.perf_counter()
            call(q)
            samples.append((time.perf_counter() - t0) * 1000)
            if progress:
                progress(name, i, len(queries))
        search[name] = {**latency_summary(samples), "includes": SEARCH_VARIANTS[name]}
    return {
        "dataset": benchmark.name,
        "index": backend.searcher().index.index,
        "embedding_model": embedder.name,
        "device": embedder.device,
        "candidates": settings.candidates,
        "queries": len(queries),
        "ingest": ingest,
        "raw_embedding": raw_embedding,
        "search_latency_ms": search,
        "note": SAMPLING,
    }


