"""``toolsift bench``."""

from __future__ import annotations

from pathlib import Path

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._output import table, write_json


@click.command()
@click.argument("dataset_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the figures here (default: bench-<dataset>.json).")
@click.option("--max-queries", type=click.IntRange(1), help="Time only the first N queries.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
@pass_app
def bench(app: AppContext, dataset_dir: Path, json_out: Path | None, max_queries: int | None, quiet: bool) -> None:
    """Measure ingest throughput and search latency on DATASET_DIR.

    Ingest rate is shown next to the raw embedding rate of the same texts; search p50/p95/p99 for
    full-doc and multi-field next to a plain BM25 match and the dense floor (encode + one k-NN
    query), all measured in this run on the same index.
    """
    from toolsift.bench import run_bench
    from toolsift.cli._progress import progress_bars
    from toolsift.embedding import load_embedder

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
