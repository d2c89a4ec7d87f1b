from __future__ import annotations

import pytest

from toolsift.ranker.metrics import mean_tracc, tracc
from toolsift.errors import BadQueryError, CatalogError


def test_exact_set_scores_one() -> None:
    assert tracc({"a", "b"}, {"b", "a"}) == 1.0


def test_one_wrong_extra_tool_costs_size_and_accuracy() -> None:
    # A={a,b}, B={a,c,d}: n1=2, n2=3, |A∪B|=4, |A∩B|=1 → (1 − 1/4) · 1/2 = 0.375
    assert tracc({"a", "b"}, {"a", "c", "d"}) == pytest.approx(0.375)


def test_superset_is_penalised_for_its_size() -> None:
    # A={a}, B={a,b,c}: |A∪B|=3, |n2−n1|=2 → (1 − 2/3) · 1/1 = 1/3
    assert tracc({"a"}, {"a", "b", "c"}) == pytest.approx(1 / 3)


def test_subset_is_penalised_for_size_and_missing_tools() -> None:
    # A={a,b,c,d}, B={a}: |A∪B|=4, |n2−n1|=3 → (1 − 3/4) · 1/4 = 0.0625
    assert tracc({"a", "b", "c", "d"}, {"a"}) == pytest.approx(0.0625)


def test_same_size_sets_score_their_accuracy() -> None:
    # n1 = n2, so the size factor is 1 and TRACC = |A∩B| / n1 = 2/3.
    assert tracc(["a", "b", "c"], ["a", "b", "x"]) == pytest.approx(2 / 3)


def test_disjoint_and_empty_recommendations_score_zero() -> None:
    assert tracc({"a"}, {"b"}) == 0.0
    assert tracc({"a", "b"}, set()) == 0.0


def test_duplicates_and_order_are_ignored() -> None:
    assert tracc(["a", "b"], ["b", "a", "a", "c"]) == tracc({"a", "b"}, {"a", "b", "c"})


def test_empty_gold_set_is_undefined() -> None:
    with pytest.raises(CatalogError, match="empty gold"):
        tracc(set(), {"a"})


def test_a_bare_string_is_refused() -> None:
    with pytest.raises(BadQueryError, match="not a string"):
        tracc("ab", {"a", "b"})


def test_mean_counts_missing_queries_as_zero_and_skips_empty_gold_sets() -> None:
    gold = {"q1": {"a"}, "q2": {"b", "c"}, "q3": set()}
    recommended = {"q1": {"a"}, "q3": {"x"}, "q9": {"y"}}
    assert mean_tracc(gold, recommended) == pytest.approx(0.5)


def test_mean_is_undefined_without_a_gold_tool() -> None:
    with pytest.raises(CatalogError, match="non-empty gold"):
        mean_tracc({"q": []}, {"q": ["a"]})
