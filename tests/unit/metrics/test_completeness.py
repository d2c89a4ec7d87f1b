from __future__ import annotations

import math

import pytest

from toolsift.ranker.metrics import completeness_at_k, mean_completeness_at_k, rank_tools
from toolsift.errors import BadQueryError, CatalogError, ConfigError


def test_query_scores_one_when_every_relevant_tool_is_in_the_top_k() -> None:
    qrels = {"q": {"a": 1, "b": 1}}
    run = {"q": {"a": 0.9, "x": 0.8, "b": 0.7, "y": 0.1}}
    assert completeness_at_k(qrels, run, 3) == {"q": 1.0}


def test_query_scores_zero_when_one_relevant_tool_falls_below_k() -> None:
    qrels = {"q": {"a": 1, "b": 1}}
    run = {"q": {"a": 0.9, "x": 0.8, "b": 0.7}}
    assert completeness_at_k(qrels, run, 2) == {"q": 0.0}


def test_non_relevant_judged_tools_are_not_required() -> None:
    qrels = {"q": {"a": 1, "n": 0}}
    assert completeness_at_k(qrels, {"q": {"a": 1.0}}, 1) == {"q": 1.0}


def test_query_absent_from_the_run_scores_zero() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}}
    assert completeness_at_k(qrels, run, 10) == {"q1": 1.0, "q2": 0.0}
    assert mean_completeness_at_k(qrels, run, 10) == 0.5


def test_query_without_relevant_tools_is_excluded_from_the_mean() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 0}}
    run = {"q1": {"a": 1.0}, "q2": {"b": 1.0}}
    assert completeness_at_k(qrels, run, 5) == {"q1": 1.0}
    assert mean_completeness_at_k(qrels, run, 5) == 1.0


def test_rel_threshold_decides_which_grades_are_relevant() -> None:
    qrels = {"q": {"a": 2, "b": 1}}
    run = {"q": {"a": 0.9, "x": 0.8, "b": 0.7}}
    assert completeness_at_k(qrels, run, 2) == {"q": 0.0}
    assert completeness_at_k(qrels, run, 2, rel_threshold=2) == {"q": 1.0}


def test_ties_are_broken_by_tool_id_descending_like_trec_eval() -> None:
    assert rank_tools({"a": 0.5, "c": 0.5, "b": 0.5, "z": 0.9, "y": 0.1}) == [
        "z",
        "c",
        "b",
        "a",
        "y",
    ]
    run = {"q": {"a": 0.5, "b": 0.5}}
    # Tied at the cutoff: "b" sorts before "a", so only "b" makes the top 1.
    assert completeness_at_k({"q": {"b": 1}}, run, 1) == {"q": 1.0}
    assert completeness_at_k({"q": {"a": 1}}, run, 1) == {"q": 0.0}


def test_cutoff_below_one_is_rejected() -> None:
    with pytest.raises(ConfigError, match="k must be at least 1"):
        completeness_at_k({"q": {"a": 1}}, {"q": {"a": 1.0}}, 0)


def test_nan_score_is_rejected() -> None:
    with pytest.raises(BadQueryError, match="NaN"):
        completeness_at_k({"q": {"a": 1}}, {"q": {"a": math.nan}}, 1)


def test_mean_is_undefined_without_any_relevant_tool() -> None:
    with pytest.raises(CatalogError, match="no query"):
        mean_completeness_at_k({"q": {"a": 0}}, {"q": {"a": 1.0}}, 1)
