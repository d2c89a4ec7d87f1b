"""``toolsift bench ingest``: a catalog's ingest next to the floor it is held to, measured in one run.

Rows, in the order they run:

Each row has its wall clock and this process's CPU seconds (the node's work excluded): on a shared
machine the CPU seconds move less.

- ``floor``: plain sentence-transformers (torch, batch 64, the embedding model's files, the
  embedder's device) encoding the catalog's own texts — every tool's and server's name and
  description and every parameter's ``name: description``, each distinct text once — the cost of
  embedding the catalog at all. Timed before the ingests and again after them; the mean is the floor
  (the machine may be shared: both runs are in the JSON).
- ``encoder``: toolsift's embedder (its ``embedding_backend``: ONNX Runtime on a CPU by default)
  encoding the floor's texts, timed right after each floor run: the raw encode rate against torch's.
- ``cold ingest``: ``toolsift ingest`` of the catalog into a fresh index with an empty vector cache:
  load, validate and screen, embed every text toolsift indexes (more and longer texts than the
  floor's: the flat ``full_doc``, the overview, examples, responses), bulk index, refresh.
- ``warm re-ingest``: the same catalog into a fresh index again, the vector cache now holding its
  texts (a rebuild, a new index version): nothing is encoded; tools/s is the figure.
- ``bulk only``: the warm run's documents (JSON bodies already built) streamed into another fresh
  index with nothing else: what the node itself takes to index them (its k-NN graphs), the bound
  of any re-ingest.

The cache used is a temporary folder, removed afterwards: the user's cache neither flatters the cold
run nor receives the bench's vectors.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.helpers import streaming_bulk

from toolsift.config import Settings
from toolsift.encoders.embedding import Embedder, model_path
from toolsift.ingest.embed import index_sources
from toolsift.ingest.loaders import detect_format, load_catalog
from toolsift.ingest.pipeline import IngestReport, ingest_catalog, normalised_records
from toolsift.encoders.vectorcache import CACHE_FILE, CachedEncoder, VectorCache
from toolsift.mappings import AgentDoc, ToolDoc, tool_routing
from toolsift.mappings.index import IndexManager
from toolsift.opensearch import bulk_loading

__all__ = ["run_ingest_bench", "floor_texts", "BENCH_INDEX"]

#: The alias the bench writes (dropped before and after).
BENCH_INDEX = "toolsift-bench-ingest"
#: The floor's batch size: sentence-transformers' default, the issue's reference.
FLOOR_BATCH = 64


def floor_texts(docs: list[ToolDoc | AgentDoc]) -> list[str]:
    """The catalog's own texts: names, descriptions and parameters' ``name: description``, distinct."""
    texts: list[str] = []
    for doc in docs:
        texts += [doc.name, doc.description]
        if isinstance(doc, ToolDoc):
            texts += [p.embedding_text for p in doc.parameters]
    return [t for t in dict.fromkeys(texts) if t]


def _floor_seconds(model_dir: Path, device: str, texts: list[str]) -> tuple[float, float]:
    """Plain sentence-transformers on ``texts`` (after a one-batch warm-up): wall clock and this
    process's CPU seconds."""
    from sentence_transformers import SentenceTransformer

    from toolsift.encoders.embedding import no_progress_bars

    with no_progress_bars():
        model = SentenceTransformer(str(model_dir), device=device, local_files_only=True)
    model.encode(texts[:FLOOR_BATCH], batch_size=FLOOR_BATCH, show_progress_bar=False)
    t0, c0 = time.perf_counter(), time.process_time()
    model.encode(texts, batch_size=FLOOR_BATCH, normalize_embeddings=True, show_progress_bar=False)
    return time.perf_counter() - t0, time.process_time() - c0


def _encoder_seconds(embedder: Embedder, texts: list[str]) -> tuple[float, float]:
    """toolsift's embedder on ``texts`` (after a one-batch warm-up): wall clock and CPU seconds."""
    embedder.encode_document(texts[:FLOOR_BATCH])
    t0, c0 = time.perf_counter(), time.process_time()
    embedder.encode_document(texts)
    return time.perf_counter() - t0, time.process_time() - c0


def _timed_ingest(client: OpenSearch, settings: Settings, embedder: Embedder, catalog: Path,
                  fmt: str) -> tuple[IngestReport, float]:
    c0 = time.process_time()
    report = ingest_catalog(client, settings, embedder, catalog, fmt=fmt, approvals=False)
    return report, time.process_time() - c0


def _ingest_row(report: IngestReport, cpu_seconds: float) -> dict[str, Any]:
    docs = report.tools + report.agents
    return {
        "seconds": round(report.seconds, 3),
        "cpu_seconds": round(cpu_seconds, 3),
        "tools": report.tools,
        "documents": docs,
        "tools_per_s": round(report.tools / report.seconds, 1),
        "documents_per_s": round(docs / report.seconds, 1),
        "embed_seconds": round(report.embed_seconds, 3),
        "texts_embedded": report.texts_embedded,
        "texts_encoded": report.texts_encoded,
        "texts_cached": report.texts_cached,
        "ok": report.ok,
    }


def _bulk_only(client: OpenSearch, settings: Settings, encoder: CachedEncoder, docs: list[ToolDoc | AgentDoc],
               embedder: Embedder) -> dict[str, Any]:
    """The documents' bodies built first (from the cache), then timed: bulk into a fresh index + refresh."""
    sources = index_sources(encoder, docs)
    manager = IndexManager(client, settings.index, shards=settings.shards, replicas=settings.replicas)
    target = manager.create_version(embedder.name, embedder.dimension, sum(isinstance(d, ToolDoc) for d in docs))
    actions = []
    for doc, source in zip(docs, sources, strict=True):
        action: dict[str, Any] = {"_index": target, "_id": doc.agent_id if isinstance(doc, AgentDoc) else doc.tool_id,
                                  "_source": source}
        if isinstance(doc, ToolDoc) and doc.agent_id:
            action["_routing"] = tool_routing(doc)
        actions.append(action)
    t0 = time.perf_counter()
    with bulk_loading(client, target):
        failed = sum(1 for ok, _ in streaming_bulk(client, actions, chunk_size=200, raise_on_error=False) if not ok)
    client.indices.refresh(index=target)
    seconds = time.perf_counter() - t0
    client.indices.delete(index=target, ignore_unavailable=True)
    tools = sum(isinstance(d, ToolDoc) for d in docs)
    return {"seconds": round(seconds, 3), "tools_per_s": round(tools / seconds, 1),
            "documents_per_s": round(len(docs) / seconds, 1), "failed": failed}


def run_ingest_bench(
    client: OpenSearch,
    settings: Settings,
    embedder: Embedder,
    catalog: Path,
    *,
    fmt: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Measure the rows of this module on ``catalog``; returns the figures as a JSON-able dict.

    Raises:
        CatalogError: the catalog cannot be read.
    """
    say = progress or (lambda _m: None)
    catalog = Path(catalog)
    fmt = fmt or detect_format(catalog)
    docs = [d for _, d in normalised_records(load_catalog(catalog, fmt, max_depth=settings.max_nesting_depth),
                                             settings.max_field_chars, max_depth=settings.max_nesting_depth)
            if isinstance(d, (ToolDoc, AgentDoc))]
    texts = floor_texts(docs)
    model_dir = model_path(settings.embedding_model)
    floors = []
    say(f"floor: plain sentence-transformers on {len(texts)} texts")
    floors.append(_floor_seconds(model_dir, embedder.device, texts))
    encoders = [_encoder_seconds(embedder, texts)]
    manager = IndexManager(client, BENCH_INDEX)
    with tempfile.TemporaryDirectory(prefix="toolsift-bench-vectors-") as folder:
        bench = settings.with_overrides(index=BENCH_INDEX, vector_cache=True, vector_cache_dir=Path(folder))
        manager.delete_all()
        say("cold ingest: fresh index, empty vector cache")
        cold, cold_cpu = _timed_ingest(client, bench, embedder, catalog, fmt)
        manager.delete_all()
        say("warm re-ingest: fresh index, the vector cache holding the catalog's texts")
        warm, warm_cpu = _timed_ingest(client, bench, embedder, catalog, fmt)
        manager.delete_all()
        say("bulk only: the same documents into a fresh index")
        cache = VectorCache(Path(folder) / CACHE_FILE, max_bytes=bench.vector_cache_max_mb << 20)
        try:
            bulk = _bulk_only(client, bench, CachedEncoder(embedder, cache), docs, embedder)
        finally:
            cache.close()
            manager.delete_all()
    say("floor again")
    floors.append(_floor_seconds(model_dir, embedder.device, texts))
    encoders.append(_encoder_seconds(embedder, texts))
    encoder = sum(e for e, _ in encoders) / len(encoders)
    floor = sum(f for f, _ in floors) / len(floors)
    floor_cpu = sum(c for _, c in floors) / len(floors)
    cold_row, warm_row = _ingest_row(cold, cold_cpu), _ingest_row(warm, warm_cpu)
    return {
        "catalog": str(catalog),
        "format": fmt,
        "embedding_model": embedder.name,
        "backend": str(getattr(embedder, "backend", "torch")),
        "device": embedder.device,
        "floor": {
            "seconds": round(floor, 3),
            "cpu_seconds": round(floor_cpu, 3),
            "runs_seconds": [round(f, 3) for f, _ in floors],
            "texts": len(texts),
            "texts_per_s": round(len(texts) / floor, 1),
            "includes": f"plain sentence-transformers (torch, batch {FLOOR_BATCH}) on the catalog's names, "
                        "descriptions and parameters, distinct; mean of a run before and one after the ingests",
        },
        "encoder": {
            "seconds": round(encoder, 3),
            "cpu_seconds": round(sum(c for _, c in encoders) / len(encoders), 3),
            "runs_seconds": [round(e, 3) for e, _ in encoders],
            "texts_per_s": round(len(texts) / encoder, 1),
            "includes": f"toolsift's embedder ({getattr(embedder, 'backend', 'torch')}) on the floor's texts, "
                        "each run right after a floor run",
        },
        "encoder_speedup": round(floor / encoder, 2),
        "cold_ingest": {**cold_row, "includes": "toolsift ingest into a fresh index, empty vector cache"},
        "warm_reingest": {**warm_row, "includes": "toolsift ingest into a fresh index, the vector cache warm"},
        "bulk_only": {**bulk, "includes": "the same documents' JSON bodies bulk indexed into a fresh index + refresh"},
        "cold_ingest_over_floor": round(cold.seconds / floor, 2),
        "cold_ingest_over_floor_cpu": round(cold_cpu / floor_cpu, 2),
        "note": "wall clock on this machine; a shared machine makes every row noisy (the two floor runs show how "
                "much). cpu_seconds: this process's CPU time (the node's own work not included), steadier when "
                "other processes load the machine",
    }
