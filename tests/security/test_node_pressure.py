"""Issue 44, finding 7: a node that is full refuses an ingest half-way through.

The probe: on a node whose circuit breakers had tripped (its heap full after a long run of evaluations),
`toolsift ingest` of a large catalog failed with ``429 circuit_breaking_exception`` and left a new index
version with part of its documents behind. Here the node refuses for real, half-way through the write
pass: once the first bulk request of the new version is written, its in-flight-requests breaker is
lowered below a bulk request's size (:class:`tests.pressure.RefusingNode`), so every later bulk request is
answered 429 as a full node answers it. `toolsift ingest` must retry with backoff, then stop with one line
naming the cause and the remedy (exit 5), and leave no index version behind, aliased or not.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.catalogs import write_catalog
from tests.environment import subprocess_environment
from tests.pressure import RefusingNode

TOOLSIFT = str(Path(sys.executable).with_name("toolsift"))
#: Tools of the catalog: more than one bulk request (200 documents each), few texts each.
TOOLS = 360


def _catalog(folder: Path) -> Path:
    """An MCP catalog of :data:`TOOLS` small tools on 12 servers (texts of its own: embedded afresh)."""
    verbs = ["convert", "fetch", "list", "render", "schedule", "translate", "summarise", "validate", "archive"]
    things = ["invoice", "calendar event", "weather report", "shipment", "playlist", "pull request", "receipt",
              "spreadsheet row", "support ticket", "map tile"]
    servers = []
    for s in range(12):
        tools = []
        for t in range(TOOLS // 12):
            verb, thing = verbs[(s + t) % len(verbs)], things[(s * 7 + t) % len(things)]
            tools.append({"name": f"{verb}_{thing.replace(' ', '_')}_{s}_{t}",
                          "description": f"{verb.capitalize()} a {thing} of workspace {s} (variant {t}).",
                          "inputSchema": {"type": "object", "properties": {}}})
        servers.append({"name": f"pressure-probe-{s}", "description": f"Workspace {s} tools.", "category": "probe",
                        "tools": {f"pressure-probe-{s}": {"tools": tools}}})
    return write_catalog(folder, servers)


def _managed(settings: Any) -> bool:
    """Whether the session's node is the managed local one (then the remedy names `toolsift node`)."""
    from toolsift.config import Settings

    return bool(settings.opensearch_url == Settings().node_url)


def test_an_ingest_refused_half_way_by_a_full_node_fails_in_one_line_with_the_remedy_and_leaves_no_version(
    client: Any, settings: Any, tmp_path: Path
) -> None:
    catalog = _catalog(tmp_path / "catalog")
    env = subprocess_environment()
    env.update(TOOLSIFT_INDEX=settings.index, TOOLSIFT_VECTOR_CACHE_DIR=str(tmp_path / "vectors"),
               TOOLSIFT_DATA_DIR=str(tmp_path / "data"), TOOLSIFT_INGEST_CHUNK_TEXTS="100",
               TOOLSIFT_BULK_MAX_RETRIES="2", TOOLSIFT_BULK_INITIAL_BACKOFF="0.2", HF_HUB_OFFLINE="1")
    if _managed(settings):
        env.update(TOOLSIFT_NODE_PORT=str(settings.node_port), TOOLSIFT_NODE_HEAP=settings.node_heap)
    else:
        env.update(TOOLSIFT_OPENSEARCH_URL=settings.opensearch_url)
    versions = f"{settings.index}-0*"  # the alias's index versions (-000001 …), not its side indices

    with RefusingNode(client, transient=False) as node:
        done = threading.Event()
        failed: list[BaseException] = []

        def refuse_once_documents_are_written() -> None:
            try:
                while not done.wait(0.01):
                    stats = client.indices.stats(index=versions, metric="indexing")
                    if stats["_all"].get("primaries", {}).get("indexing", {}).get("index_total", 0) > 0:
                        node.refuse()
                        return
            except BaseException as exc:  # seen by the test, not lost with the thread
                failed.append(exc)

        watcher = threading.Thread(target=refuse_once_documents_are_written, daemon=True)
        watcher.start()
        try:
            run = subprocess.run([TOOLSIFT, "ingest", str(catalog), "--quiet"], capture_output=True, text=True,
                                 timeout=600, env=env)
        finally:
            done.set()
            watcher.join(timeout=10)
        refusals = node.refusals

    assert not failed, failed
    assert node.armed and refusals >= 3, (refusals, run.stderr)  # the write, then its two retries
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.returncode == 5 and len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    line = lines[0]
    assert line.startswith("Error: ClusterError: OpenSearch at ") and "refused the writes with 429" in line, line
    assert "circuit_breaking_exception" in line and "after 2 retries" in line and "out of memory" in line, line
    if _managed(settings):
        assert "`toolsift node stop && toolsift node start`" in line and "TOOLSIFT_NODE_HEAP" in line, line
    assert f"the half-built index version {settings.index}-000001 was removed" in line, line
    assert client.cat.indices(index=versions, format="json") == []
    assert not client.indices.exists_alias(name=settings.index)
