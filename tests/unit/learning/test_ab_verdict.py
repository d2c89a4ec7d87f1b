"""An A/B verdict rests on distinct keys, each weighing once: one key cannot decide it however it reports."""

from __future__ import annotations

import random

from toolsift.learning.ab_report import ArmAnswer, compare_arms

TOOLS = tuple(f"t{i}" for i in range(1, 11))


def _answers(keys: list[str], per_key: int, rng: random.Random) -> list[ArmAnswer]:
    return [ArmAnswer(f"{key}-{n}", rng.choice(("control", "candidate")), "v", key, TOOLS)
            for key in keys for n in range(per_key)]


def test_one_key_reporting_success_only_on_the_candidate_s_answers_yields_no_verdict() -> None:
    answers = _answers(["attacker"], 400, random.Random(1))
    worked = {a.request_id: {"t1"} for a in answers if a.arm == "candidate"}
    found = compare_arms(answers, worked, set(worked), min_keys=5)
    assert found.arms["candidate"].success_rate == 1.0 and found.arms["control"].success_rate == 0.0
    assert found.keys == 1 and found.verdict.startswith("no verdict: the feedback comes from 1 distinct key")
    assert "ab_min_keys" in found.verdict


def test_a_flooding_key_beside_honest_ones_weighs_once_and_does_not_carry_the_verdict() -> None:
    rng = random.Random(2)
    honest = _answers([f"agent-{k}" for k in range(8)], 60, rng)
    flood = _answers(["attacker"], 3000, rng)
    worked = {a.request_id: {"t2"} for a in honest if rng.random() < 0.4}  # the same success rate in both arms
    worked |= {a.request_id: {"t1"} for a in flood if a.arm == "candidate"}
    reported = set(worked) | {a.request_id for a in honest}
    found = compare_arms(honest + flood, worked, reported, min_keys=5)
    # pooled per answer, the flood makes the candidate look far better ...
    assert found.arms["candidate"].success_rate - found.arms["control"].success_rate > 0.3
    # ... key by key it is one key of nine, and no winner is called
    assert found.keys == 9 and not found.verdict.startswith("candidate")


def test_many_keys_that_each_see_the_candidate_do_better_give_a_verdict() -> None:
    rng = random.Random(3)
    answers = _answers([f"agent-{k}" for k in range(20)], 80, rng)
    worked = {a.request_id: {"t1"} for a in answers if rng.random() < (0.6 if a.arm == "candidate" else 0.3)}
    found = compare_arms(answers, worked, {a.request_id for a in answers}, min_keys=5)
    assert found.keys == 20 and found.success_rate_diff > 0.2
    assert found.verdict == "candidate better (rests on 20 keys, each weighing once)"
    assert found.success_rate_p is not None and found.success_rate_p < 0.05


def test_keys_that_reported_nothing_or_saw_one_arm_only_are_not_counted() -> None:
    answers = [ArmAnswer("a", "candidate", "v", "one-arm", TOOLS), ArmAnswer("b", "candidate", "v", "one-arm", TOOLS),
               ArmAnswer("c", "control", "v", "silent", TOOLS), ArmAnswer("d", "candidate", "v", "silent", TOOLS)]
    found = compare_arms(answers, {"a": {"t1"}}, {"a"}, min_keys=2)
    assert found.keys == 0 and found.arms["candidate"].keys == 2 and found.arms["control"].keys == 1
