"""``toolsift bench node-loss``: one of three OpenSearch nodes lost under load, and no search fails.

The drill runs on a three-node local cluster of its own (:func:`drill_cluster`: its own ports, cluster
name and data folder), never on the node or cluster that searches use:

1. **Index.** The catalog is ingested into an index with ``shards`` primaries (3: one per node) and
   **one replica**, so every shard has a copy on two nodes; the drill waits for green and takes the
   catalog's document count, tool count and content digest (every id with its content hash).
2. **Live sync.** A live source — a real MCP server (:mod:`toolsift.bench.changing_server`) serving
   a few probe tools — is followed into the same index by :class:`~toolsift.ingest.live.Syncer`, as
   ``toolsift sync`` does.
3. **Load.** ``toolsift serve api`` and ``toolsift serve mcp --transport http`` run as processes pointed
   at all three nodes (a comma-separated ``TOOLSIFT_OPENSEARCH_URL``: the client fails over between
   them); ``clients`` HTTP clients and one MCP session (the official SDK) search in a closed loop
   through everything that follows (:func:`~toolsift.bench.outage.http_client_loop`,
   :func:`~toolsift.bench.outage.mcp_client_loop`).
4. **Kills.** For each entry of ``kills``, one member is SIGKILLed: ``"data"`` picks a member that is
   not the elected cluster manager and holds the most primaries of the index (a primary is lost and
   its replica promoted, while the manager stays: the data path alone); ``"manager"`` picks the
   elected cluster manager (an election on top). While it is down one probe tool is changed and one
   added on the live server, and both must become searchable (a match query on the description, and
   the added tool through the search API). After ``down_s`` the member is started again and the
   drill waits for green.
5. **Rolling restart** (``rolling``): every member in turn — the cluster manager last, so one election
   suffices — stopped (SIGTERM), started again, and green awaited before the next.

Reported: searches sent and failed per front end, per phase and in total, each failure kind with its
count and a sample; answers compared with the same query's answer with every member up (each of the
first 100 distinct queries searched once through the API before the load; the catalog's tools only):
other tools, or the same tools in another order; latency of the answered searches; the cluster health timeline (every change of status or member count); the
catalog's counts and digest before and after; each live change's seconds to searchable.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from toolsift.config import McpSource, Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import ClusterError, ConfigError
from toolsift.bench.load import free_port, serving
from toolsift.bench.outage import Call, http_client_loop, index_digest, mcp_client_loop
from toolsift.ingest.loaders.mcp import tool_id_for
from toolsift.ingest.pipeline import ingest_catalog
from toolsift.mappings import F
from toolsift.mappings.index import IndexManager
from toolsift.opensearch import connect
from toolsift.plugin_scripts import LocalCluster
from toolsift.plugin_scripts.cluster import ClusterMember, scratch_cluster

__all__ = ["run_node_loss_drill", "drill_cluster", "VICTIMS", "LIVE_SOURCE"]

#: Which member a kill takes: one that is not the elected cluster manager (holding the most primaries), or
#: the elected cluster manager.
VICTIMS = ("data", "manager")

#: The live source's name: its tools are ``nodeloss/<tool>``, its documents' source ``mcp/nodeloss``.
LIVE_SOURCE = "nodeloss"
_LIVE_LABEL = f"mcp/{LIVE_SOURCE}"
#: The drill cluster's HTTP and transport ports: the first three free in a row of each range (apart from
#: the default cluster's 9201-9209/9351-9359, the cluster suite's 9270-9279/19370-19379, the outage
#: drill's 9280-9289 and the lifecycle tests' 9290-9298).
_HTTP_PORTS = range(9260, 9270)
_TRANSPORT_PORTS = range(19360, 19370)
_MEMBERS = 3
_PROBES = 3
_SEARCHABLE_TIMEOUT_S = 120.0
#: At most this many distinct queries get a reference answer (one search each before the load).
_REFERENCE_QUERIES = 100


@contextmanager
def drill_cluster(settings: Settings, *, progress: Callable[[str], None] | None = None) -> Iterator[LocalCluster]:
    """A three-node :class:`LocalCluster` of the drill's own (512 MB heap per member, no ml-commons): the
    first three free HTTP ports from 9260 and transport ports from 19360, the cluster name
    ``toolsift-nodeloss-cluster`` and a scratch data folder; stopped and deleted when the block ends.

    Raises:
        ConfigError: no three free ports in a row in those ranges.
        NodeError: the artifacts cannot be installed.
    """
    folder = Path(tempfile.mkdtemp(prefix="toolsift-nodeloss-"))
    with scratch_cluster(settings, name="toolsift-nodeloss", nodes=_MEMBERS, http_ports=_HTTP_PORTS,
                         transport_ports=_TRANSPORT_PORTS, folder=folder, start=False, progress=progress,
                         cluster_heap="512m") as cluster:
        yield cluster


# --- the cluster's state ------------------------------------------------------------------------------


def _health(urls: Sequence[str], **params: str) -> dict[str, Any] | None:
    """``_cluster/health`` from the first member that answers with a status (None: none did)."""
    for url in urls:
        try:
            body = httpx.get(f"{url}/_cluster/health", params={"cluster_manager_timeout": "1s", **params},
                             timeout=float(params.get("timeout", "1s").rstrip("s")) + 2).json()
        except (httpx.HTTPError, ValueError):
            continue
        if isinstance(body, dict) and isinstance(body.get("status"), str):
            return body
    return None


class _HealthWatch:
    """A thread recording the cluster's health (status, members joined) at every change, from ``origin``."""

    def __init__(self, urls: Sequence[str], origin: float) -> None:
        self.urls, self.origin = list(urls), origin
        self.timeline: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        last: tuple[str, int | None] | None = None
        while not self._stop.is_set():
            body = _health(self.urls)
            state = (str(body["status"]), body.get("number_of_nodes")) if body else ("no answer", None)
            if state != last:
                self.timeline.append({"at_s": round(time.monotonic() - self.origin, 2), "status": state[0],
                                      "nodes": state[1]})
                last = state
            self._stop.wait(0.25)

    def __enter__(self) -> _HealthWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def _wait_green(cluster: LocalCluster, timeout: float) -> None:
    """Until every member has joined and the cluster is green.

    Raises:
        ClusterError: not within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        body = _health(cluster.urls, wait_for_status="green", wait_for_nodes=str(len(cluster.members)), timeout="5s")
        if body and body["status"] == "green" and body.get("number_of_nodes") == len(cluster.members):
            return
        if time.monotonic() > deadline:
            raise ClusterError(f"the drill cluster was not green with {len(cluster.members)} members within "
                               f"{timeout:g} s (health: {body['status'] if body else 'no answer'})")
        time.sleep(0.5)


def _wait_gone(cluster: LocalCluster, timeout: float) -> None:
    """Until the cluster counts one member less: a member just stopped is still counted until the others
    notice (longer when it was the cluster manager: until they elect another), and starting it again
    before that would count it back at once.

    Raises:
        ClusterError: not within ``timeout`` seconds.
    """
    fewer = str(len(cluster.members) - 1)
    deadline = time.monotonic() + timeout
    while True:
        body = _health(cluster.urls, wait_for_nodes=fewer, timeout="5s")
        if body and body.get("number_of_nodes") == int(fewer):
            return
        if time.monotonic() > deadline:
            raise ClusterError(f"the drill cluster still counted {len(cluster.members)} members {timeout:g} s after "
                               "one was stopped")
        time.sleep(0.25)


def _manager(client: Any) -> str:
    """The elected cluster manager's node name."""
    return str(client.cat.cluster_manager(format="json")[0]["node"])


def _rejoin(cluster: LocalCluster, client: Any, step: dict[str, Any], at: Callable[[], float],
            green_timeout: float) -> None:
    """Start the stopped member again and wait for green, noting in ``step`` when it joined
    (``joined_at_s``), when the cluster was green (``green_at_s``) and who manages it then.

    Raises:
        ClusterError: not green within ``green_timeout`` seconds.
    """
    cluster.start(wait=True)
    step["joined_at_s"] = at()
    _wait_green(cluster, green_timeout)
    step["green_at_s"] = at()
    step["cluster_manager_after"] = _manager(client)


def _pick(cluster: LocalCluster, client: Any, index: str, victim: str) -> tuple[ClusterMember, str]:
    """The member a kill takes, and why."""
    manager = _manager(client)
    if victim == "manager":
        return next(m for m in cluster.members if m.name == manager), "the elected cluster manager: an election too"
    primaries = Counter(row["node"] for row in client.cat.shards(index=index, format="json", h="node,prirep")
                        if row["prirep"] == "p")
    others = [m for m in cluster.members if m.name != manager]
    chosen = max(others, key=lambda m: (primaries[m.name], -m.ordinal))
    return chosen, (f"not the cluster manager ({manager}), holds {primaries[chosen.name]} primar"
                    f"{'y' if primaries[chosen.name] == 1 else 'ies'} of the index: replicas promoted, no election")


# --- the live source ------------------------------------------------------------------------------------


@dataclass
class _LiveServer:
    """The probe tools the live MCP server serves (its spec file, re-read by the server on change)."""

    spec: Path
    tools: list[dict[str, Any]]

    def write(self) -> None:
        partial = self.spec.with_suffix(".partial")
        partial.write_text(json.dumps({"name": LIVE_SOURCE, "page_size": 100, "tools": self.tools}), encoding="utf-8")
        partial.replace(self.spec)


def _probe(name: str, text: str) -> dict[str, Any]:
    return {"name": name, "description": text,
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}


def _live_change(live: _LiveServer, step: int, client: Any, index: str, api_url: str) -> dict[str, Any]:
    """Change one probe tool and add one on the live server; seconds until both are found by a match query on
    the description, and whether the search API finds the added one."""
    stamp = int(time.time()) % 100_000
    changed_word, added_word = f"nodelosschanged{step}x{stamp}", f"nodelossadded{step}x{stamp}"
    live.tools[0]["description"] += f" Revision {step}: {changed_word}."
    added = f"probe_added_{step}"
    live.tools.append(_probe(added, f"A tool added while a node was down: {added_word}."))
    started = time.monotonic()
    live.write()
    wanted = {changed_word: tool_id_for(LIVE_SOURCE, str(live.tools[0]["name"])),
              added_word: tool_id_for(LIVE_SOURCE, added)}
    found: dict[str, float] = {}
    while len(found) < len(wanted) and time.monotonic() - started < _SEARCHABLE_TIMEOUT_S:
        for word, tool_id in wanted.items():
            if word in found:
                continue
            try:
                hits = client.search(index=index, body={"size": 5, "_source": False,
                                                        "query": {"match": {F.description: word}}})["hits"]["hits"]
            except Exception:  # noqa: BLE001 - the drill's own probe; it asks again
                hits = []
            if any(hit["_id"] == tool_id for hit in hits):
                found[word] = round(time.monotonic() - started, 2)
        time.sleep(0.1)
    through_api = False
    if added_word in found:
        try:
            answer = httpx.post(f"{api_url}/v1/search", json={"query": added_word, "top_k": 10}, timeout=60).json()
            through_api = wanted[added_word] in [t.get("id") for t in answer.get("tools") or ()]
        except (httpx.HTTPError, ValueError):
            through_api = False
    return {"changed_tool": wanted[changed_word], "added_tool": wanted[added_word],
            "changed_searchable_s": found.get(changed_word), "added_searchable_s": found.get(added_word),
            "searchable": len(found) == len(wanted), "added_found_through_api": through_api}


# --- figures --------------------------------------------------------------------------------------------


def _kind(call: Call) -> str:
    """A failed call's kind: the API's status and error code, an MCP tool error or lost session, or an answer
    without tools."""
    if call.status == 200:
        return "200 without tools"
    if call.front_end == "mcp":
        return call.code or "tool_error"
    return f"{call.status} {call.code}".strip()


def _compared(answer: tuple[str, ...], reference: tuple[str, ...]) -> str:
    """``same``, ``reordered`` (the same catalog tools in another order) or ``changed`` (other catalog tools):
    the catalog's tools only, down to the shorter list (the live source's probe tools change on purpose)."""
    probe = tool_id_for(LIVE_SOURCE, "")
    got, ref = ([i for i in ids if not i.startswith(probe)] for ids in (answer, reference))
    n = min(len(got), len(ref))
    if got[:n] == ref[:n]:
        return "same"
    return "reordered" if set(got[:n]) == set(ref[:n]) else "changed"


def _figures(calls: Sequence[Call], reference: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    failed = [c for c in calls if not c.ok]
    kinds = Counter(_kind(c) for c in failed)
    samples = {_kind(c): c.error for c in reversed(failed)}
    answered = sorted(c.ms for c in calls if c.ok)
    compared = [(c, _compared(c.tools, reference[c.query])) for c in calls if c.ok and c.query in reference]
    differing = [c for c, how in compared if how == "changed"]
    reordered = [c for c, how in compared if how == "reordered"]
    return {
        "sent": len(calls), "failed": len(failed),
        "failure_kinds": {k: {"count": n, "sample": samples[k]} for k, n in kinds.most_common()},
        "failures": [{"sent_s": c.sent_s, "ms": c.ms, "kind": _kind(c), "query": c.query[:80], "error": c.error}
                     for c in failed[:20]],
        "answers_compared": len(compared),
        "answers_changed": len(differing),
        "answers_reordered": len(reordered),
        **{f"{name}_sample": ({"query": some[0].query[:120], "reference": list(reference[some[0].query]),
                               "answered": list(some[0].tools)} if some else None)
           for name, some in (("changed", differing), ("reordered", reordered))},
        "p50_ms": round(statistics.median(answered), 1) if answered else None,
        "p95_ms": answered[min(len(answered) - 1, round(0.95 * (len(answered) - 1)))] if answered else None,
        "max_ms": answered[-1] if answered else None,
    }


def _mcp_sessions(url: str, queries: Sequence[str], stop: threading.Event, origin: float, calls: list[Call]) -> None:
    """MCP sessions one after another until ``stop``: a session that breaks is a failed call, and a new one opens."""
    while not stop.is_set():
        sent = time.monotonic()
        try:
            mcp_client_loop(url, queries, stop, origin, calls)
        except Exception as exc:  # noqa: BLE001 - counted as a failure of its kind, then a new session
            calls.append(Call("mcp", round(sent - origin, 3), round((time.monotonic() - sent) * 1000, 1), False, 0,
                              "session_lost", f"{type(exc).__name__}: {exc}"[:200]))
            stop.wait(0.5)


# --- the drill ------------------------------------------------------------------------------------------


def run_node_loss_drill(cluster: LocalCluster, settings: Settings, embedder: Embedder, catalog: Path,
                        queries: Sequence[str], *, clients: int = 4, shards: int = 3,
                        kills: Sequence[str] = VICTIMS, rolling: bool = True, live: bool = True,
                        settle_s: float = 8.0, down_s: float = 10.0,
                        progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the drill (see the module docstring) on ``cluster`` (started here when it is not running; the caller
    stops it) and report it.

    Args:
        clients: HTTP clients searching in a loop (besides one MCP session).
        shards: primary shards of the drill's index (one replica each).
        kills: the members to SIGKILL in turn, each one of :data:`VICTIMS`.
        rolling: then restart every member in turn.
        live: follow the live source and change it while each killed member is down.
        settle_s: seconds of load before the first step, between steps and after the last.
        down_s: the least seconds a killed member stays down (longer while a live change becomes searchable).

    Raises:
        ConfigError: no queries, a kill not in :data:`VICTIMS`, or a cluster that is not three members.
        NodeError: a member cannot be started.
        ClusterError: the cluster does not come back to green.
    """
    if not queries:
        raise ConfigError("bench node-loss needs queries to send")
    unknown = sorted(set(kills) - set(VICTIMS))
    if unknown:
        raise ConfigError(f"bench node-loss kills one of {', '.join(VICTIMS)}, not {', '.join(unknown)}")
    if len(cluster.members) != _MEMBERS:
        raise ConfigError(f"bench node-loss runs on a cluster of {_MEMBERS} members, not {len(cluster.members)}")
    say = progress or (lambda _: None)
    green_timeout = cluster.settings.node_start_timeout + 120
    began = time.monotonic()
    cluster.start(wait=True)
    _wait_green(cluster, green_timeout)
    say(f"cluster {cluster.name} green at {', '.join(cluster.urls)} after {time.monotonic() - began:.1f} s")
    folder = Path(tempfile.mkdtemp(prefix="toolsift-nodeloss-run-"))
    drill = settings.with_overrides(opensearch_url=",".join(cluster.urls), index="nodeloss-drill", shards=shards,
                                    replicas=1, query_log=False, eval_runs=False, data_dir=folder)
    client = connect(drill)
    catalog_only = {"bool": {"must_not": [{"term": {F.source: _LIVE_LABEL}}]}}
    try:
        # a fresh index with its replica, and no probe tools of an earlier drill on the same cluster
        IndexManager(client, drill.index).delete_all()
        client.indices.delete(index=f"{drill.index}-*", ignore_unavailable=True)
        report = ingest_catalog(client, drill, embedder, catalog)
        _wait_green(cluster, green_timeout)
        before = {**index_digest(client, drill.index, catalog_only), "tools": _tools(client, drill.index, catalog_only)}
        say(f"ingested {report.tools} tools ({before['documents']} documents) into {drill.index}: {shards} shard(s), "
            "1 replica")
        live_server = _LiveServer(folder / "live.json", [_probe(f"probe_{n}", f"Drill probe number {n}: echoes the "
                                                          "text it is given.") for n in range(_PROBES)])
        live_server.write()
        with _syncing(client, drill, embedder, live_server, enabled=live) as sync_errors:
            served = _serve_and_disrupt(cluster, client, drill, queries, clients, kills, rolling, live_server if live
                                        else None, settle_s, down_s, green_timeout, say)
        _wait_green(cluster, green_timeout)
        after = {**index_digest(client, drill.index, catalog_only), "tools": _tools(client, drill.index, catalog_only)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    say(f"catalog after: {after['documents']} documents, digest {'equal' if after['digest'] == before['digest'] else 'DIFFERENT'}")
    return {
        "catalog": str(catalog), "cluster": {"name": cluster.name, "urls": cluster.urls,
                                             "heap": cluster.settings.cluster_heap},
        "index": {"alias": drill.index, "shards": shards, "replicas": 1},
        "clients": {"http": clients, "mcp_sessions": 1}, "queries": len(queries),
        **served,
        "catalog_before": before, "catalog_after": after,
        "tools_lost": max(0, before["tools"] - after["tools"]),
        "documents_lost": max(0, before["documents"] - after["distinct_ids"]),
        "digest_equal": before["digest"] == after["digest"] and before["documents"] == after["documents"],
        "live_sync_errors": sync_errors,
    }


def _tools(client: Any, index: str, query: dict[str, Any]) -> int:
    body = {"query": {"bool": {"filter": [{"term": {F.entity: "tool"}}, query]}}}
    return int(client.count(index=index, body=body)["count"])


@contextmanager
def _syncing(client: Any, settings: Settings, embedder: Embedder, live: _LiveServer, *,
             enabled: bool) -> Iterator[list[str]]:
    """The live server followed by a :class:`Syncer` while the block runs; yields the sync errors seen (filled
    when the block ends)."""
    errors: list[str] = []
    if not enabled:
        yield errors
        return
    from anyio.from_thread import start_blocking_portal

    from toolsift.ingest.live import Syncer

    source = McpSource(name=LIVE_SOURCE, approval="off", timeout=60,
                       command=[sys.executable, "-m", "toolsift.bench.changing_server", str(live.spec)])
    first = threading.Event()
    syncer = Syncer(client, settings.with_overrides(mcp_sources=[source]), embedder,
                    on_indexed=lambda name, report: first.set())
    seen: list[str] = []

    with start_blocking_portal() as portal:
        running = portal.start_task_soon(syncer.run)
        watching = threading.Event()

        def watch() -> None:  # every distinct error the source's status took
            while not watching.wait(0.2):
                error = syncer.statuses[LIVE_SOURCE].last_error
                if error and (not seen or seen[-1] != error):
                    seen.append(error)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            if not first.wait(timeout=300):
                raise ClusterError(f"the live source's first listing was not indexed: "
                                   f"{syncer.statuses[LIVE_SOURCE].last_error or 'no answer'}")
            yield errors
        finally:
            watching.set()
            watcher.join(timeout=5)
            running.cancel()
            errors.extend(seen)


def _serve_and_disrupt(cluster: LocalCluster, client: Any, settings: Settings, queries: Sequence[str], clients: int,
                       kills: Sequence[str], rolling: bool, live: _LiveServer | None, settle_s: float,
                       down_s: float, green_timeout: float, say: Callable[[str], None]) -> dict[str, Any]:
    toolsift = str(Path(sys.executable).with_name("toolsift"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLSIFT_")}
    env.update({"TOOLSIFT_OPENSEARCH_URL": settings.effective_url, "TOOLSIFT_INDEX": settings.index,
                "TOOLSIFT_RETRIEVER": settings.retriever, "TOOLSIFT_QUERY_LOG": "false",
                "TOOLSIFT_OPENSEARCH_TIMEOUT": str(settings.opensearch_timeout)})
    api_port, mcp_port = free_port(), free_port()
    api_url, mcp_url = f"http://127.0.0.1:{api_port}", f"http://127.0.0.1:{mcp_port}"
    calls: list[Call] = []
    steps: list[dict[str, Any]] = []
    stop = threading.Event()
    with serving([toolsift, "serve", "api", "--port", str(api_port)], env, api_url), \
            serving([toolsift, "serve", "mcp", "--transport", "http", "--port", str(mcp_port)], env, mcp_url,
                    ready_path=None):
        say(f"serving: api {api_url}, mcp {mcp_url}, both on {settings.effective_url}; {clients} HTTP client(s) "
            "+ 1 MCP session")
        reference = _reference(api_url, queries)
        say(f"reference answers of {len(reference)} queries taken, every member up")
        origin = time.monotonic()

        def at() -> float:
            """Seconds since the load began."""
            return round(time.monotonic() - origin, 2)

        workers = [threading.Thread(target=http_client_loop, args=(api_url, queries, stop, origin, calls, n),
                                    daemon=True) for n in range(clients)]
        workers.append(threading.Thread(target=_mcp_sessions, args=(mcp_url, queries, stop, origin, calls),
                                        daemon=True))
        with _HealthWatch(cluster.urls, origin) as health:
            for worker in workers:
                worker.start()
            time.sleep(settle_s)
            for n, victim in enumerate(kills):
                member, why = _pick(cluster, client, settings.index, victim)
                step: dict[str, Any] = {"step": f"kill {member.name}", "kind": "kill", "node": member.name,
                                        "victim": victim, "why": why, "at_s": at()}
                member.kill()
                say(f"SIGKILLed {member.name} ({why})")
                _wait_gone(cluster, green_timeout)
                step["left_at_s"] = at()
                if live is not None:
                    step["live_change"] = change = _live_change(live, n, client, settings.index, api_url)
                    say(f"live change while {member.name} is down: searchable "
                        f"{'in ' + str(change['added_searchable_s']) + ' s' if change['searchable'] else 'NOT within the timeout'}")
                time.sleep(max(0.0, step["at_s"] + down_s - at()))
                step["restart_at_s"] = at()
                _rejoin(cluster, client, step, at, green_timeout)
                say(f"{member.name} is back; green after {step['green_at_s'] - step['at_s']:.1f} s from the kill; "
                    f"cluster manager {step['cluster_manager_after']}")
                steps.append(step)
                time.sleep(settle_s)
            if rolling:
                manager = _manager(client)
                order = sorted(cluster.members, key=lambda m: (m.name == manager, m.ordinal))
                for member in order:
                    step = {"step": f"restart {member.name}", "kind": "rolling restart", "node": member.name,
                            "was_cluster_manager": _manager(client) == member.name, "at_s": at()}
                    member.stop(timeout=60)
                    step["stopped_at_s"] = at()
                    _wait_gone(cluster, green_timeout)
                    step["left_at_s"] = at()
                    _rejoin(cluster, client, step, at, green_timeout)
                    say(f"rolling restart: {member.name} back and green after {step['green_at_s'] - step['at_s']:.1f} s")
                    steps.append(step)
                time.sleep(settle_s)
            stop.set()
            for worker in workers:
                worker.join(timeout=60)
            end = at()
        timeline = health.timeline
    return {"steps": steps, "duration_s": end, "health_timeline": timeline,
            **_phase_figures(calls, steps, end, reference)}


def _reference(api_url: str, queries: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Each of the first :data:`_REFERENCE_QUERIES` distinct queries' answer (tool ids, top 5) through the search
    API, one after the other, with every member up: what the answers under load are compared with."""
    reference: dict[str, tuple[str, ...]] = {}
    with httpx.Client(timeout=60) as http:
        for query in list(dict.fromkeys(queries))[:_REFERENCE_QUERIES]:
            answer = http.post(f"{api_url}/v1/search", json={"query": query, "top_k": 5})
            if answer.status_code == 200:
                reference[query] = tuple(str(t.get("id")) for t in answer.json().get("tools") or ())
    return reference


def _phase_figures(calls: Sequence[Call], steps: Sequence[dict[str, Any]], end: float,
                   reference: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    """Figures per front end for each phase (steady load before the first step; each step until the next) and
    in total; answers compared with the same query's answer in ``reference``."""
    bounds = [("before the first step", 0.0)] + [(s["step"], float(s["at_s"])) for s in steps] + [("", end + 1e9)]
    phases = []
    for (name, start), (_, stop) in zip(bounds, bounds[1:]):
        inside = [c for c in calls if start <= c.sent_s < stop]
        phases.append({"phase": name, "from_s": start, "to_s": min(stop, end),
                       **{fe: _figures([c for c in inside if c.front_end == fe], reference) for fe in ("api", "mcp")}})
    return {"phases": phases, "reference_queries": len(reference),
            "totals": {fe: _figures([c for c in calls if c.front_end == fe], reference) for fe in ("api", "mcp")}}
