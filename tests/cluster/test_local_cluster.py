"""A real three-node local cluster: start, joined and green, shards and replicas, a member killed, stop.

It runs on ports of its own (the ``cluster`` fixture of conftest.py: HTTP 9270-9279, transport 19370-19379,
the first three free in a row), with its data under tmp_path, beside whatever node runs on 9200 (and the
single-node tests' 9280-9298). The artifacts are the single node's (installed on first use; `make node`
has installed them).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from toolsift.config import Settings
from toolsift.opensearch import connect
from toolsift.plugin_scripts import LocalCluster
from toolsift.plugin_scripts.node import RUNNER_MAIN, port_in_use
from toolsift.plugin_scripts.processes import pid_alive

pytestmark = pytest.mark.cluster

INDEX = "toolsift-cluster-test"
DIMENSION = 4


def _jvms_of(folder: Path) -> list[int]:
    """Pids of runner JVMs whose base path lies under ``folder``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if RUNNER_MAIN in args and any(arg.startswith(str(folder)) for arg in args):
            if pid_alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def _rss_mb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    return 0


def _health(client: OpenSearch, **wait_for: str) -> dict[str, Any]:
    """Cluster health once the ``wait_for_*`` conditions hold (each ask waits up to the server's 30 s)."""
    for _ in range(6):
        health: dict[str, Any] = client.cluster.health(params={f"wait_for_{k}": v for k, v in wait_for.items()})
        if not health["timed_out"]:
            return health
    return health


def _index_body() -> dict[str, Any]:
    return {
        "settings": {"index": {"number_of_shards": 3, "number_of_replicas": 1, "knn": True}},
        "mappings": {
            "properties": {
                "name": {"type": "keyword"},
                "text": {"type": "text"},
                "vector": {
                    "type": "knn_vector",
                    "dimension": DIMENSION,
                    "method": {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil"},
                },
                "relation": {"type": "join", "relations": {"agent": "tool"}},
            }
        },
    }


def _fill(client: OpenSearch) -> None:
    client.indices.create(index=INDEX, body=_index_body())
    for agent in range(3):
        client.index(index=INDEX, id=f"agent-{agent}", body={"name": f"agent-{agent}", "relation": "agent"})
        for tool in range(3):
            vector = [1.0, float(agent), float(tool), 0.5]
            client.index(
                index=INDEX,
                id=f"tool-{agent}-{tool}",
                routing=f"agent-{agent}",
                body={
                    "name": f"tool-{agent}-{tool}",
                    "text": f"send mail tool {tool} of agent {agent}",
                    "vector": vector,
                    "relation": {"name": "tool", "parent": f"agent-{agent}"},
                },
            )
    client.indices.refresh(index=INDEX)


def _searches(client: OpenSearch) -> tuple[int, int, list[str]]:
    """Hits of a text query, of a has_child query, and the names of a k-NN query's top 3."""
    text = client.search(index=INDEX, body={"query": {"match": {"text": "mail"}}, "size": 20})
    parents = client.search(
        index=INDEX, body={"query": {"has_child": {"type": "tool", "query": {"match": {"text": "mail"}}}}}
    )
    knn = client.search(
        index=INDEX, body={"size": 3, "query": {"knn": {"vector": {"vector": [1.0, 2.0, 1.0, 0.5], "k": 3}}}}
    )
    return (
        text["hits"]["total"]["value"],
        parents["hits"]["total"]["value"],
        [hit["_source"]["name"] for hit in knn["hits"]["hits"]],
    )


def test_three_nodes_survive_the_loss_of_one(cluster: LocalCluster) -> None:
    began = time.monotonic()
    assert cluster.start() is True
    print(f"3 nodes green after {time.monotonic() - began:.1f} s")
    state = cluster.status()
    assert (state.health, state.nodes_joined) == ("green", 3)
    pids = [member.pid for member in state.members]
    print("RSS per node (MB):", [_rss_mb(pid) for pid in pids if pid is not None])

    client = connect(Settings(opensearch_url=",".join(cluster.urls)))
    assert len(client.transport.connection_pool.connections) == 3
    nodes = client.cat.nodes(format="json", h="name,node.role")
    assert sorted(row["name"] for row in nodes) == ["node-1", "node-2", "node-3"]
    assert all(set("dim") <= set(row["node.role"]) for row in nodes)  # data, ingest, cluster manager

    _fill(client)
    health = _health(client, status="green")
    assert (health["status"], health["active_shards"]) == ("green", 6)
    before = _searches(client)
    assert before[:2] == (9, 3)  # every tool; every agent through its tools (join, routed to its shard)
    assert len(before[2]) == 3 and before[2][0] == "tool-2-1"  # k-NN: the tool whose vector is the query's

    manager = client.cat.cluster_manager(format="json")[0]["node"]
    victim = next(member for member in cluster.members if member.name != manager)
    assert victim.kill() is True

    # every search still answers in full: the client fails over from the dead member's URL
    for _ in range(10):
        assert _searches(client) == before
    health = _health(client, nodes="2")
    assert (health["number_of_nodes"], health["status"]) == (2, "yellow")

    assert cluster.start() is True  # only the killed member is launched again
    health = _health(client, status="green", nodes="3")
    assert (health["number_of_nodes"], health["status"]) == (3, "green")
    assert _searches(client) == before

    assert cluster.stop(timeout=30) is True
    assert not any(member.running for member in cluster.status().members)
    assert _jvms_of(cluster.cluster_dir) == []
    assert not any(port_in_use(member.http_port) for member in cluster.members)
    assert os.listdir(cluster.cluster_dir)  # the data stays for the next start
