"""Feedback becomes training pairs only when the query log confirms it, weighed for position and capped per key and tool."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolsift.ranker.feedback_pairs import FeedbackEvent, LearningPolicy, LoggedAnswer, feedback_pairs

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
