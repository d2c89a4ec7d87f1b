"""``toolsift train``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._groups import DefaultSubcommandGroup
from toolsift.cli._mftr_inputs import mftr_input_options
from toolsift.cli._output import emit_json, table
from toolsift.cli._reranker_options import RerankerChoice, reranker_training_options
from toolsift.cli.options import json_flag, retriever_option, weights_option

if TYPE_CHECKING:
    from toolsift.evaluation.mftr.inputs import MFTRInputs


def _artifact_options(name: str, folder: str, json_help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--name`` (default: ``name``), ``--out`` (default: <data_dir>/``folder``), ``--json`` and ``--quiet``:
    where a training command writes its artifact and how it reports."""

    def apply(f: Callable[..., Any]) -> Callable[..., Any]:
        f = click.option("--quiet", "-q", is_flag=True, help="No progress bar.")(f)
        f = json_flag(json_help)(f)
        f = click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
                         help=f"Artifact root (default: <data_dir>/{folder}).")(f)
        return click.option("--name", help=f"Artifact name (default: {name}).")(f)

    return apply


@click.group(cls=DefaultSubcommandGroup, default="weights")
def train() -> None:
    """Learn MFTR weights (`train weights`, the default), a second-stage reranker (`train reranker`) or the
    encoder itself (`train embedder`, Tool-Embed)."""


@train.command("weights")
@click.argument("dataset_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@retriever_option(default="minilm")
@mftr_input_options
@click.option("--fold", help="Train on this fold's training split of --folds (default: every query).")
@click.option("--epochs", type=click.IntRange(1, 1000), default=5, show_default=True)
@click.option("--lr", "learning_rate", type=float, default=0.1, show_default=True)
@click.option("--batch-size", type=click.IntRange(1, 1 << 20), default=256, show_default=True)
@click.option("--negatives", type=click.IntRange(1, 1000), default=64, show_default=True,
              help="Hard negatives per training query.")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True)
@click.option("--first-stage-rank", is_flag=True,
              help="Also learn a weight for the candidate's first-stage rank (1/log2(1+rank)), beyond MFTR's fields.")
@_artifact_options("<dataset>-<retriever>", "weights", "Print the artifact as JSON.")
@pass_app
def train_weights_command(
    app: AppContext,
    dataset_dirs: tuple[Path, ...],
    retriever: str,
    inputs: MFTRInputs,
    fold: str | None,
    epochs: int,
    learning_rate: float,
    batch_size: int,
    negatives: int,
    device: str,
    first_stage_rank: bool,
    name: str | None,
    out_dir: Path | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Learn MFTR field weights and the missing-parameter penalty on ToolRet DATASET_DIRS.

    Pairwise logistic loss, Adam (MFTR's recipe by default), torch on CUDA when present. Writes a
    versioned artifact (<out>/<name>/vNNN/weights.json) that `toolsift search --weights` loads; its
    field weights are also pushed into the first-stage query of every search that uses it.
    """
    from toolsift.cli._progress import progress_bars
    from toolsift.config import FIELDS
    from toolsift.encoders.embedding import load_embedder
    from toolsift.evaluation.mftr.train import train_weights
    from toolsift.ranker.mftr import FIELDS_AND_RANK
    from toolsift.ranker.training import TrainingConfig

    settings = app.settings()
    embedder = load_embedder(settings)
    with progress_bars(not quiet) as progress:
        artifact = train_weights(
            app.client(),
            settings,
            list(dataset_dirs),
            retriever=retriever,  # type: ignore[arg-type]
            embedder=embedder,
            inputs=inputs,
            fold=fold,
            training=TrainingConfig(epochs=epochs, learning_rate=learning_rate, batch_size=batch_size, device=device,
                                    features=FIELDS_AND_RANK if first_stage_rank else FIELDS),
            n_negatives=negatives,
            progress=progress,
        )
    root = out_dir or settings.data_dir / "weights"
    saved = artifact.save(root, name or f"{artifact.config['dataset']}-{retriever}")
    if as_json:
        emit_json({**saved.to_dict(), "path": str(saved.path)})
        return
    w = saved.weights
    click.echo(f"wrote {saved.path}")
    click.echo(table(
        ["kind", *w.features, "tau", "w_req", "w_opt"],
        [[k, *(round(w.field_weights[k][f], 4) for f in w.features), round(w.tau[k], 4), round(w.w_req[k], 4),
          round(w.w_opt[k], 4)] for k in w.kinds],
    ))
    click.echo(f"bias {w.bias:.4f} · {saved.config['pairs']} pairs · {saved.config['device']} · "
               f"losses {saved.config['epoch_losses']}")


@train.command("reranker")
@click.argument("dataset_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@retriever_option(default="minilm")
@mftr_input_options
@reranker_training_options(required=True)
@click.option("--fold", help="Train on this fold's training split of --folds (default: every query).")
@weights_option("MFTR weights whose ranking gives the hard negatives (default: learned here on the same queries).")
@_artifact_options("<dataset>-<kind>", "rerankers", "Print the artifact record as JSON.")
@pass_app
def train_reranker_command(
    app: AppContext,
    dataset_dirs: tuple[Path, ...],
    retriever: str,
    inputs: MFTRInputs,
    reranker: RerankerChoice,
    fold: str | None,
    weights_path: Path | None,
    name: str | None,
    out_dir: Path | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Train a cross-encoder or Tool-Rank (LoRA) reranker on ToolRet DATASET_DIRS, over MFTR's ranking.

    Pairs: each training query's relevant tools and MFTR's top wrong tools; 15% of the queries are
    held out to choose the fusion weight λ. CUDA when present. Writes a versioned artifact
    (<out>/<name>/vNNN/reranker.json + model/ or adapter/) that the `reranker` setting loads.
    """
    from toolsift.cli._progress import progress_bars
    from toolsift.encoders.embedding import load_embedder
    from toolsift.evaluation.mftr.train import train_reranker
    from toolsift.ranker.artifact import load_artifact
    from toolsift.ranker.reranker_artifact import save_reranker

    settings = app.settings()
    embedder = load_embedder(settings)
    with progress_bars(not quiet) as progress:
        fitted, record = train_reranker(
            app.client(),
            settings,
            list(dataset_dirs),
            retriever=retriever,  # type: ignore[arg-type]
            embedder=embedder,
            config=reranker.config,
            base_model=reranker.base_model,
            gguf_file=reranker.gguf_file,
            inputs=inputs,
            fold=fold,
            weights=load_artifact(weights_path) if weights_path else None,
            progress=progress,
        )
    root = out_dir or settings.data_dir / "rerankers"
    saved = save_reranker(
        fitted.outcome,
        root,
        name or f"{record['dataset']}-{reranker.config.kind}",
        base_model=reranker.base_model,
        gguf_file=reranker.gguf_file,
        fusion_weight=fitted.fusion_weight,
        rerank_top=reranker.config.rerank_top,
        config=record,
    )
    if as_json:
        emit_json({**saved.to_dict(), "path": str(saved.path)})
        return
    click.echo(f"wrote {saved.path}")
    click.echo(f"{saved.kind} · {record['pairs']} pairs ({record['positives']} relevant) · {record['device']} · "
               f"{record['train_seconds']} s · losses {record['epoch_losses']}")
    click.echo(f"fusion weight λ = {fitted.fusion_weight} (dev NDCG@10 by λ: {record['dev_ndcg@10']})")


@train.command("embedder")
@click.argument("pairs_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--split", default="train", show_default=True,
              help="Which split of the folder's splits.json trains ('all': every pair).")
@click.option("--base", "base_model", help="Model to fine-tune (default: the bundled all-MiniLM-L6-v2).")
@click.option("--epochs", type=click.IntRange(1, 100), default=1, show_default=True)
@click.option("--lr", "learning_rate", type=click.FloatRange(0, 1, min_open=True), default=2e-5, show_default=True)
@click.option("--batch-size", type=click.IntRange(2, 4096), default=32, show_default=True,
              help="Requests per step; each row's negatives are the batch's other tools and one hard negative.")
@click.option("--max-length", type=click.IntRange(16, 512), default=128, show_default=True,
              help="Tokens per text while training (the served model reads its own max_seq_length).")
@click.option("--limit", type=click.IntRange(1, None), help="Train on the first N requests only (a quick try).")
@click.option("--lora-rank", type=click.IntRange(0, 256), default=0, show_default=True,
              help="0 tunes every weight; r > 0 tunes LoRA adapters of rank r only (a few MB, shippable).")
@click.option("--seed", type=int, default=42, show_default=True)
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True)
@click.option("--name", default="tool-embed-minilm", show_default=True, help="Artifact name.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Artifact root (default: <data_dir>/embedders).")
@click.option("--ship", "ship_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Also write the adapter and its record as SHIP/<name> (encoders/models: the package's shipped "
                   "encoders; needs --lora-rank).")
@json_flag("Print the artifact record as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@pass_app
def train_embedder_command(
    app: AppContext,
    pairs_dir: Path,
    split: str,
    base_model: str | None,
    epochs: int,
    learning_rate: float,
    batch_size: int,
    max_length: int,
    limit: int | None,
    lora_rank: int,
    seed: int,
    device: str,
    name: str,
    out_dir: Path | None,
    ship_dir: Path | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Fine-tune the encoder as a tool retriever (Tool-Embed) on request -> tool pairs in PAIRS_DIR.

    PAIRS_DIR holds tools.jsonl and pairs.jsonl (and optionally splits.json), the shape of the shared
    training set. InfoNCE with in-batch and hard negatives; each tool is read as ingest reads it
    (its flat document or its description). Writes <out>/<name>/vNNN, a model folder that the
    embedding_model setting accepts; indices record its identity (<name>@<weights hash>).
    """
    from toolsift.cli._progress import progress_bars
    from toolsift.encoders.embedding import BUNDLED_MODEL, model_path
    from toolsift.encoders.encoder_artifact import save_embedder, ship_embedder
    from toolsift.encoders.encoder_pairs import load_training_pairs
    from toolsift.encoders.encoder_training import EmbedderTrainingConfig, train_embedder

    if ship_dir is not None and not lora_rank:
        raise click.UsageError("--ship needs --lora-rank (only an adapter is small enough to ship)")
    settings = app.settings()
    base = base_model or BUNDLED_MODEL
    pairs = load_training_pairs(pairs_dir)
    examples = pairs.examples(None if split == "all" else split, seed=seed, limit=limit)
    config = EmbedderTrainingConfig(epochs=epochs, learning_rate=learning_rate, batch_size=batch_size,
                                    max_length=max_length, seed=seed, device=device, lora_rank=lora_rank)
    with progress_bars(not quiet) as progress:
        outcome = train_embedder(model_path(base), examples, config, progress=progress)
    training = {"folder": str(pairs_dir), "sha256": pairs.sha256, "split": split, "limit": limit,
                "requests": len({e.query for e in examples}), "pairs": len(examples), "tools": len(pairs.tool_texts)}
    saved = save_embedder(outcome, out_dir or settings.data_dir / "embedders", name, base_model=base,
                          training=training, config=config.to_dict())
    assert saved.path is not None
    shipped = ship_embedder(saved.path.parent, ship_dir) if ship_dir is not None else None
    if as_json:
        emit_json({**saved.to_dict(), "path": str(saved.path.parent), "shipped": str(shipped) if shipped else None})
        return
    click.echo(f"wrote {saved.path.parent}" + (f" and {shipped}" if shipped else ""))
    click.echo(f"{saved.identity} · {len(examples)} pairs · {outcome.steps} steps · {outcome.device} · "
               f"{outcome.seconds:.0f} s · losses {[round(x, 4) for x in outcome.epoch_losses]}")
    click.echo(f"training data sha256 {pairs.sha256}")


def _weights_list(text: str | None, option: str) -> tuple[float, ...] | None:
    if text is None:
        return None
    try:
        values = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise click.BadParameter(f"{text!r}: give numbers separated by commas (0,0.3,0.9)", param_hint=option) from None
    if not values:
        raise click.BadParameter("give at least one value", param_hint=option)
    return values


@train.command("planner")
@click.argument("dataset_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--lexical-weights", default="0,0.3,0.6,0.9,1.2", show_default=True,
              help="The λ values measured (the whole request's words as a need), comma-separated.")
@click.option("--server-weights", help="The β values measured too, comma-separated (default: the index's β only).")
@click.option("--measure", type=click.Choice(["ndcg@10", "recall@10"]), default="ndcg@10", show_default=True,
              help="What half A chooses by.")
@click.option("--split", default="test", show_default=True, help="The benchmark split whose judged queries are used.")
@click.option("--name", help="Artifact name (default: <index>-planner).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Artifact root (default: <data_dir>/weights).")
@click.option("--push", is_flag=True, help="Make the chosen parameters the index's: every searcher plans with them.")
@json_flag("Print the calibration (and the artifact) as JSON.")
@pass_app
def train_planner_command(app: AppContext, dataset_dir: Path, lexical_weights: str, server_weights: str | None,
                          measure: str, split: str, name: str | None, out_dir: Path | None, push: bool,
                          as_json: bool) -> None:
    """Calibrate the multi-need search's λ (and β) on DATASET_DIR's judged queries over this index.

    DATASET_DIR is a benchmark folder whose catalog is in the index (--index): ToolRet, BEIR,
    LiveMCPBench, or a `bench catalog` folder's needles. Each value is measured as a search with it
    would rank the set's candidates (fetched once); the best mean --measure on half A (queries at
    even positions) is chosen, ties to the smaller λ, and half B (odd positions) is reported beside
    it. Writes a versioned weights artifact (the index's field weights, the chosen parameters);
    --push makes it the index's, as the workbench's push does.
    """
    from toolsift.encoders.embedding import load_embedder
    from toolsift.ranker.deploy import push_weights
    from toolsift.search import Searcher
    from toolsift.workbench.calibration import benchmark_query_set, calibrate_planner, save_calibration

    lambdas = _weights_list(lexical_weights, "--lexical-weights")
    betas = _weights_list(server_weights, "--server-weights")
    settings = app.settings()
    client = app.client()
    searcher = Searcher(client, settings, load_embedder(settings))
    query_set = benchmark_query_set(searcher, dataset_dir, split=split)
    calibration = calibrate_planner(searcher, query_set, lexical_weights=lambdas or (), server_weights=betas,
                                    measure=measure)
    saved = save_calibration(calibration, searcher, out_dir or settings.data_dir / "weights",
                             name or f"{settings.index}-planner")
    pushed = push_weights(client, settings.index, saved).to_dict() if push else None
    if as_json:
        emit_json({**calibration.to_dict(), "artifact": str(saved.path), "version": saved.version, "pushed": pushed})
        return

    def row(label: str, point: Any) -> list[Any]:
        p = point.params
        return [label, p.lexical_weight, p.server_weight, *(round(point.half_a[m], 4) for m in ("ndcg@10", "recall@10")),
                *(round(point.half_b[m], 4) for m in ("ndcg@10", "recall@10"))]

    a, b = calibration.queries
    click.echo(f"{query_set.name} on {settings.index}: {a} queries choose (half A), {b} report (half B)")
    click.echo(table(["", "λ", "β", "A NDCG@10", "A R@10", "B NDCG@10", "B R@10"],
                     [row("current", calibration.current),
                      *(row("chosen" if p == calibration.chosen else "", p) for p in calibration.points)]))
    click.echo(f"wrote {saved.path} ({saved.version})" + (f"; pushed to {pushed['index']}" if pushed else
                                                         f"; push it: toolsift train planner … --push, or the workbench"))
