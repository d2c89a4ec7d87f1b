"""A real managed node: install, start, plugins, restart with data kept, stop.

It runs on a port of its own (9290, or the next free one up to 9298) with its data under tmp_path, so
it never touches a node someone else runs on 9200. The artifacts come from the normal cache dir
(installed on first use).
"""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolsift.config import Settings
from toolsift.plugin_scripts import LocalNode, NodeStatus
from toolsift.plugin_scripts.node import OPENSEARCH_VERSION, PLUGIN_CLASSES, port_in_use

pytestmark = pytest.mark.integration

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _request(url: str, method: str = "GET", body: dict[str, Any] | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json"})
    with _OPENER.open(request, timeout=30) as answer:
        return json.loads(answer.read().decode())


def _pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rpartition(")")[2].split()[0] == "Z"


@pytest.fixture()
def node(tmp_path: Path) -> Iterator[LocalNode]:
    port = next((p for p in range(9290, 9299) if not port_in_use(p)), None)
    if port is None:
        pytest.skip("ports 9290-9298 are all in use")
    settings = Settings(
        node_port=port,
        node_heap="512m",
        node_cluster_name="toolsift-lifecycle-test",
        data_dir=tmp_path / "data",
        opensearch_url=None,
    )
    local = LocalNode(settings)
    local.install()
    try:
        yield local
    finally:
        local.stop(timeout=30)


def test_node_lifecycle(node: LocalNode) -> None:
    url = node.url
    assert node.start() is True
    state = node.status()
    assert state.installed and state.running and state.pid is not None
    assert state.url == url
    assert state.health in ("yellow", "green")
    assert state.version == OPENSEARCH_VERSION
    assert _request(f"{url}/")["cluster_name"] == "toolsift-lifecycle-test"

    components = {row["component"] for row in _request(f"{url}/_cat/plugins?format=json")}
    assert set(PLUGIN_CLASSES) <= components, components

    assert node.start() is False  # already running

    # a Lucene k-NN index, kept across a restart
    _request(
        f"{url}/vectors",
        "PUT",
        {
            "settings": {"index": {"knn": True, "number_of_replicas": 0}},
            "mappings": {
                "properties": {
                    "v": {
                        "type": "knn_vector",
                        "dimension": 2,
                        "method": {"name": "hnsw", "engine": "lucene", "space_type": "l2"},
                    }
                }
            },
        },
    )
    _request(f"{url}/vectors/_doc/near?refresh=true", "PUT", {"v": [1.0, 1.0]})
    _request(f"{url}/vectors/_doc/far?refresh=true", "PUT", {"v": [9.0, 9.0]})

    first_pid = state.pid
    assert node.stop() is True
    assert _pid_gone(first_pid)
    assert not node.pid_file.exists()
    assert not port_in_use(node.settings.node_port)
    assert not node.status().running
    assert "started" in node.logs(200)  # the log of the run just stopped

    assert node.start() is True
    hits = _request(f"{url}/vectors/_search", "POST", {"query": {"knn": {"v": {"vector": [1.1, 0.9], "k": 1}}}})
    assert [hit["_id"] for hit in hits["hits"]["hits"]][:1] == ["near"]
    second_pid = node.status().pid
    assert second_pid is not None and second_pid != first_pid

    assert node.stop() is True
    assert _pid_gone(second_pid)
    assert node.status() == NodeStatus(installed=True, running=False, pid=None, url=url, health=None, version=None)
