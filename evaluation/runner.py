"""``toolsift eval``: ingest a benchmark into its own index, run every query, score the run.

The index for a benchmark is ``toolsift-eval-<name>``; it is reused as is when the catalog file,
the document schema, the embedding model and the document-building code are unchanged (the index
records the catalog's hash and the code's version); otherwise it is rebuilt.
The run keeps toolsift's own order: each returned tool is scored ``depth - rank`` so metric
libraries cannot re-order ties differently from what the user would see.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from toolsift.config import Retriever, Settings
from toolsift.encoders.embedding import BUNDLED_MODEL, Embedder
from toolsift.ingest.benchmarks import Benchmark, benchmark_slug, load_benchmark
from toolsift.evaluation.metrics import DEFAULT_MEASURES, evaluate
from toolsift.ingest.loaders.mcp import tool_id_for as mcp_tool_id
from toolsift.ingest.pipeline import IngestReport, catalog_current, ingest_catalog
from toolsift.mappings.index import IndexManager
from toolsift.search import Method, Searcher

__all__ = ["EvalResult", "run_eval", "eval_index_name", "model_alias", "latency_summary", "ensure_eval_index",
           "ranked_run"]


def eval_index_name(benchmark: Benchmark, model: str = BUNDLED_MODEL) -> str:
    """The alias a benchmark is evaluated in: ``toolsift-eval-<benchmark>`` (:func:`model_alias`)."""
    return model_alias(f"toolsift-eval-{benchmark_slug(benchmark.name)}", model)


def model_alias(alias: str, model: str) -> str:
    """``alias`` for the bundled encoder, ``alias--<model>`` for any other, so measuring another encoder
    never rebuilds the default's evaluation index."""
    if model == BUNDLED_MODEL:
        return alias
    return f"{alias}--{benchmark_slug(model)}"


def ensure_eval_index(
    client: OpenSearch,
    settings: Settings,
    embedder: Embedder,
    alias: str,
    catalog: Path,
    fmt: str,
    *,
    prune: bool = False,
) -> IngestReport:
    """Ingest a benchmark catalog into its own ``alias``, reused while it is what this code would build.

    The index is reused while the catalog file, the document schema, the embedding model and the
    document-building code (:func:`~toolsift.ingest.version.document_builder_version`) match. An index
    of an older schema or another model, or one holding a catalog built by other document-building
    code, is rebuilt beside the old one, then swapped in: a benchmark is never scored on old documents.
    """
    manager = IndexManager(client, alias)
    info = manager.current()
    stale = manager.is_stale(embedder.name, embedder.dimension) or (
        info is not None and not all(catalog_current(record) for record in info.catalogs.values())
    )
    return ingest_catalog(
        client,
        settings.with_overrides(index=alias),
        embedder,
        catalog,
        fmt=fmt,
        skip_if_unchanged=True,
        rebuild=stale,
        prune=prune,
        approvals=False,  # a benchmark is measured on its files as they are
    )


def ranked_run(doc_ids: Iterable[str], depth: int) -> dict[str, float]:
    """One query's run in toolsift's own order: the i-th document scores ``depth - i``."""
    return {doc_id: float(depth - i) for i, doc_id in enumerate(doc_ids)}


def latency_summary(samples_ms: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / p99 / mean in milliseconds (nearest-rank percentiles)."""
    if not samples_ms:
        return {}
    ordered = sorted(samples_ms)

    def pct(p: float) -> float:
        rank = max(1, int(round(p / 100 * len(ordered) + 0.5 - 1e-9)))
        return ordered[min(rank, len(ordered)) - 1]

    return {
        "p50": round(pct(50), 2),
        "p95": round(pct(95), 2),
        "p99": round(pct(99), 2),
        "mean": round(sum(ordered) / len(ordered), 2),
        "n": len(ordered),
    }


@dataclass(frozen=True)
class EvalResult:
    """One evaluation: the stable ``--json`` contract plus protocol details."""

    dataset: str
    method: str
    retriever: str
    n_queries: int
    metrics: dict[str, float]
    index: str
    embedding_model: str | None
    latency_ms: dict[str, float] = field(default_factory=dict)
    protocol: dict[str, Any] = field(default_factory=dict)
    ingest: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "metrics": {k: round(v, 4) for k, v in self.metrics.items()}}


def run_eval(
    client: OpenSearch,
    settings: Settings,
    dataset_dir: Path,
    *,
    method: Method,
    retriever: Retriever,
    embedder: Embedder,
    measures: Sequence[str] = DEFAULT_MEASURES,
    depth: int = 100,
    split: str = "test",
    progress: Callable[[int, int], None] | None = None,
) -> EvalResult:
    """Evaluate ``method`` × ``retriever`` on the benchmark folder ``dataset_dir``.

    Args:
        client: connected client.
        settings: base settings; the index alias is replaced by the benchmark's own.
        dataset_dir: a ToolRet folder (``tools.json`` + ``queries.json``), or another supported
            benchmark folder.
        method, retriever: what to evaluate.
        embedder: the embedding model (ingest always embeds; dense retrieval encodes queries).
        measures: metric names (``ndcg@10``, ``recall@10``, ``completeness@10``, …).
        depth: how many tools each query returns into the run.
        split: for benchmarks with splits (BEIR qrels files), which one to evaluate.
        progress: called with (done, total) queries.
    """
    benchmark = load_benchmark(Path(dataset_dir), split=split, tool_id_for=mcp_tool_id)
    alias = eval_index_name(benchmark, embedder.name)
    bench_settings = settings.with_overrides(index=alias)
    report = ensure_eval_index(client, settings, embedder, alias, benchmark.catalog_path, benchmark.catalog_format)
    searcher = Searcher(client, bench_settings, embedder)
    run: dict[str, dict[str, float]] = {}
    latencies: list[float] = []
    qids = [q for q in benchmark.qrels if q in benchmark.queries]
    for done, qid in enumerate(qids, start=1):
        t0 = time.perf_counter()
        result = searcher.search(benchmark.queries[qid], top_k=depth, method=method, retriever=retriever)
        latencies.append((time.perf_counter() - t0) * 1000)
        run[qid] = ranked_run((t.doc_id for t in result.tools), depth)
        if progress:
            progress(done, len(qids))
    qrels = {q: benchmark.qrels[q] for q in qids}
    metrics = evaluate(qrels, run, measures)
    return EvalResult(
        dataset=benchmark.name,
        method=method,
        retriever=retriever,
        n_queries=len(qids),
        metrics=metrics,
        index=searcher.index.index,
        embedding_model=embedder.name,
        latency_ms=latency_summary(latencies),
        protocol={
            "relevance": "binary: a labelled tool with grade >= 1 is relevant",
            "run_depth": depth,
            "queries": "every query with at least one relevant tool; a query with no results scores 0",
            "split": split if benchmark.splits else "all",
            "ranker": searcher.ranker.name if method == "multi-field" else "opensearch",
            "field_weights": dict(settings.field_weights) if method == "multi-field" else None,
            "weights_version": searcher.weights_version if method == "multi-field" else None,
        },
        ingest=report.to_dict(),
    )
