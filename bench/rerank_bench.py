"""``toolsift bench rerank``: what each ranking stage costs, in-process and through the service.

For a set of real requests (a benchmark's queries, first stage and exact field scores from the
index, each candidate with its reranker text) every configuration is timed:

* ``mftr``: the base ranker alone (MFTR with ``--weights``, else the fixed field weights);
* each reranker (``--reranker SPEC``, e.g. ``cross-encoder:PATH``, ``tool-rank:smollm2`` or a
  trained artifact) on the base ranker's top M.

Per configuration and transport: ranking latency per query (p50 / p95 / p99 / mean, nearest-rank as
in every toolsift benchmark), the latency it adds to the base ranker alone, and reranker throughput in pairs/s. In-process, also the peak batched
throughput (all pairs in batches of ``reranker_batch_size``). Through the service
(``toolsift serve ranker`` as a child process), requests are sent one at a time and then from
``concurrency`` clients at once, so the service's cross-request batching shows; the mean batch it
formed is read from its ``/metrics``. The device each figure came from is recorded.
"""

from __future__ import annotations

import re
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import torch

from toolsift.config import Retriever, Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import RankerUnavailableError
from toolsift.evaluation.runner import latency_summary
from toolsift.ranker.ranking_pipeline import RankingPipeline
from toolsift.ranker.protocol import RankRequest

__all__ = ["run_rerank_bench", "build_requests"]


def build_requests(client: Any, settings: Settings, embedder: Embedder | None, queries: Sequence[str],
                   retriever: Retriever, top_k: int = 10) -> list[RankRequest]:
    """Real ranking requests: each query's first stage and exact field scores, with candidate texts."""
    from toolsift.search import Searcher

    searcher = Searcher(client, settings, embedder)
    out = []
    for text in queries:
        sq = searcher.structure(text)
        vectors = searcher.encode(sq, retriever)
        signals = searcher.candidate_signals(sq, vectors, retriever, settings.candidates, documents=True)
        out.append(RankRequest.build(sq, list(signals.values()), top_k=top_k))
    return out


def _in_process(pipeline: RankingPipeline, requests: Sequence[RankRequest]) -> dict[str, Any]:
    pipeline.rank(requests[0])  # warm-up: first-call allocations and kernel selection
    totals: list[float] = []
    bases: list[float] = []
    reranks: list[float] = []
    pairs = 0
    for request in requests:
        t0 = time.perf_counter()
        answer = pipeline.rank(request)
        totals.append((time.perf_counter() - t0) * 1000)
        bases.append(answer.timings_ms.get("base", 0.0))
        reranks.append(answer.timings_ms.get("rerank", 0.0))
        pairs += answer.reranked
    rerank_seconds = sum(reranks) / 1000
    figures: dict[str, Any] = {
        "latency_ms": latency_summary(totals),
        "base_ms": latency_summary(bases),
        "rerank_ms": latency_summary(reranks),
        "pairs": pairs,
        "pairs_per_s": round(pairs / rerank_seconds, 1) if pairs and rerank_seconds > 0 else None,
    }
    if pipeline.reranker is not None:
        all_pairs = [p for r in requests for p in pipeline.base_pass(r)[1]]
        t0 = time.perf_counter()
        pipeline.reranker.score_pairs(all_pairs)
        seconds = time.perf_counter() - t0
        figures["peak_batched_pairs_per_s"] = round(len(all_pairs) / seconds, 1)
        figures["batch_size"] = pipeline.reranker.batch_size
    return figures


def _metric(text: str, name: str) -> float:
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and not line.startswith("#"):
            match = re.search(r"\s([0-9.eE+-]+)$", line)
            if match:
                total += float(match.group(1))
    return total


def _through_service(settings: Settings, requests: Sequence[RankRequest], concurrency: int,
                     log_dir: Path) -> dict[str, Any]:
    from toolsift.bench.failover import RankerProcess
    from toolsift.ranker.ranker_client import RemoteRanker

    service = RankerProcess(settings, log_dir / "ranker-service.log")
    service.start()
    try:
        health = service.wait_healthy(600.0)
        remote = RemoteRanker(service.url, timeout=600.0, token=service.token)
        remote.rank(requests[0])  # warm-up
        sequential, pairs = [], 0
        for request in requests:
            t0 = time.perf_counter()
            answer = remote.rank(request)
            sequential.append((time.perf_counter() - t0) * 1000)
            pairs += answer.reranked
            if answer.degraded:
                raise RankerUnavailableError(f"the service degraded during the benchmark: {answer.degraded_reason}")
        headers = {"Authorization": f"Bearer {service.token}"}
        before = httpx.get(f"{service.url}/metrics", headers=headers, timeout=10).text
        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            answers = list(pool.map(remote.rank, requests))
        wall = time.perf_counter() - t0
        after = httpx.get(f"{service.url}/metrics", headers=headers, timeout=10).text
        batches = _metric(after, "toolsift_ranker_batch_pairs_count") - _metric(before, "toolsift_ranker_batch_pairs_count")
        batched = _metric(after, "toolsift_ranker_batch_pairs_sum") - _metric(before, "toolsift_ranker_batch_pairs_sum")
        concurrent_pairs = sum(a.reranked for a in answers)
        remote.close()
        return {
            "device": health.get("device"),
            "sequential_latency_ms": latency_summary(sequential),
            "sequential_pairs_per_s": round(pairs / (sum(sequential) / 1000), 1) if pairs else None,
            "concurrency": concurrency,
            "concurrent_requests_per_s": round(len(requests) / wall, 2),
            "concurrent_pairs_per_s": round(concurrent_pairs / wall, 1) if concurrent_pairs else None,
            "mean_batch_pairs": round(batched / batches, 1) if batches else None,
            "degraded": sum(a.degraded for a in answers),
        }
    finally:
        service.stop()


def run_rerank_bench(
    client: Any,
    settings: Settings,
    embedder: Embedder | None,
    queries: Sequence[str],
    *,
    rerankers: Sequence[str],
    retriever: Retriever,
    service: bool = True,
    concurrency: int = 8,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Time the base ranker and each reranker (see the module docstring); the figures as a dict."""
    from toolsift.ranker.ranker_service import build_pipeline

    progress(f"building {len(queries)} requests from {settings.index}")
    requests = build_requests(client, settings, embedder, queries, retriever)
    configs: list[tuple[str, str | None]] = [("mftr" if settings.weights else "field-weights", None)]
    configs += [(spec, spec) for spec in rerankers]
    rows = []
    base_latency: float | None = None
    with tempfile.TemporaryDirectory(prefix="toolsift-bench-") as tmp:
        for label, spec in configs:
            configured = settings.model_copy(update={"reranker": spec})
            progress(f"{label}: in-process")
            pipeline = build_pipeline(configured)
            device = str(pipeline.reranker.device) if pipeline.reranker is not None else "cpu"
            row: dict[str, Any] = {"config": label, "ranker": pipeline.name, "device": device,
                                   "rerank_top": pipeline.rerank_top if pipeline.reranker else None,
                                   "in_process": _in_process(pipeline, requests)}
            del pipeline
            if base_latency is None:
                base_latency = row["in_process"]["latency_ms"]["mean"]
            row["in_process"]["added_ms"] = round(row["in_process"]["latency_ms"]["mean"] - base_latency, 2)
            if service:
                progress(f"{label}: through the service")
                row["service"] = _through_service(configured, requests, concurrency, Path(tmp))
            rows.append(row)
    return {
        "index": settings.index,
        "retriever": retriever,
        "queries": len(requests),
        "candidates_per_query": round(statistics.fmean(len(r.candidates) for r in requests), 1),
        "torch_threads": torch.get_num_threads(),
        "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "rows": rows,
    }
