"""``toolsift cache``: the LLM output cache."""

from __future__ import annotations

from pathlib import Path

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._output import emit_json
from toolsift.cli.options import json_flag


@click.group()
def cache() -> None:
    """Import, inspect and clear the LLM output cache (<cache_dir>/llm, or llm_cache_dir)."""


@cache.command("import")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--queries", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="ToolRet queries.json mapping query ids to texts (default: found beside the dataset).")
@click.option("--model", help="Model name for the cache keys (default: from the file name).")
@json_flag()
@pass_app
def import_command(app: AppContext, path: Path, queries: Path | None, model: str | None, as_json: bool) -> None:
    """Load published LLM outputs (e.g. ../shared/datasets/mftr/apibank) so rewrites and
    standardised documents are available offline. Every record is validated before any is stored."""
    from toolsift.llm import LLMCache
    from toolsift.standardise.published import import_published

    report = import_published(LLMCache(app.settings().llm_cache_path), path, queries=queries, model=model)
    if as_json:
        emit_json(report.to_dict())
        return
    click.echo(f"imported {report.rewrites} rewrite(s) and {report.standardized} standardised document(s); "
               f"{report.already_present} already present")


@cache.command()
@pass_app
def stats(app: AppContext) -> None:
    """Entries and bytes in the cache."""
    from toolsift.llm import LLMCache

    path = app.settings().llm_cache_path
    info = LLMCache(path).stats()
    click.echo(f"{path}: {info['entries']} entries, {info['bytes']} bytes")


@cache.command()
@click.option("--yes", is_flag=True, help="Do not ask.")
@pass_app
def clear(app: AppContext, yes: bool) -> None:
    """Delete every cached LLM output."""
    from toolsift.llm import LLMCache

    path = app.settings().llm_cache_path
    if not yes:
        click.confirm(f"delete every entry under {path}?", abort=True)
    click.echo(f"deleted {LLMCache(path).clear()} entries")
