"""``toolsift bench`` scale and resilience subcommands: the failover drill, live-catalog freshness, an
OpenSearch crash, the large generated catalog, growth with catalog size, shards and the loss of a node."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._output import table, write_figures
from toolsift.cli.options import index_option, json_file_option, queries_file_option, retriever_option, top_k_option, weights_option

__all__ = ["catalog", "failover", "freshness", "node_loss", "outage", "scale", "shards_bench"]


@click.command("failover")
@click.argument("dataset_dir", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path))
@queries_file_option()
@index_option("The index to search (default: the configured one); it must exist.")
@click.option("-n", "--n-queries", type=click.IntRange(3), default=60, show_default=True,
              help="Searches in all: the service is killed after a third, restarted after two thirds.")
@retriever_option()
@top_k_option()
@weights_option("Learned MFTR weights for the search path and the service.")
@click.option("--reranker", help="The service's reranker (default: the `reranker` setting).")
@click.option("--rerank-top", type=click.IntRange(1, 1000), help="M for the service's reranker.")
@click.option("--rerank-weight", type=click.FloatRange(0.0, 1.0), help="λ for the service's reranker.")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), help="The service's reranker device.")
@click.option("--timeout", "ranker_timeout", type=click.FloatRange(0.01, None, min_open=False),
              help="Seconds the search path waits for the service (default: the `ranker_timeout` setting).")
@click.option("--health-timeout", type=click.FloatRange(1.0), default=300.0, show_default=True,
              help="Seconds to wait for the service's /health at each start (the model loads first).")
@json_file_option("Write the figures here (default: failover-<queries>.json).")
@pass_app
def failover(
    app: AppContext,
    dataset_dir: Path | None,
    queries_file: Path | None,
    index_alias: str | None,
    n_queries: int,
    retriever: str | None,
    top_k: int,
    weights_path: Path | None,
    reranker: str | None,
    rerank_top: int | None,
    rerank_weight: float | None,
    device: str | None,
    ranker_timeout: float | None,
    health_timeout: float,
    json_out: Path | None,
) -> None:
    """Kill the ranker service mid-run and show that every search still answers.

    Starts `toolsift serve ranker` on a free loopback port, runs N searches through it, SIGKILLs it
    after a third (answers must come in first-stage order, marked degraded), restarts it after two
    thirds, waits for /health and goes on. Exits 1 unless every request got an answer, with no
    errors, all degraded while the service was down and fully ranked before and after.
    """
    import tempfile

    from toolsift.encoders.embedding import load_embedder
    from toolsift.bench.failover import PHASES, read_queries, run_failover

    if (dataset_dir is None) == (queries_file is None):
        raise click.UsageError("give DATASET_DIR or --queries FILE (one of them)")
    source, queries = read_queries(dataset_dir, queries_file)
    settings = app.settings(index=index_alias, retriever=retriever, weights=weights_path, reranker=reranker,
                            rerank_top=rerank_top, rerank_weight=rerank_weight, reranker_device=device,
                            ranker_timeout=ranker_timeout)
    client = app.client()
    embedder = None if settings.retriever == "bm25" else load_embedder(settings)
    log_path = Path(tempfile.mkdtemp(prefix="toolsift-failover-")) / "ranker-service.log"
    figures = run_failover(settings, embedder, client, queries, n_queries=n_queries, top_k=top_k,
                           health_timeout=health_timeout, log_path=log_path,
                           echo=lambda line: click.echo(line, err=True))
    figures["queries_from"] = source
    click.echo(f"failover drill: {n_queries} queries from {source} on {settings.index} "
               f"(multi-field {figures['retriever']}, top {top_k}), ranker timeout {settings.ranker_timeout:g} s")
    rows: list[list[Any]] = []
    for name in (*PHASES, "total"):
        p = figures["total"] if name == "total" else figures["phases"][name]
        lat = p["latency_ms"]
        rows.append([name, p["queries"], p["answered"], p["full"], p["degraded"], p["errors"],
                     *("-" if lat[k] is None else f"{lat[k]:.1f}" for k in ("p50", "max"))])
    click.echo(table(["phase", "queries", "answered", "full", "degraded", "errors", "p50 ms", "max ms"], rows))
    t = figures["timeline"]
    click.echo(f"timeline (s from start): healthy {t['service_healthy_s']}, SIGKILL pid {t['killed_pid']} at "
               f"{t['killed_s']}, restart at {t['restart_s']}, healthy again at {t['healthy_again_s']} "
               f"({t['recovery_s']} s to recover, pid {t['restarted_pid']}), done at {t['finished_s']}")
    for reason, count in figures["phases"]["killed"]["degraded_reasons"].items():
        click.echo(f"degraded ({count}): {reason}")
    for phase in figures["phases"].values():
        for message in phase["error_messages"]:
            click.echo(f"error: {message}")
    click.echo("checks: " + ", ".join(f"{k}={'yes' if v else 'NO'}" for k, v in figures["checks"].items()))
    write_figures(json_out, f"failover-{source.replace('/', '-').removesuffix('.json')}.json", figures)
    if not figures["ok"]:
        raise SystemExit(1)


@click.command("freshness")
@click.argument("catalog", type=click.Path(exists=True, path_type=Path))
@click.option("--tools", type=click.IntRange(1, 5000), default=500, show_default=True,
              help="Tools the live server serves (the catalog's first N).")
@click.option("--changes", type=click.IntRange(1, 1000), default=20, show_default=True,
              help="One-tool changes to time.")
@click.option("--searchers", type=click.IntRange(0, 16), default=2, show_default=True,
              help="Threads searching the index throughout (their latency while a change syncs vs otherwise).")
@json_file_option("Write the figures here (default: bench-freshness.json).")
@pass_app
def freshness(app: AppContext, catalog: Path, tools: int, changes: int, searchers: int, json_out: Path | None) -> None:
    """From a change on a live MCP server to the new definition being searchable (`toolsift sync`).

    A real MCP server (stdio) serves the first TOOLS tools of CATALOG (a catalog file, or a dataset
    folder holding tools.json) as one server, followed into a scratch index as `toolsift sync` follows
    it. CHANGES times one tool's description changes; the time from the change to a search finding the
    new text is the freshness (p50 / p95 / max; the target is p95 <= 5 s). Searches run throughout:
    their latency while a change syncs against their latency otherwise.
    """
    from toolsift.encoders.embedding import load_embedder
    from toolsift.bench.freshness import run_freshness_bench

    if catalog.is_dir():
        catalog = catalog / "tools.json"
    settings = app.settings()
    figures = run_freshness_bench(app.client(), settings, load_embedder(settings), catalog, tools=tools,
                                  changes=changes, searchers=searchers)
    f = figures["freshness_s"]
    click.echo(f"live server of {figures['tools']} tools, {figures['changes']} one-tool changes, "
               f"embeddings on {figures['device']}")
    click.echo(table(["freshness (s)", "n", "p50", "p95", "max", "target p95", "met"], [
        ["change -> searchable", f["n"], f.get("p50"), f.get("p95"), f.get("max"), figures["target_p95_s"],
         "yes" if figures["target_met"] else "no"],
        ["of which the ingest", figures["sync_ingest_s"].get("n"), figures["sync_ingest_s"].get("p50"),
         figures["sync_ingest_s"].get("p95"), figures["sync_ingest_s"].get("max"), "", ""],
    ]))
    click.echo(table(["search (ms)", "n", "p50", "p95", "max"], [
        [name, row.get("n"), row.get("p50"), row.get("p95"), row.get("max")]
        for name, row in (("while a change syncs", figures["search_ms_while_syncing"]),
                          ("otherwise", figures["search_ms_otherwise"]))
    ]))
    write_figures(json_out, "bench-freshness.json", figures)


@click.command("outage")
@click.argument("dataset_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--clients", type=click.IntRange(1, 64), default=4, show_default=True,
              help="HTTP clients searching in a loop through the crash (besides one MCP session).")
@click.option("--up-seconds", type=click.FloatRange(1), default=8.0, show_default=True,
              help="Seconds of load before the node is killed.")
@click.option("--after-seconds", type=click.FloatRange(1), default=12.0, show_default=True,
              help="Seconds of load after the node is back.")
@json_file_option("Write the figures here (default: bench-outage-<dataset>.json).")
@pass_app
def outage(app: AppContext, dataset_dir: Path, clients: int, up_seconds: float, after_seconds: float,
           json_out: Path | None) -> None:
    """Crash the OpenSearch node (SIGKILL) mid-ingest and mid-load, on a node of the drill's own.

    Ingest: DATASET_DIR's catalog once cleanly, then again with the node killed once the write pass
    has begun; after the restart the index must be marked unfinished and a rerun must equal the clean
    ingest (count and content digest), with 0 lost and 0 duplicated. Serving: `toolsift serve api` and
    `toolsift serve mcp --transport http` under --clients HTTP clients and one MCP session while the node
    is killed and restarted: errors only while it is down, each a clean 503 (MCP: a tool error), and
    the first full answer after its return.
    """
    from toolsift.encoders.embedding import load_embedder
    from toolsift.bench.outage import run_outage_drill
    from toolsift.ingest.benchmarks import load_benchmark
    from toolsift.ingest.loaders.mcp import tool_id_for as mcp_tool_id

    benchmark = load_benchmark(dataset_dir, tool_id_for=mcp_tool_id)
    settings = app.settings()
    figures = run_outage_drill(settings, load_embedder(settings), benchmark.catalog_path,
                               list(benchmark.queries.values()), clients=clients, up_s=up_seconds,
                               after_s=after_seconds, progress=lambda line: click.echo(line, err=True))
    ingest, served = figures["ingest"], figures["serving"]
    click.echo(table(["ingest through a crash", "value"], [
        ["written before the kill", ingest["documents_written_before_the_kill"]],
        ["killed mid-ingest", ingest["killed_mid_ingest"]],
        ["the interrupted ingest said", (ingest["interrupted_error"] or {}).get("message", "")[:90]],
        ["unfinished after the restart", ", ".join(ingest["unfinished_after_restart"]) or "none"],
        ["rerun converged (count + digest)", ingest["converged"]],
        ["lost / duplicated", f"{ingest['lost']} / {ingest['duplicated']}"],
    ]))
    click.echo(f"serving through a crash: node down {served['down_s']} s")
    click.echo(table(["front end", "requests", "ok", "errors before kill", "while down", "after return",
                      "clean 503", "first full answer after return (s)"], [
        [name, s["requests"], s["ok"], s["errors_before_the_kill"], s["errors_while_down"],
         s["errors_after_the_node_returned"], s["errors_clean_503"], s["first_full_answer_after_return_s"]]
        for name, s in (("api", served["api"]), ("mcp", served["mcp"]))
    ]))
    write_figures(json_out, f"bench-outage-{benchmark.name.replace('/', '-')}.json", figures)


@click.command("catalog")
@click.option("--tools", type=click.IntRange(1), required=True,
              help="Tools in the catalog, the needles included (1000, 10000, 100000 ...).")
@click.option("--needles", type=click.Choice(["toolink", "livemcpbench"]), default="toolink", show_default=True,
              help="The benchmark whose tools and queries are placed inside the catalog.")
@click.option("--queries", "max_queries", type=click.IntRange(1),
              help="Only N of the benchmark's queries (a seeded sample) and their tools (default: all).")
@click.option("--seed", type=int, default=0, show_default=True, help="The same seed writes the same files.")
@click.option("--fork-share", type=click.FloatRange(0.0, 1.0), default=0.01, show_default=True,
              help="Share of the distractor servers that are forks of a needle server (near-duplicates).")
@click.option("--datasets", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The benchmark data folder (default: ../shared/datasets).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The folder to write: catalog.json, queries.jsonl, qrels/test.tsv, manifest.json.")
def catalog(tools: int, needles: str, max_queries: int | None, seed: int, fork_share: float, datasets: Path | None,
            out_dir: Path) -> None:
    """Write a catalog of N tools that looks like a real one, with a benchmark's needles inside.

    Servers (agents) of 5-50 tools recombined from the shared datasets' tool documents (names,
    descriptions, nested parameters, several languages, the same tool name on several servers), and
    the needle set: the benchmark's real tools with its queries and qrels (rewritten to the catalog's
    ids), so NDCG@10 and tool R@5 can be measured at any size. Near-duplicates of the needles are
    distractors with other ids. Ingest it with `toolsift ingest OUT/catalog.json --format mcp`.
    """
    from toolsift.bench.scale_catalog import generate_catalog

    scale = generate_catalog(out_dir, tools=tools, needles=needles, seed=seed, queries=max_queries,
                             datasets=datasets, fork_share=fork_share)
    manifest = scale.manifest()
    languages = manifest["languages"]
    size_mb = scale.catalog_path.stat().st_size / 1e6
    click.echo(table(["catalog", "value"], [
        ["tools / servers", f"{scale.tools} / {scale.servers}"],
        ["needles", f"{scale.needles}: {scale.query_count} queries, {manifest['gold_tools']} gold tools "
                    f"in {manifest['needle_servers']} servers"],
        ["near-duplicates of gold tools", f"{manifest['near_duplicate_count']} ({manifest['fork_servers']} fork servers)"],
        ["distinct descriptions", manifest["distinct_descriptions"]],
        ["names on several servers", manifest["names_on_several_servers"]],
        ["languages", ", ".join(f"{k} {v}" for k, v in languages.items()) if isinstance(languages, dict) else languages],
        ["file", f"{scale.catalog_path} ({size_mb:.1f} MB)"],
        ["generated in", f"{scale.seconds:.1f} s"],
    ]))
    click.echo(f"ingest: toolsift ingest {scale.catalog_path} --format mcp", err=True)


def _sizes_option(value: str, option: str, *, allow_empty: bool = False) -> list[int]:
    """A comma-separated list of tool counts (``1000,10000`` or ``1k,10k,100k,1m``)."""
    sizes = []
    for part in (p.strip().lower() for p in value.split(",")):
        if not part:
            continue
        factor = {"k": 1_000, "m": 1_000_000}.get(part[-1], 1)
        digits = part[:-1] if factor > 1 else part
        if not digits.isdigit() or int(digits) * factor < 1:
            raise click.BadParameter(f"{part!r} is not a number of tools (e.g. 1000,10000 or 1k,10k)", param_hint=option)
        sizes.append(int(digits) * factor)
    if not sizes and not allow_empty:
        raise click.BadParameter("at least one size, e.g. 1000,10000", param_hint=option)
    return sizes


@click.command("scale")
@click.option("--sizes", default="1000,10000,100000", show_default=True,
              help="Catalog sizes in tools, comma-separated (1k, 10k, 1m work too); measured smallest first.")
@click.option("--nodes", type=click.IntRange(2, 9), default=3, show_default=True,
              help="Members of the bench's own local cluster (HTTP ports from 9240, transport from 19340; heap per "
                   "member: the cluster_heap setting).")
@click.option("--existing", is_flag=True,
              help="Measure the configured OpenSearch (--opensearch-url, or the managed node) instead of a cluster "
                   "of the bench's own; --nodes is not used.")
@click.option("--needles", default="toolink", show_default=True,
              help="The benchmarks whose tools and queries are placed inside every catalog, comma-separated "
                   "(toolink, livemcpbench; 'all': both). Each set is its own catalog at every size; with more "
                   "than one, each set's results go to --out/<set> and a table of both sets' quality follows.")
@click.option("--queries", "max_queries", type=click.IntRange(1),
              help="Only N of the benchmark's queries (a seeded sample) and their tools as needles (default: all).")
@click.option("--seed", type=int, default=0, show_default=True, help="The catalogs' seed.")
@click.option("--shards", type=click.IntRange(1), help="Primary shards at every size (default: the layout rule).")
@click.option("--replicas", type=click.IntRange(0), help="Replicas at every size (default: the layout rule).")
@click.option("--clients", type=click.IntRange(1, 64), default=2, show_default=True,
              help="Locust's closed-loop clients for the API and the floor at every size.")
@click.option("--seconds", type=click.FloatRange(1), default=30.0, show_default=True,
              help="Seconds of load per service and size (after a 5 s warm-up).")
@click.option("--project", default="10000,100000,1000000", show_default=True,
              help="Sizes each figure is projected to from the measured ones (those not measured; empty: none).")
@click.option("--datasets", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The benchmark data folder (default: ../shared/datasets).")
@click.option("--redo", is_flag=True,
              help="Start over: forget the sizes measured in --out and empty the bench's vector cache.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("bench-scale"),
              show_default=True, help="Results (scale.json, scale.md, scale.png), the catalogs and the vector cache.")
@pass_app
def scale(app: AppContext, sizes: str, nodes: int, existing: bool, needles: str, max_queries: int | None, seed: int,
          shards: int | None, replicas: int | None, clients: int, seconds: float, project: str, datasets: Path | None,
          redo: bool, out_dir: Path) -> None:
    """Measure toolsift as the catalog grows: each size on a cluster, figures and their growth.

    For each size (smallest first): a generated catalog with the needles inside (`bench catalog`, same
    seed: a larger one extends a smaller one); its new texts embedded once through the bench's vector
    cache; an ingest into a fresh index (shards and replicas by the layout rule, recorded); index size on
    disk and heap / native memory per tool; needle NDCG@10 and R@5 of the default search, of BM25 and of
    the dense floor, the default search's R@50 and its R@5 with one tool per copy group (an oracle), and
    the share of each top 10 repeating a capability; the search API and the floor under
    --clients clients for --seconds each; the index deleted. Then each figure's growth with size and its
    projection. Sizes already in --out are not measured again (--redo starts over).
    """
    from toolsift.encoders.embedding import load_embedder
    from toolsift.bench.scale_bench import run_scale_bench
    from toolsift.bench.scale_report import growth_rows, quality_rows, summary_rows

    asked, projected = _sizes_option(sizes, "--sizes"), _sizes_option(project, "--project", allow_empty=True)
    sets = _needles_option(needles)
    settings = app.settings()
    embedder = load_embedder(settings)
    measured: dict[str, dict[str, Any]] = {}
    for needle_set in sets:
        folder = out_dir / needle_set if len(sets) > 1 else out_dir
        results = run_scale_bench(
            settings, embedder, folder, asked, nodes=nodes, existing=existing, needles=needle_set, seed=seed,
            queries=max_queries, shards=shards, replicas=replicas, clients=clients, seconds=seconds, project=projected,
            datasets=datasets, redo=redo, progress=lambda m: click.echo(m, err=True))
        measured[needle_set] = results
        if results["skipped"]:
            click.echo(f"already measured in {folder}: {', '.join(f'{n:,}' for n in results['skipped'])} tools "
                       "(--redo measures them again)", err=True)
        env = results.get("environment", {})
        click.echo(f"{results['config']['needles']} needles, {env.get('cluster_nodes')} node(s), "
                   f"{env.get('cpu_count')} CPU cores, {results['config']['clients']} client(s) x "
                   f"{results['config']['seconds']:g} s per service")
        click.echo(table(*summary_rows(results)))
        click.echo(table(*growth_rows(results)))
        run = results["runs"][-1]
        click.echo(f"this run measured {len(run['measured'])} size(s) in {run['seconds']:.0f} s", err=True)
        for path in results["outputs"].values():
            click.echo(f"wrote {path}", err=True)
    if len(sets) > 1:
        click.echo("needle quality, every set and size")
        click.echo(table(*quality_rows(measured)))


def _needles_option(value: str) -> list[str]:
    """A comma-separated list of needle sets (or ``all``), each once, in the order given."""
    from toolsift.bench.scale_catalog import NEEDLE_SETS

    names = list(NEEDLE_SETS) if value.strip().lower() == "all" else \
        list(dict.fromkeys(p.strip().lower() for p in value.split(",") if p.strip()))
    unknown = [n for n in names if n not in NEEDLE_SETS]
    if unknown or not names:
        raise click.BadParameter(f"{', '.join(unknown) or 'nothing'}: the needle sets are {', '.join(NEEDLE_SETS)} "
                                 "(comma-separated) or 'all'", param_hint="--needles")
    return names


@click.command("shards")
@click.option("--tools", "tools_count", default="10000", show_default=True,
              help="Tools in the generated catalog (10000, or 10k).")
@click.option("--shards", "shard_counts", default="1,3,6", show_default=True,
              help="Primary shard counts measured, comma-separated (one index each, side by side).")
@click.option("--replicas", type=click.IntRange(0), default=1, show_default=True, help="Replicas of every index.")
@click.option("--nodes", type=click.IntRange(2, 9), default=3, show_default=True,
              help="Members of the bench's own local cluster (HTTP ports from 9250, transport from 19390).")
@click.option("--existing", is_flag=True,
              help="Measure the configured OpenSearch instead of a cluster of the bench's own; --nodes is not used.")
@click.option("--needles", type=click.Choice(["toolink", "livemcpbench"]), default="toolink", show_default=True,
              help="The benchmark whose tools and queries are placed inside the catalog.")
@click.option("--seed", type=int, default=0, show_default=True, help="The catalog's and the samples' seed.")
@click.option("--tenant-share", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.01,
              show_default=True, help="The small tenant's share of the tools (whole servers).")
@click.option("--k", "ks", default="10,100", show_default=True, help="The nested k-NN's k values, comma-separated.")
@click.option("--quality-queries", type=click.IntRange(1),
              help="Needle queries scored per layout and variant (a seeded sample; default: all).")
@click.option("--knn-queries", type=click.IntRange(1), default=100, show_default=True,
              help="Needle queries sent as nested parameter k-NN queries.")
@click.option("--latency-queries", type=click.IntRange(1), default=60, show_default=True,
              help="Needle queries timed per index and variant, per round.")
@click.option("--rounds", type=click.IntRange(1, 20), default=2, show_default=True, help="Latency rounds.")
@click.option("--datasets", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The benchmark data folder (default: ../shared/datasets).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("bench-shards"),
              show_default=True, help="The catalog, its tenant split and the cluster's data while it runs.")
@json_file_option("Write the figures here (default: bench-shards.json).")
@pass_app
def shards_bench(app: AppContext, tools_count: str, shard_counts: str, replicas: int, nodes: int, existing: bool,
                 needles: str, seed: int, tenant_share: float, ks: str, quality_queries: int | None, knn_queries: int,
                 latency_queries: int, rounds: int, datasets: Path | None, out_dir: Path,
                 json_out: Path | None) -> None:
    """Measure shards, replicas, routing and the nested k-NN tenant filter on one generated catalog.

    The catalog (`bench catalog`) is split by whole servers between a tenant holding --tenant-share of the
    tools and one holding the rest, and ingested into one index per shard count. Per index: needle NDCG@10
    and R@5 through the search backend (min-max fusion, RRF, dfs_query_then_fetch), tools per shard under
    agent routing (and by tool id), the tenant's nested parameter k-NN hits and recall against exact
    search, primary vs replica top 10; then search latency, every index and variant interleaved.
    """
    from toolsift.encoders.embedding import load_embedder
    from toolsift.bench.shard_bench import markdown_tables, run_shard_bench

    [tools] = _sizes_option(tools_count, "--tools")
    counts = _sizes_option(shard_counts, "--shards")
    k_values = _sizes_option(ks, "--k")
    settings = app.settings()
    figures = run_shard_bench(
        settings, load_embedder(settings), out_dir, tools=tools, shard_counts=counts, replicas=replicas, nodes=nodes,
        existing=existing, needles=needles, seed=seed, tenant_share=tenant_share, ks=k_values,
        quality_queries=quality_queries, knn_queries=knn_queries, latency_queries=latency_queries, rounds=rounds,
        datasets=datasets, progress=lambda m: click.echo(m, err=True))
    click.echo(markdown_tables(figures))
    write_figures(json_out, "bench-shards.json", figures)


@click.command("node-loss")
@click.argument("dataset_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--clients", type=click.IntRange(1, 64), default=4, show_default=True,
              help="HTTP clients searching in a loop throughout (besides one MCP session).")
@click.option("--kill", "kills", type=click.Choice(["data", "manager"]), multiple=True,
              help="A member to SIGKILL, in turn (repeatable): data = one that is not the elected cluster manager "
                   "and holds the most primaries, manager = the elected cluster manager. Default: data, then manager.")
@click.option("--rolling-restart/--no-rolling-restart", "rolling", default=True, show_default=True,
              help="Then restart every member in turn, the manager last, each green before the next.")
@click.option("--down-seconds", type=click.FloatRange(1), default=10.0, show_default=True,
              help="Seconds at least a killed member stays down before it is started again.")
@click.option("--settle-seconds", type=click.FloatRange(1), default=8.0, show_default=True,
              help="Seconds of load before the first step, between steps and after the last.")
@click.option("--shards", type=click.IntRange(1), default=3, show_default=True,
              help="Primary shards of the drill's index (one replica each).")
@json_file_option("Write the figures here (default: bench-node-loss-<dataset>.json).")
@pass_app
def node_loss(app: AppContext, dataset_dir: Path, clients: int, kills: tuple[str, ...], rolling: bool,
              down_seconds: float, settle_seconds: float, shards: int, json_out: Path | None) -> None:
    """Lose one of three OpenSearch nodes under load, on a three-node cluster of the drill's own.

    DATASET_DIR's catalog goes into an index with one replica; `toolsift serve api` and `toolsift serve
    mcp --transport http`, pointed at all three nodes, answer --clients HTTP clients and one MCP session
    while members are SIGKILLed (--kill) and started again, then restarted one by one. A live MCP source
    followed as `toolsift sync` does is changed while a member is down. Reports searches sent and failed
    (each failure kind, with its count), the health timeline, the catalog's count and content digest
    before and after, and how soon each live change was searchable.
    """
    from toolsift.encoders.embedding import load_embedder
    from toolsift.bench.nodeloss import drill_cluster, run_node_loss_drill
    from toolsift.ingest.benchmarks import load_benchmark
    from toolsift.ingest.loaders.mcp import tool_id_for as mcp_tool_id

    benchmark = load_benchmark(dataset_dir, tool_id_for=mcp_tool_id)
    settings = app.settings()
    say = lambda line: click.echo(line, err=True)  # noqa: E731
    with drill_cluster(settings, progress=say) as cluster:
        figures = run_node_loss_drill(
            cluster, settings, load_embedder(settings), benchmark.catalog_path, list(benchmark.queries.values()),
            clients=clients, shards=shards, kills=kills or ("data", "manager"), rolling=rolling,
            settle_s=settle_seconds, down_s=down_seconds, progress=say)
    click.echo(table(["step", "node", "why", "left (s)", "green again (s)", "live change searchable (s)"], [
        [s["step"], s["node"], s.get("why", "cluster manager" if s.get("was_cluster_manager") else ""),
         f"{s['left_at_s'] - s['at_s']:.1f}", f"{s['green_at_s'] - s['at_s']:.1f}",
         (f"{s['live_change']['added_searchable_s']:.1f}" if s["live_change"]["searchable"] else "NOT searchable")
         if "live_change" in s else ""]
        for s in figures["steps"]
    ]))
    rows = []
    for phase in [*figures["phases"], {"phase": "total", **figures["totals"]}]:
        for front_end in ("api", "mcp"):
            f = phase[front_end]
            kinds = "; ".join(f"{k} x{v['count']}" for k, v in f["failure_kinds"].items())
            rows.append([phase["phase"], front_end, f["sent"], f["failed"], kinds,
                         f"{f['answers_changed']} / {f['answers_reordered']}",
                         *(f"{f[k]:.0f}" if f[k] is not None else "" for k in ("p50_ms", "p95_ms", "max_ms"))])
    click.echo(f"answers compared with each query's answer with every member up ({figures['reference_queries']} "
               "queries): other tools / the same tools reordered")
    click.echo(table(["phase", "front end", "sent", "failed", "failure kinds", "changed / reordered", "p50 ms",
                      "p95 ms", "max ms"], rows))
    click.echo("health: " + " → ".join(f"{h['status']} ({h['nodes']} nodes) at {h['at_s']} s"
                                        for h in figures["health_timeline"]))
    before, after = figures["catalog_before"], figures["catalog_after"]
    click.echo(table(["catalog", "documents", "tools", "digest"], [
        ["before", before["documents"], before["tools"], before["digest"][:16]],
        ["after", after["documents"], after["tools"], after["digest"][:16]],
    ]))
    click.echo(f"tools lost: {figures['tools_lost']}, digest equal: {figures['digest_equal']}, live sync errors: "
               f"{len(figures['live_sync_errors'])}")
    write_figures(json_out, f"bench-node-loss-{benchmark.name.replace('/', '-')}.json", figures)
