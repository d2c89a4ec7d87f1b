"""Learning from usage: agents' calls on real answers become weighed pairs, and a guard judges what they teach.

Agents search APIBank's tools through the search service (the API's own object, in-process: each answer
logged under its request id) and report calls on the answers they got, as an agent would: the relevant
tool called and successful wherever it was shown. A spammer key reports its own tool on every answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolsift.access import Principal
from toolsift.api.service import ToolQuery, ToolSearchService
from toolsift.evaluation.learn import learn_weights
from toolsift.evaluation.runner import ensure_eval_index
from toolsift.ingest.benchmarks import load_benchmark
from toolsift.ranker.feedback_pairs import LearningPolicy, feedback_pairs
from toolsift.search.feedback import ToolOutcome, load_feedback

pytestmark = pytest.mark.integration

ALIAS = "toolsift-test-learn"


@pytest.fixture(scope="module")
def served(client: Any, base_settings: Any, embedder: Any, datasets: Path) -> Any:
    apibank = datasets / "toolret" / "apibank"
    for index in (f"{ALIAS}-querylog", f"{ALIAS}-feedback"):
        client.indices.delete(index=index, ignore_unavailable=True)
    settings = base_settings.with_overrides(index=ALIAS, query_log=True, query_log_index=f"{ALIAS}-querylog",
                                            feedback_index=f"{ALIAS}-feedback", multi_need="off")
    ensure_eval_index(client, settings, embedder, ALIAS, apibank / "tools.json", "toolret")
    service = ToolSearchService(client, settings, embedder)
    benchmark = load_benchmark(apibank)
    agent, spammer = Principal("agent-1", "acme", "search"), Principal("spammer", "evil", "search")
    sent = 0
    for qid in [q for q in benchmark.qrels if q in benchmark.queries][:60]:
        gold = {t for t, grade in benchmark.qrels[qid].items() if grade > 0}
        answer = service.search(agent, ToolQuery(query=benchmark.queries[qid], top_k=10))
        called = [ToolOutcome(t["id"], called=True, success=True) for t in answer["tools"] if t["id"] in gold]
        if called:
            service.feedback(agent, answer["request_id"], called)
            sent += len(called)
        spam = service.search(spammer, ToolQuery(query=benchmark.queries[qid], top_k=10))
        service.feedback(spammer, spam["request_id"], [ToolOutcome(spam["tools"][-1]["id"], called=True, success=True)])
    return settings, sent


def test_every_event_the_service_accepted_is_confirmed_and_the_spammer_is_capped(client: Any, served: Any) -> None:
    settings, sent = served
    answers, events = load_feedback(client, settings)
    assert sent > 20 and len(events) == sent + 60
    made = feedback_pairs(answers, events, LearningPolicy(key_cap=10))
    assert made.unconfirmed == 0
    # its 60 "calls" on the last of ten tools weigh 10 each (inverse propensity): 600 in all, scaled to the cap of 10
    assert made.capped_keys["spammer"] == pytest.approx(10 / 600, abs=1e-6)
    assert sum(p.weight for p in made.pairs if p.key == "spammer") == pytest.approx(10.0)
    assert {p.tenant for p in made.pairs} == {"acme", "evil"}
    only_acme = feedback_pairs(*load_feedback(client, settings, tenant="acme"))
    assert {p.key for p in only_acme.pairs} == {"agent-1"}


def test_learned_weights_are_written_with_the_guard_s_report_either_way(
        client: Any, served: Any, embedder: Any, datasets: Path, tmp_path: Path) -> None:
    settings, _ = served
    outcome = learn_weights(client, settings, embedder, out_root=tmp_path, name="from-feedback", retriever="hybrid",
                            policy=LearningPolicy(key_cap=10), holdout=0.3, benchmarks=[datasets / "toolret" / "apibank"])
    record = json.loads(outcome.artifact.path.read_text(encoding="utf-8"))
    assert outcome.artifact.path == tmp_path / "from-feedback" / "v001" / "weights.json"
    assert record["config"]["learned_from"] == "feedback" and record["config"]["feedback"]["unconfirmed"] == 0
    guard = record["metrics"]["guard"]
    assert guard["held_out"]["requests"] > 0
    assert set(guard["benchmarks"]) == {"apibank"}
    # the guard's verdict follows its own figures: never a pass on a regression
    loses = guard["benchmarks"]["apibank"]["candidate"] < guard["benchmarks"]["apibank"]["current"] - 0.005
    no_gain = guard["held_out"]["candidate"] <= guard["held_out"]["current"]
    assert guard["passed"] == (not loses and not no_gain)
    assert outcome.guard.passed == guard["passed"]
    # learning started from what served (the fixed field weights) and stays on their scale
    assert record["config"]["started_from"] == "fixed field weights"
    assert outcome.artifact.weights.normalise and outcome.artifact.weights.derived_weight == settings.derived_weight


def test_learning_from_zero_reads_raw_scores(client: Any, served: Any, embedder: Any, tmp_path: Path) -> None:
    settings, _ = served
    outcome = learn_weights(client, settings, embedder, out_root=tmp_path, name="from-zero", retriever="hybrid",
                            policy=LearningPolicy(key_cap=10), holdout=0.3, warm_start=False)
    assert outcome.artifact.config["started_from"] is None and not outcome.artifact.weights.normalise
