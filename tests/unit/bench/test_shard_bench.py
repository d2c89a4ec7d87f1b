"""`toolsift bench shards`' pure parts: the tenant split of a catalog, OpenSearch's routing function, the
balance and latency summaries, top-10 overlap and nested k-NN recall, the nested k-NN variants' requests
and the table from a recorded result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolsift.errors import CatalogError, ConfigError
from toolsift.bench.shard_bench import (
    KNN_VARIANTS,
    balance,
    hit_recall,
    markdown_tables,
    murmur3_32,
    nested_knn_body,
    percentiles,
    routing_shard,
    split_by_tenant,
    summary_rows,
    top_overlap,
)

pytestmark = pytest.mark.usefixtures("clean_env")


def _catalog(path: Path, sizes: list[int]) -> Path:
    servers = [{"name": f"server-{i}", "description": "d",
                "tools": [{"name": f"t{j}", "description": "x"} for j in range(n)]} for i, n in enumerate(sizes)]
    path.write_text(json.dumps(servers), encoding="utf-8")
    return path


def test_the_tenant_split_gives_the_small_tenant_whole_servers_holding_about_its_share(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path / "c.json", [5, 10, 20, 50, 7, 8, 30, 40, 25, 5] * 10)  # 2,000 tools
    split = split_by_tenant(catalog, tmp_path / "out", 0.05, seed=3)
    small = json.loads(split.small_path.read_text(encoding="utf-8"))
    rest = json.loads(split.rest_path.read_text(encoding="utf-8"))
    assert split.tools == 2000 and split.small_servers == len(small)
    assert split.small_tools == sum(len(s["tools"]) for s in small) >= 100
    assert split.small_tools - max(len(s["tools"]) for s in small) < 100  # the last server crossed the share
    assert len(small) + len(rest) == 100
    assert {s["name"] for s in small}.isdisjoint(s["name"] for s in rest)
    assert split_by_tenant(catalog, tmp_path / "again", 0.05, seed=3).small_tools == split.small_tools


def test_the_tenant_split_keeps_a_server_for_each_tenant_and_refuses_what_it_cannot_split(tmp_path: Path) -> None:
    split = split_by_tenant(_catalog(tmp_path / "two.json", [5, 5]), tmp_path / "o", 0.99)
    assert split.small_servers == 1
    assert json.loads(split.rest_path.read_text(encoding="utf-8"))
    with pytest.raises(CatalogError, match="two servers"):
        split_by_tenant(_catalog(tmp_path / "one.json", [5]), tmp_path / "o", 0.5)
    with pytest.raises(CatalogError, match="between 0 and 1"):
        split_by_tenant(tmp_path / "two.json", tmp_path / "o", 1.0)
    (tmp_path / "bad.json").write_text('{"not": "a list"}', encoding="utf-8")
    with pytest.raises(CatalogError, match="bad.json"):
        split_by_tenant(tmp_path / "bad.json", tmp_path / "o", 0.5)


def test_murmur3_gives_the_reference_hashes() -> None:
    assert murmur3_32(b"") == 0
    assert murmur3_32(b"hello") == 0x248BFA47
    assert murmur3_32(b"The quick brown fox jumps over the lazy dog") == 0x2E4FF723
    assert murmur3_32(b"", seed=1) == 0x514E28B7
    assert murmur3_32(b"\xff\xff\xff\xff") == 0x76293B50
    assert murmur3_32(b"\x21\x43\x65\x87") == 0xF55B516B - (1 << 32)  # signed, as Java's int
    assert [murmur3_32(b"\x21\x43\x65"[:n]) for n in (3, 2, 1)] == [0x7E4A8634, 0xA0F7B07A - (1 << 32), 0x72661CF4]  # tails


def test_routing_puts_a_key_on_one_shard_in_range_and_spreads_many_keys_evenly() -> None:
    keys = [f"agent:server-{i}" for i in range(6000)]
    shards = [routing_shard(k, 6, 768) for k in keys]
    assert set(shards) == set(range(6))
    assert balance([shards.count(s) for s in range(6)])["max_over_mean"] < 1.1
    assert all(routing_shard(k, 1, 1024) == 0 for k in keys[:50])
    assert routing_shard("agent:x", 3, 768) == routing_shard("agent:x", 3, 768)
    with pytest.raises(ConfigError, match="multiple"):
        routing_shard("agent:x", 3, 1024)


def test_balance_percentiles_overlap_and_recall_summarise_as_specified() -> None:
    assert balance([10, 20, 30]) == {"per_shard": [10, 20, 30], "min": 10, "max": 30, "mean": 20.0,
                                     "max_over_mean": 1.5}
    assert balance([0, 0])["max_over_mean"] is None
    assert percentiles(list(map(float, range(1, 101)))) == {"p50": 50.5, "p95": 95.0, "n": 100}
    assert percentiles([]) == {"p50": None, "p95": None, "n": 0}
    assert top_overlap(["a", "b"], ["a", "b"]) == (False, 1.0)
    assert top_overlap(["a", "b"], ["b", "a"]) == (True, 1.0)
    assert top_overlap(["a", "b", "c", "d"], ["a", "x"]) == (True, 0.25)
    assert hit_recall(["a", "b"], ["a", "b", "c"], 10) == (2, 2 / 3)  # fewer hits than the tenant has
    assert hit_recall(["a", "x", "b"], ["a", "b", "c"], 2) == (3, 0.5)
    assert hit_recall([], [], 10) == (0, 1.0)


def test_the_product_variant_is_the_builders_nested_knn_with_the_tenant_inside_the_knn_filter() -> None:
    vector = [0.1, 0.2, 0.3]
    body = nested_knn_body("product", vector, 10, "small", {"parameters": 1.0})
    nested = body["query"]["nested"]
    assert body["size"] == 10 and nested["path"] == "parameters" and nested["score_mode"] == "max"
    knn = nested["query"]["knn"]["parameters.vector"]
    assert knn["vector"] == vector and knn["k"] == 10
    assert json.dumps(knn["filter"]).count('"parameters.tenants": "small"') == 1
    wide = nested_knn_body("k_x10", vector, 10, "small", {"parameters": 1.0})
    assert wide["size"] == 10 and wide["query"]["nested"]["query"]["knn"]["parameters.vector"]["k"] == 100
    post = nested_knn_body("post_filter", vector, 10, "small", {})["query"]["nested"]["query"]["bool"]
    assert "filter" not in post["must"][0]["knn"]["parameters.vector"] and "small" in json.dumps(post["filter"])
    exact = nested_knn_body("exact", vector, 10, "small", {})["query"]["nested"]["query"]["bool"]
    assert exact["must"][0]["script_score"]["script"]["source"] == "knn_score" and "small" in json.dumps(exact)
    assert set(KNN_VARIANTS) == {"product", "post_filter", "k_x10", "exact"}
    with pytest.raises(ConfigError, match="unknown nested k-NN variant"):
        nested_knn_body("faiss", vector, 10, "small", {})


def _knn_k(expected: int, hits: float, recall: float) -> dict[str, Any]:
    cell = {"mean_hits": hits, "queries_short": 3, "min_hits": 1, "recall": recall, "took_ms": {"p50": 2.0}}
    return {"expected_hits": expected, "product": cell, "post_filter": {**cell, "mean_hits": 1.0},
            "k_x10": {**cell, "mean_hits": float(expected), "recall": 1.0}, "exact": {**cell, "recall": 1.0}}


def test_the_table_has_a_row_per_layout_with_refusals_and_missing_copies_shown() -> None:
    results = {
        "config": {"ks": [10, 100], "needles": "toolink", "embedding_backend": "onnx"},
        "catalog": {"tools": 1000, "servers": 70, "queries": 40, "small_tenant_tools": 11},
        "environment": {"cluster_nodes": 3, "cluster": "local", "cpu_count": 2},
        "layouts": {
            "3": {"shards": 3, "replicas": 1,
                  "quality": {"minmax": {"ndcg@10": 0.5, "recall@5": 0.4}, "rrf": {"ndcg@10": 0.45},
                              "dfs_query_then_fetch": "400 refused"},
                  "copies": {"top10_differ": 2, "queries": 40, "primary": {"ndcg@10": 0.5}, "replica": {"ndcg@10": 0.49}},
                  "shards_figures": {"tools": {"max_over_mean": 1.2}, "tool_id_routing_predicted": {"max_over_mean": 1.01}},
                  "knn": {"k": {"10": _knn_k(10, 7.5, 0.75), "100": _knn_k(11, 11.0, 1.0)}}},
            "1": {"shards": 1, "replicas": 0, "quality": {"minmax": {"ndcg@10": 0.51, "recall@5": 0.41}}},
        },
        "latency": {"wall_ms": {"3": {"default": {"p50": 80.0, "p95": 120.0, "n": 10},
                                      "server_unrouted": {"p50": 50.0, "n": 10},
                                      "server_routed": {"p50": 30.0, "n": 10}}}},
    }
    headers, rows = summary_rows(results)
    assert [r[0] for r in rows] == ["1p x 1", "3p x 2"]
    assert len(headers) == len(rows[0]) == len(rows[1])
    three = dict(zip(headers, rows[1]))
    assert three["NDCG@10 / R@5"] == "0.500 / 0.400" and three["NDCG@10 dfs"] == "refused"
    assert three["pri vs rep: top10 differ (NDCG pri/rep)"] == "2/40 (0.500/0.490)"
    assert three["tools/shard max/mean (by tool id)"] == "1.20 (1.01)"
    assert three["nested k-NN k=10: hits/exp, recall (post-filter, k x10)"] == "7.5/10, 0.750 (1.0, 0.750; 10.0, 1.000)"
    assert three["p50/p95 ms default"] == "80/120" and three["server unrouted / routed p50"] == "50 / 30"
    one = dict(zip(headers, rows[0]))
    assert one["pri vs rep: top10 differ (NDCG pri/rep)"] == "-" and one["NDCG@10 rrf"] == "refused"
    text = markdown_tables(results)
    assert text.startswith("`toolsift bench shards`: 1000 tools") and text.count("\n|") == 4
