"""``toolsift bench encoder``: the embedding backends side by side — speed, and what they do to retrieval.

For each benchmark folder and each backend (``torch``, ``onnx``, ``onnx-int8``):

- **exact dense retrieval**: every query against every tool by brute-force cosine (no HNSW, so no
  approximate-search noise), one tool text per row — the flat document (``full_doc``, the Full-Doc
  baseline's text), the description and the overview — scored with NDCG@10 and Recall@5 against the
  benchmark's qrels. The difference between backends is the encoder's own effect on retrieval; a
  backend is a drop-in replacement where it moves no row by 0.005 or more.
- **raw encode rate**: the catalog's own texts (names, descriptions, parameters; the floor of
  ``bench ingest``) encoded by each backend in turn, ``rounds`` times interleaved (so a busy
  machine slows every backend alike); texts/s of the best and the median round, and each backend's
  rate over torch's.

Nothing here touches OpenSearch.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toolsift.config import Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import ConfigError
from toolsift.bench.ingest_bench import floor_texts
from toolsift.ingest.benchmarks import load_benchmark
from toolsift.ingest.loaders import load_catalog
from toolsift.ingest.loaders.mcp import tool_id_for
from toolsift.ingest.pipeline import normalised_records
from toolsift.mappings import AgentDoc, ToolDoc

__all__ = ["run_encoder_bench", "FIELDS", "BACKENDS", "DROP_IN_TOLERANCE"]

#: The tool texts scored by exact dense retrieval.
FIELDS = ("full_doc", "description", "overview")
#: The backends compared, the reference first.
BACKENDS = ("torch", "onnx", "onnx-int8")
#: A backend moving no NDCG@10 by this much or more counts as a drop-in replacement.
DROP_IN_TOLERANCE = 0.005


def _exact(embedder: Embedder, docs: Sequence[ToolDoc], queries: dict[str, str],
           qrels: dict[str, dict[str, int]]) -> dict[str, dict[str, float]]:
    import ir_measures
    from ir_measures import R, nDCG

    qids = [q for q in queries if q in qrels]
    query_vectors = embedder.encode_query([queries[q] for q in qids], cache=False)
    ids = [d.tool_id for d in docs]
    scores: dict[str, dict[str, float]] = {}
    for field in FIELDS:
        vectors = embedder.encode_document([getattr(d, field) or d.name for d in docs])
        similarity = query_vectors @ vectors.T
        run = {}
        for row, qid in enumerate(qids):
            top = np.argsort(-similarity[row], kind="stable")[:100]
            run[qid] = {ids[j]: float(similarity[row, j]) for j in top}
        measured = ir_measures.calc_aggregate([nDCG @ 10, R @ 5], qrels, run)
        scores[field] = {"ndcg_10": round(float(measured[nDCG @ 10]), 4), "recall_5": round(float(measured[R @ 5]), 4)}
    return scores


def run_encoder_bench(settings: Settings, datasets: Sequence[Path], *, backends: Sequence[str] = BACKENDS,
                      rounds: int = 3, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Measure every backend on every benchmark folder; returns the figures as a JSON-able dict.

    Raises:
        ConfigError: an unknown backend, or ``torch`` missing from ``backends`` (the reference).
        CatalogError: a benchmark folder cannot be read.
    """
    say = progress or (lambda _m: None)
    if not backends or backends[0] != "torch" or any(b not in BACKENDS for b in backends):
        raise ConfigError(f"bench encoder compares backends of {BACKENDS}, torch first (the reference); got {list(backends)}")
    say("loading " + ", ".join(backends))
    embedders = {b: Embedder(settings.embedding_model, device="cpu", batch_size=settings.embedding_batch_size,
                             backend=b, cache_dir=settings.cache_dir) for b in backends}
    results: list[dict[str, Any]] = []
    for folder in datasets:
        benchmark = load_benchmark(folder, tool_id_for=tool_id_for)
        docs = [d for _, d in normalised_records(load_catalog(benchmark.catalog_path, benchmark.catalog_format),
                                                 settings.max_field_chars) if isinstance(d, (ToolDoc, AgentDoc))]
        tools = [d for d in docs if isinstance(d, ToolDoc)]
        texts = floor_texts(docs)
        row: dict[str, Any] = {"dataset": benchmark.name, "tools": len(tools), "queries": len(benchmark.qrels),
                               "texts": len(texts), "backends": {}}
        times: dict[str, list[float]] = {b: [] for b in backends}
        for backend, embedder in embedders.items():
            embedder.encode_document(texts[:64])  # warm-up
        for turn in range(rounds):
            for backend, embedder in embedders.items():
                say(f"{benchmark.name}: encode round {turn + 1}/{rounds}, {backend}")
                started = time.perf_counter()
                embedder.encode_document(texts)
                times[backend].append(time.perf_counter() - started)
        for backend, embedder in embedders.items():
            say(f"{benchmark.name}: exact dense retrieval, {backend}")
            row["backends"][backend] = {
                "texts_per_s_best": round(len(texts) / min(times[backend]), 1),
                "texts_per_s_median": round(len(texts) / statistics.median(times[backend]), 1),
                "rounds_seconds": [round(t, 3) for t in times[backend]],
                "exact": _exact(embedder, tools, benchmark.queries, benchmark.qrels),
            }
        reference = row["backends"]["torch"]
        for backend in backends:
            figures = row["backends"][backend]
            figures["speedup_median"] = round(figures["texts_per_s_median"] / reference["texts_per_s_median"], 2)
            figures["ndcg_10_delta"] = {f: round(figures["exact"][f]["ndcg_10"] - reference["exact"][f]["ndcg_10"], 4)
                                        for f in FIELDS}
            figures["drop_in"] = all(abs(d) < DROP_IN_TOLERANCE for d in figures["ndcg_10_delta"].values())
        results.append(row)
    return {"embedding_model": settings.embedding_model, "rounds": rounds, "fields": list(FIELDS),
            "tolerance": DROP_IN_TOLERANCE, "datasets": results,
            "note": "exact = brute-force cosine over every tool (no HNSW); rates interleaved across backends, "
                    "this machine, this moment"}
