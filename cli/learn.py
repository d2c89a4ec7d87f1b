"""``toolsift learn``: learning from how agents use the tools."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._output import emit_json, table
from toolsift.cli.options import index_option, json_flag, retriever_option

if TYPE_CHECKING:
    from toolsift.learning.learner import GuardReport


def _benchmark_guard_options(benchmark_help: str, off_help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--benchmark`` (repeatable) → ``benchmarks`` and ``--no-benchmark-guard``: the benchmarks a learned
    candidate may not lose on, and turning that guard off."""

    def apply(f: Callable[..., Any]) -> Callable[..., Any]:
        f = click.option("--no-benchmark-guard", is_flag=True, help=off_help)(f)
        return click.option("--benchmark", "benchmarks", multiple=True,
                            type=click.Path(exists=True, file_okay=False, path_type=Path), help=benchmark_help)(f)

    return apply


@click.group()
def learn() -> None:
    """Learn from agents' feedback (successful calls against the tools shown and not called), behind a guard; A/B per tenant."""


def _echo_guard(guard: GuardReport) -> None:
    """The guard's comparison as a table, and its verdict."""
    rows: list[list[object]] = [["held-out feedback IPS-DCG (shown tools)", guard.held_out["current"],
                                 guard.held_out["candidate"]]]
    rows += [[f"{bench} NDCG@10", s["current"], s["candidate"]] for bench, s in guard.benchmarks.items()]
    moved = guard.plausibility
    if moved is not None:
        rows.append([f"logged searches with 3+ of their top-10 tools replaced (at most {moved.limit:.0%})", "-",
                     f"{moved.changed}/{moved.searches} ({moved.share:.0%}; {moved.mean_kept:.1f} of 10 kept)"
                     + (", forced" if moved.forced and moved.implausible else "")])
    click.echo(table(["guard", "current", "candidate"], rows))
    click.echo("guard passed" if guard.passed else "guard failed: " + "; ".join(guard.reasons))


@learn.command("weights")
@retriever_option(default="hybrid")
@click.option("--tenant", help="Only this tenant's feedback (default: every tenant's).")
@click.option("--holdout", type=click.FloatRange(0.05, 0.9), default=0.2, show_default=True,
              help="Share of the requests held out (by a hash of their id) for the guard.")
@_benchmark_guard_options(
    "A benchmark folder the candidate may not lose more than learn_benchmark_tolerance (0.005) NDCG@10 "
    "on; repeatable, besides those of the learn_benchmarks setting. The benchmark guard is on by default: with "
    "no benchmark named, learning is refused.",
    "Turn the benchmark guard off explicitly (the candidate is then judged on feedback alone).")
@click.option("--key-cap", type=click.IntRange(1), default=None,
              help="One key's feedback pairs weigh at most this much in all, inverse-propensity weights included "
                   "(default: the learn_key_cap setting, 50).")
@click.option("--min-keys", type=click.IntRange(1), default=None,
              help="Distinct keys the feedback must come from before anything is learned; no key weighs more than "
                   "1/min-keys of it (default: the learn_min_keys setting, 5).")
@click.option("--force", is_flag=True,
              help="Accept a candidate that changes more of the tenant's logged top-10s than learn_max_changed allows "
                   "(an admin's decision; the figure is still printed and recorded).")
@click.option("--tool-cap", type=click.IntRange(1), default=50, show_default=True,
              help="One tool's positive pairs weigh at most this much in all, over every key.")
@click.option("--eta", type=click.FloatRange(0, 3), default=1.0, show_default=True,
              help="Position bias: a tool at rank k is examined with propensity k^-eta (0: no correction).")
@click.option("--from-zero", is_flag=True,
              help="Learn from zero (MFTR's recipe on raw scores) instead of from the weights serving now.")
@click.option("--name", default="feedback", show_default=True, help="Artifact name.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Artifact root (default: <data_dir>/weights).")
@json_flag("Print the outcome as JSON.")
@pass_app
def learn_weights_command(app: AppContext, retriever: str, tenant: str | None, holdout: float,
                          benchmarks: tuple[Path, ...], no_benchmark_guard: bool, key_cap: int | None,
                          min_keys: int | None, force: bool, tool_cap: int, eta: float, from_zero: bool,
                          name: str, out_dir: Path | None, as_json: bool) -> None:
    """Learn MFTR field weights from the feedback index; compare them with what serves now.

    Pairs are confirmed by the query log, weighed for position bias and capped per key and per tool;
    feedback from fewer than --min-keys distinct keys is refused before anything is learned (exit 3).
    Training starts from the weights serving now (the fixed field weights, on their own scale, or the
    learned ones in use) and is pulled back to them, so little feedback moves little. The guard
    searches again: the candidate must beat the current ranking on held-out feedback, lose at most
    learn_benchmark_tolerance NDCG@10 on each benchmark, and replace 3 or more of the top-10 tools of
    at most learn_max_changed of the tenant's logged searches (unless --force). The candidate is written as a
    weights artifact either way; exit code 0 when the guard passed, 1 when it did not (nothing is
    promoted here).
    """
    from toolsift.encoders.embedding import load_embedder
    from toolsift.learning.learner import learn_weights
    from toolsift.learning.feedback_pairs import LearningPolicy

    settings = app.settings()
    policy = LearningPolicy(propensity_eta=eta, key_cap=settings.learn_key_cap if key_cap is None else key_cap,
                            tool_cap=tool_cap, min_keys=settings.learn_min_keys if min_keys is None else min_keys)
    outcome = learn_weights(app.client(), settings, load_embedder(settings), out_root=out_dir or settings.data_dir / "weights",
                            name=name, tenant=tenant, retriever=retriever,  # type: ignore[arg-type]
                            policy=policy, holdout=holdout, benchmarks=benchmarks,
                            benchmark_guard=not no_benchmark_guard, force=force, warm_start=not from_zero)
    guard = outcome.guard
    if as_json:
        emit_json({"artifact": str(outcome.artifact.path), "guard": guard.to_dict(), "feedback": outcome.feedback})
    else:
        click.echo(f"wrote {outcome.artifact.path}")
        f = outcome.feedback
        click.echo(f"feedback: {f['events']} events ({f['unconfirmed']} unconfirmed), {f['pairs']} pairs from "
                   f"{f['keys']} distinct keys, {f['training_queries']} training queries, "
                   f"{f['held_out_requests']} held-out requests")
        _echo_guard(guard)
    if not guard.passed:
        raise SystemExit(1)


@learn.command("reembed")
@click.argument("model")
@retriever_option(default="hybrid")
@_benchmark_guard_options(
    "A benchmark folder the new embedder may not lose more than learn_benchmark_tolerance (0.005) "
    "NDCG@10 on; repeatable, besides those of the learn_benchmarks setting. With none, re-embedding is refused "
    "unless --no-benchmark-guard.",
    "Turn the benchmark guard off explicitly (held-out feedback alone decides).")
@click.option("--holdout", type=click.FloatRange(0.05, 0.9), default=0.2, show_default=True,
              help="Share of the feedback's requests (by a hash of their id) the guard compares on.")
@click.option("--no-swap", is_flag=True, help="Build and guard only; the new version is discarded either way.")
@index_option("The index alias to re-embed (default: the configured one).")
@json_flag("Print the outcome as JSON.")
@pass_app
def reembed_command(app: AppContext, model: str, retriever: str, benchmarks: tuple[Path, ...],
                    no_benchmark_guard: bool, holdout: float, no_swap: bool, index_alias: str | None,
                    as_json: bool) -> None:
    """Re-embed the index with MODEL (a trained embedder's folder, say) into a new version; swap the alias
    only when the guard passes.

    Every stored document is embedded again (nothing is re-ingested). The guard compares the new
    version with the current one on each --benchmark (NDCG@10 may lose at most 0.005; with none named
    re-embedding is refused unless --no-benchmark-guard) and on held-out feedback from at least
    learn_min_keys distinct keys (IPS-DCG among the shown tools may not fall); with neither there is
    nothing to compare and it fails. A version not swapped in is deleted; after a swap the old one is kept. Serving processes
    must then load MODEL (the embedding_model setting): an index refuses queries from another model.
    Exit code 0 when the alias was swapped (or, with --no-swap, the guard passed), 1 otherwise.
    """
    from toolsift.cli._progress import progress_bars
    from toolsift.encoders.embedding import load_embedder
    from toolsift.learning.learner import reembed_guarded
    from toolsift.learning.feedback_pairs import LearningPolicy

    settings = app.settings()
    if index_alias:
        settings = settings.with_overrides(index=index_alias)
    current = load_embedder(settings)
    candidate = load_embedder(settings.with_overrides(embedding_model=model))
    with progress_bars(not as_json) as progress:
        outcome = reembed_guarded(app.client(), settings, current, candidate, retriever=retriever,  # type: ignore[arg-type]
                                  benchmarks=benchmarks, holdout=holdout, swap=not no_swap,
                                  benchmark_guard=not no_benchmark_guard,
                                  policy=LearningPolicy(key_cap=settings.learn_key_cap, min_keys=settings.learn_min_keys),
                                  progress=progress)
    guard = outcome.guard
    if as_json:
        emit_json(outcome.to_dict())
    else:
        b = outcome.built
        click.echo(f"{b.documents} documents of {b.source_index} embedded by {b.embedding_model} into {b.index} "
                   f"in {b.seconds} s")
        _echo_guard(guard)
        click.echo(f"alias {settings.index} -> {b.index}; set embedding_model = {model!r} where it is served"
                   if outcome.swapped else f"{b.index} discarded; alias {settings.index} unchanged")
    if not guard.passed:
        raise SystemExit(1)


@learn.group("ab")
def ab() -> None:
    """A/B tests of learned weights per tenant: start, report, promote, roll back."""


_tenant_option = click.option("--tenant", required=True, help="The tenant whose traffic is split.")


@ab.command("start")
@click.argument("weights", type=click.Path(exists=True, path_type=Path))
@_tenant_option
@click.option("--share", type=float, default=0.5, show_default=True,
              help="Share of the tenant's searches the candidate ranks, in (0, 1), picked by each request id keyed with a "
                   "secret made now and kept with the experiment (clients cannot tell their arm).")
@index_option("The index alias the tenant searches (default: the configured one).")
@pass_app
def ab_start(app: AppContext, weights: Path, tenant: str, share: float, index_alias: str | None) -> None:
    """Send --share of --tenant's searches to the candidate WEIGHTS (a `toolsift learn weights` output).

    Only a candidate whose guard passed may serve traffic. The other tenants of the index, and the rest
    of this one's searches, rank as before; every search service of the index follows within
    weights_check_interval seconds.
    """
    from toolsift.ranker.artifact import load_artifact
    from toolsift.learning.experiments import start_experiment

    settings = app.settings(index=index_alias)
    started = start_experiment(app.client(), settings.index, tenant, load_artifact(weights), share)
    click.echo(f"tenant {tenant!r} on {settings.index}: {started.share:.0%} of searches ranked by "
               f"{started.candidate.version} since {started.started_at}")


@ab.command("report")
@_tenant_option
@index_option("The index alias the tenant searches (default: the configured one).")
@click.option("--alpha", type=click.FloatRange(0.0001, 0.5), default=0.05, show_default=True,
              help="Significance level of the verdict.")
@json_flag("Print the report as JSON.")
@pass_app
def ab_report_command(app: AppContext, tenant: str, index_alias: str | None, alpha: float, as_json: bool) -> None:
    """Compare the arms of --tenant's test: answers, success rate, MRR of the first successful tool, p-values.

    The verdict compares the arms key by key (each key weighs once) and calls a winner only when it
    rests on at least ab_min_keys distinct keys; the report says how many it rests on.
    """
    from toolsift.learning.experiments import experiment_of
    from toolsift.learning.ab_report import ab_report

    settings = app.settings(index=index_alias)
    client = app.client()
    report = ab_report(client, settings, experiment_of(client, settings.index, tenant), alpha=alpha)
    if as_json:
        emit_json(report.to_dict())
        return
    click.echo(f"tenant {tenant!r}: candidate {report.candidate_version} ({report.state}, share {report.share:g}) "
               f"since {report.started_at}")
    rows = [[arm, f.weights_version, f.keys, f.answers, f.reported, f.success_rate, f.mrr, f.success_at_5]
            for arm, f in report.arms.items()]
    click.echo(table(["arm", "weights", "keys", "answers", "reported", "success rate", "MRR", "success@5"], rows))
    click.echo(f"per key ({report.keys} distinct keys, each weighing once; a verdict needs {report.min_keys}): "
               f"success rate {report.success_rate_diff:+.4f} (p {report.success_rate_p}), "
               f"MRR {report.mrr_diff:+.4f} (p {report.mrr_p}): {report.verdict}")


def _ab_ending(name: Literal["promote", "rollback"], done: str, help: str) -> click.Command:  # noqa: A002
    """``toolsift learn ab NAME``: end --tenant's test one way (the experiments' function ``name``) and say
    ``done`` with the candidate's version."""

    @ab.command(name, help=help)
    @_tenant_option
    @index_option("The index alias the tenant searches (default: the configured one).")
    @pass_app
    def command(app: AppContext, tenant: str, index_alias: str | None) -> None:
        from toolsift.learning.experiments import promote, rollback

        settings = app.settings(index=index_alias)
        ended = (promote if name == "promote" else rollback)(app.client(), settings.index, tenant)
        click.echo(f"tenant {tenant!r} on {settings.index}: {done} {ended.candidate.version}")

    return command


ab_promote = _ab_ending("promote", "promoted", "Give --tenant's candidate all of its traffic (until a rollback).")
ab_rollback = _ab_ending("rollback", "rolled back",
                         "End --tenant's test (or promotion): it ranks as the index's other tenants do again.")
