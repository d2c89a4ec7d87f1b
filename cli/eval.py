"""``toolsift eval``."""

from __future__ import annotations

from pathlib import Path

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._output import table, write_json


@click.command("eval")
@click.argument("dataset_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--method", type=click.Choice(["multi-field", "full-doc"]), default="multi-field", show_default=True)
@click.option("--retriever", type=click.Choice(["bm25", "minilm", "hybrid"]), default="bm25", show_default=True)
@click.option("--split", default="test", show_default=True, help="Qrels split for BEIR folders.")
@click.option("--depth", type=click.IntRange(10, 1000), default=100, show_default=True, help="Tools returned per query.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), help="Write the result as JSON here.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@pass_app
def eval_command(
    app: AppContext,
    dataset_dir: Path,
    method: str,
    retriever: str,
    split: str,
    depth: int,
    json_out: Path | None,
    quiet: bool,
) -> None:
    """Evaluate retrieval on DATASET_DIR (e.g. ../shared/datasets/toolret/apibank).

    The benchmark is ingested into its own index (reused while unchanged), every query is run, and
    NDCG@10, Recall@10, Completeness@10, NDCG@5 and Recall@5 are printed (binary relevance).
    """
    from toolsift.cli._progress import progress_bars
    from toolsift.embedding import load_embedder
    from toolsift.evaluation.runner import run_eval

    settings = app.settings()
    embedder = load_embedder(settings)
    with progress_bars(not quiet) as progress:
        result = run_eval(
            app.client(),
            settings,
            dataset_dir,
            method=method,  # type: ignore[arg-type]
            retriever=retriever,  # type: ignore[arg-type]
            embedder=embedder,
            depth=depth,
            split=split,
            progress=lambda done, total: progress("queries", done, total),
        )
    metrics = result.metrics
    click.echo(table(
        ["dataset", "method", "retriever", "queries", *metrics.keys(), "p50 ms"],
        [[result.dataset, result.method, result.retriever, result.n_queries, *metrics.values(),
          result.latency_ms.get("p50", "")]],
    ))
    if json_out:
        write_json(json_out, result.to_dict())
        click.echo(f"wrote {json_out}", err=True)
