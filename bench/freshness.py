"""``toolsift bench freshness``: from a change on a live MCP server to the new definition being searchable.

One live source, a real MCP server (:mod:`toolsift.bench.changing_server`, stdio, 100 tools per
``tools/list`` page) serving the first ``tools`` tools of a catalog (LiveMCPBench's by default, 527
real tools) as one server, is followed by :class:`~toolsift.ingest.live.Syncer` into a scratch index,
as ``toolsift sync`` does. Then, ``changes`` times, one tool's description gets a new sentence with a
word no other text holds; the server announces ``tools/list_changed``; the time is taken from the
write of the change until a search of the index (a match query on the description field for that
word) finds the tool: **freshness**, p50 / p95 / max.

Meanwhile ``searchers`` threads search the index without pause (the real search path,
:class:`~toolsift.search.SearchBackend`, requests made of the catalog's descriptions): their latency
while a change is being synced against their latency while nothing is, to show that a sync does not
block search. Approvals are off for the scratch source (a change under ``first-sight`` is held for a
person, which is not what is timed here).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from toolsift.config import McpSource, Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import CatalogError
from toolsift.ingest.loaders import detect_format, load_catalog
from toolsift.ingest.raw_records import RawTool
from toolsift.mappings.index import IndexManager

__all__ = ["run_freshness_bench", "TARGET_P95_S"]

#: The freshness the product aims at: a one-tool change searchable within 5 s (p95).
TARGET_P95_S = 5.0
_INDEX = "toolsift-freshness"
_SOURCE = "freshness"


def _catalog_tools(path: Path, count: int) -> list[dict[str, Any]]:
    """The first ``count`` tools of a catalog as MCP tools with distinct names."""
    tools: list[dict[str, Any]] = []
    seen: set[str] = set()
    for record in load_catalog(path, detect_format(path)):
        if not isinstance(record, RawTool):
            continue
        doc = record.documentation
        name = "".join(c if c.isalnum() or c in "_-" else "_" for c in (record.tool_id or str(doc.get("name"))))[:64]
        if not name or name in seen:
            continue
        seen.add(name)
        schema = doc.get("inputSchema") if isinstance(doc.get("inputSchema"), Mapping) else {"type": "object", "properties": {}}
        tools.append({"name": name, "description": str(doc.get("description") or name), "inputSchema": schema})
        if len(tools) == count:
            break
    if not tools:
        raise CatalogError(f"{str(path)!r} holds no tools to serve")
    return tools


def _write(path: Path, value: Any) -> None:
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    partial.replace(path)


def _percentiles(values: Sequence[float]) -> dict[str, float | int]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"n": len(ordered), "p50": round(statistics.median(ordered), 3), "p95": round(p95, 3),
            "max": round(ordered[-1], 3), "mean": round(statistics.fmean(ordered), 3)}


class _Searching:
    """Threads searching the index without pause, each search's (start, end) kept."""

    def __init__(self, client: OpenSearch, settings: Settings, embedder: Embedder, queries: Sequence[str],
                 threads: int) -> None:
        from toolsift.search import SearchBackend

        self.backend = SearchBackend(client, settings, embedder=embedder, source="bench")
        self.queries = list(queries)
        self.spans: list[tuple[float, float]] = []
        self.errors = 0
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._loop, args=(i,), daemon=True) for i in range(threads)]

    def _loop(self, offset: int) -> None:
        from toolsift.search import SearchRequest

        i = offset
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                self.backend.search(SearchRequest(query=self.queries[i % len(self.queries)], top_k=10))
            except Exception:  # noqa: BLE001 - counted; the figure is latency
                self.errors += 1
            self.spans.append((started, time.monotonic()))
            i += len(self._threads)

    def __enter__(self) -> _Searching:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)


def run_freshness_bench(client: OpenSearch, settings: Settings, embedder: Embedder, catalog: Path, *,
                        tools: int = 500, changes: int = 20, searchers: int = 2, timeout: float = 120.0) -> dict[str, Any]:
    """Time ``changes`` one-tool changes on a live server of ``tools`` tools (see the module docstring).

    Raises:
        CatalogError: the catalog holds no tools.
        SourceError: the live server could not be listed.
    """
    from anyio.from_thread import start_blocking_portal

    from toolsift.ingest.live import Syncer

    served = _catalog_tools(catalog, tools)
    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / "server.json"
        _write(spec, {"name": _SOURCE, "page_size": 100, "tools": served})
        source = McpSource(name=_SOURCE, command=[sys.executable, "-m", "toolsift.bench.changing_server", str(spec)],
                           approval="off", timeout=60)
        local = settings.with_overrides(index=_INDEX, data_dir=Path(folder) / "data", mcp_sources=[source],
                                        query_log=False)
        manager = IndexManager(client, _INDEX)
        manager.delete_all()
        indexed: list[tuple[float, float]] = []  # (when, seconds the ingest took)
        first = threading.Event()

        def on_indexed(name: str, report: Any) -> None:
            indexed.append((time.monotonic(), float(report.seconds)))
            first.set()

        syncer = Syncer(client, local, embedder, on_indexed=on_indexed)
        windows: list[tuple[float, float]] = []
        freshness: list[float] = []
        try:
            with start_blocking_portal() as portal:
                running = portal.start_task_soon(syncer.run)
                try:
                    if not first.wait(timeout=600):
                        raise CatalogError(f"the live server's first listing was not indexed: "
                                           f"{syncer.statuses[_SOURCE].last_error or 'no answer'}")
                    client.indices.refresh(index=_INDEX)
                    queries = [t["description"][:200] for t in served[:50]]
                    with _Searching(client, local, embedder, queries, searchers) as searching:
                        time.sleep(5.0)  # a quiet window first
                        for k in range(changes):
                            tool = served[(k * 37) % len(served)]
                            word = f"freshnessmark{k}x{int(time.time()) % 100000}"
                            tool["description"] = f"{tool['description']} Revision {k}: {word}."
                            started = time.monotonic()
                            _write(spec, {"name": _SOURCE, "page_size": 100, "tools": served})
                            while True:
                                hits = client.search(index=_INDEX, body={"size": 1, "_source": False, "query": {
                                    "match": {"description": word}}})["hits"]["hits"]
                                if hits:
                                    break
                                if time.monotonic() - started > timeout:
                                    raise CatalogError(f"change {k} was not searchable within {timeout:g} s: "
                                                       f"{syncer.statuses[_SOURCE].last_error or 'no error recorded'}")
                                time.sleep(0.05)
                            ended = time.monotonic()
                            freshness.append(ended - started)
                            windows.append((started, ended))
                            time.sleep(1.5)  # quiet between changes
                        spans = list(searching.spans)
                        errors = searching.errors
                finally:
                    running.cancel()
        finally:
            manager.delete_all()

    def during(span: tuple[float, float]) -> bool:
        return any(span[0] < end and span[1] > start for start, end in windows)

    busy = [(e - s) * 1000 for s, e in spans if during((s, e))]
    quiet = [(e - s) * 1000 for s, e in spans if not during((s, e))]
    summary = _percentiles(freshness)
    return {
        "catalog": str(catalog),
        "tools": len(served),
        "changes": changes,
        "searchers": searchers,
        "freshness_s": summary,
        "target_p95_s": TARGET_P95_S,
        "target_met": bool(freshness) and float(summary["p95"]) <= TARGET_P95_S,
        "sync_ingest_s": _percentiles([seconds for _, seconds in indexed[1:]]),
        "first_index_s": round(indexed[0][1], 2) if indexed else None,
        "search_ms_while_syncing": _percentiles(busy),
        "search_ms_otherwise": _percentiles(quiet),
        "search_errors": errors,
        "device": embedder.device,
    }
