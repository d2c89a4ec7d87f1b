"""``toolsift learn``: learning from how agents use the tools."""

from __future__ import annotations

from pathlib import Path

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._output import emit_json, table
from toolsift.cli.options import json_flag, retriever_option


@click.group()
def learn() -> None:
    """Learn from agents' feedback (successful calls against the tools passed over), behind a guard."""


@learn.command("weights")
@retriever_option(default="hybrid")
@click.option("--tenant", help="Only this tenant's feedback (default: every tenant's).")
@click.option("--holdout", type=click.FloatRange(0.05, 0.9), default=0.2, show_default=True,
              help="Share of the requests held out (by a hash of their id) for the guard.")
@click.option("--benchmark", "benchmarks", multiple=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A benchmark folder the candidate may not lose more than 0.005 NDCG@10 on; repeatable.")
@click.option("--key-cap", type=click.IntRange(1), default=50, show_default=True,
              help="One key's feedback weighs at most this many requests' worth.")
@click.option("--tool-cap", type=click.IntRange(1), default=50, show_default=True,
              help="One tool's positives weigh at most this many requests' worth, over every key.")
@click.option("--eta", type=click.FloatRange(0, 3), default=1.0, show_default=True,
              help="Position bias: a tool at rank k is examined with propensity k^-eta (0: no correction).")
@click.option("--name", default="feedback", show_default=True, help="Artifact name.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Artifact root (default: <data_dir>/weights).")
@json_flag("Print the outcome as JSON.")
@pass_app
def learn_weights_command(app: AppContext, retriever: str, tenant: str | None, holdout: float,
                          benchmarks: tuple[Path, ...], key_cap: int, tool_cap: int, eta: float, name: str,
                          out_dir: Path | None, as_json: bool) -> None:
    """Learn MFTR field weights from the feedback index; compare them with what serves now.

    Pairs are confirmed by the query log, weighed for position bias and capped per key and per tool.
    The guard searches again: the candidate must beat the current ranking on held-out feedback and lose
    at most 0.005 NDCG@10 on each --benchmark. The candidate is written as a weights artifact either
    way; exit code 0 when the guard passed, 1 when it did not (nothing is promoted here).
    """
    from toolsift.embedding import load_embedder
    from toolsift.evaluation.learn import learn_weights
    from toolsift.ranker.feedback_pairs import LearningPolicy

    settings = app.settings()
    outcome = learn_weights(app.client(), settings, load_embedder(settings), out_root=out_dir or settings.data_dir / "weights",
                            name=name, tenant=tenant, retriever=retriever,  # type: ignore[arg-type]
                            policy=LearningPolicy(propensity_eta=eta, key_cap=key_cap, tool_cap=tool_cap),
                            holdout=holdout, benchmarks=benchmarks)
    guard = outcome.guard
    if as_json:
        emit_json({"artifact": str(outcome.artifact.path), "guard": guard.to_dict(), "feedback": outcome.feedback})
    else:
        click.echo(f"wrote {outcome.artifact.path}")
        f = outcome.feedback
        click.echo(f"feedback: {f['events']} events ({f['unconfirmed']} unconfirmed), {f['pairs']} pairs, "
                   f"{f['training_queries']} training queries, {f['held_out_requests']} held-out requests")
        rows = [["held-out feedback NDCG@10", guard.held_out["current"], guard.held_out["candidate"]]]
        rows += [[f"{bench} NDCG@10", s["current"], s["candidate"]] for bench, s in guard.benchmarks.items()]
        click.echo(table(["guard", "current", "candidate"], rows))
        click.echo("guard passed" if guard.passed else "guard failed: " + "; ".join(guard.reasons))
    if not guard.passed:
        raise SystemExit(1)
