"""The cluster suite's fixture: a real three-node local cluster of its own, stopped after each test.

It runs on ports of its own (HTTP 9270-9279, transport 19370-19379: the first three free in a row), with
its data under tmp_path, beside whatever node runs on 9200 (and the single-node tests' 9280-9298). The
artifacts are the single node's (installed on first use; `make node` has installed them).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from toolsift.config import Settings
from toolsift.plugin_scripts import LocalCluster
from toolsift.plugin_scripts.node import port_in_use


def _free_run(start: int, stop: int, count: int = 3) -> int:
    """The first port of ``count`` consecutive free ports, scanning from ``start`` down to ``stop``."""
    for first in range(start, stop, -1):
        if not any(port_in_use(p) for p in range(first, first + count)):
            return first
    pytest.skip(f"no {count} consecutive free ports between {stop} and {start + count - 1}")


@pytest.fixture()
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    http = _free_run(9277, 9269)
    transport = _free_run(19377, 19369)
    settings = Settings(
        opensearch_url=None,
        node_count=3,
        cluster_http_port=http,
        cluster_transport_port=transport,
        cluster_heap="512m",
        node_cluster_name="toolsift-cluster-test",
        node_start_timeout=300.0,
        node_ml_commons=False,
        data_dir=tmp_path / "data",
    )
    local = LocalCluster(settings, progress=print)
    local.install()
    try:
        yield local
    finally:
        local.stop(timeout=30)
