"""``toolsift cache``: import published LLM outputs, inspect and clear the LLM output cache."""

from __future__ import annotations

from pathlib import Path

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._output import emit_json, table

__all__ = ["cache"]


@click.group()
def cache() -> None:
    """Import, inspect and clear the LLM output cache (llm_cache_dir, default <cache_dir>/llm)."""


@cache.command("import")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--queries",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="ToolRet queries.json mapping query ids to texts (default: <PATH>/../../toolret/<set>/queries.json).",
)
@click.option("--model", help="Model name in the cache keys (default: the one in the file name, e.g. gpt-4o-mini).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@pass_app
def import_command(app: AppContext, path: Path, queries: Path | None, model: str | None, as_json: bool) -> None:
    """Load published LLM outputs so rewrites and standardised documents are found without an LLM.

    PATH is a folder such as ../shared/datasets/mftr/apibank, or one rewritten_queries.<model>.json
    or standardized_tools.<model>.json file. Every record is validated first: a bad record is named
    and nothing is imported.
    """
    from toolsift.llm import LLMCache
    from toolsift.llm.published import import_published

    root = app.settings().llm_cache_path
    report = import_published(LLMCache(root), path, queries=queries, model=model)
    if as_json:
        emit_json({**report.to_dict(), "cache": str(root)})
        return
    click.echo(
        f"imported {report.rewrites} rewrite(s) and {report.standardized} standardised document(s) "
        f"into {root}; {report.already_present} already present"
    )


@cache.command()
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@pass_app
def stats(app: AppContext, as_json: bool) -> None:
    """Entries and bytes in the cache."""
    from toolsift.llm import LLMCache

    root = app.settings().llm_cache_path
    figures = LLMCache(root).stats()
    if as_json:
        emit_json({"cache": str(root), **figures})
        return
    click.echo(table(["cache", "entries", "bytes"], [[str(root), figures["entries"], figures["bytes"]]]))


@cache.command()
@click.option("--yes", is_flag=True, help="Delete without asking.")
@pass_app
def clear(app: AppContext, yes: bool) -> None:
    """Delete every cached LLM output (imported ones included)."""
    from toolsift.llm import LLMCache

    root = app.settings().llm_cache_path
    if not yes:
        click.confirm(f"delete every entry under {root}?", abort=True)
    click.echo(f"deleted {LLMCache(root).clear()} entries from {root}")
