"""`toolsift bench shards`, small, on three nodes: a 200-tool catalog split between a small tenant and the rest,
ingested into a one-shard and a three-shard index with a replica each. The figures hold their invariants:
OpenSearch put every tool on the shard its agent's id routes to (the bench's routing function agrees with the
cluster's), the tenant's nested k-NN never returns more than k nor anything the exact search would not allow,
every variant was measured, and nothing of the bench is left on the cluster.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolsift.bench.shard_bench import routing_shard, run_shard_bench
from toolsift.opensearch import connect
from toolsift.plugin_scripts import LocalCluster

#: A slow run (`make test-slow`, ~2–4 min: a cluster started, two layouts ingested): CI keeps the bench's
#: pure parts (tests/unit/bench/test_shard_bench.py) and its routing agreement with a real node
#: (tests/integration/test_ingest_index.py).
pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def test_bench_shards_measures_each_layout_and_leaves_nothing_behind(
    cluster: LocalCluster, embedder: Any, datasets: Path, tmp_path: Path
) -> None:
    assert cluster.start() is True
    settings = cluster.settings.with_overrides(opensearch_url=",".join(cluster.urls), index="bench-shards-test")

    figures = run_shard_bench(settings, embedder, tmp_path / "out", tools=200, shard_counts=(1, 3), replicas=1,
                              existing=True, queries=6, tenant_share=0.05, ks=(10,), knn_queries=4,
                              latency_queries=2, rounds=1, datasets=datasets, progress=print)

    catalog = figures["catalog"]
    assert figures["environment"]["cluster_nodes"] == 3 and 10 <= catalog["small_tenant_tools"] < 200
    for shards in (1, 3):
        layout = figures["layouts"][str(shards)]
        assert layout["ingest"]["tools"] == 200
        placed = layout["shards_figures"]
        assert sum(placed["tools"]["per_shard"]) == 200 and len(placed["tools"]["per_shard"]) == shards
        assert placed["predicted_matches_found"] and placed["routing_not_agent"] == 0
        assert layout["quality"]["queries"] == 6 and 0.0 <= layout["quality"]["minmax"]["ndcg@10"] <= 1.0
        copies = layout["copies"]
        assert copies["queries"] == 6 and 0 <= copies["top10_differ"] <= 6
        knn = layout["knn"]["k"]["10"]
        assert knn["expected_hits"] == min(10, layout["knn"]["tenant_tools_with_parameters"]) > 0
        assert knn["exact"]["mean_hits"] == knn["expected_hits"] and knn["exact"]["recall"] == 1.0
        assert knn["product"]["mean_hits"] == knn["expected_hits"]  # k-NN issue 2347's shortfall: not on Lucene
        for variant in ("product", "post_filter", "k_x10"):
            assert knn[variant]["mean_hits"] <= 10 and 0.0 <= knn[variant]["recall"] <= 1.0
        timed = figures["latency"]["wall_ms"][str(shards)]
        assert all(t["n"] == 2 for v, t in timed.items() if f"{shards} {v}" not in figures["latency"]["refused"])
        assert figures["latency"]["server_routed_same_top10"][str(shards)] == 2
    assert figures["layouts"]["1"]["shards_figures"]["tools"]["per_shard"] == [200]

    client = connect(settings)
    assert not client.indices.get(index="bench-shards-test-*", expand_wildcards="all")
    key = "agent:some-server"  # the bench's routing function is the cluster's
    client.indices.create(index="routing-check", body={"settings": {"number_of_shards": 3, "number_of_replicas": 0}})
    try:
        found = client.search_shards(index="routing-check", routing=key)["shards"][0][0]["shard"]
        assert found == routing_shard(key, 3, 768)
    finally:
        client.indices.delete(index="routing-check")
