"""The managed local cluster (``node_count`` 2 or more) without a real OpenSearch.

Each member's ``java`` is a fake: a small Python HTTP server that reads the ``opensearch.yml`` toolsift
wrote for it (so the file must be there before the start), listens on its ``transport.port``, serves
HTTP on its ``force.http.port`` and counts as joined each seed host whose transport port listens. Start, status, logs, stop, a taken port and a
member dying during start run for real against detached processes.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fakes import fake_java_home
from tests.unit.plugin_scripts.local_node_fakes import FAKE_GET_TAIL, clean_cli_env, fake_install, fake_settings, free_ports
from toolsift.config import Settings, get_settings
from toolsift.errors import ERROR_TABLE, NodeError
from toolsift.opensearch import make_client
from toolsift.plugin_scripts import LocalCluster, LocalNode
from toolsift.plugin_scripts.node import MAX_NODE_PORT, port_in_use
from toolsift.plugin_scripts.processes import pid_alive

FAKE_MEMBER = """\
#!{python}
import json, os, pathlib, re, socket, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

args = sys.argv[1:]
if "-version" in args:
    sys.stderr.write('openjdk version "17.0.9" 2023-10-17\\n')
    sys.exit(0)
config = (pathlib.Path(args[args.index("-basePath") + 1]) / "node_1" / "config" / "opensearch.yml").read_text()
name = re.search(r"^force\\.node\\.name: (\\S+)$", config, re.M).group(1)
port = int(re.search(r"^force\\.http\\.port: (\\d+)$", config, re.M).group(1))
transport = int(re.search(r"^transport\\.port: (\\d+)$", config, re.M).group(1))
seeds = [int(p) for p in re.findall(r'"127\\.0\\.0\\.1:(\\d+)"', re.search(r"^discovery\\.seed_hosts: (.*)$", config, re.M).group(1))]
if os.environ.get("FAKE_MEMBER_FAIL") == name:
    print("boom: fake member failure", name, flush=True)
    sys.exit(3)


def joined(port):
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path.startswith("/_cluster/health"):
            body = {{"status": "green", "number_of_nodes": sum(map(joined, seeds))}}
""" + FAKE_GET_TAIL + """

print("fake member", name, "listening on", port, flush=True)
listener = socket.create_server(("127.0.0.1", transport))  # its peers count it as joined from now on
server = HTTPServer(("127.0.0.1", port), Handler)
server.serve_forever()
"""


@pytest.fixture(name="fake_java_home")
def fake_member_java_home(tmp_path: Path) -> Path:
    """A JAVA_HOME whose bin/java is the fake member."""
    return fake_java_home(tmp_path / "fake-jdk", FAKE_MEMBER.format(python=sys.executable))


def _settings(tmp_path: Path, **overrides: object) -> Settings:
    return fake_settings(
        tmp_path, **{"node_count": 3, "cluster_http_port": 9201, "cluster_transport_port": 9351, **overrides}
    )


def _yml(text: str) -> dict[str, str]:
    """``key: value`` lines of an opensearch.yml (comments left out)."""
    pairs = (line.split(": ", 1) for line in text.splitlines() if line and not line.startswith("#"))
    return {key: value for key, value in pairs}


# --- each member's configuration --------------------------------------------------------------------


def test_each_member_gets_its_own_name_ports_and_the_same_peers(tmp_path: Path) -> None:
    cluster = LocalCluster(_settings(tmp_path))
    assert cluster.urls == ["http://127.0.0.1:9201", "http://127.0.0.1:9202", "http://127.0.0.1:9203"]
    for ordinal, member in enumerate(cluster.members, start=1):
        config = _yml(member._config_body())
        assert config["force.node.name"] == f"node-{ordinal}"
        assert config["force.http.port"] == str(9200 + ordinal)
        assert config["force.node.roles"] == "cluster_manager,data,ingest"
        assert config["transport.port"] == str(9350 + ordinal)
        assert config["network.host"] == "127.0.0.1"
        assert config["discovery.seed_hosts"] == '["127.0.0.1:9351", "127.0.0.1:9352", "127.0.0.1:9353"]'
        assert config["cluster.initial_cluster_manager_nodes"] == '["node-1", "node-2", "node-3"]'
        assert config["cluster.routing.allocation.disk.threshold_enabled"] == "false"
        assert "discovery.type" not in config


def test_the_knn_breaker_is_absolute_half_the_heap_unless_set(tmp_path: Path) -> None:
    for heap, expected in (("512m", "256mb"), ("2g", "1024mb")):
        member = LocalCluster(_settings(tmp_path, cluster_heap=heap)).members[0]
        assert _yml(member._config_body())["knn.memory.circuit_breaker.limit"] == expected
    member = LocalCluster(_settings(tmp_path, cluster_knn_memory_limit="300mb")).members[0]
    assert _yml(member._config_body())["knn.memory.circuit_breaker.limit"] == "300mb"


def test_ml_commons_members_get_its_settings(tmp_path: Path) -> None:
    member = LocalCluster(_settings(tmp_path, node_ml_commons=True)).members[1]
    assert _yml(member._config_body())["plugins.ml_commons.only_run_on_ml_node"] == "false"


def test_member_command_lines_and_folders_are_apart_from_the_single_node(tmp_path: Path) -> None:
    settings = _settings(tmp_path, cluster_heap="384m", cluster_http_port=9231)
    cluster = LocalCluster(settings)
    single = LocalNode(settings)
    data = (tmp_path / "data").absolute()
    for ordinal, member in enumerate(cluster.members, start=1):
        command = member.command(Path("/usr/bin/java"))
        assert command[1:3] == ["-Xms384m", "-Xmx384m"]
        assert command[command.index("-basePath") + 1] == str(data / "cluster" / f"node-{ordinal}")
        assert command[command.index("-baseHttpPort") + 1] == str(9230 + ordinal - 1)
        assert command[command.index("-clusterName") + 1] == "toolsift-local-cluster"
        assert member.pid_file == data / "cluster" / f"node-{ordinal}.pid"
        assert member.log_file == data / "cluster" / f"node-{ordinal}.log"
        assert member.install_dir == single.install_dir
    # the single node keeps its own paths, port, heap and name
    assert (single.base_path, single.pid_file, single.url) == (data / "node", data / "node.pid", settings.node_url)
    command = single.command(Path("/usr/bin/java"))
    assert command[1:3] == ["-Xms1g", "-Xmx1g"]
    assert command[command.index("-clusterName") + 1] == "toolsift-local"


def test_a_cluster_needs_two_nodes_and_ports_the_runner_serves(tmp_path: Path) -> None:
    with pytest.raises(NodeError, match=r"node_count 2 or more, not 1"):
        LocalCluster(_settings(tmp_path, node_count=1))
    with pytest.raises(NodeError, match=rf"port 9300, above {MAX_NODE_PORT}.*TOOLSIFT_CLUSTER_HTTP_PORT"):
        LocalCluster(_settings(tmp_path, cluster_http_port=9298))


# --- settings and the client ---------------------------------------------------------------------------


def test_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIFT_NODE_COUNT", "3")
    monkeypatch.setenv("TOOLSIFT_CLUSTER_HTTP_PORT", "9241")
    monkeypatch.setenv("TOOLSIFT_CLUSTER_HEAP", "768m")
    monkeypatch.delenv("TOOLSIFT_OPENSEARCH_URL", raising=False)
    settings = Settings()
    assert (settings.node_count, settings.cluster_heap) == (3, "768m")
    assert settings.effective_url == "http://127.0.0.1:9241,http://127.0.0.1:9242,http://127.0.0.1:9243"
    monkeypatch.setenv("TOOLSIFT_CLUSTER_KNN_MEMORY_LIMIT", "50%")
    with pytest.raises(ValueError, match="cluster_knn_memory_limit"):
        Settings()


def test_the_single_node_url_is_unchanged_by_default() -> None:
    settings = Settings(node_count=1, opensearch_url=None, node_port=9200)
    assert settings.effective_url == "http://127.0.0.1:9200"
    assert settings.opensearch_hosts == ["http://127.0.0.1:9200"]


def test_the_client_gets_every_url_of_a_comma_separated_list() -> None:
    settings = Settings(opensearch_url="http://127.0.0.1:9201, http://127.0.0.1:9202,http://127.0.0.1:9203")
    client = make_client(settings)
    ports = sorted(host["port"] for host in client.transport.hosts)
    assert ports == [9201, 9202, 9203]
    assert len(client.transport.connection_pool.connections) == 3


# --- lifecycle against fake members ----------------------------------------------------------------


def _fake_cluster(tmp_path: Path, java_home: Path, messages: list[str] | None = None) -> LocalCluster:
    http = free_ports(9269, 9100, count=3)
    transport = free_ports(19399, 19300, count=3)
    settings = _settings(tmp_path, java_home=java_home, cluster_http_port=http, cluster_transport_port=transport)
    cluster = LocalCluster(settings, progress=None if messages is None else messages.append)
    fake_install(cluster.members[0])
    return cluster


def test_lifecycle_with_fake_members(tmp_path: Path, fake_java_home: Path) -> None:
    messages: list[str] = []
    cluster = _fake_cluster(tmp_path, fake_java_home, messages)
    try:
        assert cluster.start() is True
        state = cluster.status()
        assert (state.health, state.nodes_joined) == ("green", 3)
        assert [m.running for m in state.members] == [True, True, True]
        assert [m.url for m in state.members] == cluster.urls
        pids = [m.pid for m in state.members]
        assert all(pid is not None and os.getpgid(pid) == pid for pid in pids)
        assert "fake member node-2 listening" in cluster.logs(5, member=2)
        assert all(f"node-{i}.log <==" in cluster.logs(5) for i in (1, 2, 3))
        assert any("the cluster is up (green, 3 nodes)" in line for line in messages)
        assert LocalCluster(cluster.settings).start() is False  # all running: nothing launched

        # one member gone: a start launches only that one again
        assert cluster.member(3).kill() is True
        assert cluster.status().members[2].running is False
        assert cluster.start() is True
        state = cluster.status()
        assert [m.pid for m in state.members][:2] == pids[:2]
        assert state.members[2].running
    finally:
        stopped = cluster.stop(timeout=10)
    assert stopped is True
    assert not any(m.running for m in cluster.status().members)
    assert not any(pid_alive(pid) for pid in pids if pid is not None)
    assert not any(member.pid_file.exists() for member in cluster.members)
    # the single node's files were never touched
    data = (tmp_path / "data").absolute()
    assert not (data / "node").exists() and not (data / "node.pid").exists() and not (data / "node.log").exists()


def test_a_taken_port_is_named_and_nothing_starts(tmp_path: Path, fake_java_home: Path) -> None:
    cluster = _fake_cluster(tmp_path, fake_java_home)
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", cluster.members[1].transport_port))
        blocker.listen()
        with pytest.raises(NodeError, match=rf"transport port {cluster.members[1].transport_port} of cluster member node-2"):
            cluster.start()
    assert not any(member.pid_file.exists() for member in cluster.members)
    assert not any(port_in_use(member.http_port) for member in cluster.members)


def test_a_member_dying_during_start_shows_its_log_and_stops_the_others(
    tmp_path: Path, fake_java_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_MEMBER_FAIL", "node-2")
    cluster = _fake_cluster(tmp_path, fake_java_home)
    with pytest.raises(NodeError, match=r"member node-2 \(pid \d+\) exited with exit code 3(.|\n)*boom: fake member failure"):
        cluster.start()
    assert not any(member.pid_file.exists() for member in cluster.members)
    assert not any(port_in_use(member.http_port) for member in cluster.members)


# --- CLI --------------------------------------------------------------------------------------------


@pytest.fixture()
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    clean_cli_env(tmp_path, monkeypatch)
    yield tmp_path
    get_settings.cache_clear()


def test_cli_nodes_option_is_checked(cli_env: Path) -> None:
    from toolsift.cli.main import cli

    for args in (["node", "start", "--nodes", "0"], ["node", "status", "--nodes", "10"], ["node", "logs", "--node", "2"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, (args, result.output)
    result = CliRunner().invoke(cli, ["node", "logs", "--nodes", "3", "--node", "4"])
    assert result.exit_code == ERROR_TABLE[NodeError].exit_code
    assert "NodeError: the local cluster has members 1 to 3, not 4" in result.stderr


def test_cli_lifecycle_with_fake_members(cli_env: Path, fake_java_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolsift.cli.main import cli

    cluster = _fake_cluster(cli_env, fake_java_home)
    monkeypatch.setenv("TOOLSIFT_JAVA_HOME", str(fake_java_home))
    monkeypatch.setenv("TOOLSIFT_CLUSTER_HTTP_PORT", str(cluster.settings.cluster_http_port))
    monkeypatch.setenv("TOOLSIFT_CLUSTER_TRANSPORT_PORT", str(cluster.settings.cluster_transport_port))
    runner = CliRunner()
    try:
        result = runner.invoke(cli, ["node", "start", "--nodes", "3"])
        assert result.exit_code == 0, result.output
        assert result.stdout.strip() == ",".join(cluster.urls)
        result = runner.invoke(cli, ["node", "status", "--nodes", "3"])
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        assert "health     green" in lines and "nodes      3 of 3" in lines
        assert [line.split()[:2] for line in lines if line.startswith("node-")] == [[f"node-{i}", "up"] for i in (1, 2, 3)]
        state = json.loads(runner.invoke(cli, ["node", "status", "--nodes", "3", "--json"]).stdout)
        assert [m["running"] for m in state["members"]] == [True, True, True]
        result = runner.invoke(cli, ["node", "logs", "--nodes", "3", "--node", "3", "-n", "1"])
        assert result.stdout.strip().startswith("fake member node-3 listening")
        # TOOLSIFT_NODE_COUNT makes the cluster what every node command addresses
        monkeypatch.setenv("TOOLSIFT_NODE_COUNT", "3")
        get_settings.cache_clear()
        assert "nodes      3 of 3" in runner.invoke(cli, ["node", "status"]).stdout
    finally:
        result = runner.invoke(cli, ["node", "stop", "--nodes", "3"])
    assert result.exit_code == 0, result.output
    assert "the cluster has stopped" in result.stderr
    assert not any(port_in_use(member.http_port) for member in cluster.members)
    monkeypatch.delenv("TOOLSIFT_NODE_COUNT")
    get_settings.cache_clear()
    result = runner.invoke(cli, ["node", "status", "--nodes", "3"])
    assert [line.split()[:2] for line in result.stdout.splitlines() if line.startswith("node-")] == [
        [f"node-{i}", "down"] for i in (1, 2, 3)
    ]
