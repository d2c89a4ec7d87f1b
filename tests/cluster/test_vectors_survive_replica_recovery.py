"""Vectors are stored once (k-NN's derived source, schema 8): no ``_source`` or ``_recovery_source``
holds them. A replica that missed writes while its node was down catches up by replaying the primary's
operations from Lucene's history, which reads each document's ``_source``: the vectors must come back
from the primary's vector files, or the replica would hold tools that no k-NN query can find.

On the cluster fixture of conftest.py (three nodes of its own, data under tmp_path), with toolsift's own
index body: a member is killed, tools are added and changed, the member is started again, and its copy
is read on its own (``preference=_only_nodes``).
"""

from __future__ import annotations

from typing import Any

import pytest
from opensearchpy import OpenSearch

from toolsift.config import Settings
from toolsift.mappings import VECTOR_PATHS, index_body, source_filter
from toolsift.opensearch import connect
from toolsift.plugin_scripts import LocalCluster

pytestmark = pytest.mark.cluster

INDEX = "toolsift-recovery-test"
DIMENSION = 4


def _tool(n: int, shift: float = 0.0) -> dict[str, Any]:
    return {
        "entity": "tool",
        "name": f"tool_{n}",
        "description": f"tool number {n}",
        "description_vector": [1.0, float(n), shift, 0.5],
        "parameters": [{"name": "x", "vector": [0.5, 1.0, float(n), shift]}],
    }


def _wait(client: OpenSearch, **wait_for: str) -> dict[str, Any]:
    for _ in range(8):
        health: dict[str, Any] = client.cluster.health(
            index=INDEX, params={f"wait_for_{k}": v for k, v in wait_for.items()})
        if not health["timed_out"]:
            return health
    return health


def _copy_of(client: OpenSearch, node_id: str, *, knn: list[float]) -> tuple[dict[str, Any], list[str]]:
    """The documents' vectors as ``node_id``'s copy gives them back, and that copy's k-NN top 3."""
    only = {"preference": f"_only_nodes:{node_id}"}
    docs = client.search(index=INDEX, params=only, body={"size": 100, "_source": {"includes": list(VECTOR_PATHS)}})
    vectors = {hit["_id"]: hit["_source"] for hit in docs["hits"]["hits"]}
    found = client.search(index=INDEX, params=only, body={
        "size": 3, "_source": source_filter(["name"]),
        "query": {"knn": {"description_vector": {"vector": knn, "k": 3}}}})
    return vectors, [hit["_source"]["name"] for hit in found["hits"]["hits"]]


def test_a_replica_that_replays_missed_writes_gets_every_vector_back(cluster: LocalCluster) -> None:
    assert cluster.start() is True
    client = connect(Settings(opensearch_url=",".join(cluster.urls)))
    body = index_body(dimension=DIMENSION, embedding_model="test", shards=1, replicas=2)  # a copy on every node
    client.indices.create(index=INDEX, body=body)
    for n in range(5):
        client.index(index=INDEX, id=f"t{n}", body=_tool(n))
    client.indices.flush(index=INDEX)
    assert _wait(client, status="green")["status"] == "green"

    manager = client.cat.cluster_manager(format="json")[0]["node"]
    victim = next(member for member in cluster.members if member.name != manager)
    ids = {row["name"]: row["id"] for row in client.cat.nodes(format="json", h="id,name", full_id="true")}
    victim_id = ids[victim.name]
    assert victim.kill() is True
    assert _wait(client, nodes="2")["status"] == "yellow"

    # writes the victim's copy misses: new tools, a changed vector, a deleted tool
    for n in range(5, 9):
        client.index(index=INDEX, id=f"t{n}", body=_tool(n))
    client.index(index=INDEX, id="t1", body=_tool(1, shift=3.0))
    client.delete(index=INDEX, id="t0")
    client.indices.refresh(index=INDEX)

    assert cluster.start() is True  # only the killed member is launched again
    assert _wait(client, status="green", nodes="3")["status"] == "green"
    recovered = [s for s in client.indices.recovery(index=INDEX)[INDEX]["shards"]
                 if s["type"] == "PEER" and s["target"]["id"] == victim_id]
    assert recovered and recovered[-1]["translog"]["recovered"] >= 6, recovered  # caught up by operations
    client.indices.refresh(index=INDEX)

    expected = {f"t{n}": _tool(n) for n in range(1, 9)} | {"t1": _tool(1, shift=3.0)}
    query = _tool(7)["description_vector"]
    answers = {node: _copy_of(client, node, knn=query) for node in ids.values()}
    vectors, top = answers[victim_id]
    assert top[0] == "tool_7" and len(top) == 3
    assert all(answer[1] == top for answer in answers.values())  # every copy finds the same tools
    assert sorted(vectors) == sorted(expected)
    for doc_id, source in vectors.items():
        assert source["description_vector"] == pytest.approx(expected[doc_id]["description_vector"])
        assert source["parameters"][0]["vector"] == pytest.approx(expected[doc_id]["parameters"][0]["vector"])
    assert all(answer[0] == vectors for answer in answers.values())
