"""``toolsift standardize``."""

from __future__ import annotations

from pathlib import Path

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._output import emit_json, rejected_table
from toolsift.cli._progress import progress_bars
from toolsift.cli.options import json_flag


@click.command()
@click.argument("catalog", type=click.Path(exists=True, path_type=Path))
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The MFTR standardised-tools JSON file to write ([{id, type, augmented, origin_documentation}]).")
@click.option("--format", "fmt", help="Catalog format (default: detected): toolret, mcp, openai, openapi, beir, mftr.")
@click.option("--limit", type=click.IntRange(min=1), help="Standardise only the first N tools.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, only the summary line.")
@json_flag("Print the report as JSON.")
@pass_app
def standardize(
    app: AppContext,
    catalog: Path,
    out_path: Path,
    fmt: str | None,
    limit: int | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Standardise the tools of CATALOG with the LLM into MFTR's format (plus a judged Tool-DE profile).

    Each tool gets MFTR's four fields (description, parameters, response, examples) and the Tool-DE
    profile (function, tags, when_to_use, limitations) that its judge passed. Answers come from the
    LLM cache first (e.g. the MFTR paper's, imported with `toolsift cache import`), else from the
    LLM at llm_base_url; a tool that is neither cached nor answerable stops the command. The output
    is read back by `toolsift ingest OUT` (format mftr).
    """
    from toolsift.ingest.loaders import detect_format
    from toolsift.standardise.standardiser import LLMStandardiser
    from toolsift.standardise.catalog import write_standardised
    from toolsift.llm import llm_and_cache

    settings = app.settings()
    fmt = fmt or detect_format(catalog)
    llm, cache = llm_and_cache(settings)
    standardiser = LLMStandardiser(llm, cache, settings.llm_model)
    with progress_bars(not (quiet or as_json)) as progress:
        report = write_standardised(
            catalog, out_path, standardiser, fmt=fmt, limit=limit,
            max_field_chars=settings.max_field_chars, progress=progress,
        )
    if as_json:
        emit_json(report.to_dict())
    else:
        sources = ", ".join(f"{k} {v}" for k, v in sorted(report.sources.items())) or "none"
        expansions = ", ".join(f"{k} {v}" for k, v in sorted(report.expansions.items())) or "none"
        click.echo(
            f"{report.catalog} ({report.format}) → {report.out}: {report.tools} tools "
            f"(answers: {sources}; Tool-DE profiles: {expansions}), "
            f"agents skipped {report.agents_skipped}, rejected {len(report.rejected)}"
        )
        if report.rejected:
            click.echo(rejected_table(report.rejected), err=True)
    if not report.ok:
        raise SystemExit(1)
