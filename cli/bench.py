"""``toolsift bench``: ``bench [latency] DATASET_DIR``, ``bench load DATASET_DIR``, ``bench failover``, ``bench rerank``, ``bench screen``, ``bench prompts``, ``bench outage``, ``bench freshness``, ``bench opensearch``, ``bench catalog``, ``bench scale``, ``bench node-loss``, ``bench ingest``, ``bench encoder``, ``bench vectors``, ``bench shards``."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._groups import DefaultSubcommandGroup
from toolsift.cli._output import table, write_json
from toolsift.cli.options import index_option, json_file_option, queries_file_option, retriever_option, top_k_option, weights_option

_DEFAULT = "latency"


@click.group(cls=DefaultSubcommandGroup, default=_DEFAULT)
def bench() -> None:
    """Benchmarks: ingest throughput and search latency (`bench [latency] DATASET_DIR`), the ranker
    service's failover drill (`bench failover`), reranking cost (`bench rerank`) and the ingest screen's
    precision and recall on hostile tool text (`bench screen`), hostile tool text against toolsift's own LLM
    prompts (`bench prompts`), an OpenSearch crash (`bench outage`), live-catalog freshness
    (`bench freshness`) and toolsift's ranking inside OpenSearch's search pipeline (`bench opensearch`); and
    a large catalog with a benchmark's needles inside it to measure them on (`bench catalog`) and toolsift
    measured as that catalog grows (`bench scale`); one node of a three-node cluster lost under load
    (`bench node-loss`); a catalog's ingest held to plain sentence-transformers encoding its texts
    (`bench ingest`); the embedding backends' speed and their effect on exact dense retrieval
    (`bench encoder`); the k-NN encoding and HNSW parameters against exact search (`bench vectors`);
    shards, routing, the tenant-filtered nested k-NN and primary vs replica answers on a cluster
    (`bench shards`)."""


@bench.command(_DEFAULT)
@click.argument("dataset_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@json_file_option("Write the figures here (default: bench-<dataset>.json).")
@click.option("--max-queries", type=click.IntRange(1), help="Time only the first N queries.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
@pass_app
def latency(app: AppContext, dataset_dir: Path, json_out: Path | None, max_queries: int | None, quiet: bool) -> None:
    """Measure ingest throughput and search latency on DATASET_DIR (the default subcommand).

    Ingest rate is shown next to the raw embedding rate of the same texts; search p50/p95/p99 for
    full-doc and multi-field next to a plain BM25 match and the dense floor (encode + one k-NN
    query), all measured in this run on the same index.
    """
    from toolsift.bench.search_bench import run_bench
    from toolsift.cli._progress import progress_bars
    from toolsift.encoders.embedding import load_embedder

    settings = app.settings()
    embedder = load_embedder(settings)
    with progress_bars(not quiet) as progress:
        figures = run_bench(app.client(), settings, embedder, dataset_dir, max_queries=max_queries, progress=progress)
    ing, emb = figures["ingest"], figures["raw_embedding"]
    click.echo(f"dataset {figures['dataset']}: {ing['tools']} tools + {ing['agents']} agents, "
               f"{figures['queries']} queries, embeddings on {figures['device']}")
    click.echo(table(["ingest", "docs/s", "seconds", "includes"], [
        ["toolsift ingest", ing["documents_per_s"], ing["seconds"], ing["includes"]],
        ["raw embedding (same texts)", emb["documents_per_s"], emb["seconds"],
         f"{emb['texts']} texts, {emb['texts_per_s']} texts/s"],
    ]))
    click.echo(table(["search (ms)", "p50", "p95", "p99", "mean", "includes"], [
        [name, s["p50"], s["p95"], s["p99"], s["mean"], s["includes"]]
        for name, s in figures["search_latency_ms"].items()
    ]))
    out = json_out or Path(f"bench-{figures['dataset'].replace('/', '-')}.json")
    write_json(out, figures)
    click.echo(f"wrote {out}", err=True)


@bench.command("load")
@click.argument("dataset_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--clients", default="1,2,4,8,16", show_default=True,
              help="Client counts stepped through (comma-separated); stepping stops once p95 is twice the target.")
@click.option("--step-seconds", type=click.FloatRange(5), default=20.0, show_default=True, help="Seconds per step.")
@click.option("--hold-seconds", type=click.FloatRange(5), default=60.0, show_default=True,
              help="Seconds the capacity's client count is held.")
@click.option("--p95-target", type=click.FloatRange(1), default=200.0, show_default=True,
              help="Capacity: the best requests/s of a step with p95 at most this (ms) and no error.")
@retriever_option()
@json_file_option("Write the figures here (default: load-<dataset>.json).")
@pass_app
def load(app: AppContext, dataset_dir: Path, clients: str, step_seconds: float, hold_seconds: float,
         p95_target: float, retriever: str | None, json_out: Path | None) -> None:
    """Load-test the search API against a floor served through the same HTTP stack.

    Ingests DATASET_DIR's catalog into toolsift-bench-<name> (reused while current), then runs `toolsift
    serve api` and the floor (one MiniLM encode + one plain k-NN query per request) as processes on
    loopback, one after the other, and drives each with Locust's closed-loop clients sending the
    benchmark's queries: requests/s, p50/p95/p99 and errors per step, the capacity at p95 <= the
    target held for --hold-seconds, and the API's p50 and capacity as ratios to the floor's.
    """
    from toolsift.encoders.embedding import load_embedder
    from toolsift.bench.load import run_load
    from toolsift.ingest.benchmarks import load_benchmark
    from toolsift.evaluation.runner import ensure_eval_index
    from toolsift.ingest.loaders.mcp import tool_id_for as mcp_tool_id

    try:
        counts = [int(c) for c in clients.split(",") if c.strip()]
    except ValueError:
        raise click.BadParameter("a comma-separated list of client counts, e.g. 1,2,4,8", param_hint="--clients")
    benchmark = load_benchmark(dataset_dir, tool_id_for=mcp_tool_id)
    alias = "toolsift-bench-" + "".join(c if c.isalnum() else "-" for c in benchmark.name.lower())
    settings = app.settings(index=alias, retriever=retriever)
    # reused while it is what this code builds; an older schema or model is rebuilt first
    ensure_eval_index(app.client(), settings, load_embedder(settings), alias, benchmark.catalog_path,
                      benchmark.catalog_format)
    figures = run_load(settings, list(benchmark.queries.values()), clients=counts, step_s=step_seconds,
                       hold_s=hold_seconds, p95_target_ms=p95_target, progress=lambda m: click.echo(m, err=True))
    figures["dataset"] = benchmark.name
    rows = []
    for name, service in figures["services"].items():
        for s in service["steps"]:
            rows.append([name, s["clients"], f"{s['requests_per_s']:.1f}", f"{s['p50']:.0f}", f"{s['p95']:.0f}",
                         f"{s['p99']:.0f}", s["errors"]])
        for h in service["holds_tried"]:
            rows.append([f"{name} (held {h['seconds']:.0f}s)", h["clients"], f"{h['requests_per_s']:.1f}",
                         f"{h['p50']:.0f}", f"{h['p95']:.0f}", f"{h['p99']:.0f}", h["errors"]])
    click.echo(table(["service", "clients", "req/s", "p50 ms", "p95 ms", "p99 ms", "errors"], rows))
    ratios = figures["ratios"]
    click.echo(f"API / floor: p50 at 1 client x{ratios['p50_at_1_client']}, capacity x{ratios['capacity']}, "
               f"p50 at capacity x{ratios['p50_at_capacity']} (p95 target {p95_target:.0f} ms, "
               f"{os.cpu_count()} CPU cores)")
    out = json_out or Path(f"load-{benchmark.name.replace('/', '-')}.json")
    write_json(out, figures)
    click.echo(f"wrote {out}", err=True)


@bench.command("failover")
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
    out = json_out or Path(f"failover-{source.replace('/', '-').removesuffix('.json')}.json")
    write_json(out, figures)
    click.echo(f"wrote {out}", err=True)
    if not figures["ok"]:
        raise SystemExit(1)


@bench.command("rerank")
@click.argument("dataset_dir", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path))
@queries_file_option()
@index_option("The index the requests come from (default: the configured one).")
@click.option("-n", "--n-queries", type=click.IntRange(2), default=20, show_default=True, help="Requests timed.")
@retriever_option()
@weights_option("Learned MFTR weights (the base ranker; default: the fixed field weights).")
@click.option("--reranker", "rerankers", multiple=True,
              help="A reranker to time (repeatable): a trained artifact, cross-encoder:PATH, tool-rank:PATH or "
                   "tool-rank:smollm2. Default: the bundled MiniLM as a cross-encoder and the bundled SmolLM2 as Tool-Rank.")
@click.option("--rerank-top", type=click.IntRange(1, 1000), default=20, show_default=True, help="M.")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), help="Reranker device (default: the setting).")
@click.option("--concurrency", type=click.IntRange(1, 256), default=8, show_default=True,
              help="Clients sending at once in the service's concurrent run.")
@click.option("--no-service", is_flag=True, help="Only the in-process transport.")
@json_file_option("Write the figures here (default: bench-rerank-<index>.json).")
@pass_app
def rerank(
    app: AppContext,
    dataset_dir: Path | None,
    queries_file: Path | None,
    index_alias: str | None,
    n_queries: int,
    retriever: str | None,
    weights_path: Path | None,
    rerankers: tuple[str, ...],
    rerank_top: int,
    device: str | None,
    concurrency: int,
    no_service: bool,
    json_out: Path | None,
) -> None:
    """Reranking cost: latency per query and pairs/s for MFTR, each reranker, in-process and as a service.

    Requests are real (the first stage and exact field scores of DATASET_DIR's queries on the index,
    candidate texts included); each configuration is timed in-process and through `toolsift serve
    ranker` (one request at a time, then --concurrency clients, so cross-request batching shows).
    """
    from toolsift.encoders.embedding import load_embedder
    from toolsift.bench.failover import read_queries
    from toolsift.bench.rerank_bench import run_rerank_bench

    if (dataset_dir is None) == (queries_file is None):
        raise click.UsageError("give DATASET_DIR or --queries FILE (one of them)")
    _, queries = read_queries(dataset_dir, queries_file)
    settings = app.settings(index=index_alias, retriever=retriever, weights=weights_path, rerank_top=rerank_top,
                            reranker_device=device)
    if not rerankers:
        from toolsift.ranker.rerankers import bundled_minilm_path

        rerankers = (f"cross-encoder:{bundled_minilm_path()}", "tool-rank:smollm2")
    client = app.client()
    embedder = None if settings.retriever == "bm25" else load_embedder(settings)
    figures = run_rerank_bench(client, settings, embedder, queries[:n_queries], rerankers=rerankers,
                               retriever=settings.retriever, service=not no_service, concurrency=concurrency,
                               progress=lambda line: click.echo(line, err=True))
    click.echo(f"{figures['queries']} requests from {figures['index']} ({figures['retriever']}, "
               f"{figures['candidates_per_query']} candidates each), torch threads {figures['torch_threads']}, "
               f"CUDA: {figures['cuda'] or 'none'}")
    rows: list[list[Any]] = []
    for row in figures["rows"]:
        local = row["in_process"]
        rows.append([row["ranker"], "in-process", row["device"], row["rerank_top"] or "–", local["latency_ms"]["p50"],
                     local["latency_ms"]["p95"], local["added_ms"], local["pairs_per_s"] or "–",
                     local.get("peak_batched_pairs_per_s", "–")])
        remote = row.get("service")
        if remote:
            rows.append([row["ranker"], f"service (x{remote['concurrency']}: {remote['concurrent_requests_per_s']} req/s, "
                         f"batch {remote['mean_batch_pairs'] or '–'} pairs)", remote["device"], row["rerank_top"] or "–",
                         remote["sequential_latency_ms"]["p50"], remote["sequential_latency_ms"]["p95"],
                         round(remote["sequential_latency_ms"]["mean"] - local["latency_ms"]["mean"] + local["added_ms"], 2),
                         remote["sequential_pairs_per_s"] or "–", remote["concurrent_pairs_per_s"] or "–"])
    click.echo(table(["ranker", "transport", "device", "M", "p50 ms", "p95 ms", "added ms", "pairs/s",
                      "batched pairs/s"], rows))
    out = json_out or Path(f"bench-rerank-{figures['index']}.json")
    write_json(out, figures)
    click.echo(f"wrote {out}", err=True)


@bench.command("screen")
@click.argument("injection_set", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--catalog", "catalogs", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Also screen this real catalog (any format `toolsift ingest` reads; repeatable): tools flagged, seconds.")
@click.option("--patterns-only", is_flag=True, help="Screen with the patterns alone (no meaning screen).")
@json_file_option("Write the figures here (default: bench-screen.json).")
@pass_app
def screen(app: AppContext, injection_set: Path | None, catalogs: tuple[Path, ...], patterns_only: bool,
           json_out: Path | None) -> None:
    """Precision and recall of the ingest screen of hostile tool text on a labelled injection set.

    INJECTION_SET (default: the bundled one, screen/data/injection_set.json) holds small MCP
    servers labelled malicious (tool poisoning) or benign (look-alikes); they are ingested as one
    catalog through the real loader and normaliser and screened as `toolsift ingest` screens (the
    patterns and the multilingual meaning screen). Scores per case and per tool, on all cases, on each
    half (by a hash of the case id) and on English and other-language cases (a case's "lang"); recall
    per language; the screen's cost per tool. --catalog screens real catalogs too: every flagged tool of
    a public catalog is a false positive.
    """
    from toolsift.screen.screen_bench import run_catalog_screen, run_screen_bench

    figures = run_screen_bench(injection_set, meaning=not patterns_only)
    meaning = figures["meaning_screen"]
    click.echo(f"injection set {figures['set']}: {figures['all']['cases']} cases "
               f"({figures['all']['malicious']} malicious, {figures['all']['benign']} benign); meaning screen "
               + (f"on ({meaning['encoder']}, threshold {meaning['threshold']}, agree {meaning['agree']})"
                  if meaning else "off"))
    click.echo(table(["cases", "n", "case precision", "case recall", "tool precision", "tool recall"], [
        [name, figures[key]["cases"], figures[key]["case_precision"], figures[key]["case_recall"],
         figures[key]["tool_precision"], figures[key]["tool_recall"]]
        for name, key in (("all", "all"), ("half A", "half_a"), ("half B", "half_b"), ("English", "english"),
                          ("other languages", "other_languages")) if figures[key]["cases"]
    ]))
    click.echo(table(["language", "malicious", "caught", "benign", "flagged"], [
        [language, row["malicious"], row["caught"], row["benign"], row["flagged"]]
        for language, row in figures["by_language"].items()
    ]))
    cost = figures["cost"]
    click.echo(f"cost: {cost['tools']} tools, {cost['sentences']} sentences read by the model, {cost['seconds']} s "
               f"({cost['ms_per_tool']} ms per tool)")
    click.echo(table(["kind", "cases", "flagged", "rate"], [
        [kind, row["cases"], row.get("caught", row.get("flagged")), row["rate"]] for kind, row in figures["by_kind"].items()
    ]))
    for label, ids in (("false positives", figures["all"]["false_positives"]), ("missed", figures["all"]["missed"])):
        if ids:
            click.echo(f"{label}: {', '.join(ids)}")
    if catalogs:
        figures["catalogs"] = run_catalog_screen(list(catalogs), meaning=not patterns_only)
        click.echo(table(["catalog", "tools", "flagged", "seconds (patterns)", "seconds (meaning screen)"], [
            line for row in figures["catalogs"]["catalogs"] for line in (
                [row["catalog"], row["tools"], row["flagged"], row["seconds_patterns"], row["seconds_meaning"]],
                *([["  its servers the screen never read", row["unseen"]["tools"], row["unseen"]["flagged"], "", ""]]
                  if "unseen" in row else []))
        ]))
        click.echo(f"real catalogs: {figures['catalogs']['flagged']} of {figures['catalogs']['tools']} tools flagged "
                   f"({figures['catalogs']['ms_per_tool']} ms per tool)")
    out = json_out or Path("bench-screen.json")
    write_json(out, figures)
    click.echo(f"wrote {out}", err=True)


@bench.command("prompts")
@click.argument("injection_set", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--llm", "use_llm", is_flag=True,
              help="Use the configured LLM endpoint (llm_base_url) instead of the obedient model.")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N cases.")
@json_file_option("Write the figures here (default: bench-prompts.json).")
@pass_app
def prompts(app: AppContext, injection_set: Path | None, use_llm: bool, limit: int | None, json_out: Path | None) -> None:
    """Hostile tool text against toolsift's own LLM prompts: standardisation and query rewriting.

    Every tool of INJECTION_SET (default: the bundled set) is standardised, and each case's request is
    rewritten over a scratch index of the set, through the real prompts and guards. By default the LLM
    is the obedient model, which copies the prompt's tool text into every field of its answer and adds
    the argument a poisoned tool asks for (the worst case); --llm uses llm_base_url. Counts answers
    that carry hostile text or change a tool's parameters, and what of it reaches the indexed documents
    and the structured queries (after the guards: 0 parameter changes, 0 flagged tools shown).
    """
    from toolsift.encoders.embedding import load_embedder
    from toolsift.standardise.prompt_bench import run_prompt_bench

    settings = app.settings()
    figures = run_prompt_bench(app.client(), settings, load_embedder(settings), injection_set,
                               use_configured_llm=use_llm, limit=limit)
    std, rew = figures["standardise"], figures["rewrite"]
    click.echo(f"injection set {figures['set']}: {figures['cases']} cases, model {figures['model']}, "
               f"{figures['seconds']} s")
    click.echo(table(["standardise", "tools", "answered", "invalid", "answers changing parameters",
                      "answers carrying hostile text", "indexed documents changing parameters"], [
        ["", std["tools"], std["answered"], std["invalid"], std["answers_changing_parameters"],
         std["answers_carrying_hostile_text"], std["documents_changing_parameters"]]]))
    click.echo(table(["rewrite", "cases", "answered", "invalid", "flagged tools shown",
                      "answers carrying hostile text", "refused (benign)", "queries holding malicious tool text"], [
        ["", rew["cases"], rew["answered"], rew["invalid"], rew["flagged_tools_shown"],
         rew["answers_carrying_hostile_text"], f"{rew['refused']} ({rew['benign_refused']})",
         rew["queries_holding_malicious_tool_text"]]]))
    out = json_out or Path("bench-prompts.json")
    write_json(out, figures)
    click.echo(f"wrote {out}", err=True)


@bench.command("opensearch")
@click.argument("dataset_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--max-queries", type=click.IntRange(1), help="Only the first N queries of each dataset.")
@json_file_option("Write the figures here (default: bench-opensearch.json).")
@pass_app
def opensearch_bench(app: AppContext, dataset_dirs: tuple[Path, ...], max_queries: int | None,
                     json_out: Path | None) -> None:
    """toolsift's ranking inside OpenSearch's search pipeline vs `toolsift search` and the plain hybrid query.

    For each DATASET_DIR (a benchmark folder, as `toolsift eval` takes): its eval index, `toolsift serve
    ranker` started on loopback with a fresh token, `toolsift deploy opensearch` for that index. Every
    query then runs three ways: `toolsift search`; the plain hybrid first stage sent straight to
    OpenSearch; the stored search template with ?search_pipeline=. Prints NDCG@10 of both rankings and
    their difference (the bar: within 0.005), identical top-10s, and p50 / p95 latency of each path and
    of the time the pipeline adds, and the pipeline's time per hop (the service's two calls run in
    process, OpenSearch's search, and the rest: ml-commons' connectors and the HTTP round trips). Needs
    the node with ml-commons (`toolsift node start --ml-commons`).
    """
    from toolsift.encoders.embedding import load_embedder
    from toolsift.bench.native_bench import run_native_bench

    settings = app.settings()
    figures = run_native_bench(app.client(), settings, load_embedder(settings), list(dataset_dirs),
                               max_queries=max_queries)
    click.echo(table(["dataset", "queries", "NDCG@10 toolsift search", "NDCG@10 OpenSearch pipeline", "difference",
                      "identical top 10"], [
        [r["dataset"], r["n_queries"], r["ndcg@10_toolsift"], r["ndcg@10_opensearch"], r["ndcg@10_difference"],
         r["identical_top10"]] for r in figures["datasets"]]))
    click.echo(table(["latency (ms)", "toolsift search p50", "p95", "plain hybrid p50", "p95", "pipeline p50", "p95",
                      "added p50", "added p95"], [
        [r["dataset"], r["latency_ms"]["toolsift"].get("p50"), r["latency_ms"]["toolsift"].get("p95"),
         r["latency_ms"]["plain"].get("p50"), r["latency_ms"]["plain"].get("p95"),
         r["latency_ms"]["opensearch"].get("p50"), r["latency_ms"]["opensearch"].get("p95"),
         r["added_ms"].get("p50"), r["added_ms"].get("p95")] for r in figures["datasets"]]))
    hops = ("first_stage_service", "search", "ranking_service", "connectors_and_http")
    click.echo(table(["pipeline per hop, p50 (ms)", "service: first stage", "OpenSearch search", "service: ranking",
                      "connectors + HTTP"], [
        [r["dataset"], *(r["native_hops_ms"][h].get("p50") for h in hops)] for r in figures["datasets"]]))
    click.echo(f"equivalent within {figures['tolerance']}: {'yes' if figures['equivalent'] else 'NO'}")
    out = json_out or Path("bench-opensearch.json")
    write_json(out, figures)
    click.echo(f"wrote {out}", err=True)


@bench.command("freshness")
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
    out = json_out or Path("bench-freshness.json")
    write_json(out, figures)
    click.echo(f"wrote {out}", err=True)


@bench.command("outage")
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
    out = json_out or Path(f"bench-outage-{benchmark.name.replace('/', '-')}.json")
    write_json(out, figures)
    click.echo(f"wrote {out}", err=True)


@bench.command("catalog")
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


@bench.command("scale")
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
    from toolsift.bench.scale_bench import growth_rows, quality_rows, run_scale_bench, summary_rows

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


@bench.command("shards")
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
    out = json_out or Path("bench-shards.json")
    write_json(out, figures)
    click.echo(f"wrote {out}", err=True)


@bench.command("ingest")
@click.argument("catalog", type=click.Path(exists=True, path_type=Path))
@click.option("--format", "fmt", help="Catalog format (default: detected): toolret, mcp, openai, openapi, beir, mftr.")
@json_file_option("Write the figures here (default: bench-ingest-<catalog folder>.json).")
@pass_app
def ingest_bench(app: AppContext, catalog: Path, fmt: str | None, json_out: Path | None) -> None:
    """Measure `toolsift ingest` of CATALOG next to plain sentence-transformers encoding its texts.

    In one run: the floor (plain sentence-transformers, torch, batch 64, on the catalog's own names,
    descriptions and parameters), a cold ingest into a fresh index (empty vector cache), a warm
    re-ingest into a fresh index (the vector cache holding the catalog's texts: tools/s) and the same
    documents bulk indexed alone (the node's own share). The bench's cache is a temporary folder.
    """
    from toolsift.encoders.embedding import load_embedder
    from toolsift.bench.ingest_bench import run_ingest_bench

    settings = app.settings()
    figures = run_ingest_bench(app.client(), settings, load_embedder(settings), catalog, fmt=fmt,
                               progress=lambda m: click.echo(m, err=True))
    floor, cold, warm, bulk = figures["floor"], figures["cold_ingest"], figures["warm_reingest"], figures["bulk_only"]
    click.echo(f"catalog {figures['catalog']}: {cold['tools']} tools, {cold['documents']} documents; toolsift "
               f"embeds with {figures['backend']} on {figures['device']}")
    click.echo(table(["row", "seconds", "tools/s", "texts encoded", "includes"], [
        ["floor", f"{floor['seconds']:.1f}", "", floor["texts"], floor["includes"]],
        ["encoder", f"{figures['encoder']['seconds']:.1f}", "", floor["texts"], figures["encoder"]["includes"]],
        ["cold ingest", f"{cold['seconds']:.1f}", f"{cold['tools_per_s']:.1f}", cold["texts_encoded"], cold["includes"]],
        ["warm re-ingest", f"{warm['seconds']:.1f}", f"{warm['tools_per_s']:.0f}", warm["texts_encoded"],
         warm["includes"]],
        ["bulk only", f"{bulk['seconds']:.1f}", f"{bulk['tools_per_s']:.0f}", "", bulk["includes"]],
    ]))
    click.echo(f"raw encode rate: x{figures['encoder_speedup']} the floor's "
               f"({figures['encoder']['texts_per_s']:.0f} vs {floor['texts_per_s']:.0f} texts/s)")
    click.echo(f"cold ingest / floor: x{figures['cold_ingest_over_floor']} wall clock, "
               f"x{figures['cold_ingest_over_floor_cpu']} CPU seconds of this process")
    out = json_out or Path(f"bench-ingest-{catalog.parent.name if catalog.is_file() else catalog.name}.json")
    write_json(out, figures)
    click.echo(f"wrote {out}", err=True)


@bench.command("node-loss")
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
    out = json_out or Path(f"bench-node-loss-{benchmark.name.replace('/', '-')}.json")
    write_json(out, figures)
    click.echo(f"wrote {out}", err=True)


@bench.command("encoder")
@click.argument("dataset_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--backends", default="torch,onnx,onnx-int8", show_default=True,
              help="Comma-separated embedding backends, torch first (the reference).")
@click.option("--rounds", type=click.IntRange(1, 20), default=3, show_default=True,
              help="Interleaved encode rounds per backend.")
@json_file_option("Write the figures here (default: bench-encoder.json).")
@pass_app
def encoder_bench(app: AppContext, dataset_dirs: tuple[Path, ...], backends: str, rounds: int,
                  json_out: Path | None) -> None:
    """Compare embedding backends on DATASET_DIRS: raw encode rate and exact dense NDCG@10.

    Each backend encodes the catalog's own texts in interleaved rounds (texts/s, and its rate over
    torch's), then scores every query against every tool by brute-force cosine on the flat document,
    the description and the overview (NDCG@10, Recall@5; no HNSW). A backend that moves no NDCG@10 by
    0.005 or more is a drop-in replacement for torch. Needs no OpenSearch.
    """
    from toolsift.bench.encoder_bench import FIELDS, run_encoder_bench

    figures = run_encoder_bench(app.settings(), list(dataset_dirs), backends=[b.strip() for b in backends.split(",")],
                                rounds=rounds, progress=lambda m: click.echo(m, err=True))
    rows = []
    for data in figures["datasets"]:
        for backend, f in data["backends"].items():
            rows.append([data["dataset"], backend, f"{f['texts_per_s_median']:.0f}", f"x{f['speedup_median']}",
                         *(f"{f['exact'][field]['ndcg_10']:.4f} ({f['ndcg_10_delta'][field]:+.4f})" for field in FIELDS),
                         "yes" if f["drop_in"] else "no"])
    click.echo(table(["dataset", "backend", "texts/s (median)", "vs torch",
                      *(f"NDCG@10 {field}" for field in FIELDS), "drop-in"], rows))
    out = json_out or Path("bench-encoder.json")
    write_json(out, figures)
    click.echo(f"wrote {out}", err=True)


@bench.command("vectors")
@click.option("--tools", type=click.IntRange(1), default=10_000, show_default=True,
              help="Tools in the generated catalog (its needles inside, `bench catalog`).")
@click.option("--needles", type=click.Choice(["toolink", "livemcpbench"]), default="toolink", show_default=True,
              help="The benchmark whose tools and queries are placed inside the catalog.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="The catalog's seed, and the sample of tools whose descriptions top up the queries.")
@click.option("--queries", "max_queries", type=click.IntRange(1),
              help="Only N of the benchmark's queries (a seeded sample) and their tools as needles (default: all).")
@click.option("--min-queries", type=click.IntRange(0), default=200, show_default=True,
              help="Top the needle queries up to this many with sampled tools' descriptions used as queries.")
@click.option("--variants", "only",
              help="Comma-separated variant names to measure (default: all: product, unmerged, m=8, m=32, efc=64, "
                   "efc=256, ef_search=50, ef_search=100, ef_search=200, ef_search=512, sq-int7, byte-x127, "
                   "byte-scaled).")
@click.option("--rounds", type=click.IntRange(1, 20), default=2, show_default=True,
              help="Timed passes over the queries per variant (recall and NDCG come from the first).")
@click.option("--datasets", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The benchmark data folder (default: ../shared/datasets).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("bench-vectors"),
              show_default=True, help="Where the generated catalog is kept (reused by a later run).")
@json_file_option("Write the figures here (default: bench-vectors-<tools>.json).")
@pass_app
def vectors_bench(app: AppContext, tools: int, needles: str, seed: int, max_queries: int | None, min_queries: int,
                  only: str | None, rounds: int, datasets: Path | None, out_dir: Path, json_out: Path | None) -> None:
    """Measure the k-NN encoding and HNSW parameters of the tools' description vector, side by side.

    On the configured OpenSearch, one bench index per choice (one shard, the description vector of
    every tool of a generated catalog): the product's mapping (fp32 HNSW, cosine, Lucene engine), the
    same unmerged, m and ef_construction one at a time, ef_search at query time, Lucene's int7 scalar
    quantisation and byte vectors. For each: recall@10 / recall@100 against exact brute-force search
    (k = 100), needle NDCG@10 (exact search's beside it), search p50/p95 (took and wall clock, one
    client, variants interleaved), vector bytes on disk and RAM per tool, build seconds. The bench
    indices (toolsift-bench-vectors-*) are deleted at the end.
    """
    from toolsift.encoders.embedding import load_embedder
    from toolsift.bench.vector_bench import DEFAULT_VARIANTS, markdown_table, run_vector_bench

    variants = list(DEFAULT_VARIANTS)
    if only:
        asked = [name.strip() for name in only.split(",") if name.strip()]
        known = {v.name: v for v in DEFAULT_VARIANTS}
        unknown = [name for name in asked if name not in known]
        if unknown or not asked:
            raise click.BadParameter(f"unknown variant(s) {', '.join(unknown) or '(none given)'}; known: "
                                     f"{', '.join(known)}", param_hint="--variants")
        variants = [known[name] for name in dict.fromkeys(asked)]
    settings = app.settings()
    figures = run_vector_bench(app.client(), settings, load_embedder(settings), out_dir, tools=tools, needles=needles,
                               seed=seed, queries=max_queries, min_queries=min_queries, variants=variants,
                               rounds=rounds, datasets=datasets, progress=lambda m: click.echo(m, err=True))
    catalog, queries, env = figures["catalog"], figures["queries"], figures["environment"]
    click.echo(f"{catalog['tools']:,} tools ({catalog['tools_with_description']:,} with a description vector, "
               f"{figures['dimension']} dims); {queries['total']} queries ({queries['needle']} needle, "
               f"{queries['description']} tool descriptions); k = {figures['k']}; OpenSearch {env['opensearch']}, "
               f"load average {env['load_average_before']} → {env['load_average_after']}")
    click.echo(markdown_table(figures), nl=False)
    out = json_out or Path(f"bench-vectors-{tools}.json")
    write_json(out, figures)
    click.echo(f"wrote {out}", err=True)


@bench.command("embedder")
@click.option("--model", "models", multiple=True,
              help="An encoder to measure after the bundled one (a `toolsift train embedder` folder); repeatable.")
@click.option("--datasets", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The benchmark data folder (default: ../shared/datasets).")
@click.option("--baseline/--no-baseline", default=True, show_default=True,
              help="Measure the bundled all-MiniLM-L6-v2 first (the table's reference column).")
@json_file_option("Write the figures here (default: bench-embedder.json).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
@pass_app
def embedder_bench(app: AppContext, models: tuple[str, ...], datasets: Path | None, baseline: bool,
                   json_out: Path | None, quiet: bool) -> None:
    """Every benchmark with the bundled encoder and with each --model: the before/after table.

    Tool level on APIBank, Toolink and ToolLens (Full-Doc MiniLM, multi-field MiniLM and hybrid),
    LiveMCPBench whole questions through the MCP server (tool and agent R@5), its agent level, and
    ToolLens sets (PTR). Each encoder gets each benchmark's index of its own. The JSON says
    which benchmarks share a source with the training data.
    """
    from toolsift.cli._progress import progress_bars
    from toolsift.encoders.embedding import BUNDLED_MODEL
    from toolsift.encoders.encoder_eval import embedder_table, run_embedder_bench
    from toolsift.bench.scale_catalog import default_datasets_dir

    measured = [BUNDLED_MODEL] * baseline + list(models)
    if not measured:
        raise click.UsageError("nothing to measure: give --model, or keep the baseline")
    with progress_bars(not quiet) as progress:
        figures = run_embedder_bench(app.client(), app.settings(), datasets or default_datasets_dir(), measured,
                                     progress=progress)
    header, rows = embedder_table(figures)
    click.echo(table(header, rows))
    out = json_out or Path("bench-embedder.json")
    write_json(out, figures)
    click.echo(f"wrote {out}", err=True)


@bench.command("feedback")
@click.argument("dataset_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--events", "events_spec", default="0,100,1000,10000", show_default=True,
              help="Checkpoints: feedback reports sent before learning and measuring (comma-separated, cumulative).")
@click.option("--test-queries", type=click.IntRange(10), default=500, show_default=True,
              help="Test queries measured at each checkpoint (a seeded sample of the test split).")
@click.option("--agents", type=click.IntRange(1, 200), default=20, show_default=True,
              help="Honest agents (one API key each, one tenant).")
@click.option("--adversary-at", type=click.IntRange(0), default=1000, show_default=True,
              help="After this checkpoint a spammer sends as many reports as the honest agents did (0: no adversary).")
@click.option("--key-cap", type=click.IntRange(1), default=50, show_default=True,
              help="One key's feedback pairs weigh at most this much in all, inverse-propensity weights included (and one tool's positives).")
@click.option("--ab-events", type=click.IntRange(0), default=0, show_default=True,
              help="Then A/B-test the latest candidate that passed its guard on half of the agents' searches for this "
                   "many more reports, and print the A/B report.")
@click.option("--from-zero", is_flag=True, help="Learn from zero instead of from the weights serving the agents.")
@click.option("--guard-benchmark", "guard_benchmarks", multiple=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A benchmark every candidate's guard also compares on (may lose <= 0.005 NDCG@10); repeatable.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--png", "png_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Draw the curve here (default: bench-feedback.png).")
@json_file_option("Write the figures here (default: bench-feedback.json).")
@pass_app
def feedback(app: AppContext, dataset_dir: Path, events_spec: str, test_queries: int, agents: int, adversary_at: int,
             key_cap: int, ab_events: int, from_zero: bool, guard_benchmarks: tuple[Path, ...], seed: int,
             png_out: Path | None, json_out: Path | None) -> None:
    """Simulated agents through the search API, learning from their feedback, a spammer, and an A/B test.

    Agents replay DATASET_DIR's train queries (a BEIR folder with train and test qrels: ToolLens)
    through `toolsift serve api`, reporting calls with position bias and noise; at each checkpoint field
    weights are learned from the feedback so far behind the guard and measured on test queries
    (NDCG@10, Recall@5) against the fixed weights. A spammer then reports each answer's last tool as
    the one that worked; weights learned with and without the key cap show what it moved. Each point
    is also recorded as an eval run (the workbench's metrics page).
    """
    from toolsift.encoders.embedding import load_embedder
    from toolsift.cli._progress import progress_bars
    from toolsift.learning.feedback_sim import plot_curve, run_feedback_curve

    try:
        checkpoints = sorted({int(part) for part in events_spec.split(",") if part.strip()})
    except ValueError:
        raise click.BadParameter(f"{events_spec!r} is not a comma-separated list of event counts",
                                 param_hint="--events") from None
    settings = app.settings()
    with progress_bars(True) as progress:
        curve = run_feedback_curve(app.client(), settings, load_embedder(settings), dataset_dir, checkpoints=checkpoints,
                                   test_queries=test_queries, agents=agents, adversary_at=adversary_at or None,
                                   key_cap=key_cap, ab_events=ab_events, warm_start=not from_zero, seed=seed,
                                   guard_benchmarks=guard_benchmarks,
                                   progress=progress)
    rows = [[p.events, p.requests, p.fixed["ndcg@10"], p.candidate["ndcg@10"] if p.candidate else "-",
             p.fixed["recall@5"], p.candidate["recall@5"] if p.candidate else "-",
             "refused" if p.refused else {None: "-", True: "passed", False: "failed"}[p.guard_passed],
             "-" if p.changed is None else f"{p.changed:.0%}", p.served["ndcg@10"], p.pairs, p.learn_seconds]
            for p in curve.points]
    click.echo(f"{curve.benchmark}: {curve.test_queries} test queries, {curve.agents} agents, "
               f"{curve.events_per_s} requests/s through the API, {curve.seconds} s")
    click.echo(table(["events", "requests", "NDCG@10 fixed", "NDCG@10 learned", "R@5 fixed", "R@5 learned", "guard",
                      "top-10s changed", "NDCG@10 served", "pairs", "learn s"], rows))
    if curve.adversarial is not None:
        a = curve.adversarial

        def verdict(passed: bool | None, reasons: Sequence[str]) -> str:
            return "passed" if passed else "failed: " + "; ".join(r.split(":")[0] for r in reasons)

        adversarial_rows: list[list[object]] = [
            [f"{a.honest_events} honest events only", *(a.honest_only or {}).values(), "-"],
            [f"+ {a.spam_events} spam ({a.spam_sent} sent, {a.spam_stored} stored), key cap {a.key_cap} and no key over "
             f"1/{a.min_keys} (spammer x{a.spammer_scale})", a.capped["ndcg@10"], a.capped["recall@5"],
             verdict(a.capped_guard_passed, a.capped_reasons)],
            [f"+ {a.spam_events} spam, no cap, no key minimum", a.uncapped["ndcg@10"], a.uncapped["recall@5"],
             verdict(a.uncapped_guard_passed, a.uncapped_reasons)],
        ]
        for run, label in ((a.one_key, "default"), (a.one_key_no_minimum, "key minimum off")):
            if run is None:
                continue
            head = f"one key, {run.events} events ({run.stored} stored), {label}"
            if run.refused is not None or run.figures is None:
                adversarial_rows.append([head, "-", "-", f"refused: {run.keys} distinct key < {run.min_keys}: nothing learned"])
            else:
                adversarial_rows.append([head, run.figures["ndcg@10"], run.figures["recall@5"],
                                         verdict(run.guard_passed, run.reasons)])
        click.echo(table(["adversarial run", "NDCG@10", "R@5", "guard"], adversarial_rows))
    if curve.ab is not None:
        ab = curve.ab
        click.echo(table(["A/B arm", "weights", "keys", "answers", "reported", "success rate", "MRR", "success@5"], [
            [arm, f["weights_version"], f["keys"], f["answers"], f["reported"], f["success_rate"], f["mrr"],
             f["success_at_5"]] for arm, f in ab["arms"].items()]))
        click.echo(f"per key ({ab['keys']} keys, each weighing once): success rate {ab['success_rate_diff']:+.4f} "
                   f"(p {ab['success_rate_p']}), MRR {ab['mrr_diff']:+.4f} (p {ab['mrr_p']}): {ab['verdict']}")
    for note in curve.notes:
        click.echo(note)
    out = json_out or Path("bench-feedback.json")
    write_json(out, curve.to_dict())
    png = plot_curve(curve, png_out or Path("bench-feedback.png"))
    click.echo(f"wrote {out} and {png}", err=True)
