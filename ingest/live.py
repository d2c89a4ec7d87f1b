"""Live catalogs: running MCP servers as sources, kept in the index by ``toolsift sync``.

Each source in ``mcp_sources`` (:class:`~toolsift.config.McpSource`: a stdio command or a streamable
HTTP URL) is followed by one task of :class:`Syncer`:

1. **connect** with the official MCP SDK's client and initialise, within the source's ``timeout``;
2. **list** its tools, page by page (``tools/list`` with the cursor), into one MCP catalog record:
   the server as an agent, each tool with its description and original input schema (kept as ``raw``,
   ready to call);
3. **index** it through the ordinary ingest (:func:`~toolsift.ingest.pipeline.ingest_catalog`, the
   ``mcp`` loader, screening, approvals): the record is written to a snapshot file
   ``<data_dir>/live/<name>.json`` whose source label, ``mcp/<name>``, is this server's alone, so a
   re-index prunes only this server's documents and leaves every other source as it was;
4. **stay connected**: on ``notifications/tools/list_changed`` it lists and indexes that server again;
   a quiet server is pinged every 5 s, so one that died is noticed;
5. **keep versions**: every listing is observed by :class:`~toolsift.ingest.versions.VersionStore`
   (each definition's hash, first and last seen; tools the server dropped are deprecated — gone from
   search at once, their record pruned after ``deprecation_grace_days``).

A server that cannot be reached, hangs past its timeout, crashes or answers with something that is not
a tool list keeps its last good version in the index; the error, naming the source, goes to the
status, and the task reconnects with exponential backoff (1 s doubling to 60 s). Indexing runs in a
worker thread, one source at a time: searches never wait on a sync.

The status of every source (connected or not, tools, last change, last error) is written to
``<data_dir>/live/status.json`` after each change of state, and ``toolsift sync status`` reads it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio

from toolsift.config import McpSource, Settings
from toolsift.errors import SourceError, ToolsiftError
from toolsift.ingest.versions import VersionStore, definition_hash

if TYPE_CHECKING:
    from mcp import ClientSession
    from opensearchpy import OpenSearch

    from toolsift.encoders.embedding import Embedder
    from toolsift.ingest.pipeline import IngestReport

__all__ = ["SourceStatus", "list_server", "call_source", "snapshot_path", "status_path", "read_status",
           "index_server", "Syncer"]

_MAX_PAGES = 1_000
_BACKOFF_FIRST, _BACKOFF_MAX = 1.0, 60.0
#: Seconds between pings of a quiet source (a server that died says nothing).
_HEARTBEAT = 5.0

SourceState = Literal["connecting", "connected", "error"]


@dataclass
class SourceStatus:
    """What ``toolsift sync status`` shows of one source.

    Args:
        name: the source's name.
        transport: ``stdio`` or ``http``.
        state: ``connecting``, ``connected`` (listed and following changes) or ``error``.
        tools: tools in its last good listing (the version searchable now).
        version: a digest of that listing.
        listed_at: when it was last listed (epoch seconds).
        changed_at: when its listing last changed (epoch seconds): the first listing, or a change.
        changes: listings that changed the tools since ``toolsift sync`` started.
        last_error: the last error, naming the source; kept after a recovery until the next one.
        error_at: when that error happened.
    """

    name: str
    transport: str
    state: SourceState = "connecting"
    tools: int = 0
    version: str = ""
    listed_at: float | None = None
    changed_at: float | None = None
    changes: int = 0
    last_error: str = ""
    error_at: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def snapshot_path(settings: Settings, source: McpSource) -> Path:
    """The catalog file a source's last good listing is indexed from."""
    return settings.data_dir / "live" / f"{source.name}.json"


def status_path(settings: Settings) -> Path:
    return settings.data_dir / "live" / "status.json"


def read_status(settings: Settings) -> dict[str, Any] | None:
    """The status ``toolsift sync`` last wrote, or None when it never ran here."""
    path = status_path(settings)
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ToolsiftError(f"the sync status {str(path)!r} cannot be read: {exc}") from exc


def _write_json(path: Path, value: Any) -> None:
    """Write ``value`` as JSON atomically (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_text(json.dumps(value, ensure_ascii=False, indent=1), encoding="utf-8")
    partial.replace(path)


# --- one listing -----------------------------------------------------------------------------------


@asynccontextmanager
async def _session(source: McpSource, on_message: Callable[[Any], Any] | None = None,
                   http_errors: list[int] | None = None) -> AsyncIterator[tuple[ClientSession, Any]]:
    """An initialised client session with the source, and its initialisation result.

    ``http_errors`` collects the HTTP error statuses a streamable HTTP source answered (the SDK turns
    them into a bare "error response"; :func:`_failure` names them)."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import get_default_environment, stdio_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def handler(message: Any) -> None:
        if on_message is not None:
            await on_message(message)

    if source.command is not None:
        params = StdioServerParameters(command=source.command[0], args=list(source.command[1:]),
                                       env={**get_default_environment(), **source.env})
        transport = stdio_client(params)
    else:
        assert source.url is not None
        headers = {key: value.get_secret_value() for key, value in source.headers.items()}
        http = create_mcp_http_client(headers=headers)

        async def note_error(response: Any) -> None:
            if response.status_code >= 400 and http_errors is not None:
                http_errors.append(int(response.status_code))

        http.event_hooks["response"].append(note_error)
        transport = streamable_http_client(source.url, http_client=http)
    async with transport as streams, ClientSession(streams[0], streams[1], message_handler=handler) as session:
        with anyio.fail_after(source.timeout):
            initialised = await session.initialize()
        yield session, initialised


async def _listing(source: McpSource, session: ClientSession, initialised: Any) -> dict[str, Any]:
    """The server's tools, every page, as one MCP catalog record."""
    from mcp import types

    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        with anyio.fail_after(source.timeout):
            page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        for tool in page.tools:
            entry: dict[str, Any] = {"name": tool.name, "description": tool.description or "",
                                     "inputSchema": tool.input_schema}
            if tool.output_schema:
                entry["outputSchema"] = tool.output_schema
            if tool.title:
                entry["title"] = tool.title
            tools.append(entry)
        cursor = page.next_cursor
        if not cursor:
            break
    else:
        raise SourceError(f"mcp source {source.name!r}: more than {_MAX_PAGES} pages of tools; stopped listing")
    info = getattr(initialised, "server_info", None)
    description = (getattr(initialised, "instructions", None) or getattr(info, "title", None)
                   or getattr(info, "name", None) or "")
    return {"name": source.name, "description": str(description), "tools": tools}


_HTTP_HINTS = {401: "the source refused its credentials: check its headers (token)",
               403: "the source refused access: check its headers (token) and permissions"}


def _failure(source: McpSource, exc: BaseException, http_errors: Sequence[int] = ()) -> SourceError:
    """Any failure of a listing as a :class:`SourceError` naming the source (and the HTTP status a
    streamable HTTP source answered with, when it answered with one)."""
    if isinstance(exc, SourceError):
        return exc
    if isinstance(exc, TimeoutError):
        return SourceError(f"mcp source {source.name!r} did not answer within {source.timeout:g} s")
    if isinstance(exc, BaseExceptionGroup):
        first = exc.exceptions[0] if exc.exceptions else exc
        return _failure(source, first, http_errors)
    detail = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
    if http_errors:
        status = http_errors[-1]
        detail = f"HTTP {status}: {_HTTP_HINTS.get(status, detail)}"
    return SourceError(f"mcp source {source.name!r}: {detail}")


async def list_server(source: McpSource) -> dict[str, Any]:
    """Connect to ``source``, list all its tools and disconnect.

    Raises:
        SourceError: unreachable, hung past ``timeout``, crashed, or answered with no tool list.
    """
    http_errors: list[int] = []
    try:
        async with _session(source, http_errors=http_errors) as (session, initialised):
            return await _listing(source, session, initialised)
    except Exception as exc:  # noqa: BLE001 - a source's every failure is reported as its own
        raise _failure(source, exc, http_errors) from exc


async def call_source(source: McpSource, name: str, arguments: Mapping[str, Any]) -> Any:
    """Call tool ``name`` (the server's own name) on ``source`` with ``arguments``; the SDK's
    ``CallToolResult`` as the server answered it (an error result included).

    Raises:
        SourceError: the source could not be reached, hung past ``timeout`` or broke off.
    """
    http_errors: list[int] = []
    try:
        async with _session(source, http_errors=http_errors) as (session, _):
            with anyio.fail_after(source.timeout):
                return await session.call_tool(name, dict(arguments))
    except Exception as exc:  # noqa: BLE001 - a source's every failure is reported as its own
        raise _failure(source, exc, http_errors) from exc


def index_server(client: OpenSearch, settings: Settings, embedder: Embedder, source: McpSource,
                 record: Mapping[str, Any]) -> IngestReport:
    """Index one listing of ``source``: its snapshot file through the ordinary ingest, pruning the
    tools the server no longer has (its source label is its own)."""
    from toolsift.ingest.pipeline import ingest_catalog

    path = snapshot_path(settings, source)
    _write_json(path, [dict(record)])
    if source.approval is not None:
        settings = settings.with_overrides(approval_policy={str(path): source.approval, **settings.approval_policy})
    return ingest_catalog(client, settings, embedder, path, fmt="mcp", prune=True, tenants=source.tenants)


# --- following every source --------------------------------------------------------------------------


@dataclass
class _Follow:
    source: McpSource
    status: SourceStatus
    changed: anyio.Event = field(default_factory=anyio.Event)
    http_errors: list[int] = field(default_factory=list)
    #: Whether this connection listed and indexed the server at least once.
    listed: bool = False


class Syncer:
    """Keeps every source's tools in the index (see the module docstring).

    Args:
        client: connected OpenSearch client.
        settings: the index, ``data_dir`` (snapshots, status) and approvals.
        embedder: the index's embedding model.
        sources: the sources to follow (default: ``settings.mcp_sources``).
        on_indexed: called after each successful index of a source with its name and the report
            (tests and benchmarks time freshness with it).
    """

    def __init__(self, client: OpenSearch, settings: Settings, embedder: Embedder,
                 sources: Sequence[McpSource] | None = None,
                 on_indexed: Callable[[str, IngestReport], None] | None = None) -> None:
        self.client = client
        self.settings = settings
        self.embedder = embedder
        self.sources = list(settings.mcp_sources if sources is None else sources)
        self.on_indexed = on_indexed
        self.statuses = {s.name: SourceStatus(s.name, "stdio" if s.command else "http") for s in self.sources}
        self._index_lock = anyio.Lock()

    # --- once ------------------------------------------------------------------------------------
    async def sync_once(self) -> dict[str, SourceStatus]:
        """List and index every source once (concurrently listed, indexed one at a time)."""
        async with anyio.create_task_group() as group:
            for source in self.sources:
                group.start_soon(self._once, source)
        self._write_status(running=False)
        return self.statuses

    async def _once(self, source: McpSource) -> None:
        try:
            record = await list_server(source)
        except SourceError as exc:
            self._error(source, exc)
            return
        await self._index(source, record)

    # --- following -------------------------------------------------------------------------------
    async def run(self) -> None:
        """Follow every source until cancelled."""
        try:
            async with anyio.create_task_group() as group:
                for source in self.sources:
                    group.start_soon(self._follow, source)
        finally:
            self._write_status(running=False)

    async def _follow(self, source: McpSource) -> None:
        backoff = _BACKOFF_FIRST
        while True:
            follow = _Follow(source, self.statuses[source.name])
            try:
                await self._connected(follow)
            except Exception as exc:  # noqa: BLE001 - reported, then retried with backoff
                self._error(source, _failure(source, exc, follow.http_errors))
            else:
                self._error(source, SourceError(f"mcp source {source.name!r} closed the connection"))
            if follow.listed:  # a connection that listed: the next failure starts the backoff over
                backoff = _BACKOFF_FIRST
            await anyio.sleep(backoff)
            backoff = min(backoff * 2, _BACKOFF_MAX)

    async def _connected(self, follow: _Follow) -> None:
        from mcp import types

        source = follow.source

        async def on_message(message: Any) -> None:
            message = getattr(message, "root", message)
            if isinstance(message, types.ToolListChangedNotification):
                follow.changed.set()
            elif isinstance(message, Exception):
                follow.changed.set()  # a broken transport: the next listing fails and says why

        self._set(source, state="connecting")
        async with _session(source, on_message, follow.http_errors) as (session, initialised):
            while True:
                follow.changed = anyio.Event()
                record = await _listing(source, session, initialised)
                await self._index(source, record)
                if follow.status.state == "error":  # not indexed (OpenSearch refused or was away): list again later
                    raise SourceError(follow.status.last_error)
                follow.listed = True
                while not follow.changed.is_set():
                    with anyio.move_on_after(_HEARTBEAT):
                        await follow.changed.wait()
                    if not follow.changed.is_set():
                        # A process that died or a connection that dropped says nothing: ask.
                        with anyio.fail_after(source.timeout):
                            await session.send_ping()

    # --- shared ----------------------------------------------------------------------------------
    async def _index(self, source: McpSource, record: dict[str, Any]) -> None:
        status = self.statuses[source.name]
        version = definition_hash(record)
        now = time.time()
        if version != status.version:
            async with self._index_lock:
                try:
                    report = await anyio.to_thread.run_sync(
                        index_server, self.client, self.settings, self.embedder, source, record)
                except ToolsiftError as exc:
                    self._error(source, SourceError(f"mcp source {source.name!r} could not be indexed: {exc}"))
                    return
                try:
                    await anyio.to_thread.run_sync(self._observe, source, record)
                except ToolsiftError as exc:
                    self._error(source, SourceError(f"mcp source {source.name!r}: its versions were not recorded: {exc}"))
            if self.on_indexed is not None:
                self.on_indexed(source.name, report)
            status.changes += status.version != ""
            status.changed_at = now
        self._set(source, state="connected", tools=len(record["tools"]), version=version, listed_at=now)

    def _observe(self, source: McpSource, record: Mapping[str, Any]) -> None:
        """Record the listing's definitions in the versions index (new, changed, deprecated, pruned)."""
        from toolsift.ingest.loaders.mcp import tool_id_for
        from toolsift.mappings.scoped import scoped_id

        # the ids the catalog index holds: scoped to the source's tenants (toolsift.mappings.scoped)
        definitions = {scoped_id(tool_id_for(source.name, str(tool["name"])), source.tenants): tool
                       for tool in record["tools"]}
        VersionStore(self.client, self.settings.index).observe(
            f"mcp/{source.name}", definitions, grace_days=self.settings.deprecation_grace_days,
            tenants=tuple(source.tenants))

    def _error(self, source: McpSource, exc: SourceError) -> None:
        self._set(source, state="error", last_error=str(exc), error_at=time.time())

    def _set(self, source: McpSource, **values: Any) -> None:
        status = self.statuses[source.name]
        for key, value in values.items():
            setattr(status, key, value)
        self._write_status(running=True)

    def _write_status(self, *, running: bool) -> None:
        _write_json(status_path(self.settings), {
            "pid": os.getpid(), "running": running, "updated_at": time.time(), "index": self.settings.index,
            "sources": [status.to_dict() for status in self.statuses.values()],
        })
