"""A node lost under load (`toolsift bench node-loss`, short): the elected cluster manager of the three is
SIGKILLed while `serve api` and `serve mcp --transport http`, pointed at all three nodes, answer clients in a
loop and a live source is changed; it is started again. No search fails, the cluster goes yellow and back to
green, no tool is lost and the live change becomes searchable while the node is down.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.catalogs import benchmark_records
from toolsift.bench.nodeloss import run_node_loss_drill
from toolsift.plugin_scripts import LocalCluster

pytestmark = [pytest.mark.cluster, pytest.mark.slow]  # the drill in full: `make test-slow` (CI keeps test_local_cluster)

QUERIES = ["search the web for recent news", "convert a markdown file to pdf", "weather forecast for Paris",
           "read a file from disk", "send an email to my team"]


def test_losing_the_cluster_manager_under_load_fails_no_search_and_loses_no_tool(
    cluster: LocalCluster, embedder: Any, datasets: Path, tmp_path: Path
) -> None:
    catalog = tmp_path / "servers.json"
    catalog.write_text(json.dumps(benchmark_records(datasets, "livemcpbench")[:6], ensure_ascii=False), encoding="utf-8")

    figures = run_node_loss_drill(cluster, cluster.settings, embedder, catalog, QUERIES, clients=2,
                                  kills=("manager",), rolling=False, settle_s=3, down_s=2, progress=print)

    [step] = figures["steps"]
    assert step["victim"] == "manager" and step["cluster_manager_after"] != step["node"]
    for front_end in ("api", "mcp"):
        during = figures["phases"][1][front_end]
        assert during["sent"] > 0, figures["phases"]
        assert figures["totals"][front_end]["failed"] == 0, figures["totals"][front_end]["failures"]
    health = [(h["status"], h["nodes"]) for h in figures["health_timeline"]]
    assert health[0] == ("green", 3) and ("yellow", 2) in health and health[-1] == ("green", 3), health
    assert "red" not in {status for status, _ in health}, health
    assert figures["catalog_after"]["tools"] == figures["catalog_before"]["tools"] > 0
    assert figures["digest_equal"] and figures["tools_lost"] == 0
    change = step["live_change"]
    assert change["searchable"] and change["added_found_through_api"], change
