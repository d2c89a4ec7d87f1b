"""``toolsift sync``: running MCP servers (``mcp_sources``) kept in the index; ``toolsift sync status``."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._output import emit_json, safe_lines, table
from toolsift.cli.options import index_option, json_flag

if TYPE_CHECKING:
    from toolsift.ingest.pipeline import IngestReport


def _when(epoch: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch)) if epoch else "–"


@click.group(invoke_without_command=True)
@click.option("--once", is_flag=True, help="List and index every source once, then exit (non-zero if any failed).")
@click.option("--source", "names", multiple=True, help="Only this source (repeatable; default: every mcp_sources entry).")
@index_option("The index to keep the sources in (default: the configured one).")
@pass_app
def sync(app: AppContext, once: bool, names: tuple[str, ...], index_alias: str | None) -> None:
    """Keep running MCP servers' tools in the index: the `mcp_sources` of the config.

    Connects to each source with the MCP SDK's client (a stdio command or a streamable HTTP URL),
    lists its tools page by page, and indexes the server as an agent with its tools (ids
    `<source>/<tool>`, the original input schema kept). Then stays connected: when a server announces
    `notifications/tools/list_changed`, that server alone is listed and indexed again, through the
    screen and the approvals like any ingest. A source that fails keeps its last good version
    searchable; the error names it and the source is retried with backoff (1 s doubling to 60 s).
    Stop with Ctrl-C. `toolsift sync status` shows each source.
    """
    if click.get_current_context().invoked_subcommand is not None:
        return
    import anyio

    from toolsift.encoders.embedding import load_embedder
    from toolsift.ingest.live import Syncer

    settings = app.settings(index=index_alias)
    sources = [s for s in settings.mcp_sources if not names or s.name in names]
    unknown = sorted(set(names) - {s.name for s in settings.mcp_sources})
    if unknown:
        raise click.UsageError(f"no mcp_sources entry named {', '.join(unknown)}")
    if not sources:
        raise click.UsageError("no MCP sources configured: add [[mcp_sources]] tables (name, command or url) to the config")

    def indexed(name: str, report: IngestReport) -> None:
        click.echo(safe_lines(f"{name}: indexed {report.tools} tool(s) ({report.created} new, {report.updated} "
                              f"changed, {report.deleted} removed, {len(report.held)} held for approval)"), err=True)

    syncer = Syncer(app.client(), settings, load_embedder(settings), sources, on_indexed=indexed)
    if once:
        statuses = anyio.run(syncer.sync_once)
        failed = [s for s in statuses.values() if s.state == "error"]
        for status in failed:
            click.echo(safe_lines(f"error: {status.last_error}"), err=True)
        click.echo(f"{len(statuses) - len(failed)} of {len(statuses)} source(s) synced")
        if failed:
            raise SystemExit(13)
        return
    click.echo(f"following {len(sources)} source(s); Ctrl-C stops", err=True)
    try:
        anyio.run(syncer.run)
    except KeyboardInterrupt:
        click.echo("stopped", err=True)


@sync.command("status")
@json_flag("Print the status as JSON.")
@pass_app
def status(app: AppContext, as_json: bool) -> None:
    """Each source as `toolsift sync` last saw it: connected or not, tools, last change, last error."""
    from toolsift.ingest.live import read_status
    from toolsift.plugin_scripts.processes import pid_alive

    settings = app.settings()
    found = read_status(settings)
    if found is None:
        raise click.ClickException("toolsift sync has not run here (no status in the data folder)")
    running = bool(found.get("running")) and pid_alive(int(found.get("pid", 0)))
    if as_json:
        emit_json({**found, "running": running})
        return
    click.echo(f"toolsift sync {'running (pid ' + str(found.get('pid')) + ')' if running else 'not running'}, "
               f"index {found.get('index')}, updated {_when(found.get('updated_at'))}")
    rows: list[list[Any]] = [
        [s["name"], s["transport"], s["state"] if running or s["state"] == "error" else "stopped", s["tools"],
         _when(s.get("changed_at")), s.get("changes", 0), s.get("last_error") or ""]
        for s in found.get("sources", [])
    ]
    click.echo(safe_lines(table(["source", "transport", "state", "tools", "last change", "changes", "last error"], rows)))


@sync.command("versions")
@click.argument("tool_id", required=False)
@click.option("--source", "source_name", help="Every recorded tool of this source (default: every source).")
@index_option("The index the sources are kept in (default: the configured one).")
@json_flag("Print the records as JSON (with each definition).")
@pass_app
def versions(app: AppContext, tool_id: str | None, source_name: str | None, index_alias: str | None, as_json: bool) -> None:
    """The definitions live sources have served: TOOL_ID's history, or every tool's records.

    Each record is one definition (by content hash) with when a listing first held it and, once it
    stopped being current, when it was last seen: `superseded` by a newer definition, or `deprecated`
    (the server no longer lists the tool; search dropped it, and the record goes after
    `deprecation_grace_days`).
    """
    from toolsift.ingest.versions import VersionStore

    settings = app.settings(index=index_alias)
    store = VersionStore(app.client(), settings.index)
    if tool_id:
        records = store.history(tool_id)
    else:
        names = [source_name] if source_name else [s.name for s in settings.mcp_sources]
        records = sorted((r for name in names for r in store.of_source(f"mcp/{name}")),
                         key=lambda r: (r.doc_id, r.first_seen or ""))
    if as_json:
        emit_json([{"id": r.doc_id, "source": r.source, "hash": r.hash, "status": r.status, "first_seen": r.first_seen,
                    "last_seen": r.last_seen, "definition": r.definition} for r in records])
        return
    if not records:
        raise click.ClickException(f"no versions recorded{' for ' + repr(tool_id) if tool_id else ''}")
    click.echo(safe_lines(table(["id", "status", "hash", "first seen", "last seen"], [
        [r.doc_id, r.status, r.hash[:12], (r.first_seen or "")[:19], (r.last_seen or "–")[:19]] for r in records])))
