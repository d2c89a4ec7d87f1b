"""``toolsift bench feedback``: how ranking moves as agents' feedback accumulates — simulated agents
through the real search API, learning behind the guard, and an adversary.

1. The benchmark's tools are indexed (its evaluation index) and ``toolsift serve api`` is started on
   it as a user starts it, with a query log and a feedback index of the run's own and API keys for
   ``agents`` honest agents (tenant ``sim``) and one spammer (tenant ``evil``).
2. **Simulated agents** replay the benchmark's *training* queries through ``POST /v1/search`` (top
   10) and report what they called through ``POST /v1/feedback`` (:class:`AgentModel`): an agent
   reads the answer from the top and examines the tool at rank k with probability k^-``examine_eta``
   (position bias); an examined gold tool is called and works with probability ``success``; with
   probability ``wrong_call`` it also calls one examined wrong tool, which "works" with probability
   ``wrong_success`` (noise); with probability ``no_call`` it reports nothing. An *event* is one
   feedback report.
3. At each checkpoint (0, 100, 1,000, 10,000 events) :func:`~toolsift.learning.learner.learn_weights`
   learns field weights from the honest tenant's feedback so far (from the fixed weights that serve,
   unless ``warm_start`` is off) and guards them on held-out
   feedback and on ``guard_benchmarks`` (other benchmarks: the test queries are never used to learn
   or to guard); the candidate is then measured on
   a seeded sample of the benchmark's *test* queries (multi-field, hybrid) against the fixed field
   weights that served the agents.
4. **The adversarial run**, after the checkpoint ``adversary_at``: the spammer sends as many reports
   as the honest agents had, each "calling" the *last* tool of its answer successfully, and each report
   ``spam_repeats`` times (the API stores it once). Weights are learned from everyone's feedback with
   the default influence bounds (the key cap ``key_cap``, no key over 1 / ``learn_min_keys`` of the
   weight) and with none (no cap, no key minimum: the old behaviour), and both are measured on the
   test queries like the honest candidate of that checkpoint. **One key, many events**: weights are
   then learned from the spammer's own tenant, where it is the only key — refused by default (fewer
   than ``learn_min_keys`` distinct keys) — and once more with the key minimum off, to show what the
   rest of the guard (plausibility, benchmarks) does with it.

5. **The A/B test** (``ab_events``): the latest candidate whose guard passed serves half of the honest
   tenant's searches (:mod:`toolsift.learning.experiments`, split by request id inside the API) while
   the agents send ``ab_events`` more reports; :func:`toolsift.learning.ab_report.ab_report` compares the arms.
   With no candidate past the guard nothing is tested (a note says so).

Every figure is also recorded as an eval run (query set ``<benchmark>-feedback``), so the
workbench's metrics page shows the curve; :func:`plot_curve` draws it as a PNG.
"""

from __future__ import annotations

import random
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
from opensearchpy import OpenSearch

from toolsift.access import hash_key, new_key
from toolsift.config import Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import ConfigError
from toolsift.evaluation.evalruns import EvalRunLog, EvalRunRow
from toolsift.learning.learner import learn_weights
from toolsift.bench.load import free_port, serving, service_command
from toolsift.evaluation.metrics import evaluate
from toolsift.evaluation.runner import ensure_eval_index, eval_index_name, ranked_run
from toolsift.ingest.benchmarks import Benchmark, load_benchmark
from toolsift.ranker.artifact import WeightsArtifact
from toolsift.learning.feedback_pairs import LearningPolicy, TooFewKeysError
from toolsift.search import Searcher

__all__ = ["AgentModel", "CurvePoint", "AdversarialRun", "FeedbackCurve", "run_feedback_curve", "plot_curve",
           "MEASURES"]

MEASURES = ("ndcg@10", "recall@5")
#: A cap no key reaches: the adversarial run's "no cap" arm.
_NO_CAP = 10**9


@dataclass(frozen=True)
class AgentModel:
    """How a simulated agent treats an answer (module docstring, step 2)."""

    examine_eta: float = 0.7
    success: float = 0.9
    wrong_call: float = 0.15
    wrong_success: float = 0.3
    no_call: float = 0.2

    def calls(self, shown: Sequence[str], gold: set[str], rng: random.Random) -> list[dict[str, Any]]:
        """The calls one agent reports on an answer (empty: it reports nothing)."""
        if rng.random() < self.no_call:
            return []
        examined = [(k, tool) for k, tool in enumerate(shown, 1) if rng.random() < k ** -self.examine_eta]
        calls = [{"tool_id": tool, "called": True, "success": rng.random() < self.success}
                 for _, tool in examined if tool in gold]
        wrong = [tool for _, tool in examined if tool not in gold]
        if wrong and rng.random() < self.wrong_call:
            calls.append({"tool_id": rng.choice(wrong), "called": True, "success": rng.random() < self.wrong_success})
        return calls


@dataclass(frozen=True)
class CurvePoint:
    """The test queries' figures after ``events`` feedback reports."""

    events: int
    requests: int
    fixed: dict[str, float]
    candidate: dict[str, float] | None
    guard_passed: bool | None
    held_out: dict[str, float] | None
    pairs: int
    learn_seconds: float
    #: Share of the tenant's logged searches with 3+ of their top-10 tools replaced by the candidate (plausibility).
    changed: float | None = None
    #: Why nothing was learned at this checkpoint (too few distinct keys), if so.
    refused: str | None = None
    #: Tools of the current top 10 the candidate keeps there, on average over those searches.
    kept: float | None = None

    @property
    def served(self) -> dict[str, float]:
        """What agents would get: the candidate once its guard passed, else the fixed weights."""
        return self.candidate if self.guard_passed and self.candidate is not None else self.fixed


@dataclass(frozen=True)
class OneKeyRun:
    """Weights learned from one key's feedback alone (its own tenant): refused, or what the guard said."""

    events: int
    stored: int
    keys: int
    min_keys: int
    refused: str | None
    figures: dict[str, float] | None = None
    guard_passed: bool | None = None
    reasons: tuple[str, ...] = ()
    changed: float | None = None


@dataclass(frozen=True)
class AdversarialRun:
    """A spammer's reports beside ``honest_events`` honest ones, learned with and without the influence
    bounds, and from the spammer's feedback alone."""

    honest_events: int
    spam_events: int
    key_cap: int
    spammer_scale: float
    honest_only: dict[str, float] | None
    capped: dict[str, float]
    uncapped: dict[str, float]
    capped_guard_passed: bool
    uncapped_guard_passed: bool
    #: reports the spammer sent (each ``spam_repeats`` times) and how many the API stored
    spam_sent: int = 0
    spam_stored: int = 0
    min_keys: int = 0
    capped_reasons: tuple[str, ...] = ()
    uncapped_reasons: tuple[str, ...] = ()
    #: one key, many events: its own tenant's feedback, with the default key minimum and with it off
    one_key: OneKeyRun | None = None
    one_key_no_minimum: OneKeyRun | None = None


@dataclass(frozen=True)
class FeedbackCurve:
    """The whole run: its setup, the curve and the adversarial run."""

    benchmark: str
    index: str
    embedding_model: str
    train_queries: int
    test_queries: int
    agents: int
    agent_model: AgentModel
    seed: int
    points: list[CurvePoint]
    adversarial: AdversarialRun | None
    seconds: float
    events_per_s: float
    notes: list[str] = field(default_factory=list)
    ab: dict[str, Any] | None = None
    #: Whether learning started from the serving weights (else from zero).
    warm_start: bool = True
    #: The benchmarks every candidate's guard also compared on (names).
    guard_benchmarks: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for point, raw in zip(self.points, out["points"]):
            raw["served"] = point.served
        return out


def _labelled(benchmark: Benchmark) -> list[tuple[str, set[str]]]:
    return [(benchmark.queries[q], {t for t, g in grades.items() if g > 0})
            for q, grades in sorted(benchmark.qrels.items()) if q in benchmark.queries and any(g > 0 for g in grades.values())]


def _changed(outcome: Any) -> float | None:
    moved = outcome.guard.plausibility if outcome is not None else None
    return None if moved is None else round(moved.share, 4)


def _kept(outcome: Any) -> float | None:
    moved = outcome.guard.plausibility if outcome is not None else None
    return None if moved is None else moved.mean_kept


def _measure(client: OpenSearch, settings: Settings, embedder: Embedder, test: Benchmark, qids: Sequence[str],
             artifact: WeightsArtifact | None) -> dict[str, float]:
    """NDCG@10 / Recall@5 of the test sample, multi-field hybrid, with ``artifact`` (None: fixed field weights)."""
    searcher = Searcher(client, settings.with_overrides(query_log=False, weights=None), embedder, artifact=artifact,
                        source="bench")
    run = {q: ranked_run((t.doc_id for t in searcher.search(test.queries[q], top_k=10, method="multi-field",
                                                              retriever="hybrid").tools), 10) for q in qids}
    found = evaluate({q: test.qrels[q] for q in qids}, run, list(MEASURES))
    return {k: round(v, 4) for k, v in found.items()}


def _api_environment(settings: Settings, folder: Path, agents: int) -> tuple[dict[str, str], list[str], str]:
    """The API's environment, the honest agents' keys and the spammer's."""
    import os

    keys = [new_key() for _ in range(agents)]
    spam = new_key()
    entries = [f'[[api_keys]]\nname = "agent-{n:02d}"\ntenant = "sim"\nrole = "search"\nsha256 = "{hash_key(k)}"\n'
               for n, k in enumerate(keys)]
    entries.append(f'[[api_keys]]\nname = "spammer"\ntenant = "evil"\nrole = "search"\nsha256 = "{hash_key(spam)}"\n')
    (folder / "toolsift.toml").write_text("\n".join(entries), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLSIFT_")}
    env.update({"TOOLSIFT_OPENSEARCH_URL": settings.effective_url, "TOOLSIFT_INDEX": settings.index,
                "TOOLSIFT_RETRIEVER": "hybrid", "TOOLSIFT_MULTI_NEED": "off", "TOOLSIFT_QUERY_LOG": "true",
                "TOOLSIFT_QUERY_LOG_INDEX": settings.query_log_index, "TOOLSIFT_FEEDBACK_INDEX": settings.feedback_index,
                "TOOLSIFT_EMBEDDING_MODEL": settings.embedding_model, "TOOLSIFT_EMBEDDING_BACKEND": settings.embedding_backend,
                "TOOLSIFT_EMBEDDING_DEVICE": settings.embedding_device, "TOOLSIFT_CONFIG": str(folder / "toolsift.toml")})
    return env, keys, spam


def _replay(ask: Callable[[str, str], tuple[str, list[str]]], report: Callable[[str, str, list[dict[str, Any]]], object],
            replay: Sequence[tuple[str, set[str]]], keys: Sequence[str], agent_model: AgentModel, seed: int,
            honest: int, target: int, requests: int, progress: Callable[[str, int, int], None] | None) -> int:
    """Agents (one thread per key) replay training queries until ``target`` reports were sent in all.

    Request n is the n-th training query (cycling), asked with key n mod agents, its agent's choices
    drawn from a generator seeded with (seed, n): the same run for the same arguments, whatever the
    threads' interleaving. Returns the requests asked so far.
    """
    lock = threading.Lock()
    state = {"next": requests, "sent": honest}

    def agent() -> None:
        while True:
            with lock:
                if state["sent"] >= target:
                    return
                n = state["next"]
                state["next"] += 1
            text, gold = replay[n % len(replay)]
            key = keys[n % len(keys)]
            request_id, shown = ask(key, text)
            calls = agent_model.calls(shown, gold, random.Random(f"{seed}:{n}"))
            with lock:
                send = bool(calls) and state["sent"] < target
                state["sent"] += send
                done = state["sent"]
            if send:
                report(key, request_id, calls)
                if progress:
                    progress("honest feedback", done, target)

    with ThreadPoolExecutor(max_workers=len(keys)) as pool:
        for future in [pool.submit(agent) for _ in keys]:
            future.result()
    return state["next"]


def _ab_phase(client: OpenSearch, sim: Settings, candidate: WeightsArtifact,
              ask: Callable[[str, str], tuple[str, list[str]]], report: Callable[[str, str, list[dict[str, Any]]], object],
              replay: Sequence[tuple[str, set[str]]], keys: Sequence[str], agent_model: AgentModel, seed: int,
              requests: int, ab_events: int, progress: Callable[[str, int, int], None] | None) -> dict[str, Any]:
    """An A/B test of ``candidate`` on half of the honest tenant's searches (started as `toolsift learn ab start`
    starts one) until its agents sent ``ab_events`` more reports; the A/B report; then rolled back."""
    from toolsift.learning.experiments import rollback, start_experiment
    from toolsift.learning.ab_report import ab_report

    experiment = start_experiment(client, sim.index, "sim", candidate, 0.5)
    try:
        time.sleep(sim.weights_check_interval + 1.0)  # the API follows the index's experiments this often
        _replay(ask, report, replay, keys, agent_model, seed, 0, ab_events, requests, progress)
        client.indices.refresh(index=sim.feedback_index)
        client.indices.refresh(index=sim.query_log_index)
        return ab_report(client, sim, experiment).to_dict()
    finally:
        rollback(client, sim.index, "sim")


def run_feedback_curve(
    client: OpenSearch,
    settings: Settings,
    embedder: Embedder,
    benchmark_dir: Path,
    *,
    checkpoints: Sequence[int] = (0, 100, 1000, 10000),
    test_queries: int = 500,
    agents: int = 20,
    adversary_at: int | None = 1000,
    key_cap: int = 50,
    spam_repeats: int = 2,
    ab_events: int = 0,
    warm_start: bool = True,
    guard_benchmarks: Sequence[Path] = (),
    agent_model: AgentModel = AgentModel(),
    seed: int = 0,
    record: bool = True,
    progress: Callable[[str, int, int], None] | None = None,
) -> FeedbackCurve:
    # Long: the simulation's steps in order (baseline, rounds of feedback and learning, the adversarial run,
    # A/B), the figures gathered as they come.
    """Run the simulation (module docstring) on a BEIR folder with ``train`` and ``test`` qrels (ToolLens)."""
    started = time.monotonic()
    checkpoints = sorted(set(checkpoints))
    if adversary_at is not None and adversary_at not in checkpoints:
        raise ConfigError(f"--adversary-at {adversary_at} is not one of the checkpoints {checkpoints}")
    train, test = load_benchmark(benchmark_dir, split="train"), load_benchmark(benchmark_dir, split="test")
    alias = eval_index_name(test, embedder.name)
    sim = settings.with_overrides(index=alias, query_log=True, query_log_index=f"{alias}-sim-querylog",
                                  feedback_index=f"{alias}-sim-feedback", multi_need="off", weights=None)
    ensure_eval_index(client, settings, embedder, alias, test.catalog_path, test.catalog_format)
    for index in (sim.query_log_index, sim.feedback_index):
        client.indices.delete(index=index, ignore_unavailable=True)
    rng = random.Random(seed)
    replay = _labelled(train)
    rng.shuffle(replay)
    qids = sorted(q for q, grades in test.qrels.items() if q in test.queries and any(g > 0 for g in grades.values()))
    qids = sorted(random.Random(seed + 1).sample(qids, min(test_queries, len(qids))))
    fixed = _measure(client, sim, embedder, test, qids, None)
    points: list[CurvePoint] = []
    adversarial: AdversarialRun | None = None
    passed: WeightsArtifact | None = None
    ab: dict[str, Any] | None = None
    notes: list[str] = []
    honest = requests = 0
    spent = 0.0
    with tempfile.TemporaryDirectory(prefix="toolsift-feedback-") as tmp:
        folder = Path(tmp)
        env, keys, spam_key = _api_environment(sim, folder, agents)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        with serving(service_command("api", port), env, url), httpx.Client(base_url=url, timeout=120) as http:

            def ask(key: str, text: str) -> tuple[str, list[str]]:
                answer = http.post("/v1/search", json={"query": text, "top_k": 10},
                                   headers={"Authorization": f"Bearer {key}"})
                answer.raise_for_status()
                body = answer.json()
                return body["request_id"], [t["id"] for t in body["tools"]]

            def report(key: str, request_id: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
                answer = http.post("/v1/feedback", json={"request_id": request_id, "calls": calls},
                                   headers={"Authorization": f"Bearer {key}"})
                answer.raise_for_status()
                found: dict[str, Any] = answer.json()
                return found

            min_keys = settings.learn_min_keys

            def learn(tag: str, tenant: str | None, cap: int, least: int = min_keys
                      ) -> tuple[WeightsArtifact | None, Any, str | None]:
                """The candidate and the outcome, or why nothing was learned."""
                client.indices.refresh(index=sim.feedback_index)
                try:
                    outcome = learn_weights(client, sim, embedder, out_root=folder / "weights", name=tag, tenant=tenant,
                                            retriever="hybrid",
                                            policy=LearningPolicy(key_cap=cap, tool_cap=cap, min_keys=least),
                                            holdout=0.2, warm_start=warm_start, benchmarks=guard_benchmarks,
                                            benchmark_guard=bool(guard_benchmarks))
                except ConfigError as exc:  # too few distinct keys, or no training pairs
                    return None, None, str(exc)
                return outcome.artifact, outcome, None

            if not guard_benchmarks:
                notes.append("the benchmark guard was off (no --guard-benchmark): candidates were judged on "
                             "held-out feedback and plausibility alone")

            for checkpoint in checkpoints:
                before = time.monotonic()
                requests = _replay(ask, report, replay, keys, agent_model, seed, honest, checkpoint, requests,
                                      progress)
                spent += time.monotonic() - before
                honest = checkpoint
                t0 = time.monotonic()
                artifact, outcome, refused = learn(f"honest-{checkpoint}", "sim", key_cap) if checkpoint else (None, None, None)
                learned = time.monotonic() - t0
                candidate = _measure(client, sim, embedder, test, qids, artifact) if artifact is not None else None
                if outcome is not None and outcome.guard.passed:
                    passed = artifact
                points.append(CurvePoint(
                    checkpoint, requests, fixed, candidate, outcome.guard.passed if outcome else None,
                    dict(outcome.guard.held_out) if outcome else None,
                    int(outcome.feedback["training_queries"]) if outcome else 0, round(learned, 1),
                    _changed(outcome), refused, _kept(outcome)))
                if checkpoint == adversary_at and checkpoint:
                    def spam(n: int) -> tuple[int, int]:
                        request_id, shown = ask(spam_key, replay[(requests + n) % len(replay)][0])
                        call = [{"tool_id": shown[-1], "called": True, "success": True}]
                        answers = [report(spam_key, request_id, call) for _ in range(max(1, spam_repeats))]
                        return sum(int(a["stored"]) for a in answers), sum(int(a.get("already_recorded", 0)) for a in answers)

                    with ThreadPoolExecutor(max_workers=len(keys)) as pool:
                        spammed = list(pool.map(spam, range(checkpoint)))
                    capped_art, capped, _ = learn(f"everyone-cap-{checkpoint}", None, key_cap)
                    open_art, uncapped, _ = learn(f"everyone-nocap-{checkpoint}", None, _NO_CAP, 1)
                    if capped is None or uncapped is None:
                        raise ConfigError("the adversarial run learned nothing: no training pairs in the feedback")

                    def one_key(tag: str, least: int) -> OneKeyRun:
                        art, alone, why = learn(tag, "evil", key_cap, least)
                        stored = sum(n for n, _ in spammed)
                        if alone is None:
                            return OneKeyRun(checkpoint * max(1, spam_repeats), stored, 1, least, why)
                        return OneKeyRun(checkpoint * max(1, spam_repeats), stored, int(alone.feedback["keys"]), least,
                                         None, _measure(client, sim, embedder, test, qids, art), alone.guard.passed,
                                         alone.guard.reasons, _changed(alone))

                    adversarial = AdversarialRun(
                        checkpoint, checkpoint, key_cap, round(float(capped.feedback["capped_keys"].get("spammer", 1.0)), 4),
                        candidate, _measure(client, sim, embedder, test, qids, capped_art),
                        _measure(client, sim, embedder, test, qids, open_art), capped.guard.passed, uncapped.guard.passed,
                        checkpoint * max(1, spam_repeats), sum(n for n, _ in spammed), min_keys,
                        capped.guard.reasons, uncapped.guard.reasons,
                        one_key(f"one-key-{checkpoint}", min_keys), one_key(f"one-key-no-minimum-{checkpoint}", 1))
            if ab_events and passed is None:
                notes.append("A/B: no candidate passed the guard, so none may serve traffic; nothing was tested")
            elif ab_events and passed is not None:
                ab = _ab_phase(client, sim, passed, ask, report, replay, keys, agent_model, seed, requests, ab_events,
                               progress)
    curve = FeedbackCurve(test.name, alias, embedder.name, len(replay), len(qids), agents, agent_model, seed, points,
                          adversarial, round(time.monotonic() - started, 1),
                          round(requests / spent, 2) if spent else 0.0, notes, ab, warm_start,
                          [p.name for p in guard_benchmarks])
    if record:
        _record(client, settings, curve, benchmark_dir)
    return curve


def _record(client: OpenSearch, settings: Settings, curve: FeedbackCurve, folder: Path) -> None:
    """Each point (and the adversarial arms) as rows of one eval run in ``<benchmark>-feedback``."""
    rows = []
    base = {"query_set": f"{curve.benchmark}-feedback", "dataset_path": str(folder), "index": curve.index,
            "kind": "tool", "method": "multi-field", "retriever": "hybrid", "queries": curve.test_queries}
    for point in curve.points:
        rows.append(EvalRunRow(**base, row=f"after {point.events} feedback events (served)",  # type: ignore[arg-type]
                               main=True, metrics={**point.served, "events": float(point.events)}))
    if curve.adversarial is not None:
        a = curve.adversarial
        for label, figures in (("spam, key cap", a.capped), ("spam, no cap", a.uncapped)):
            rows.append(EvalRunRow(**base, row=f"after {a.honest_events} events + {a.spam_events} {label}",  # type: ignore[arg-type]
                                   main=False, metrics={**figures, "events": float(a.honest_events + a.spam_events)}))
        if a.one_key is not None and a.one_key.figures is not None:
            rows.append(EvalRunRow(**base, row=f"one key, {a.one_key.events} events",  # type: ignore[arg-type]
                                   main=False, metrics={**a.one_key.figures, "events": float(a.one_key.events)}))
    EvalRunLog.open(client, settings).record(rows, source="bench")


def plot_curve(curve: FeedbackCurve, out: Path) -> Path:
    """NDCG@10 and Recall@5 of the test queries against feedback events (the candidate, what is served,
    the fixed weights; the adversarial arms as markers) as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharex=True)
    xs = [max(p.events, 1) for p in curve.points]
    for ax, measure in zip(axes, MEASURES):
        ax.plot(xs, [p.fixed[measure] for p in curve.points], "--", color="grey", label="fixed field weights")
        learned = [(max(p.events, 1), p.candidate[measure]) for p in curve.points if p.candidate is not None]
        if learned:
            ax.plot(*zip(*learned), "o-", label="learned from feedback (candidate)")
        ax.plot(xs, [p.served[measure] for p in curve.points], "s:", label="served (a candidate only once its guard passed)")
        if curve.adversarial is not None:
            a = curve.adversarial
            x = a.honest_events
            ax.plot([x], [a.capped[measure]], "v", color="green", markersize=9, label="+ spam, key cap")
            ax.plot([x], [a.uncapped[measure]], "x", color="red", markersize=9, label="+ spam, no cap")
        ax.set_xscale("log")
        ax.set_xlabel("feedback events (0 shown at 1)")
        ax.set_ylabel(measure)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"{curve.benchmark}: {curve.test_queries} test queries, multi-field hybrid, {curve.agents} simulated agents")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
