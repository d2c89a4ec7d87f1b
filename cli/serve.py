"""``toolsift serve``: long-running services (``serve ranker``, ``serve ui``).

Both take the configured API keys (``[[api_keys]]``) and answer only the allowed ``Host`` names; with
no keys configured they refuse to listen beyond loopback unless ``--insecure-no-auth`` says so.
"""

from __future__ import annotations

from pathlib import Path

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli.options import index_option, retriever_option, weights_option

_INSECURE_HELP = ("Serve an open network on purpose: listen beyond loopback with no API keys configured "
                  "(anyone who reaches the port may call every route).")


@click.group()
def serve() -> None:
    """Run toolsift services."""


@serve.command("ranker")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8300, show_default=True, type=click.IntRange(1, 65535))
@weights_option("Learned MFTR weights (a `toolsift train` output or its weights.json); default: the "
              "`weights` setting, else the fixed field weights.")
@click.option("--reranker", help="Second-stage reranker: a `toolsift train reranker` artifact, 'tool-rank:smollm2', "
              "'tool-rank:PATH' or 'cross-encoder:PATH' (default: the `reranker` setting; none: base ranking only).")
@click.option("--rerank-top", type=click.IntRange(1, 1000), help="M: how many of the base ranker's best to rerank.")
@click.option("--rerank-weight", type=click.FloatRange(0.0, 1.0), help="λ: the reranker's share of the fused score.")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]),
              help="Reranker device (default: the `reranker_device` setting; auto = CUDA when present).")
@click.option("--token", help="Bearer token required on /v1/rank and /metrics (default: the `ranker_token` setting, "
              "TOOLSIFT_RANKER_TOKEN; prefer the variable: a flag shows in the process list).")
@click.option("--batch-wait-ms", type=click.FloatRange(0.0, 1000.0),
              help="How long a reranker batch waits for more requests (default: `ranker_batch_wait_ms`).")
@click.option("--max-batch-pairs", type=click.IntRange(1, 65536), default=256, show_default=True,
              help="Most (query, document) pairs per shared reranker call.")
@click.option("--insecure-no-auth", "insecure", is_flag=True, help=_INSECURE_HELP)
@pass_app
def ranker(
    app: AppContext,
    host: str,
    port: int,
    weights_path: Path | None,
    reranker: str | None,
    rerank_top: int | None,
    rerank_weight: float | None,
    device: str | None,
    token: str | None,
    batch_wait_ms: float | None,
    max_batch_pairs: int,
    insecure: bool,
) -> None:
    """Serve the ranker over HTTP: POST /v1/rank, GET /health, GET /metrics, and POST /v1/opensearch/query
    and /v1/opensearch/rank for OpenSearch's own search pipeline (`toolsift deploy opensearch`).

    The model loads before the port opens; point searches at it with `toolsift search --ranker-url
    http://HOST:PORT` (or the `ranker_url` setting). /v1/rank and /metrics take any configured API key
    (search or admin) or the `ranker_token`; with neither configured the service listens on loopback
    only unless --insecure-no-auth.
    """
    import logging

    from toolsift.access import KeyRing, check_bind
    from toolsift.ranker.ranking_pipeline import RankingPipeline
    from toolsift.ranker.ranker_service import serve as run_service

    settings = app.settings(weights=weights_path, reranker=reranker, rerank_top=rerank_top,
                            rerank_weight=rerank_weight, reranker_device=device, ranker_token=token,
                            ranker_batch_wait_ms=batch_wait_ms)
    keys = KeyRing(settings.api_keys)
    if settings.ranker_token is None:  # a ranker token guards the service as keys do
        check_bind(host, keys, force=insecure, service="serve ranker")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for name in ("toolsift.ranker.ranker_service", "toolsift.ranker.batching", "toolsift.ranker.service_metrics"):
        logging.getLogger(name).setLevel(logging.INFO)

    def ready(pipeline: RankingPipeline) -> None:
        model = pipeline.reranker
        where = f"{model.name} on {model.device}, M={pipeline.rerank_top}, λ={pipeline.fusion_weight}" if model else "no reranker"
        needs = [f"an API key ({len(keys)} configured)"] if keys.enabled else []
        needs += ["the ranker token"] if settings.ranker_token else []
        auth = f"/v1/rank and /metrics need {' or '.join(needs)}" if needs else "no auth: keys are not required"
        click.echo(f"ranker service: {pipeline.base.name} ({where}); {auth}; http://{host}:{port}", err=True)

    from toolsift.encoders.embedding import load_embedder
    from toolsift.search.native_stages import NativeStages

    # OpenSearch's search pipeline (`toolsift deploy opensearch`) calls /v1/opensearch/*: the query encoder
    # loads now (a first call must answer within the connectors' timeout); the cluster is reached on the
    # first such call, so a ranker without a cluster still starts.
    stages = NativeStages(settings, app.client, load_embedder(settings) if settings.retriever != "bm25" else None)
    run_service(settings, host=host, port=port, max_batch_pairs=max_batch_pairs, on_ready=ready, keys=keys,
                stages=stages)


@serve.command("ui")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8400, show_default=True, type=click.IntRange(1, 65535))
@index_option("Index alias to search (default: the configured one).")
@retriever_option()
@weights_option("Learned weights to start from (default: the `weights` setting, else the weights pushed to the "
              "index, else the fixed field weights).")
@click.option("--reranker", help="Second-stage reranker in-process (default: the `reranker` setting).")
@click.option("--ranker-url", help="Rank the current list with a `toolsift serve ranker` service (the proposed "
              "list is ranked in-process).")
@click.option("--query-log/--no-query-log", default=None,
              help="Record the workbench's searches in the query log (default: the `query_log` setting).")
@click.option("--rewrite/--no-rewrite", default=True, show_default=True,
              help="Rewrite requests like `toolsift search` (cached rewrite, else the LLM, else as is).")
@click.option("--root", "roots", multiple=True, type=click.Path(file_okay=False, path_type=Path),
              help="A folder (besides the data dir) whose benchmark folders and weights the API may import and "
              "push; repeatable.")
@click.option("--insecure-no-auth", "insecure", is_flag=True, help=_INSECURE_HELP)
@pass_app
def ui(
    app: AppContext,
    host: str,
    port: int,
    index_alias: str | None,
    retriever: str | None,
    weights_path: Path | None,
    reranker: str | None,
    ranker_url: str | None,
    query_log: bool | None,
    rewrite: bool,
    roots: tuple[Path, ...],
    insecure: bool,
) -> None:
    """Serve the relevance workbench: search with explanations, weight sliders, judgments, metrics.

    Open http://HOST:PORT/ in a browser. Searches are logged with source `ui` when the query log is on;
    judgments go to `judgments_index`, query sets to `query_sets_index`; saved weights become versions
    under <data_dir>/weights/NAME and can be pushed to the index's search pipelines.

    With API keys configured every /api call needs one (the page asks for it) and every write an admin
    key; searches run in the key's tenant. Without keys the workbench listens on loopback only unless
    --insecure-no-auth. Paths sent to the API must lie in the data dir or a --root folder.
    """
    from toolsift.access import KeyRing, check_bind
    from toolsift.encoders.embedding import load_embedder
    from toolsift.webguard import allowed_hosts_for
    from toolsift.webguard import serve as serve_http
    from toolsift.workbench.app import create_app
    from toolsift.workbench.session import Workbench

    settings = app.settings(index=index_alias, retriever=retriever, weights=weights_path, reranker=reranker,
                            ranker_url=ranker_url, query_log=query_log)
    keys = KeyRing(settings.api_keys)
    check_bind(host, keys, force=insecure, service="serve ui")  # before connecting or loading a model
    hosts = allowed_hosts_for(settings.allowed_hosts, host)
    client = app.client()
    embedder = load_embedder(settings) if settings.retriever != "bm25" else None
    workbench = Workbench(client, settings, embedder, rewrite=rewrite, roots=roots)
    info = workbench.describe()
    click.echo(f"workbench: index {info['index']} ({info['tools']} tools), ranker {info['ranker']}, weights "
               f"{info['weights_version'] or 'fixed field weights'}; query log "
               f"{'on' if settings.query_log else 'off'}; http://{host}:{port}/", err=True)
    auth = (f"API keys required ({len(keys)} configured; writes need an admin key)" if keys.enabled
            else "no API keys configured: every caller may write" + (" (open network: --insecure-no-auth)"
                                                                     if insecure else ""))
    click.echo(f"workbench: {auth}; answers Host {', '.join(hosts)}; paths readable under "
               f"{', '.join(str(r) for r in workbench.roots)}", err=True)
    serve_http(create_app(workbench, keys=keys, allowed_hosts=hosts), host=host, port=port,
               read_timeout_s=settings.request_read_timeout_s, log_level="warning")


def _agent_front_ends() -> None:
    from toolsift.cli.serve_api import api, mcp

    serve.add_command(api)
    serve.add_command(mcp)


_agent_front_ends()
