"""The feedback curve, on a small slice: simulated agents through the real search API (``toolsift serve
api`` in its own process), learning behind the guard at each checkpoint, and a spammer held to the key cap
and, alone in its tenant, refused for being one key. Two honest agents: the key minimum is set to 2 here
(``learn_min_keys``; 5 by default).

The full run (0 / 100 / 1,000 / 10,000 events, 500 test queries) is `toolsift bench feedback`; its
figures are in docs/evaluation.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolsift.evaluation.evalruns import EvalRunLog
from toolsift.learning.feedback_sim import run_feedback_curve, plot_curve

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # five learner runs over the API: `make test-slow`; CI keeps test_learn_from_feedback and tests/security/test_feedback_abuse


@pytest.fixture(scope="module")
def curve(client: Any, base_settings: Any, embedder: Any, datasets: Path) -> Any:
    return run_feedback_curve(client, base_settings.with_overrides(learn_min_keys=2), embedder, datasets / "toollens",
                              checkpoints=(0, 20), test_queries=20, agents=2, adversary_at=20, key_cap=5, ab_events=10,
                              seed=3)


def test_agents_reports_reach_the_feedback_index_through_the_api(client: Any, curve: Any) -> None:
    feedback = f"{curve.index}-sim-feedback"
    client.indices.refresh(index=feedback)
    count = client.search(index=feedback, body={"size": 0, "aggs": {
        "keys": {"terms": {"field": "key"}, "aggs": {"requests": {"cardinality": {"field": "request_id"}}}}}})
    per_key = {b["key"]: b["requests"]["value"] for b in count["aggregations"]["keys"]["buckets"]}
    assert per_key.pop("spammer") == 20  # as many reports as the honest agents had sent
    ab = 10 if curve.ab is not None else 0  # the A/B phase's reports, when a candidate passed its guard
    assert sum(per_key.values()) == 20 + ab and set(per_key) == {"agent-00", "agent-01"}
    assert curve.points[1].requests >= 20  # agents that called nothing sent no report


def test_each_checkpoint_is_measured_on_test_queries_the_agents_never_asked(curve: Any) -> None:
    start, after = curve.points
    assert (start.events, start.candidate, start.guard_passed) == (0, None, None)
    assert after.events == 20 and after.fixed == start.fixed
    assert set(start.fixed) == {"ndcg@10", "recall@5"} and 0.0 < start.fixed["ndcg@10"] <= 1.0
    if after.candidate is not None:  # learned: what is served follows the guard's own verdict
        plausible = after.changed is not None and after.changed <= 0.5  # learn_max_changed
        assert after.guard_passed == (after.held_out["candidate"] > after.held_out["current"] and plausible)
        assert after.served == (after.candidate if after.guard_passed else after.fixed)


def test_the_spammer_weighs_no_more_than_the_key_cap_and_alone_teaches_nothing(curve: Any) -> None:
    adversary = curve.adversarial
    assert (adversary.honest_events, adversary.spam_events, adversary.key_cap) == (20, 20, 5)
    # each report sent twice, stored once
    assert (adversary.spam_sent, adversary.spam_stored) == (40, 20)
    # 20 "calls" on the last of ten tools, each weighing 10 (inverse propensity): scaled to the cap of 5 in all (or
    # less: no key may carry more than 1 / learn_min_keys of the weight)
    assert adversary.spammer_scale <= 5 / 200 + 1e-6
    assert set(adversary.capped) == set(adversary.uncapped) == {"ndcg@10", "recall@5"}
    # one key, many events: its own tenant learns nothing by default; with the key minimum off it is guarded
    alone, unguarded = adversary.one_key, adversary.one_key_no_minimum
    assert alone.refused is not None and "1 distinct key" in alone.refused and alone.figures is None
    assert (alone.events, alone.stored, alone.keys, alone.min_keys) == (40, 20, 1, 2)
    assert unguarded.refused is None and unguarded.figures is not None and unguarded.min_keys == 1


def test_the_curve_is_recorded_for_the_workbench_and_drawn(client: Any, base_settings: Any, curve: Any,
                                                           tmp_path: Path) -> None:
    rows = EvalRunLog.open(client, base_settings).history("toollens-feedback")
    latest = [r for r in rows if r["run_id"] == rows[-1]["run_id"]]
    assert [r["row"] for r in latest] == ["after 0 feedback events (served)", "after 20 feedback events (served)",
                                         "after 20 events + 20 spam, key cap", "after 20 events + 20 spam, no cap"]
    png = plot_curve(curve, tmp_path / "curve.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_a_b_test_runs_only_a_candidate_that_passed_its_guard(curve: Any) -> None:
    passed = any(p.guard_passed for p in curve.points)
    assert (curve.ab is not None) == passed
    assert any(n.startswith("the benchmark guard was off") for n in curve.notes)  # no --guard-benchmark here
    if curve.ab is None:
        assert "A/B: no candidate passed the guard, so none may serve traffic; nothing was tested" in curve.notes
        return
    arms = curve.ab["arms"]
    assert arms["candidate"]["weights_version"] == curve.ab["candidate_version"]
    assert curve.ab["keys"] <= 2 and curve.ab["verdict"].startswith("no verdict")  # two keys: fewer than ab_min_keys
    assert arms["candidate"]["reported"] + arms["control"]["reported"] == 10  # every report of the test, in one arm or the other
