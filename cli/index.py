"""``toolsift index``: inspect, compact and drop index versions."""

from __future__ import annotations

from typing import Any

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
    merge = merge_state(client, info.index)
    stored = _primaries_bytes(client, info.index)
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


@index.command("compact")
@_INDEX_OPTION
@click.option("--wait", "wait_s", type=click.FloatRange(0, 3600), default=90.0, show_default=True,
              help="Seconds to wait for OpenSearch to release the documents' history (it renews its retention "
                   "leases every 30 s).")
@json_flag()
@pass_app
def compact(app: AppContext, index_alias: str | None, wait_s: float, as_json: bool) -> None:
    """Merge the current version to one segment a shard once no copy needs its documents' history, so
    OpenSearch drops the second, whole-JSON copy it keeps of each document (``_recovery_source``).

    Searches answer throughout, with the same tools. A copy that is down or recovering still needs the
    history: then nothing is merged and the command exits 1.
    """
    from toolsift.compaction import compact as compact_index
    from toolsift.mappings.index import IndexManager
    from toolsift.opensearch import primary_segment_bytes

    settings = app.settings(index=index_alias)
    client = app.client()
    info = IndexManager(client, settings.index).require()
    before = primary_segment_bytes(client, info.index)
    done = compact_index(client, info.index, wait_s=wait_s)
    after = primary_segment_bytes(client, info.index)
    data = {"alias": info.alias, "index": info.index, **done.to_dict(),
            "segments_bytes_before": before, "segments_bytes_after": after}
    if as_json:
        emit_json(data)
    elif done.compacted:
        click.echo(f"compacted {info.index} after {done.waited_s:.0f} s: primaries {before / 1e6:.1f} -> "
                   f"{after / 1e6:.1f} MB")
    else:
        click.echo(f"not compacted: a copy of {info.index} still needed its history after {done.waited_s:.0f} s "
                   f"(a node down or a copy recovering); run it again once the index is green")
    if not done.compacted:
        raise SystemExit(1)


def _primaries_bytes(client: Any, index: str) -> int:
    stats = client.indices.stats(index=index, metric="store")["indices"][index]["primaries"]
    return int(stats["store"]["size_in_bytes"])


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
