"""Feedback becomes training pairs only when the query log confirms it, weighed for position and capped per key and tool."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolsift.learning.feedback_pairs import (FeedbackEvent, LearningPolicy, LoggedAnswer, TooFewKeysError, feedback_pairs,
                                           require_keys, share_cap)

ANSWER = LoggedAnswer("r1", "convert my file to pdf", "acme", "agent-1", ("t1", "t2", "t3", "t4", "t5"))


def _event(tool: str, called: bool = True, success: bool | None = True, request: str = "r1",
           key: str = "agent-1", tenant: str | None = "acme") -> FeedbackEvent:
    return FeedbackEvent(request, tool, called, success, tenant, key)


def test_a_successful_call_is_a_positive_against_every_tool_shown_and_not_called() -> None:
    out = feedback_pairs({"r1": ANSWER}, [_event("t3"), _event("t1", called=False, success=None)])
    (pair,) = out.pairs
    assert (pair.query, pair.positive, pair.negatives, pair.rank) == ("convert my file to pdf", "t3", ("t1", "t2", "t4", "t5"), 3)
    assert pair.weight == 3.0  # found at rank 3: stands for 3 ** eta of its kind


def test_failed_or_unknown_calls_are_neither_positive_nor_negative() -> None:
    out = feedback_pairs({"r1": ANSWER}, [_event("t2", success=False), _event("t1", success=None), _event("t4")])
    (pair,) = out.pairs
    assert pair.positive == "t4" and pair.negatives == ("t3", "t5")  # t1 and t2 were called: not passed over


def test_events_the_query_log_does_not_confirm_are_dropped() -> None:
    events = [_event("t9"), _event("t1", request="unknown"), _event("t1", key="other-key"),
              _event("t1", tenant="other-tenant"), _event("t2")]
    out = feedback_pairs({"r1": ANSWER}, events)
    assert out.unconfirmed == 4 and [p.positive for p in out.pairs] == ["t2"]


def test_position_bias_correction_is_clipped_and_can_be_switched_off() -> None:
    deep = LoggedAnswer("r1", "q", "acme", "agent-1", tuple(f"t{i}" for i in range(1, 31)))
    assert feedback_pairs({"r1": deep}, [_event("t30")]).pairs[0].weight == 10.0
    off = feedback_pairs({"r1": deep}, [_event("t30")], LearningPolicy(propensity_eta=0.0))
    assert off.pairs[0].weight == 1.0


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 400), st.integers(1, 10))
def test_one_key_s_spam_weighs_at_most_its_cap_however_many_requests_it_sends(spam: int, honest: int) -> None:
    policy = LearningPolicy(key_cap=10, tool_cap=30)
    answers = {f"s{i}": LoggedAnswer(f"s{i}", f"spam {i}", "evil", "spammer", ("honest-tool", "evil-tool"))
               for i in range(spam)}
    answers |= {f"h{i}": LoggedAnswer(f"h{i}", f"need {i}", "acme", "agent-1", ("honest-tool", "evil-tool"))
                for i in range(honest)}
    events = [FeedbackEvent(f"s{i}", "evil-tool", True, True, "evil", "spammer") for i in range(spam)]
    events += [FeedbackEvent(f"h{i}", "honest-tool", True, True, "acme", "agent-1") for i in range(honest)]
    out = feedback_pairs(answers, events, policy)
    spammed = sum(p.weight for p in out.pairs if p.key == "spammer")
    assert spammed <= policy.key_cap + 1e-9  # inverse-propensity weights included
    # an honest key within its cap is untouched (honest-tool is at rank 1: weight 1 per request)
    assert sum(p.weight for p in out.pairs if p.key == "agent-1") == pytest.approx(honest)
    assert ("spammer" in out.capped_keys) == (2 * spam > policy.key_cap)  # evil-tool at rank 2 weighs 2


def test_many_keys_together_cannot_push_one_tool_beyond_its_cap() -> None:
    policy = LearningPolicy(key_cap=5, tool_cap=20)
    answers = {f"r{i}": LoggedAnswer(f"r{i}", f"q{i}", f"t{i}", f"key-{i}", ("owned",)) for i in range(100)}
    events = [FeedbackEvent(f"r{i}", "owned", True, True, f"t{i}", f"key-{i}") for i in range(100)]
    out = feedback_pairs(answers, events, policy)
    assert sum(p.weight for p in out.pairs) == pytest.approx(20.0) and out.capped_tools == {"owned": 0.2}


# --- evidence counted per distinct key (issue 44, finding 2) ---------------------------------------------

def _flood(spam_requests: int, honest_keys: int = 0, per_honest: int = 3) -> tuple[dict[str, LoggedAnswer], list[FeedbackEvent]]:
    """One key "calling" the last of ten tools of each of its answers, beside ``honest_keys`` keys calling the first."""
    shown = tuple(f"t{i}" for i in range(1, 11))
    answers = {f"s{i}": LoggedAnswer(f"s{i}", f"need {i}", "acme", "flooder", shown) for i in range(spam_requests)}
    events = [FeedbackEvent(f"s{i}", "t10", True, True, "acme", "flooder") for i in range(spam_requests)]
    for k in range(honest_keys):
        for i in range(per_honest):
            rid = f"h{k}-{i}"
            answers[rid] = LoggedAnswer(rid, f"need {i}", "acme", f"agent-{k}", shown)
            events.append(FeedbackEvent(rid, "t1", True, True, "acme", f"agent-{k}"))
    return answers, events


def test_one_key_however_many_events_is_one_key_and_learning_from_it_is_refused() -> None:
    answers, events = _flood(100)
    made = feedback_pairs(answers, events * 20)  # 2,000 events: the same 100 reports, twenty times each
    assert made.keys == 1 and made.pairs_per_key == {"flooder": 100} and len(made.pairs) == 100
    with pytest.raises(TooFewKeysError, match=r"1 distinct key \('flooder': 100 pairs\), from 2000 events; "
                                              r"at least 5 distinct keys are needed.*learn_min_keys"):
        require_keys(made, LearningPolicy())


def test_a_few_keys_are_still_too_few_and_the_minimum_is_a_setting() -> None:
    answers, events = _flood(50, honest_keys=3)
    made = feedback_pairs(answers, events)
    assert made.keys == 4
    with pytest.raises(TooFewKeysError, match="4 distinct keys"):
        require_keys(made, LearningPolicy())
    require_keys(made, LearningPolicy(min_keys=4))  # an operator who accepts fewer keys says so


def test_with_just_enough_keys_a_flooding_key_weighs_no_more_than_the_lightest_one() -> None:
    answers, events = _flood(400, honest_keys=4, per_honest=2)  # four keys of weight 2 (rank 1, twice) beside it
    made = feedback_pairs(answers, events, LearningPolicy(key_cap=1000, tool_cap=1000))
    weight = {key: sum(p.weight for p in made.pairs if p.key == key) for key in made.pairs_per_key}
    assert weight["flooder"] == pytest.approx(2.0) and all(weight[f"agent-{k}"] == pytest.approx(2.0) for k in range(4))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.01, 1000.0), min_size=5, max_size=40), st.integers(2, 10))
def test_no_key_carries_more_than_its_share_once_capped(weights: list[float], min_keys: int) -> None:
    share = 1.0 / min_keys
    if len(weights) < min_keys:
        return
    cap = share_cap(weights, share)
    capped = [min(w, cap) for w in weights]
    assert max(capped) <= share * sum(capped) + 1e-6
    # the largest such cap: a little more and some key would be over its share
    if cap != float("inf"):
        more = [min(w, cap * 1.01) for w in weights]
        assert max(more) > share * sum(more) - 1e-6


def test_share_cap_examples() -> None:
    assert share_cap([1, 1, 1, 1, 100], 0.2) == pytest.approx(1.0)
    assert share_cap([1, 1, 1, 1, 1, 100], 0.2) == pytest.approx(1.25)  # 1.25 of 6.25 is a fifth
    assert share_cap([1, 1, 1, 1, 1], 0.2) == float("inf")
