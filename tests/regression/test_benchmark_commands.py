"""The speed tables' commands still run and print every published row (speed is never asserted).

Speed and throughput are benchmark figures (docs/evaluation.md: `toolsift bench latency`, `toolsift
bench rerank`), so no test times anything. What a test can guard is that the commands behind those
tables still measure every variant they publish, on the real node with the real model: here on a
small APIBank slice, with the ranker service in the path for `bench rerank`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

#: The rows of "Search latency" in docs/evaluation.md.
LATENCY_ROWS = ["full-doc bm25", "full-doc minilm", "multi-field bm25", "multi-field minilm", "multi-field hybrid",
                "reference: raw bm25 match", "reference: dense floor"]


def _apibank_slice(datasets: Path, folder: Path, tools: int = 20) -> Path:
    """A ToolRet folder with APIBank's first ``tools`` tools and the queries that label only them."""
    source = datasets / "toolret" / "apibank"
    kept = json.loads((source / "tools.json").read_text(encoding="utf-8"))[:tools]
    ids = {t["id"] for t in kept}
    queries = [q for q in json.loads((source / "queries.json").read_text(encoding="utf-8"))
               if {label["id"] for label in q["labels"]} <= ids]
    folder.mkdir(parents=True)
    (folder / "tools.json").write_text(json.dumps(kept, ensure_ascii=False), encoding="utf-8")
    (folder / "queries.json").write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
    return folder


def test_bench_latency_measures_ingest_and_every_published_search_variant(
    client: Any, base_settings: Any, embedder: Any, datasets: Path, tmp_path: Path
) -> None:
    from toolsift.bench.search_bench import run_bench

    folder = _apibank_slice(datasets, tmp_path / "apibank-slice")

    figures = run_bench(client, base_settings, embedder, folder, max_queries=4, warmup=1)

    assert figures["ingest"]["tools"] == 20 and figures["ingest"]["documents_per_s"] > 0
    assert figures["raw_embedding"]["texts"] > 0
    assert list(figures["search_latency_ms"]) == LATENCY_ROWS
    assert all(row["n"] == 4 and 0 < row["p50"] <= row["p95"] <= row["p99"]
               for row in figures["search_latency_ms"].values())
    client.indices.delete(index="toolsift-bench-apibank-slice*", ignore_unavailable=True)


@pytest.mark.slow  # a benchmark command's full drill: `make test-slow` (CI time, docs/contributing.md)
def test_bench_rerank_times_the_base_ranker_and_a_reranker_in_process_and_through_the_service(
    client: Any, base_settings: Any, embedder: Any, datasets: Path, seeded_cross_encoder: Path
) -> None:
    from toolsift.evaluation.runner import ensure_eval_index
    from toolsift.bench.rerank_bench import run_rerank_bench

    apibank = datasets / "toolret" / "apibank"
    ensure_eval_index(client, base_settings, embedder, "toolsift-eval-apibank", apibank / "tools.json", "toolret")
    queries = [q["query"] for q in json.loads((apibank / "queries.json").read_text(encoding="utf-8"))[:3]]
    settings = base_settings.with_overrides(index="toolsift-eval-apibank", rerank_top=5)

    figures = run_rerank_bench(client, settings, embedder, queries, rerankers=[f"cross-encoder:{seeded_cross_encoder}"],
                               retriever="minilm", concurrency=2)

    assert figures["queries"] == 3 and figures["candidates_per_query"] > 10
    base, reranked = figures["rows"]
    assert (base["config"], base["rerank_top"]) == ("field-weights", None)
    assert reranked["rerank_top"] == 5 and reranked["in_process"]["pairs_per_s"] > 0
    for row in (base, reranked):
        assert row["in_process"]["latency_ms"]["n"] == 3
        assert row["service"]["sequential_latency_ms"]["n"] == 3


@pytest.mark.slow  # a benchmark command's full drill: `make test-slow` (CI time, docs/contributing.md)
def test_bench_outage_loses_nothing_when_the_node_crashes_mid_ingest_and_serves_clean_503s_while_it_is_down(
    base_settings: Any, embedder: Any, datasets: Path, tmp_path: Path
) -> None:
    """The drill of `toolsift bench outage` on 15 LiveMCPBench servers, on a node of its own."""
    from toolsift.bench.outage import run_outage_drill

    servers = json.loads((datasets / "livemcpbench" / "tools.json").read_text(encoding="utf-8"))[:15]
    catalog = tmp_path / "servers.json"
    catalog.write_text(json.dumps(servers, ensure_ascii=False), encoding="utf-8")
    queries = ["search the web for recent news", "convert a markdown file to pdf", "weather forecast for Paris"]

    figures = run_outage_drill(base_settings, embedder, catalog, queries, clients=2, up_s=4, after_s=6)

    ingest, served = figures["ingest"], figures["serving"]
    assert ingest["killed_mid_ingest"] and ingest["interrupted_error"]["code"] == "opensearch_unavailable"
    assert ingest["unfinished_after_restart"] == [str(catalog)] and ingest["unfinished_after_rerun"] == []
    assert ingest["converged"] and (ingest["lost"], ingest["duplicated"]) == (0, 0)
    assert not ingest["rerun"]["skipped_as_current"]
    for front_end in ("api", "mcp"):
        run = served[front_end]
        assert run["ok"] > 0 and run["errors_while_down"] > 0, run
        assert run["errors_before_the_kill"] == 0 and run["errors_after_the_node_returned"] == 0, run
        assert run["errors_clean_503"] == run["errors"], run["unclean_errors"]
        assert run["first_full_answer_after_return_s"] is not None
