"""``toolsift bench`` speed subcommands: search latency, load, reranking cost, ranking inside OpenSearch,
ingest throughput, embedding backends and k-NN vector settings."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._output import table, write_figures
from toolsift.cli.options import index_option, json_file_option, queries_file_option, retriever_option, weights_option

__all__ = ["encoder_bench", "ingest_bench", "latency", "load", "opensearch_bench", "rerank", "vectors_bench"]


@click.command("latency")
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
    write_figures(json_out, f"bench-{figures['dataset'].replace('/', '-')}.json", figures)


@click.command("load")
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
    write_figures(json_out, f"load-{benchmark.name.replace('/', '-')}.json", figures)


@click.command("rerank")
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
    write_figures(json_out, f"bench-rerank-{figures['index']}.json", figures)


@click.command("opensearch")
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
    write_figures(json_out, "bench-opensearch.json", figures)


@click.command("ingest")
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
    write_figures(json_out, f"bench-ingest-{catalog.parent.name if catalog.is_file() else catalog.name}.json", figures)


@click.command("encoder")
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
    write_figures(json_out, "bench-encoder.json", figures)


@click.command("vectors")
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
    write_figures(json_out, f"bench-vectors-{tools}.json", figures)
