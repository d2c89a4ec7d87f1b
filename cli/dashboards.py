"""``toolsift dashboards``: the OpenSearch Dashboards saved objects (``dashboards import``)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import click

from toolsift.cli._output import emit_json, table
from toolsift.cli.options import json_flag


@click.group()
def dashboards() -> None:
    """OpenSearch Dashboards: index patterns, visualisations and the relevance-tuning dashboard."""


@dashboards.command("import")
@click.option("--url", default="http://localhost:5601", show_default=True, envvar="TOOLSIFT_DASHBOARDS_URL",
              show_envvar=True, help="OpenSearch Dashboards base URL.")
@click.option("--file", "file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A saved-objects .ndjson file (default: the bundled toolsift objects).")
@click.option("--check", is_flag=True, help="Validate the file offline and list what would be imported; send nothing.")
@click.option("--overwrite/--no-overwrite", default=True, show_default=True,
              help="Replace objects that already exist (same type and id).")
@click.option("--wait", type=click.FloatRange(0, 3600), default=0.0, show_default=True,
              help="Seconds to keep trying while Dashboards is unreachable or still starting (HTTP 503).")
@click.option("--user", envvar="TOOLSIFT_DASHBOARDS_USER", show_envvar=True,
              help="Basic-auth user (security plugin on); the password comes from TOOLSIFT_DASHBOARDS_PASSWORD "
              "or a prompt.")
@json_flag()
def import_command(url: str, file: Path | None, check: bool, overwrite: bool, wait: float, user: str | None,
                   as_json: bool) -> None:
    """Import the index patterns (toolsift-querylog*, toolsift-judgments*, toolsift-evalruns*), the
    visualisations, a saved search per index and the dashboard "toolsift — relevance tuning"."""
    from toolsift.dashboards.importer import check_saved_objects, import_saved_objects

    if check:
        source, objects = check_saved_objects(file)
        rows = [[o["type"], o["id"], o["attributes"].get("title", "")] for o in objects]
        if as_json:
            emit_json({"source": source, "valid": True,
                       "objects": [dict(zip(("type", "id", "title"), row, strict=True)) for row in rows]})
            return
        counts = Counter(o["type"] for o in objects)
        click.echo(f"{source}: {len(objects)} saved objects, valid ("
                   + ", ".join(f"{n} {kind}" for kind, n in counts.items()) + "); nothing sent")
        click.echo(table(["type", "id", "title"], rows))
        return
    auth: tuple[str, str] | None = None
    if user:
        password = os.environ.get("TOOLSIFT_DASHBOARDS_PASSWORD") or str(click.prompt(
            f"password for {user}", hide_input=True, err=True))
        auth = (user, password)
    summary = import_saved_objects(url, file=file, overwrite=overwrite, auth=auth, wait=wait)
    if as_json:
        emit_json(summary.to_dict())
        return
    click.echo(f"imported {summary.success_count} saved object(s) from {summary.source} into {summary.url}"
               f"{' (existing ones replaced)' if overwrite else ''}")
    for kind, object_id, title in summary.objects:
        if kind == "dashboard":
            click.echo(f"dashboard {title!r}: {summary.url}/app/dashboards#/view/{object_id}")
