"""``toolsift eval``: one subcommand per kind of evaluation (tools, mftr, agents, requests, sets).

A command line from before the subcommands (``toolsift eval DIR --method mftr …``) still runs the
subcommand its flags name (:class:`EvalGroup`, :func:`legacy_args`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._mftr_inputs import mftr_input_options
from toolsift.cli._reranker_options import RerankerChoice, reranker_training_options
from toolsift.cli._output import markdown_table, table, write_json
from toolsift.cli.options import json_file_option, retriever_option

__all__ = ["eval_command", "EvalGroup", "legacy_args", "render_mftr", "render_agents", "render_requests"]

if TYPE_CHECKING:
    from toolsift.config import Settings
    from toolsift.encoders.embedding import Embedder
    from toolsift.evaluation.evalruns import EvalRunRow
    from toolsift.evaluation.mftr.inputs import MFTRInputs



class EvalGroup(click.Group):
    """``toolsift eval``'s group: a command line from before the subcommands (``toolsift eval DIR --method
    mftr``, ``--level agent``, ``--level request``, ``--set``) is read as the subcommand its flags name."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = legacy_args(args)
        return super().parse_args(ctx, args)


def legacy_args(args: Sequence[str]) -> list[str]:
    """The subcommand line of a pre-subcommand ``toolsift eval`` line: ``--set`` → ``sets``, ``--level
    request`` → ``requests``, ``--level agent`` → ``agents``, ``--method mftr`` → ``mftr``, else ``tools``
    (the flags that chose it removed; every other argument kept, in order)."""
    rest: list[str] = []
    level, method, sets = "tool", None, False
    items = iter(args)
    for arg in items:
        name, _, inline = arg.partition("=")
        if arg == "--set":
            sets = True
        elif name in ("--level", "--method"):
            value = inline if inline else next(items, "")
            if name == "--level":
                level = value
            elif value == "mftr":
                method = value
            else:
                rest += ["--method", value]
        else:
            rest.append(arg)
    if level not in ("tool", "agent", "request"):
        raise click.BadParameter(f"{level!r} is not one of 'tool', 'agent', 'request'", param_hint="'--level'")
    kind = ("sets" if sets else "requests" if level == "request" else "agents" if level == "agent"
            else "mftr" if method == "mftr" else "tools")
    return [kind, *rest]


def _run_options(f: Any) -> Any:
    """What every evaluation takes: --json, --no-record, --quiet."""
    f = click.option("--quiet", "-q", is_flag=True, help="No progress bar.")(f)
    f = click.option("--no-record", is_flag=True,
                     help="Do not record this run in eval_runs_index (recorded by default: one document per "
                          "table row).")(f)
    return json_file_option("Write the result as JSON here.")(f)


_ONE_DIR = click.argument("dataset_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))


@click.group("eval", cls=EvalGroup)
def eval_command() -> None:
    """Evaluate retrieval on a benchmark folder (e.g. ../shared/datasets/toolret/apibank).

    Each benchmark is ingested into an index of its own (reused while unchanged). Every run is
    recorded in the eval_runs_index setting's index (one document per table row, for metrics over
    time) unless --no-record or eval_runs = false.

    The command lines from before these subcommands still work: `toolsift eval DIR [--method M]` is
    `eval tools`, `--method mftr` is `eval mftr`, `--level agent` is `eval agents`, `--level request`
    is `eval requests` and `--set` is `eval sets`.
    """


@eval_command.command("tools", short_help="Tool retrieval on a benchmark: NDCG, recall, completeness.")
@_ONE_DIR
@click.option("--method", type=click.Choice(["multi-field", "full-doc"]), default="multi-field", show_default=True,
              help="multi-field: one field per part of the documentation; full-doc: the whole as one text.")
@retriever_option(default="bm25")
@click.option("--split", default="test", show_default=True, help="Qrels split for BEIR folders.")
@click.option("--depth", type=click.IntRange(10, 1000), default=100, show_default=True, help="Tools returned per query.")
@_run_options
@pass_app
def eval_tools(app: AppContext, dataset_dir: Path, method: str, retriever: str, split: str, depth: int,
               json_out: Path | None, no_record: bool, quiet: bool) -> None:
    """Tool retrieval: every query of DATASET_DIR, NDCG@10, Recall@10, Completeness@10, NDCG@5 and
    Recall@5 (binary relevance)."""
    from toolsift.cli._progress import progress_bars
    from toolsift.evaluation import evalruns
    from toolsift.evaluation.runner import run_eval

    settings, embedder, started = _start(app)
    with progress_bars(not quiet) as progress:
        result = run_eval(app.client(), settings, dataset_dir, method=method,  # type: ignore[arg-type]
                          retriever=retriever, embedder=embedder, depth=depth, split=split,  # type: ignore[arg-type]
                          progress=lambda done, total: progress("queries", done, total))
    metrics = result.metrics
    click.echo(table(
        ["dataset", "method", "retriever", "queries", *metrics.keys(), "p50 ms"],
        [[result.dataset, result.method, result.retriever, result.n_queries, *metrics.values(),
          result.latency_ms.get("p50", "")]],
    ))
    _finish(app, settings, json_out, result.to_dict(),
            evalruns.tool_eval_rows(result, (dataset_dir,), duration_s=time.perf_counter() - started), skip=no_record)


@eval_command.command("mftr", short_help="MFTR's 5-fold protocol: learned weights, Table 3's ablations.")
@click.argument("dataset_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@retriever_option(default="bm25")
@click.option("--depth", type=click.IntRange(10, 1000), default=100, show_default=True, help="Tools returned per query.")
@mftr_input_options
@click.option("--ablations/--no-ablations", default=True, show_default=True,
              help="Every row of Table 3 (without: Full-Doc, Weighting Only [no LLM] and MFTR).")
@click.option("--extensions/--no-extensions", default=False, show_default=True,
              help="Also the rows beyond the paper (first-stage rank as a learned feature; ToolRet's task "
                   "instruction as one more tool need), marked with +.")
@reranker_training_options(required=False)
@_run_options
@pass_app
def eval_mftr(app: AppContext, dataset_dirs: tuple[Path, ...], retriever: str, depth: int, inputs: MFTRInputs,
              ablations: bool, extensions: bool, reranker: RerankerChoice | None, json_out: Path | None,
              no_record: bool, quiet: bool) -> None:
    """MFTR's protocol on ToolRet folders: 5-fold cross-validation, weights learned on each training
    split, Table 3's ablation rows beside the paper's NDCG@10, the learned field weights (Table 5),
    and the first stage's recall with and without the learned weights pushed into it.

    Several folders make the mixed benchmark (one index, one query set). --reranker adds "MFTR +
    <reranker>": per fold a reranker trained on the training queries over that fold's MFTR ranking,
    its fusion weight chosen on a dev slice of them, with the ranking cost in ms/query beside every
    learned row.
    """
    from toolsift.cli._progress import progress_bars
    from toolsift.evaluation import evalruns
    from toolsift.evaluation.mftr.eval import run_mftr_eval

    settings, embedder, started = _start(app)
    with progress_bars(not quiet) as progress:
        mftr = run_mftr_eval(
            app.client(), settings, list(dataset_dirs), retriever=retriever,  # type: ignore[arg-type]
            embedder=embedder, inputs=inputs, ablations=ablations, extensions=extensions, depth=depth,
            reranker=reranker.config if reranker else None,
            reranker_base=reranker.base_model if reranker else None,
            reranker_gguf=reranker.gguf_file if reranker else None,
            progress=progress,
        )
    click.echo(render_mftr(mftr.to_dict()))
    _finish(app, settings, json_out, mftr.to_dict(),
            evalruns.mftr_eval_rows(mftr, dataset_dirs, duration_s=time.perf_counter() - started), skip=no_record)


@eval_command.command("agents", short_help="Tool-to-Agent retrieval scored at agent level (LiveMCPBench).")
@_ONE_DIR
@retriever_option(default="bm25")
@click.option("--limit", type=click.IntRange(1), help="Only the first N tasks (a quick slice).")
@_run_options
@pass_app
def eval_agents(app: AppContext, dataset_dir: Path, retriever: str, limit: int | None, json_out: Path | None,
                no_record: bool, quiet: bool) -> None:
    """Tool-to-Agent retrieval scored at agent level on a LiveMCPBench folder: recall, mAP and nDCG
    at 1/3/5 against each task's gold servers, step-wise over the annotated steps with --retriever's
    first stage as the main row, beside the reciprocal-rank merge, the whole question, toolsift's own
    decomposition, an agent-only index and the other retrievers."""
    from toolsift.cli._progress import progress_bars
    from toolsift.evaluation import evalruns
    from toolsift.agents.agent_eval import run_agent_eval

    settings, embedder, started = _start(app)
    with progress_bars(not quiet) as progress:
        agents = run_agent_eval(app.client(), settings, dataset_dir, retriever=retriever,  # type: ignore[arg-type]
                                embedder=embedder, limit=limit, progress=progress)
    click.echo(render_agents(agents.to_dict()))
    _finish(app, settings, json_out, agents.to_dict(),
            evalruns.agent_eval_rows(agents, (dataset_dir,), duration_s=time.perf_counter() - started), skip=no_record)


@eval_command.command("requests", short_help="Whole requests through MCP beside a BM25 peer (LiveMCPBench).")
@_ONE_DIR
@click.option("--limit", type=click.IntRange(1), help="Only the first N tasks (a quick slice).")
@click.option("--no-peer", is_flag=True, help="Leave out the FastMCP peer row.")
@click.option("--llm-rewrite", is_flag=True,
              help="Add a row rewritten by the configured LLM (llm_base_url; answers cached).")
@click.option("--save-rewrites", type=click.Path(file_okay=False, path_type=Path),
              help="--llm-rewrite: write the rewrites here as evaluation data (toolsift cache import reads it).")
@_run_options
@pass_app
def eval_requests(app: AppContext, dataset_dir: Path, limit: int | None, no_peer: bool, llm_rewrite: bool,
                  save_rewrites: Path | None, json_out: Path | None, no_record: bool, quiet: bool) -> None:
    """Whole requests, as agents send them: each LiveMCPBench question through `toolsift serve mcp`
    (search_tools) and in-process, beside FastMCP's BM25 search_tools over MCP (the peer, with the
    bench extra): tool R@5/R@10 by name, agent R@5/nDCG@5, p50/p95, on all tasks and each half."""
    from toolsift.cli._progress import progress_bars
    from toolsift.evaluation import evalruns
    from toolsift.evaluation.request_eval import run_request_eval, save_rewrites as save

    if save_rewrites is not None and not llm_rewrite:
        raise click.UsageError("--save-rewrites saves the --llm-rewrite row's rewrites: add --llm-rewrite")
    settings, embedder, started = _start(app)
    with progress_bars(not quiet) as progress:
        requests = run_request_eval(app.client(), settings, dataset_dir, embedder=embedder, limit=limit,
                                    peer=not no_peer, llm_rewrite=llm_rewrite, progress=progress)
    click.echo(render_requests(requests.to_dict()))
    if save_rewrites is not None:
        saved = save(settings, dataset_dir, save_rewrites, limit=limit)
        click.echo(f"saved {saved['rewrites']} rewrite(s) by {saved['model']} to {save_rewrites}")
    _finish(app, settings, json_out, requests.to_dict(),
            evalruns.request_eval_rows(requests, (dataset_dir,), duration_s=time.perf_counter() - started),
            skip=no_record)


@eval_command.command("sets", short_help="Precise tool sets (PTR): TRACC and the set measures.")
@_ONE_DIR
@click.option("--no-history", is_flag=True, help="Use nothing from the train split (cold start).")
@_run_options
@pass_app
def eval_sets(app: AppContext, dataset_dir: Path, no_history: bool, json_out: Path | None, no_record: bool,
              quiet: bool) -> None:
    """Tool *sets* (PTR) on a BEIR folder with qrels/train.tsv and qrels/test.tsv: TRACC, recall@gt,
    ndcg@gt, set-size error (K = the gold set's size), with the reference rows (nearest training
    query's set, dense top-3, dense top-|gold| as an oracle)."""
    from toolsift.cli._progress import progress_bars
    from toolsift.evaluation import evalruns
    from toolsift.sets.set_eval import SET_MEASURES, run_set_eval

    settings, embedder, started = _start(app)
    with progress_bars(not quiet) as progress:
        sets = run_set_eval(app.client(), settings, dataset_dir, embedder=embedder, no_history=no_history,
                            progress=progress)
    click.echo(f"## {sets.dataset} · sets · {sets.retriever} · {sets.n_queries} test queries")
    click.echo(markdown_table(["row", *SET_MEASURES, "history", "note"], [
        [r.name, *(f"{r.metrics[m]:.4f}" for m in SET_MEASURES), "yes" if r.uses_history else "no",
         ("oracle: " if r.oracle else "") + r.note] for r in sets.rows
    ]))
    history = sets.protocol.get("history")
    if history:
        click.echo(f"history: {history['source']}, {history['bundles']} bundles, {history['past_queries']} past "
                   f"queries; calibrated on {history['calibration']['held_out_queries']} held-out training "
                   f"queries (TRACC {history['calibration'].get('tracc', '–')}): "
                   + ", ".join(f"{k} {v}" for k, v in history["calibrated"].items()))
    _finish(app, settings, json_out, sets.to_dict(),
            evalruns.set_eval_rows(sets, (dataset_dir,), duration_s=time.perf_counter() - started), skip=no_record)


def _start(app: AppContext) -> tuple[Settings, Embedder, float]:
    from toolsift.encoders.embedding import load_embedder

    settings = app.settings()
    return settings, load_embedder(settings), time.perf_counter()


def _finish(app: AppContext, settings: Settings, json_out: Path | None, data: dict[str, Any],
            rows: Sequence[EvalRunRow], *, skip: bool) -> None:
    """Write the run's JSON (``--json``), then record its rows in eval_runs_index unless ``skip``
    (--no-record) or the eval_runs setting is off. Recording is best effort: a failure is a warning."""
    if json_out:
        write_json(json_out, data)
        click.echo(f"wrote {json_out}", err=True)
    if skip or not settings.eval_runs:
        return
    from toolsift.evaluation.evalruns import EvalRunLog

    log = EvalRunLog.open(app.client(), settings)
    run_id = log.record(rows, source="cli")
    if run_id is not None:
        click.echo(f"recorded as eval run {run_id} in {log.index}", err=True)


def render_requests(result: dict[str, Any]) -> str:
    """The whole-request evaluation as markdown: every row on all tasks, then the halves, then the protocol."""
    from toolsift.evaluation.request_eval import REQUEST_MEASURES

    rows = result["rows"]
    lines = [f"## {result['dataset']} · whole requests · {result['n_tasks']} tasks · top 10", ""]
    lines.append(markdown_table(["system", "via", *REQUEST_MEASURES, "p50 ms", "p95 ms"], [
        [("**" + r["name"] + "**") if r["main"] else r["name"], r["via"],
         *(f"{r['metrics'][m]:.4f}" for m in REQUEST_MEASURES), f"{r['latency_ms'].get('p50', 0):.1f}",
         f"{r['latency_ms'].get('p95', 0):.1f}"] for r in rows]))
    lines += ["", "Halves (A: calibration, B: held out):", ""]
    lines.append(markdown_table(["system", *(f"A {m}" for m in REQUEST_MEASURES), *(f"B {m}" for m in REQUEST_MEASURES)], [
        [r["name"], *(f"{r['half_a'][m]:.4f}" for m in REQUEST_MEASURES), *(f"{r['half_b'][m]:.4f}" for m in REQUEST_MEASURES)]
        for r in rows]))
    if all(r.get("chinese") for r in rows):
        lines += ["", "Tasks with a gold tool described in Chinese:", ""]
        lines.append(markdown_table(["system", *REQUEST_MEASURES], [
            [r["name"], *(f"{r['chinese'][m]:.3f}" for m in REQUEST_MEASURES)] for r in rows]))
    lines += ["", "Protocol:"] + [f"- {k}: {v}" for k, v in result["protocol"].items()]
    return "\n".join(lines)


def render_agents(result: dict[str, Any]) -> str:
    """The agent-level evaluation as markdown: one row per method, then the protocol in words."""
    from toolsift.agents.agent_eval import AGENT_MEASURES

    protocol = result["protocol"]
    lines = [f"## {result['dataset']} · agent level · {result['embedding_model']} · {result['n_queries']} tasks", ""]
    lines.append(markdown_table(["row", *AGENT_MEASURES], [
        [row["row"], *(f"{row['metrics'][m]:.4f}" for m in AGENT_MEASURES)] for row in result["rows"]
    ]))
    paper = protocol["paper_minilm"]
    lines += [
        "",
        f"paper (all-MiniLM-L6-v2, its protocol): recall@5 {paper['recall@5']:.2f}, ndcg@5 {paper['ndcg@5']:.2f}, "
        f"map@5 {paper['map@5']:.2f}",
        f"Algorithm 1: N = {protocol['algorithm_1']['N']} entities per step, K = {protocol['algorithm_1']['K']} agents",
        f"merge: {protocol['merge']['max']}",
        f"steps: {protocol['steps']}",
        f"unknown tool names: {protocol['unknown_tool_names']}",
        f"ambiguous tool names: {protocol['ambiguous_tool_names']}",
        f"own decomposition: {protocol['own_decomposition']}",
    ]
    return "\n".join(lines)


def render_mftr(result: dict[str, Any]) -> str:
    """The MFTR evaluation as markdown: the ablation table, Table 5's weights, the first stage."""
    measures = ["ndcg@5", "ndcg@10", "recall@5", "recall@10", "completeness@5", "completeness@10"]
    lines = [f"## {result['dataset']} · {result['retriever']} · {result['n_queries']} queries · "
             f"{result['protocol']['n_folds']}-fold", ""]
    rows = []
    for row in result["ablations"]:
        paper = row["paper_ndcg@10"]
        delta = f"{row['metrics']['ndcg@10'] - paper:+.4f}" if paper is not None else ""
        cost = row.get("ms_per_query")
        rows.append([f"+ {row['row']}" if row.get("beyond_paper") else row["row"], *(f"{row['metrics'][m]:.4f}" for m in measures),
                     f"{paper:.4f}" if paper is not None else "–", delta, f"{cost:.1f}" if cost is not None else "–"])
    lines.append(markdown_table(["row", *measures, "paper ndcg@10", "Δ", "rank ms/query"], rows))
    rr = (result.get("protocol") or {}).get("reranker")
    if rr:
        weights = ", ".join(f"{f['fusion_weight']:.1f}" for f in rr["folds"])
        lines += ["", f"Reranker {rr['kind']} from {Path(str(rr['base_model'])).name} (top {rr['training']['rerank_top']}): "
                      f"λ per fold {weights}; training {sum(f['train_seconds'] for f in rr['folds']):.0f} s on "
                      f"{rr['folds'][0]['device']}, {sum(f['pairs'] for f in rr['folds'])} pairs"]
    for row_name, report in result.get("weights", {}).items():
        if row_name != "MFTR":
            continue
        lines += ["", "Learned field weights (share of Σ|w|, mean over folds; MFTR Table 5):"]
        for kind, shares in report["field_shares"].items():
            vec = report["paper_vector_mean"][kind]
            lines.append(f"  {kind}: " + ", ".join(f"{f} {100 * v:.1f}%" for f, v in shares.items())
                         + f"   w = {vec}")
    fs = result.get("first_stage") or {}
    if fs:
        lines += ["", f"First stage {fs['measure']}: default weights {fs['default_weights']:.4f}, "
                      f"learned weights pushed down {fs['learned_weights']:.4f}"]
    return "\n".join(lines)
