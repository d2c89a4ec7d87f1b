"""``toolsift bench`` quality subcommands: the ingest screen and toolsift's LLM prompts against hostile tool
text, embedding models on every benchmark and learning from agents' feedback."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._output import table, write_figures, write_json
from toolsift.cli.options import json_file_option

__all__ = ["embedder_bench", "feedback", "prompts", "screen"]


@click.command("screen")
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
    write_figures(json_out, "bench-screen.json", figures)


@click.command("prompts")
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
    write_figures(json_out, "bench-prompts.json", figures)


@click.command("embedder")
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
    write_figures(json_out, "bench-embedder.json", figures)


@click.command("feedback")
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
