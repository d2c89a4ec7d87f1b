"""``toolsift history``: PTR's history of tool bundles and past queries, for ``search --set``."""

from __future__ import annotations

from pathlib import Path

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._output import emit_json, table
from toolsift.cli._progress import progress_bars
from toolsift.cli.options import index_option, json_flag


@click.group()
def history() -> None:
    """Build and inspect the history index (<index>-history) that `toolsift search --set` starts from."""


@history.command("load")
@click.argument("dataset_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@index_option("The catalog's index alias (default: the configured one).")
@click.option("--split", default="train", show_default=True, help="The split whose queries become the history.")
@click.option("--calibration-queries", type=click.IntRange(0, 100_000), default=300, show_default=True,
              help="Past queries held out to calibrate PTR's parameters (at most a tenth of the history; 0: none).")
@json_flag("Print the result as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@pass_app
def load(
    app: AppContext, dataset_dir: Path, index_alias: str | None, split: str, calibration_queries: int, as_json: bool,
    quiet: bool,
) -> None:
    """Load DATASET_DIR's bundles and past queries into <index>-history and calibrate PTR on them.

    Bundles come from ToolLens-style scene files (scene_tool.txt + query_scene_<split>.txt) when the
    folder has them, else from qrels/<split>.tsv (each distinct relevant set is a bundle). The new
    history is built beside the old one and swapped in only when complete.
    """
    from toolsift.encoders.embedding import load_embedder
    from toolsift.sets.history_import import load_history
    from toolsift.search import Searcher
    from toolsift.sets.recommender import build_history

    settings = app.settings(index=index_alias)
    client = app.client()
    loaded = load_history(dataset_dir, split=split)
    searcher = Searcher(client, settings, load_embedder(settings))
    with progress_bars(not quiet and not as_json) as progress:
        config, record = build_history(searcher, loaded, calibration_queries=calibration_queries, progress=progress)
    out = {"index": settings.index, "history": f"{settings.index}-history", "source": loaded.source,
           "bundles": len(loaded.bundles), "past_queries": len(loaded.queries), "calibration": record,
           "ptr": config.to_dict()}
    if as_json:
        emit_json(out)
        return
    click.echo(table(["history", "source", "bundles", "past queries", "calibration TRACC", "seconds"], [[
        out["history"], loaded.source, len(loaded.bundles), len(loaded.queries), record.get("tracc", "–"),
        record["seconds"]]]))
    click.echo("calibrated: " + ", ".join(f"{k} {v}" for k, v in config.to_dict().items()))


@history.command("show")
@index_option("The catalog's index alias (default: the configured one).")
@pass_app
def show(app: AppContext, index_alias: str | None) -> None:
    """Show the history index's size, source and calibrated PTR parameters."""
    from toolsift.sets.history_store import HistoryStore

    settings = app.settings(index=index_alias)
    store = HistoryStore(app.client(), settings.index)
    emit_json({"history": store.alias, **store.meta})
