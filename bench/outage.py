"""``toolsift bench outage``: the OpenSearch node crashes, and nothing is lost, duplicated or left half-done.

The drill runs on a node of its own (the managed node's artifacts, a free port, a scratch data folder),
so it never touches the node searches use. Two phases:

1. **Ingest through a crash.** The catalog is ingested once cleanly (the reference). Then it is
   ingested into a second index and the node is killed with SIGKILL once the write pass has begun. The
   interrupted ingest must fail with a clear error; after the restart the index must be marked
   unfinished (``toolsift index status``), and a rerun must converge to the clean ingest: the same
   document count and content digest (every id with its content hash), 0 duplicates.
2. **Serving through a crash.** ``toolsift serve api`` and ``toolsift serve mcp --transport http``
   (each started as a user starts it) answer a bounded load — ``clients`` HTTP clients and one MCP
   client session (the official SDK) searching in a loop — while the node is killed and restarted.
   Errors may occur only while the node is down, each a clean 503 ``opensearch_unavailable`` (for MCP,
   a tool error saying OpenSearch is unavailable), and full answers must come back within seconds of
   the node's return: the report gives the first full answer after the restart and the errors after it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from toolsift.config import Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import ConfigError, error_kind
from toolsift.bench.load import free_port, serving
from toolsift.ingest.pipeline import ingest_catalog
from toolsift.mappings.index import IndexManager
from toolsift.opensearch import connect
from toolsift.plugin_scripts import LocalNode
from toolsift.plugin_scripts.node import port_in_use

__all__ = ["Call", "run_outage_drill", "index_digest", "http_client_loop", "mcp_client_loop"]

_NODE_PORTS = range(9280, 9290)  # below the runner's 9299 limit, apart from the lifecycle test's 9290-9298


@dataclass(frozen=True)
class Call:
    """One search during the serving phase: when it was sent (s from the phase's start), how it ended."""

    front_end: str
    sent_s: float
    ms: float
    ok: bool
    status: int
    code: str
    error: str
    #: The query sent, and the ids of the tools answered in rank order (none when the search failed).
    query: str = ""
    tools: tuple[str, ...] = ()


def index_digest(client: Any, index: str, query: dict[str, Any] | None = None) -> dict[str, Any]:
    """Documents, distinct ids and a SHA-256 over every (id, content hash) of ``index`` (those ``query``
    matches; default all): equal digests, equal documents."""
    client.indices.refresh(index=index)
    pairs: list[tuple[str, str]] = []
    answer = client.search(index=index, body={"size": 1000, "_source": ["content_hash"],
                                              "query": query or {"match_all": {}}, "sort": ["_doc"]},
                           params={"scroll": "1m"})
    while answer["hits"]["hits"]:
        pairs += [(h["_id"], h["_source"].get("content_hash", "")) for h in answer["hits"]["hits"]]
        answer = client.scroll(scroll_id=answer["_scroll_id"], params={"scroll": "1m"})
    client.clear_scroll(scroll_id=answer["_scroll_id"])
    ids = [p[0] for p in pairs]
    return {"documents": len(pairs), "distinct_ids": len(set(ids)), "duplicates": len(ids) - len(set(ids)),
            "digest": hashlib.sha256(json.dumps(sorted(pairs)).encode()).hexdigest()}


def _written(client: Any, alias: str) -> int:
    """Documents the write pass has sent to the alias's versions so far (indexing stats: no refresh needed)."""
    try:
        stats = client.indices.stats(index=f"{alias}-0*", metric="indexing")
    except Exception:  # noqa: BLE001 - not created yet
        return 0
    return int(stats["_all"]["primaries"].get("indexing", {}).get("index_total", 0))


def _ingest_phase(node: LocalNode, settings: Settings, embedder: Embedder, catalog: Path,
                  say: Callable[[str], None]) -> dict[str, Any]:
    client = connect(settings)
    clean_settings = settings.with_overrides(index=f"{settings.index}-clean")
    ingest_catalog(client, clean_settings, embedder, catalog)
    clean = index_digest(client, clean_settings.index)
    say(f"clean ingest: {clean['documents']} documents")

    failure: list[BaseException] = []

    def interrupted() -> None:
        try:
            ingest_catalog(connect(settings), settings, embedder, catalog)
        except BaseException as exc:  # noqa: BLE001 - the crash is what is measured
            failure.append(exc)

    worker = threading.Thread(target=interrupted, daemon=True)
    worker.start()
    while worker.is_alive() and _written(client, settings.index) == 0:
        time.sleep(0.05)
    written = _written(client, settings.index)
    killed_mid_ingest = worker.is_alive()
    node.kill()
    say(f"killed the node after {written} document(s) were written; the ingest was "
        f"{'still running' if killed_mid_ingest else 'already done'}")
    worker.join(timeout=600)
    started = time.monotonic()
    node.start(wait=True)
    restart_s = round(time.monotonic() - started, 1)
    client = connect(settings)
    info = IndexManager(client, settings.index).current()
    unfinished = sorted(info.unfinished) if info is not None else []
    error = failure[0] if failure else None
    kind = error_kind(error) if error is not None else None
    rerun = ingest_catalog(client, settings, embedder, catalog, skip_if_unchanged=True)
    after = index_digest(client, settings.index)
    info = IndexManager(client, settings.index).current()
    say(f"rerun: {after['documents']} documents, digest {'equal' if after['digest'] == clean['digest'] else 'DIFFERENT'}")
    return {
        "documents_written_before_the_kill": written,
        "killed_mid_ingest": killed_mid_ingest,
        "interrupted_error": None if error is None else {
            "type": type(error).__name__, "code": kind.code if kind else None,
            "message": str(error).splitlines()[0][:300] if str(error) else ""},
        "restart_s": restart_s,
        "unfinished_after_restart": unfinished,
        "rerun": {"created": rerun.created, "updated": rerun.updated, "unchanged": rerun.unchanged,
                  "skipped_as_current": rerun.catalog_unchanged, "ok": rerun.ok},
        "unfinished_after_rerun": sorted(info.unfinished) if info is not None else [],
        "clean": clean,
        "after_rerun": after,
        "converged": after["digest"] == clean["digest"] and after["documents"] == clean["documents"],
        "lost": max(0, clean["documents"] - after["distinct_ids"]),
        "duplicated": after["duplicates"],
    }


def http_client_loop(url: str, queries: Sequence[str], stop: threading.Event, origin: float,
                     calls: list[Call], offset: int) -> None:
    """Search ``url``'s ``POST /v1/search`` (top 5) in a closed loop until ``stop``, each call kept in ``calls``."""
    with httpx.Client(timeout=30) as http:
        i = offset
        while not stop.is_set():
            sent, query = time.monotonic(), queries[i % len(queries)]
            try:
                answer = http.post(f"{url}/v1/search", json={"query": query, "top_k": 5})
                body = answer.json()
                ok = answer.status_code == 200 and bool(body.get("tools"))
                calls.append(Call("api", round(sent - origin, 3), round((time.monotonic() - sent) * 1000, 1), ok,
                                  answer.status_code, "" if ok else str(body.get("code", "")),
                                  "" if ok else str(body.get("error", ""))[:200], query,
                                  tuple(str(t.get("id")) for t in body.get("tools") or ()) if ok else ()))
            except httpx.HTTPError as exc:
                calls.append(Call("api", round(sent - origin, 3), round((time.monotonic() - sent) * 1000, 1), False,
                                  0, "transport", str(exc)[:200], query))
            i += 1


def mcp_client_loop(url: str, queries: Sequence[str], stop: threading.Event, origin: float,
                    calls: list[Call]) -> None:
    """Call the MCP server's ``search_tools`` (top 5) at ``url`` in one session (the official SDK's client) in
    a closed loop until ``stop``, each call kept in ``calls``."""
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def loop() -> None:
        async with streamable_http_client(f"{url}/mcp") as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            i = 0
            while not stop.is_set():
                sent, query = time.monotonic(), queries[i % len(queries)]
                answer = await session.call_tool("search_tools", {"query": query, "top_k": 5})
                text = " ".join(getattr(c, "text", "") for c in answer.content)
                ok = not answer.is_error and '"tools"' in text
                calls.append(Call("mcp", round(sent - origin, 3), round((time.monotonic() - sent) * 1000, 1), ok,
                                  0 if answer.is_error else 200, "tool_error" if answer.is_error else "",
                                  text[:200] if answer.is_error else "", query, _tool_ids(text) if ok else ()))
                i += 1

    anyio.run(loop)


def _tool_ids(text: str) -> tuple[str, ...]:
    """The tool ids of an MCP ``search_tools`` answer's JSON text (none when it is not that JSON)."""
    try:
        body = json.loads(text)
    except ValueError:
        return ()
    tools = body.get("tools") if isinstance(body, dict) else None
    return tuple(str(t.get("id")) for t in tools if isinstance(t, dict)) if isinstance(tools, list) else ()


def _window(calls: Sequence[Call], kill_s: float, up_s: float) -> dict[str, Any]:
    before = [c for c in calls if c.sent_s + c.ms / 1000 < kill_s]  # answered before the kill
    after = [c for c in calls if c.sent_s > up_s]
    first_ok = next((c for c in sorted(after, key=lambda c: c.sent_s) if c.ok), None)
    errors = [c for c in calls if not c.ok]
    clean_errors = [c for c in errors if (c.front_end == "api" and c.status == 503 and c.code == "opensearch_unavailable")
                    or (c.front_end == "mcp" and "OpenSearch is unavailable" in c.error)]
    return {
        "requests": len(calls), "ok": sum(c.ok for c in calls), "errors": len(errors),
        "errors_before_the_kill": sum(not c.ok for c in before),
        "errors_while_down": sum(not c.ok for c in calls if c.sent_s + c.ms / 1000 >= kill_s and c.sent_s <= up_s),
        "errors_after_the_node_returned": sum(not c.ok for c in after),
        "errors_clean_503": len(clean_errors),
        "unclean_errors": [asdict(c) for c in errors if c not in clean_errors][:5],
        "first_full_answer_after_return_s": None if first_ok is None else round(first_ok.sent_s - up_s, 2),
        "error_sample": errors[0].error if errors else "",
    }


def _serving_phase(node: LocalNode, settings: Settings, queries: Sequence[str], clients: int, up_s: float,
                   after_s: float, say: Callable[[str], None]) -> dict[str, Any]:
    toolsift = str(Path(sys.executable).with_name("toolsift"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLSIFT_")}
    env.update({"TOOLSIFT_OPENSEARCH_URL": settings.effective_url, "TOOLSIFT_INDEX": settings.index,
                "TOOLSIFT_RETRIEVER": settings.retriever, "TOOLSIFT_QUERY_LOG": "false",
                "TOOLSIFT_OPENSEARCH_TIMEOUT": "5"})
    api_port, mcp_port = free_port(), free_port()
    api_url, mcp_url = f"http://127.0.0.1:{api_port}", f"http://127.0.0.1:{mcp_port}"
    calls: list[Call] = []
    stop = threading.Event()
    with serving([toolsift, "serve", "api", "--port", str(api_port)], env, api_url), \
            serving([toolsift, "serve", "mcp", "--transport", "http", "--port", str(mcp_port)], env, mcp_url,
                    ready_path=None):
        say(f"serving: api {api_url}, mcp {mcp_url}; {clients} HTTP client(s) + 1 MCP session")
        origin = time.monotonic()
        workers = [threading.Thread(target=http_client_loop, args=(api_url, queries, stop, origin, calls, n), daemon=True)
                   for n in range(clients)]
        workers.append(threading.Thread(target=mcp_client_loop, args=(mcp_url, queries, stop, origin, calls),
                                        daemon=True))
        for worker in workers:
            worker.start()
        time.sleep(up_s)
        kill_s = time.monotonic() - origin
        node.kill()
        say("killed the node; restarting it")
        node.start(wait=True)
        back_s = time.monotonic() - origin
        say(f"the node is back after {back_s - kill_s:.1f} s")
        time.sleep(after_s)
        stop.set()
        for worker in workers:
            worker.join(timeout=60)
    return {
        "clients": clients, "kill_at_s": round(kill_s, 2), "node_back_at_s": round(back_s, 2),
        "down_s": round(back_s - kill_s, 2),
        "api": _window([c for c in calls if c.front_end == "api"], kill_s, back_s),
        "mcp": _window([c for c in calls if c.front_end == "mcp"], kill_s, back_s),
    }


def run_outage_drill(settings: Settings, embedder: Embedder, catalog: Path, queries: Sequence[str], *,
                     clients: int = 4, up_s: float = 8, after_s: float = 12,
                     progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run both phases on a node of its own and report them (see the module docstring).

    Raises:
        ConfigError: no free port for the drill's node, or no queries.
        NodeError: the drill's node cannot be installed or started.
    """
    if not queries:
        raise ConfigError("bench outage needs queries to send")
    say = progress or (lambda _: None)
    port = next((p for p in _NODE_PORTS if not port_in_use(p)), None)
    if port is None:
        raise ConfigError(f"bench outage needs a free port in {_NODE_PORTS.start}-{_NODE_PORTS.stop - 1} for its node")
    folder = Path(tempfile.mkdtemp(prefix="toolsift-outage-"))
    node_settings = settings.with_overrides(node_port=port, node_heap="512m", node_cluster_name="toolsift-outage",
                                            data_dir=folder / "data", opensearch_url=None)
    node = LocalNode(node_settings)
    node.install()
    started = time.monotonic()
    node.start(wait=True)
    say(f"drill node up on port {port} after {time.monotonic() - started:.1f} s")
    drill = node_settings.with_overrides(opensearch_url=node.url, index="outage-drill", query_log=False,
                                         eval_runs=False)
    try:
        ingest = _ingest_phase(node, drill, embedder, catalog, say)
        served = _serving_phase(node, drill, queries, clients, up_s, after_s, say)
    finally:
        node.stop(timeout=30)
    return {"catalog": str(catalog), "node_port": port, "ingest": ingest, "serving": served}
