"""``toolsift deploy opensearch``: toolsift's ranking inside OpenSearch's own search pipeline."""

from __future__ import annotations

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._output import emit_json
from toolsift.cli.options import index_option, json_flag

__all__ = ["deploy"]


@click.group()
def deploy() -> None:
    """Put toolsift's ranking where other clients search."""


@deploy.command("opensearch")
@index_option("The index alias whose searches the pipeline ranks (default: the configured one).")
@click.option("--ranker-url", help="The `toolsift serve ranker` service OpenSearch calls (default: the `ranker_url` "
              "setting). It must be reachable from the cluster's nodes.")
@click.option("--token", help="The service's bearer token, stored as the connectors' credential (default: the "
              "`ranker_token` setting, TOOLSIFT_RANKER_TOKEN; prefer the variable: a flag shows in the process list).")
@click.option("--pipeline", "pipeline_name", help="Name of the search pipeline (default: `toolsift` for the alias "
              "`toolsift-tools`, else the alias); the template is `<pipeline>-tools`.")
@click.option("--timeout", type=click.FloatRange(0.1, 600.0), help="Seconds OpenSearch waits for the service before "
              "answering without it (the connectors' read timeout; default: the `ranker_timeout` setting).")
@click.option("--check", "check_only", is_flag=True, help="Change nothing: call both models and search once through "
              "the installed pipeline (a wrong token or an unreachable service is an error naming it).")
@click.option("--remove", is_flag=True, help="Delete the alias's pipeline and template, and the toolsift models no "
              "pipeline uses any more.")
@click.option("--no-check", is_flag=True, help="Deploy without calling the service afterwards.")
@json_flag("Print what was done as one JSON object.")
@pass_app
def opensearch(
    app: AppContext,
    index_alias: str | None,
    ranker_url: str | None,
    token: str | None,
    pipeline_name: str | None,
    timeout: float | None,
    check_only: bool,
    remove: bool,
    no_check: bool,
    as_json: bool,
) -> None:
    """Rank inside OpenSearch: ml-commons remote models + a search pipeline + a search template.

    Any OpenSearch client can then get toolsift's ranking from OpenSearch itself:

    \b
      GET <index>/_search/template?search_pipeline=toolsift
      {"id": "toolsift-tools", "params": {"text": "book a meeting room tomorrow"}}

    The pipeline's request processor has the ranker service build toolsift's hybrid first stage (with its
    query vectors); OpenSearch runs it with the index's learned min-max weights; its response processor
    has the service rank the hits (MFTR, missing-parameter penalty, reranker) and `rerank` sorts them.
    Needs ml-commons (`toolsift node start --ml-commons`) and `toolsift serve ranker` running where the
    cluster reaches it. Idempotent; run it again after pushing new weights.
    """
    from toolsift.search.native_stages import check_native, deploy_native, remove_native

    settings = app.settings(index=index_alias, ranker_url=ranker_url, ranker_token=token, ranker_timeout=timeout)
    client = app.client()
    if remove:
        report = remove_native(client, settings, pipeline=pipeline_name)
        if as_json:
            emit_json(report.to_dict())
            return
        click.echo("\n".join(f"removed {what}" for what in report.removed) or "nothing to remove")
        return
    if not settings.ranker_url:
        raise click.UsageError("the pipeline calls a `toolsift serve ranker` service: give --ranker-url (or set "
                               "ranker_url)")
    secret = settings.ranker_token.get_secret_value() if settings.ranker_token else "none"
    if check_only:
        check_native(client, settings, ranker_url=settings.ranker_url, pipeline=pipeline_name)
        click.echo(f"ok: {settings.index} searches through the pipeline come back ranked by {settings.ranker_url}")
        return
    report = deploy_native(client, settings, ranker_url=settings.ranker_url, token=secret, pipeline=pipeline_name,
                           timeout_s=settings.ranker_timeout, check=not no_check)
    if as_json:
        emit_json(report.to_dict())
        return
    for what in report.changed:
        click.echo(f"wrote {what}")
    for what in report.removed:
        click.echo(f"removed {what}")
    click.echo(f"search pipeline {report.pipeline} and template {report.template} rank {report.index} "
               f"({report.weights_version or 'fixed field weights'}) with {report.ranker_url}"
               + ("; checked" if report.checked else ""))
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
