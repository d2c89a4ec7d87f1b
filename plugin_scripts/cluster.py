"""The managed local cluster: ``node_count`` (2 or more) :class:`~toolsift.plugin_scripts.node.LocalNode` JVMs
on loopback under ``data_dir/cluster``, plus :func:`ensure_running` (the node or the cluster a setting asks
for) and the throwaway clusters of the benchmarks (:func:`scratch_cluster`).
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolsift.config import Settings
from toolsift.errors import ConfigError, NodeError
from toolsift.plugin_scripts.node import (
    _LOG_TAIL_ON_ERROR,
    _ML_CONFIG,
    MAX_NODE_PORT,
    OPENSEARCH_VERSION,
    LocalNode,
    _get_json,
    drop_archived_settings,
    port_in_use,
)
from toolsift.plugin_scripts.processes import _EXIT_CODES, _flock, _kill_group, _signal_group, _wait_exit, pid_alive

__all__ = [
    "ClusterMember",
    "ClusterStatus",
    "LocalCluster",
    "MemberStatus",
    "cluster_member_name",
    "ensure_running",
    "free_port_run",
    "scratch_cluster",
]

log = logging.getLogger(__name__)

_MEMBER_ROLES = "cluster_manager,data,ingest"


def cluster_member_name(ordinal: int) -> str:
    """The node name of member ``ordinal`` (from 1) of the managed local cluster."""
    return f"node-{ordinal}"


def _half(heap: str) -> str:
    """Half of a JVM heap size (``512m`` → ``256mb``), as an OpenSearch byte size."""
    megabytes = int(heap[:-1]) * (1024 if heap.endswith("g") else 1)
    return f"{max(megabytes // 2, 1)}mb"


@dataclass(frozen=True)
class MemberStatus:
    """One member of the managed local cluster, as ``toolsift node status --nodes N`` reports it.

    Attributes:
        name: its node name (``node-1`` …).
        running: a JVM toolsift started for this member is alive.
        pid: its process id, when running.
        url: the HTTP URL it serves.
        transport_port: the port the members talk to each other on.
        log: its stdout log file.
    """

    name: str
    running: bool
    pid: int | None
    url: str
    transport_port: int
    log: str


@dataclass(frozen=True)
class ClusterStatus:
    """What ``toolsift node status --nodes N`` reports.

    Attributes:
        installed: the artifacts are complete under the cache dir (shared with the single node).
        cluster_name: the cluster's name.
        health: cluster health from the first member that answers, else None (one member of
            three alone answers no health: it cannot elect a cluster manager).
        nodes_joined: how many nodes the cluster counts, when it answers.
        members: each member, in order.
    """

    installed: bool
    cluster_name: str
    health: str | None
    nodes_joined: int | None
    members: tuple[MemberStatus, ...]


class ClusterMember(LocalNode):
    """Member ``ordinal`` (from 1) of the managed local cluster: a :class:`LocalNode` with its own
    folder, pid file, log, HTTP and transport ports, node name and ``opensearch.yml``.

    Args:
        settings: toolsift's settings (the ``cluster_*`` ones and ``node_count`` place the member).
        ordinal: 1 … ``node_count``.
        progress: as for :class:`LocalNode`.
    """

    def __init__(self, settings: Settings, ordinal: int, *, progress: Callable[[str], None] | None = None) -> None:
        self.ordinal = ordinal
        self.name = cluster_member_name(ordinal)
        self.http_port = settings.cluster_http_port + ordinal - 1
        self.transport_port = settings.cluster_transport_port + ordinal - 1
        self.cluster_settings = settings
        member = settings.model_copy(
            update={
                "node_port": self.http_port,
                "node_heap": settings.cluster_heap,
                "node_cluster_name": LocalCluster.cluster_name_for(settings),
            }
        )
        super().__init__(member, progress=progress)
        self._cluster_dir = self._data_dir / "cluster"

    @property
    def base_path(self) -> Path:
        """The runner's ``-basePath``: ``data_dir/cluster/node-<i>``."""
        return self._cluster_dir / self.name

    @property
    def pid_file(self) -> Path:
        return self._cluster_dir / f"{self.name}.pid"

    @property
    def log_file(self) -> Path:
        return self._cluster_dir / f"{self.name}.log"

    @property
    def tmp_dir(self) -> Path:
        return self._cluster_dir / "tmp" / self.name

    def _config_body(self) -> str:
        settings = self.cluster_settings
        ordinals = range(1, settings.node_count + 1)
        seeds = ", ".join(f'"127.0.0.1:{settings.cluster_transport_port + i - 1}"' for i in ordinals)
        names = ", ".join(f'"{cluster_member_name(i)}"' for i in ordinals)
        knn_limit = settings.cluster_knn_memory_limit or _half(settings.cluster_heap)
        body = f"""\
# Member {self.ordinal} of {settings.node_count} of toolsift's local cluster on loopback (node_count).
# The runner forces node.name, http.port and node.roles on every JVM; force.* settings win over its.
force.node.name: {self.name}
force.http.port: {self.http_port}
force.node.roles: {_MEMBER_ROLES}
network.host: 127.0.0.1
transport.port: {self.transport_port}
# Peers only on the members' own transport ports, never the default 9300-9305.
discovery.seed_hosts: [{seeds}]
cluster.initial_cluster_manager_nodes: [{names}]
cluster.routing.allocation.disk.threshold_enabled: false
# Absolute: a percentage would count the whole machine once per member.
knn.memory.circuit_breaker.limit: {knn_limit}
"""
        return body + (_ML_CONFIG if self.ml_commons else "")


class LocalCluster:
    """The managed local cluster: ``node_count`` (2 or more) :class:`ClusterMember` JVMs on loopback.

    Its data lives under ``data_dir/cluster`` (``node-<i>/`` folders, ``node-<i>.pid``,
    ``node-<i>.log``), apart from the single node's; the installed artifacts are shared with it.

    Args:
        settings: toolsift's settings; ``node_count`` members.
        progress: called with one line per step.

    Raises:
        NodeError: ``node_count`` is below 2, or the last member's HTTP port is above 9299.
    """

    def __init__(self, settings: Settings, *, progress: Callable[[str], None] | None = None) -> None:
        if settings.node_count < 2:
            raise NodeError(f"a local cluster needs node_count 2 or more, not {settings.node_count}")
        last = settings.cluster_http_port + settings.node_count - 1
        if last > MAX_NODE_PORT:
            raise NodeError(
                f"the cluster's last member would serve HTTP on port {last}, above {MAX_NODE_PORT} (the embedded "
                f"runner's limit); lower TOOLSIFT_CLUSTER_HTTP_PORT or TOOLSIFT_NODE_COUNT"
            )
        self.settings = settings
        self._progress = progress
        self.members = tuple(ClusterMember(settings, i, progress=progress) for i in range(1, settings.node_count + 1))
        self.cluster_dir = settings.data_dir.expanduser().absolute() / "cluster"

    @staticmethod
    def cluster_name_for(settings: Settings) -> str:
        """The local cluster's name: ``<node_cluster_name>-cluster`` (the single node's differs)."""
        return f"{settings.node_cluster_name}-cluster"

    @property
    def name(self) -> str:
        return self.cluster_name_for(self.settings)

    @property
    def urls(self) -> list[str]:
        """The members' HTTP URLs."""
        return [member.url for member in self.members]

    @property
    def installed(self) -> bool:
        return self.members[0].installed

    @property
    def install_dir(self) -> Path:
        return self.members[0].install_dir

    def install(self, force: bool = False) -> bool:
        """Install the artifacts (shared with the single node); see :meth:`LocalNode.install`."""
        return self.members[0].install(force=force)

    def member(self, ordinal: int) -> ClusterMember:
        """Member ``ordinal`` (from 1).

        Raises:
            NodeError: there is no such member.
        """
        if not 1 <= ordinal <= len(self.members):
            raise NodeError(f"the local cluster has members 1 to {len(self.members)}, not {ordinal}")
        return self.members[ordinal - 1]

    # --- start / stop ------------------------------------------------------------------------------

    def start(self, wait: bool = True) -> bool:
        """Start every member that is not running, then wait until all have joined and health is
        green (or yellow with every member joined).

        Args:
            wait: wait for the cluster, up to ``node_start_timeout`` seconds.

        Returns:
            True when this call launched a member, False when all were running.

        Raises:
            NodeError: not installed; a member's HTTP or transport port is taken by another process
                (nothing is launched); a member died during start (its log's end; the members this
                call launched are stopped); or the cluster was not ready in time (left running).
        """
        self.cluster_dir.mkdir(parents=True, exist_ok=True)
        with _flock(self.cluster_dir / "cluster.lock"):
            if not self.installed:
                raise NodeError(
                    f"OpenSearch {OPENSEARCH_VERSION} is not installed in {self.install_dir}; "
                    "run `toolsift node install` first"
                )
            to_start = [member for member in self.members if member._live_pid() is None]
            for member in to_start:
                for port, kind in ((member.http_port, "HTTP"), (member.transport_port, "transport")):
                    if port_in_use(port):
                        raise NodeError(
                            f"{kind} port {port} of cluster member {member.name} is already in use by another "
                            "process; stop it or move the cluster (TOOLSIFT_CLUSTER_HTTP_PORT, "
                            "TOOLSIFT_CLUSTER_TRANSPORT_PORT)"
                        )
            if not to_start:
                self._say(f"the cluster {self.name!r} is already running at {', '.join(self.urls)}")
            launched: list[tuple[ClusterMember, int]] = []
            for member in to_start:
                try:
                    member.start(wait=False)
                except NodeError:
                    self._stop_launched(launched)
                    raise
                pid = member._read_pid_file().get("pid")
                if pid is not None:
                    launched.append((member, pid))
            if wait:
                self._wait_ready(launched)
            return bool(launched)

    def _wait_ready(self, launched: list[tuple[ClusterMember, int]]) -> None:
        timeout = self.settings.node_start_timeout
        started = time.monotonic()
        deadline = started + timeout
        count = len(self.members)
        self._say(f"waiting up to {timeout:g} s for {count} nodes to join, health green ...")
        while True:
            for member, pid in launched:
                if not pid_alive(pid):
                    code = _EXIT_CODES.pop(pid, None)
                    member.pid_file.unlink(missing_ok=True)
                    self._stop_launched([(m, p) for m, p in launched if m is not member])
                    exit_text = f" with exit code {code}" if code is not None else ""
                    raise NodeError(
                        f"cluster member {member.name} (pid {pid}) exited{exit_text} during start; the members "
                        f"started with it were stopped; the end of {member.log_file}:\n"
                        + member.logs(_LOG_TAIL_ON_ERROR)
                    )
            health = self._health()
            status = str(health.get("status")) if health else None
            joined = health.get("number_of_nodes") if health else None
            if status in ("green", "yellow") and isinstance(joined, int) and joined >= count:
                for member, pid in launched:
                    served_by = member._served_by(member.http_port)
                    if served_by is not None and served_by != pid:
                        self._stop_launched(launched)
                        raise NodeError(
                            f"another process (pid {served_by}) took port {member.http_port} of cluster member "
                            f"{member.name} while it started; the members just started were stopped"
                        )
                self._say(f"the cluster is up ({status}, {joined} nodes) after {time.monotonic() - started:.1f} s")
                drop_archived_settings(self.members[0].url)
                return
            if time.monotonic() >= deadline:
                raise NodeError(
                    f"the cluster did not have {count} nodes and health green within {timeout:g} s (health: "
                    f"{status or 'no answer'}, nodes: {joined if joined is not None else '?'}); it is left "
                    "running: see `toolsift node logs --nodes N`, raise TOOLSIFT_NODE_START_TIMEOUT, or stop it "
                    "with `toolsift node stop --nodes N`"
                )
            time.sleep(0.5)

    def _stop_launched(self, launched: list[tuple[ClusterMember, int]]) -> None:
        for member, pid in launched:
            if pid_alive(pid):
                _kill_group(pid)
            member.pid_file.unlink(missing_ok=True)

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop every running member (SIGTERM to all, then SIGKILL to any left after ``timeout``),
        including members beyond ``node_count`` left from a larger cluster on the same data dir.

        Returns:
            True when a running member was stopped, False when none was running.

        Raises:
            NodeError: a process survived SIGKILL.
        """
        running: list[tuple[ClusterMember, int]] = []
        for member in self._all_members():
            pid = member._live_pid()
            if pid is not None:
                running.append((member, pid))
        if not running:
            self._say("the cluster is not running")
            return False
        self._say("stopping " + ", ".join(f"{m.name} (pid {pid})" for m, pid in running) + " ...")
        for _, pid in running:
            _signal_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for member, pid in running:
            if not _wait_exit(pid, max(deadline - time.monotonic(), 0.0)):
                self._say(f"{member.name} did not stop within {timeout:g} s; sending SIGKILL")
                _kill_group(pid)
            member.pid_file.unlink(missing_ok=True)
        self._say("the cluster has stopped")
        return True

    def _all_members(self) -> list[ClusterMember]:
        """The configured members, plus any other member that has a pid file here."""
        members = list(self.members)
        known = {member.name for member in members}
        for pid_file in sorted(self.cluster_dir.glob("node-*.pid")):
            ordinal = pid_file.stem.removeprefix("node-")
            if ordinal.isdigit() and pid_file.stem not in known and 1 <= int(ordinal) <= 64:
                members.append(ClusterMember(self.settings, int(ordinal), progress=self._progress))
        return members

    # --- status / logs -------------------------------------------------------------------------------

    def _health(self) -> dict[str, Any] | None:
        for url in self.urls:
            answer = _get_json(url, "/_cluster/health")
            if answer is not None and isinstance(answer.get("status"), str):
                return answer
        return None

    def status(self) -> ClusterStatus:
        """Each member's process and URL, and the cluster's health and node count."""
        members = []
        for member in self.members:
            pid = member._live_pid()
            members.append(
                MemberStatus(
                    name=member.name,
                    running=pid is not None,
                    pid=pid,
                    url=member.url,
                    transport_port=member.transport_port,
                    log=str(member.log_file),
                )
            )
        health = self._health() if any(m.running for m in members) else None
        joined = health.get("number_of_nodes") if health else None
        return ClusterStatus(
            installed=self.installed,
            cluster_name=self.name,
            health=str(health["status"]) if health else None,
            nodes_joined=joined if isinstance(joined, int) else None,
            members=tuple(members),
        )

    def logs(self, lines: int = 50, member: int | None = None) -> str:
        """The last ``lines`` lines of one member's log, or of each member's under a ``==> file <==``
        heading ("" when there is none yet).

        Raises:
            NodeError: ``member`` is not a member.
        """
        if member is not None:
            return self.member(member).logs(lines)
        parts = []
        for each in self.members:
            text = each.logs(lines)
            if text:
                parts.append(f"==> {each.log_file} <==\n{text}")
        return "\n\n".join(parts)

    def _say(self, message: str) -> None:
        log.info(message)
        if self._progress is not None:
            self._progress(message)


def ensure_running(settings: Settings, *, progress: Callable[[str], None] | None = None) -> str:
    """Install the managed node (or, with ``node_count`` 2 or more, the local cluster) if needed, start
    it if needed, and return the URL to use (the members' URLs, comma-separated, for a cluster).

    When ``settings.opensearch_url`` is set, toolsift uses that cluster: nothing is installed or
    started and that URL is returned.

    Args:
        settings: toolsift's settings.
        progress: called with one line per step.

    Returns:
        The cluster URL.

    Raises:
        NodeError: installing or starting failed.
    """
    if not settings.uses_managed_node:
        return settings.effective_url
    if settings.node_count > 1:
        cluster = LocalCluster(settings, progress=progress)
        cluster.install()
        cluster.start(wait=True)
        return ",".join(cluster.urls)
    node = LocalNode(settings, progress=progress)
    node.install()
    node.start(wait=True)
    return node.url


def free_port_run(ports: range, count: int) -> int | None:
    """The first port of ``count`` consecutive free loopback ports inside ``ports``, or None."""
    return next((first for first in range(ports.start, ports.stop - count + 1)
                 if not any(port_in_use(p) for p in range(first, first + count))), None)


@contextlib.contextmanager
def scratch_cluster(settings: Settings, *, name: str, nodes: int, http_ports: range, transport_ports: range,
                    folder: Path, start: bool = True, progress: Callable[[str], None] | None = None,
                    **overrides: Any) -> Iterator[LocalCluster]:
    """A throwaway :class:`LocalCluster` of a benchmark's own: ``nodes`` members on the first free runs
    of ``http_ports`` and ``transport_ports``, cluster name ``name``, its data under ``folder``, no
    ml-commons, started when ``start``; stopped and ``folder`` deleted when the block ends. ``overrides``
    are further settings (e.g. ``cluster_heap``).

    Raises:
        ConfigError: no free ports in a row in those ranges.
        NodeError: the artifacts cannot be installed, or the cluster did not start.
    """
    http, transport = free_port_run(http_ports, nodes), free_port_run(transport_ports, nodes)
    if http is None or transport is None:
        raise ConfigError(f"{name} needs {nodes} free ports in a row in {http_ports.start}-{http_ports.stop - 1} "
                          f"(HTTP) and {transport_ports.start}-{transport_ports.stop - 1} (transport) for its cluster")
    cluster = LocalCluster(settings.with_overrides(
        opensearch_url=None, node_count=nodes, cluster_http_port=http, cluster_transport_port=transport,
        node_cluster_name=name, node_ml_commons=False, data_dir=folder,
        node_start_timeout=max(settings.node_start_timeout, 300.0), **overrides), progress=progress)
    try:
        cluster.install()
        if start:
            cluster.start(wait=True)
        yield cluster
    finally:
        try:
            cluster.stop(timeout=30)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
