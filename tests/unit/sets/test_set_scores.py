"""Set scores as PTR reports them: K is the gold set's size, and the set's own size counts."""

from __future__ import annotations

import math

import pytest

from toolsift.sets.set_eval import set_scores


def test_an_exact_set_scores_one_everywhere() -> None:
    scores = set_scores({"a", "b"}, ["b", "a"])
    assert scores == {"tracc": 1.0, "recall@gt": 1.0, "ndcg@gt": 1.0, "set_size_error": 0.0, "set_size": 2.0}


def test_padding_keeps_recall_at_gt_but_costs_tracc_and_size() -> None:
    scores = set_scores({"a", "b"}, ["a", "b", "c", "d"])
    assert scores["recall@gt"] == 1.0 and scores["ndcg@gt"] == 1.0  # K = 2 looks at the first two only
    assert scores["tracc"] == pytest.approx((1 - 2 / 4) * 1.0)
    assert scores["set_size_error"] == 2.0 and scores["set_size"] == 4.0


def test_order_inside_k_sets_ndcg() -> None:
    scores = set_scores({"a", "b"}, ["x", "a"])
    assert scores["recall@gt"] == 0.5
    assert scores["ndcg@gt"] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    assert scores["tracc"] == pytest.approx((1 - 0 / 3) * 0.5)


def test_duplicates_count_once_and_an_empty_answer_scores_zero() -> None:
    assert set_scores({"a"}, ["a", "a"])["set_size"] == 1.0
    empty = set_scores({"a"}, [])
    assert empty["tracc"] == 0.0 and empty["recall@gt"] == 0.0 and empty["set_size_error"] == 1.0
