"""``toolsift index``: inspect and drop index versions."""

from __future__ import annotations

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._output import emit_json, safe_lines, table
from toolsift.cli.options import json_flag


@click.group()
def index() -> None:
    """Inspect index versions and aliases."""


_INDEX_OPTION = click.option("--index", "index_alias", help="Index alias (default: the configured one).")


@index.command("status")
@_INDEX_OPTION
@json_flag()
@pass_app
def status(app: AppContext, index_alias: str | None, as_json: bool) -> None:
    """Show the alias, its current version, embedding model, document counts, primaries' bytes per tool
    (agents, nested parameters and examples included), its segments (merged, or a merge still running)
    and pushed weights."""
    from toolsift.mappings.index import IndexManager
    from toolsift.opensearch import merge_state
    from toolsift.ranker.deploy import ACTIVE_WEIGHTS_KEY

    settings = app.settings(index=index_alias)
    client = app.client()
    manager = IndexManager(client, settings.index)
    info = manager.require()
    counts = {
        entity: client.count(index=info.index, body={"query": {"term": {"entity": entity}}})["count"]
        for entity in ("agent", "tool")
    }
    primaries = client.indices.stats(index=info.index, metric="store")["indices"][info.index]["primaries"]
    merge = merge_state(client, info.index)
    stored = int(primaries["store"]["size_in_bytes"])
    data = {
        "alias": info.alias,
        "index": info.index,
        "versions": manager.versions(),
        "embedding_model": info.embedding_model,
        "embedding_dim": info.embedding_dim,
        "schema_current": manager.is_current_schema(info),
        "documents": counts,
        "primaries_bytes": stored,
        "kb_per_tool": round(stored / counts["tool"] / 1000, 1) if counts["tool"] else None,
        "segments": merge.segments,
        "merged": merge.merged,
        "merging": merge.merging,
        "catalogs": info.catalogs,
        "unfinished": info.unfinished,
        "weights": (info.meta.get(ACTIVE_WEIGHTS_KEY) or {}).get("version"),
    }
    if as_json:
        emit_json(data)
        return
    segments = "merging" if merge.merging else "merged" if merge.merged else "not merged"
    click.echo(table(["alias", "index", "model", "dim", "agents", "tools", "KB/tool", "segments", "schema",
                      "pushed weights"], [[
        info.alias, info.index, info.embedding_model, info.embedding_dim, counts["agent"], counts["tool"],
        "-" if data["kb_per_tool"] is None else f"{data['kb_per_tool']:.1f}", f"{merge.segments} ({segments})",
        "current" if data["schema_current"] else "outdated (rebuild)", data["weights"] or "none",
    ]]))
    for path, started in info.unfinished.items():
        click.echo(safe_lines(f"unfinished: the ingest of {path} started {started} and did not finish (interrupted, "
                              f"or still running); the index may hold part of it: rerun `toolsift ingest {path}`"))


@index.command("drop")
@_INDEX_OPTION
@click.confirmation_option(prompt="Delete every version of this index, its alias and template?")
@pass_app
def drop(app: AppContext, index_alias: str | None) -> None:
    """Delete every version of the index alias."""
    from toolsift.mappings.index import IndexManager

    settings = app.settings(index=index_alias)
    IndexManager(app.client(), settings.index).delete_all()
    click.echo(f"dropped {settings.index}")
