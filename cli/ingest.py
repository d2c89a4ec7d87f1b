"""``toolsift ingest``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._output import FLAGGED_SHOWN, emit_json, flagged_table, rejected_table, table, terminal_safe
from toolsift.cli._progress import progress_bars
from toolsift.cli.options import index_option, json_flag

if TYPE_CHECKING:
    from toolsift.config import Settings
    from toolsift.ingest.pipeline import IngestReport, Standardiser


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--format", "fmt", help="Catalog format (default: detected): toolret, mcp, openai, openapi, beir, mftr.")
@index_option("Index alias to write to (default: the configured one).")
@click.option("--strict", is_flag=True, help="Write nothing when any record is bad.")
@click.option("--prune", is_flag=True, help="Delete tools of this catalog's source that it no longer lists.")
@click.option("--rebuild", is_flag=True, help="Build a new index version beside the current one and swap the alias.")
@click.option("--standardize", "standardize", type=click.Choice(["rules", "llm"]), default="rules", show_default=True,
              help="rules: rule-based field mapping; llm: MFTR standardisation + Tool-DE profile by the "
              "configured LLM (llm_base_url) or its cache, failing for a tool that is neither.")
@click.option("--tenant", "tenants", multiple=True, metavar="NAME",
              help="A tenant allowed to see this catalog's tools (repeatable). Default: the `source_tenants` "
              "setting's for this file, else public (every tenant sees them).")
@click.option("--approve", is_flag=True, help="Approve every new and changed tool definition of this catalog "
              "(its author editing it); without it a change to a pinned definition waits in `toolsift approvals`.")
@click.option("--check", is_flag=True, help="Only read, normalise, link and screen every record, and report what an "
              "ingest would: nothing is embedded or written, and no node is needed.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, only the summary line.")
@json_flag("Print the report as JSON.")
@pass_app
def ingest(
    app: AppContext,
    path: Path,
    fmt: str | None,
    index_alias: str | None,
    strict: bool,
    prune: bool,
    rebuild: bool,
    standardize: str,
    tenants: tuple[str, ...],
    approve: bool,
    check: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Load the catalog at PATH, standardise, embed and index it.

    Re-ingesting an unchanged catalog writes nothing; changed tools are updated. A record with an id
    or a name and some text is a tool: what could not be read as a parameter spec is kept as text and
    the tool is listed as flagged (its schema_quality says how). Only records with no usable identity
    or no text at all (or nested deeper than max_nesting_depth) are rejected; by default every other
    record is indexed and the command exits non-zero listing the rejected ones; when no record is
    left, no index is created. The summary counts schema notes (flagged N (schema)) apart from the
    tools the screen of hostile text flagged (risk-flagged M (screen)), and held changes (pending in
    `toolsift approvals list`) apart from versions rejected before (refused). With --check the catalog
    is only read and screened, as an ingest's first pass does, and nothing is written.
    """
    from toolsift.ingest.loaders import detect_format
    from toolsift.ingest.pipeline import validate_catalog

    settings = app.settings(index=index_alias)
    fmt = fmt or detect_format(path)  # an unreadable catalog fails before the model loads
    standardiser = None
    if standardize == "llm":
        from toolsift.standardise.standardiser import LLMStandardiser
        from toolsift.llm import llm_and_cache

        llm, cache = llm_and_cache(settings)
        standardiser = LLMStandardiser(llm, cache, settings.llm_model).require
    if check:
        from toolsift.screen.meaning import meaning_screen

        meaning = meaning_screen(device=settings.embedding_device) if settings.screen_meaning else None
        with progress_bars(not (quiet or as_json)) as progress:
            report = validate_catalog(path, settings, fmt=fmt, standardiser=standardiser, tenants=tenants,
                                      progress=progress, meaning=meaning)
    else:
        report = _ingested(app, settings, path, fmt, strict=strict, prune=prune, rebuild=rebuild, tenants=tenants,
                           approve=approve, standardiser=standardiser, progress_shown=not (quiet or as_json))
    _report(report, checked=check, as_json=as_json)


def _ingested(app: AppContext, settings: Settings, path: Path, fmt: str, *, strict: bool, prune: bool,
              rebuild: bool, tenants: tuple[str, ...], approve: bool, standardiser: Standardiser | None,
              progress_shown: bool) -> IngestReport:
    from toolsift.encoders.embedding import load_embedder
    from toolsift.ingest.pipeline import ingest_catalog

    client = app.client()
    embedder = load_embedder(settings)
    with progress_bars(progress_shown) as progress:
        return ingest_catalog(
            client, settings, embedder, path, fmt=fmt, strict=strict, prune=prune, rebuild=rebuild, progress=progress,
            standardiser=standardiser, tenants=tenants, approve=approve, approved_by="cli --approve" if approve else "ingest",
        )


def _report(report: IngestReport, *, checked: bool, as_json: bool) -> None:
    if as_json:
        emit_json(report.to_dict())
    elif checked:
        click.echo(
            f"{report.catalog} ({report.format}), checked: {report.agents} agents, {report.tools} tools; "
            f"flagged {len(report.flagged)} (schema), risk-flagged {len(report.risk_flagged)} (screen), "
            f"rejected {len(report.rejected)} in {report.seconds:.1f}s; nothing written"
        )
    else:
        # Nothing accepted: no index was created (nor an existing one touched).
        target = report.index or ("no index written: " + (f"every record was rejected ({len(report.rejected)})"
                                                            if report.rejected else "the catalog has no records"))
        click.echo(
            f"{report.catalog} ({report.format}) → {target}: {report.agents} agents, {report.tools} tools; "
            f"created {report.created}, updated {report.updated}, unchanged {report.unchanged}, "
            f"deleted {report.deleted}, flagged {len(report.flagged)} (schema), "
            f"risk-flagged {len(report.risk_flagged)} (screen), held {len(report.held)} (pending approval), "
            f"rejected {len(report.rejected)}, "
            f"failed {len(report.failed)} "
            f"in {report.seconds:.1f}s"
        )
    if not as_json:
        _details(report)
    if not report.ok:  # the exit code of the table's bad record (some were rejected), else of failed indexing
        from toolsift.errors import ERROR_TABLE, CatalogRecordError, IndexingError

        raise SystemExit(ERROR_TABLE[CatalogRecordError if report.rejected else IndexingError].exit_code)


def _details(report: IngestReport) -> None:
    """What the summary line only counts: compaction, merging, flagged, held, refused, rejected, failed."""
    if report.compaction is not None:
        click.echo(f"compacted after {report.compaction.waited_s:.0f} s (OpenSearch no longer keeps a second copy "
                   f"of each document)" if report.compaction.compacted else
                   f"not compacted: a copy still needed the documents' history after "
                   f"{report.compaction.waited_s:.0f} s; `toolsift index compact` does it later")
    if report.merge_task:
        click.echo(f"merging the {report.segments} segments into one in the background (task {report.merge_task}); "
                   f"searches answer meanwhile; `toolsift index status` says when it is merged")
    if report.flagged:
        click.echo(flagged_table(report.flagged), err=True)
    if report.risk_flagged:
        click.echo(f"risk-flagged {len(report.risk_flagged)} tool(s): indexed with risk: flagged, the screen "
                   f"found hostile text in them:", err=True)
        click.echo(table(["position", "id", "reasons"], [
            [r.position, r.record_id, "; ".join(r.reasons)] for r in report.risk_flagged[:FLAGGED_SHOWN]]), err=True)
        if len(report.risk_flagged) > FLAGGED_SHOWN:
            click.echo(f"… and {len(report.risk_flagged) - FLAGGED_SHOWN} more (--json lists them all)", err=True)
    if report.held:
        click.echo(f"held {len(report.held)} changed definition(s) for approval; search serves the pinned "
                   f"versions (`toolsift approvals list`):", err=True)
        click.echo(table(["id", "reason", "source", "pinned from", "serving"], [
            [h.doc_id, h.reason, h.source, h.approved_source or "–", "pinned" if h.served else "nothing"]
            for h in report.held]), err=True)
    if report.refused:
        click.echo(f"refused {len(report.refused)} (rejected before with `toolsift approvals reject`; not queued "
                   f"again): search serves the pinned versions: "
                   + ", ".join(terminal_safe(h.doc_id) for h in report.refused), err=True)
    if report.rejected:
        click.echo(rejected_table(report.rejected), err=True)
    for failure in report.failed:
        click.echo(f"failed: {failure}", err=True)
