"""Learning from usage: agents' calls on real answers become weighed pairs, and a guard judges what they teach.

Agents (five keys of tenant acme) search APIBank's tools through the search service (the API's own
object, in-process: each answer logged under its request id) and report calls on the answers they got,
as an agent would: the relevant tool called and successful wherever it was shown. A spammer key (the
only key of tenant evil) reports the last tool of every answer, each report twice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolsift.access import Principal
from toolsift.api.search_service import ToolSearchService
from toolsift.search.request import SearchRequest
from toolsift.errors import ConfigError
from toolsift.learning.learner import learn_weights
from toolsift.evaluation.runner import ensure_eval_index
from toolsift.ingest.benchmarks import load_benchmark
from toolsift.learning.feedback_pairs import LearningPolicy, TooFewKeysError, feedback_pairs
from toolsift.learning.feedback import ToolOutcome, load_feedback

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
    agents = [Principal(f"agent-{n}", "acme", "search") for n in range(1, 6)]
    spammer = Principal("spammer", "evil", "search")
    sent = 0
    for n, qid in enumerate([q for q in benchmark.qrels if q in benchmark.queries][:60]):
        agent = agents[n % len(agents)]
        gold = {t for t, grade in benchmark.qrels[qid].items() if grade > 0}
        answer = service.search(agent, SearchRequest(query=benchmark.queries[qid], top_k=10))
        called = [ToolOutcome(t["id"], called=True, success=True) for t in answer["tools"] if t["id"] in gold]
        if called:
            service.feedback(agent, answer["request_id"], called)
            sent += len(called)
        spam = service.search(spammer, SearchRequest(query=benchmark.queries[qid], top_k=10))
        last = [ToolOutcome(spam["tools"][-1]["id"], called=True, success=True)]
        first, again = (service.feedback(spammer, spam["request_id"], last) for _ in range(2))
        assert (first["stored"], first["already_recorded"]) == (1, 0) and (again["stored"], again["already_recorded"]) == (0, 1)
    return settings, sent


def test_every_event_the_service_accepted_is_confirmed_stored_once_and_the_spammer_is_capped(
        client: Any, served: Any) -> None:
    settings, sent = served
    answers, events = load_feedback(client, settings)
    assert sent > 20 and len(events) == sent + 60  # the spammer's 120 reports: 60 stored, each once
    made = feedback_pairs(answers, events, LearningPolicy(key_cap=10))
    assert made.unconfirmed == 0 and made.keys == 6
    # its 60 "calls" on the last of ten tools weigh 10 each (inverse propensity): 600 in all, scaled to at most
    # the cap of 10, and to at most a fifth of all the pairs' weight (six keys, learn_min_keys 5)
    spam = sum(p.weight for p in made.pairs if p.key == "spammer")
    assert made.capped_keys["spammer"] <= 10 / 600 + 1e-6 and spam <= 10.0 + 1e-6
    assert spam <= sum(p.weight for p in made.pairs) / 5 + 1e-6
    assert {p.tenant for p in made.pairs} == {"acme", "evil"}
    only_acme = feedback_pairs(*load_feedback(client, settings, tenant="acme"))
    assert {p.key for p in only_acme.pairs} == {f"agent-{n}" for n in range(1, 6)}


def test_the_spammer_s_own_tenant_learns_nothing_from_its_one_key(client: Any, served: Any, embedder: Any,
                                                                 datasets: Path, tmp_path: Path) -> None:
    settings, _ = served
    with pytest.raises(TooFewKeysError, match=r"tenant 'evil'.*1 distinct key \('spammer': 60 pairs\).*at least 5"):
        learn_weights(client, settings, embedder, out_root=tmp_path, name="one-key", tenant="evil",
                      benchmarks=[datasets / "toolret" / "apibank"])
    assert not (tmp_path / "one-key").exists()  # nothing was written


def test_without_a_benchmark_learning_is_refused_unless_the_guard_is_turned_off(
        client: Any, served: Any, embedder: Any, tmp_path: Path) -> None:
    settings, _ = served
    with pytest.raises(ConfigError, match="benchmark guard is on and names no benchmark.*--no-benchmark-guard"):
        learn_weights(client, settings, embedder, out_root=tmp_path, name="unguarded", tenant="acme")
    assert not (tmp_path / "unguarded").exists()


def test_a_candidate_that_changes_most_of_the_tenant_s_searches_is_refused_unless_forced(
        client: Any, served: Any, embedder: Any, tmp_path: Path) -> None:
    """The key minimum off (as an operator may set it): the spammer's candidate, learned from zero on its
    rank-10 "calls", reorders its tenant's answers wholesale, and the plausibility check says so."""
    settings, _ = served
    spam_only = LearningPolicy(min_keys=1)
    refused = learn_weights(client, settings, embedder, out_root=tmp_path, name="implausible", tenant="evil",
                            policy=spam_only, warm_start=False, benchmark_guard=False)
    moved = refused.guard.plausibility
    assert moved is not None and 0 < moved.searches <= 60 and moved.share > settings.learn_max_changed
    assert not refused.guard.passed and any(r.startswith("implausible: ") and "--force" in r for r in refused.guard.reasons)
    forced = learn_weights(client, settings, embedder, out_root=tmp_path, name="implausible", tenant="evil",
                           policy=spam_only, warm_start=False, benchmark_guard=False, force=True)
    assert forced.guard.plausibility is not None and forced.guard.plausibility.forced
    assert not any(r.startswith("implausible") for r in forced.guard.reasons)
    record = json.loads(forced.artifact.path.read_text(encoding="utf-8"))
    assert record["metrics"]["guard"]["plausibility"]["changed"] == forced.guard.plausibility.changed


def test_learned_weights_are_written_with_the_guard_s_report_either_way(
        client: Any, served: Any, embedder: Any, datasets: Path, tmp_path: Path) -> None:
    settings, _ = served
    outcome = learn_weights(client, settings, embedder, out_root=tmp_path, name="from-feedback", retriever="hybrid",
                            policy=LearningPolicy(key_cap=10), holdout=0.3, benchmarks=[datasets / "toolret" / "apibank"],
                            tenant="acme")
    record = json.loads(outcome.artifact.path.read_text(encoding="utf-8"))
    assert outcome.artifact.path == tmp_path / "from-feedback" / "v001" / "weights.json"
    assert record["config"]["learned_from"] == "feedback" and record["config"]["feedback"]["unconfirmed"] == 0
    guard = record["metrics"]["guard"]
    assert guard["held_out"]["requests"] > 0
    assert set(guard["benchmarks"]) == {"apibank"}
    # the guard's verdict follows its own figures: never a pass on a regression
    loses = guard["benchmarks"]["apibank"]["candidate"] < guard["benchmarks"]["apibank"]["current"] - 0.005
    no_gain = guard["held_out"]["candidate"] <= guard["held_out"]["current"]
    moved = guard["plausibility"]
    assert 0 < moved["searches"] <= 60 and moved["limit"] == settings.learn_max_changed  # acme's logged searches
    assert guard["passed"] == (not loses and not no_gain and moved["share"] <= moved["limit"])
    assert outcome.guard.passed == guard["passed"]
    # learning started from what served (the fixed field weights) and stays on their scale
    assert record["config"]["started_from"] == "fixed field weights"
    assert outcome.artifact.weights.normalise and outcome.artifact.weights.derived_weight == settings.derived_weight


def test_learning_from_zero_reads_raw_scores(client: Any, served: Any, embedder: Any, tmp_path: Path) -> None:
    settings, _ = served
    outcome = learn_weights(client, settings, embedder, out_root=tmp_path, name="from-zero", retriever="hybrid",
                            policy=LearningPolicy(key_cap=10), holdout=0.3, warm_start=False, benchmark_guard=False)
    assert outcome.artifact.config["started_from"] is None and not outcome.artifact.weights.normalise
