"""``toolsift bench opensearch``: toolsift's ranking inside OpenSearch's search pipeline, against
``toolsift search`` (equivalence) and against the plain hybrid query (added latency).

For each benchmark folder: its eval index (as ``toolsift eval`` builds it), ``toolsift serve ranker`` as
its own process on loopback with a fresh token, and ``toolsift deploy opensearch`` for that index
(:func:`toolsift.search.native_stages.deploy_native`). Then every query, one after the other:

* **toolsift search**: :meth:`Searcher.search` in this process (top 10);
* **plain hybrid**: what a client without toolsift's ranking sends: the query encoded here and the
  first-stage hybrid query straight to OpenSearch with the index's min-max pipeline;
* **OpenSearch-native**: the stored search template with ``?search_pipeline=`` (the service builds the
  first stage and ranks the hits; OpenSearch calls it through ml-commons), top 10 of its hits.

Figures: NDCG@10 of both rankings and their difference, how many queries got the identical top 10, and
p50 / p95 of each path and of the per-query added time (native minus plain). Three warm-up queries
are not timed. The deployment is removed afterwards.

**Per hop**: the native path's time split into what the service does for each of its two calls, run
here in process on the same code (:class:`~toolsift.search.native_stages.NativeStages`; the query encoded
afresh, as the service's first call does), OpenSearch's search of the first stage the service built,
and the rest: ml-commons' connectors and processors and the two HTTP round trips (the native time
minus the three).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from toolsift.config import Settings
from toolsift.encoders.embedding import Embedder
from toolsift.bench.failover import RankerProcess
from toolsift.evaluation.metrics import evaluate
from toolsift.evaluation.runner import ensure_eval_index, eval_index_name, latency_summary, ranked_run
from toolsift.ingest.benchmarks import load_benchmark
from toolsift.ingest.loaders.mcp import tool_id_for as mcp_tool_id
from toolsift.plugin_scripts.native import native_names
from toolsift.query.structured import StructuredQuery
from toolsift.search import Searcher
from toolsift.search.native_stages import NativeStages, deploy_native, remove_native, template_params

__all__ = ["run_native_bench", "EQUIVALENCE_TOLERANCE"]

#: The issue's bar: NDCG@10 through OpenSearch within this of ``toolsift search``'s.
EQUIVALENCE_TOLERANCE = 0.005
_WARMUP = 3
_TOP = 10


def run_native_bench(
    client: OpenSearch,
    settings: Settings,
    embedder: Embedder,
    dataset_dirs: Sequence[Path],
    *,
    max_queries: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Measure every dataset of ``dataset_dirs`` (see the module docstring); the figures as a dict."""
    started = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory(prefix="toolsift-native-") as scratch:
        service = RankerProcess(settings.with_overrides(ranker_token=None), Path(scratch) / "ranker.log")
        service.start()
        try:
            service.wait_healthy(300)
            for folder in dataset_dirs:
                rows.append(_one_dataset(client, settings, embedder, Path(folder), service, max_queries, progress))
        finally:
            service.stop()
    return {
        "datasets": rows,
        "tolerance": EQUIVALENCE_TOLERANCE,
        "equivalent": all(abs(r["ndcg@10_difference"]) <= EQUIVALENCE_TOLERANCE for r in rows),
        "retriever": settings.retriever,
        "candidates": settings.candidates,
        "reranker": settings.reranker,
        "seconds": round(time.perf_counter() - started, 1),
    }


def _one_dataset(
    client: OpenSearch,
    settings: Settings,
    embedder: Embedder,
    folder: Path,
    service: RankerProcess,
    max_queries: int | None,
    progress: Callable[[str, int, int], None] | None,
) -> dict[str, Any]:
    benchmark = load_benchmark(folder, tool_id_for=mcp_tool_id)
    alias = eval_index_name(benchmark, embedder.name)
    ensure_eval_index(client, settings, embedder, alias, benchmark.catalog_path, benchmark.catalog_format)
    local = settings.with_overrides(index=alias, ranker_url=None, query_log=False)
    report = deploy_native(client, local, ranker_url=service.url, token=service.token,
                           timeout_s=max(settings.ranker_timeout, 5.0))
    names = native_names(alias)
    try:
        searcher = Searcher(client, local, embedder, source="eval")
        retriever = local.retriever
        plain_pipeline = searcher.first_stage_pipeline(retriever)
        qids = [q for q in benchmark.qrels if q in benchmark.queries]
        if max_queries is not None:
            qids = qids[:max_queries]
        runs: dict[str, dict[str, dict[str, float]]] = {"toolsift": {}, "opensearch": {}}
        times: dict[str, list[float]] = {"toolsift": [], "plain": [], "opensearch": []}
        added: list[float] = []
        hops: dict[str, list[float]] = {"first_stage_service": [], "search": [], "ranking_service": [],
                                        "connectors_and_http": []}
        stages = NativeStages(local, lambda: client, embedder)
        identical = 0
        for done, qid in enumerate([*qids[:_WARMUP], *qids], start=1 - _WARMUP):
            query = benchmark.queries[qid]
            embedder.clear_query_cache()
            t0 = time.perf_counter()
            # The native pipeline ranks every copy of a tool: so does the ranking it is compared with.
            mine = [t.doc_id for t in searcher.search(query, top_k=_TOP, copies="all").tools]
            t_mine = time.perf_counter() - t0

            embedder.clear_query_cache()
            t0 = time.perf_counter()
            sq = query if isinstance(query, StructuredQuery) else searcher.structure(query)
            body, _ = searcher.first_stage_request(sq, searcher.encode(sq, retriever), retriever, _TOP)
            client.search(index=alias, body=body, params={"search_pipeline": plain_pipeline} if plain_pipeline else {})
            t_plain = time.perf_counter() - t0

            t0 = time.perf_counter()
            answer = client.search_template(index=alias, body={"id": names.template, "params": template_params(query)},
                                            params={"search_pipeline": names.pipeline})
            t_native = time.perf_counter() - t0
            theirs = [str(h["_id"]) for h in answer["hits"]["hits"][:_TOP]]
            split = _hops(client, stages, embedder, alias, names.template, query, plain_pipeline)
            if done <= 0:
                continue  # warm-up
            for name, ms in split.items():
                hops[name].append(ms)
            hops["connectors_and_http"].append(t_native * 1000 - sum(split.values()))
            runs["toolsift"][qid] = ranked_run(mine, _TOP)
            runs["opensearch"][qid] = ranked_run(theirs, _TOP)
            identical += mine == theirs
            for name, seconds in (("toolsift", t_mine), ("plain", t_plain), ("opensearch", t_native)):
                times[name].append(seconds * 1000)
            added.append((t_native - t_plain) * 1000)
            if progress:
                progress(benchmark.name, done, len(qids))
        qrels = {q: benchmark.qrels[q] for q in qids}
        ndcg = {name: evaluate(qrels, run, ["ndcg@10"])["ndcg@10"] for name, run in runs.items()}
    finally:
        remove_native(client, local)
    return {
        "dataset": benchmark.name,
        "index": alias,
        "n_queries": len(qids),
        "weights_version": report.weights_version,
        "ndcg@10_toolsift": round(ndcg["toolsift"], 4),
        "ndcg@10_opensearch": round(ndcg["opensearch"], 4),
        "ndcg@10_difference": round(ndcg["opensearch"] - ndcg["toolsift"], 4),
        "identical_top10": identical,
        "latency_ms": {name: latency_summary(values) for name, values in times.items()},
        "added_ms": latency_summary(added),
        "native_hops_ms": {name: latency_summary(values) for name, values in hops.items()},
    }


def _hops(client: OpenSearch, stages: NativeStages, embedder: Embedder, alias: str, template: str,
          query: str | StructuredQuery, pipeline: str | None) -> dict[str, float]:
    """The native path's parts for ``query`` (ms), each run as the pipeline runs it: the service's first
    stage (the template's toolsift request in, the query encoded afresh), OpenSearch's search of the body
    it returns, the service's ranking of those hits."""
    rendered = client.render_search_template(body={"id": template, "params": template_params(query)})
    request = rendered["template_output"]["ext"]["ml_inference"]["toolsift"]
    embedder.clear_query_cache()
    t0 = time.perf_counter()
    body = json.loads(stages.first_stage(alias, request)["body"])
    t1 = time.perf_counter()
    hits = client.search(index=alias, body=body, params={"search_pipeline": pipeline} if pipeline else {})
    t2 = time.perf_counter()
    ids = [str(hit["_source"].get("tool_id")) for hit in hits["hits"]["hits"]]
    stages.rank_hits(alias, ids, body["ext"]["ml_inference"]["toolsift"])
    t3 = time.perf_counter()
    return {"first_stage_service": (t1 - t0) * 1000, "search": (t2 - t1) * 1000,
            "ranking_service": (t3 - t2) * 1000}
