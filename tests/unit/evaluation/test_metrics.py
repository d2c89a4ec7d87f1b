from __future__ import annotations

import math

import ir_measures
import pytest

from toolsift.errors import BadQueryError
from toolsift.evaluation import DEFAULT_MEASURES, evaluate, evaluate_per_query, normalise_measures
from toolsift.ranker.metrics import completeness_at_k

# q1 has two relevant tools, ranked 1st and 3rd; q2 has one relevant tool, ranked 2nd.
QRELS = {"q1": {"a": 1, "b": 1, "n": 0}, "q2": {"c": 1}}
RUN = {
    "q1": {"a": 0.9, "x": 0.8, "b": 0.7, "y": 0.6, "z": 0.5, "n": 0.4},
    "q2": {"w": 0.9, "c": 0.8},
}


def test_hand_computed_values_for_one_query() -> None:
    per_query = evaluate_per_query(
        QRELS,
        RUN,
        [
            "ndcg@10",
            "recall@2",
            "recall@3",
            "precision@5",
            "map@5",
            "mrr@10",
            "completeness@2",
            "completeness@3",
        ],
    )
    q1 = per_query["q1"]
    # DCG = 1/log2(2) + 1/log2(4) = 1.5; ideal DCG = 1/log2(2) + 1/log2(3) ≈ 1.63093
    assert q1["ndcg@10"] == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    assert q1["ndcg@10"] == pytest.approx(0.919721, abs=1e-6)
    assert q1["recall@2"] == 0.5  # only "a" in the top 2
    assert q1["recall@3"] == 1.0
    assert q1["precision@5"] == pytest.approx(2 / 5)
    assert q1["map@5"] == pytest.approx((1 / 1 + 2 / 3) / 2)  # precision at ranks 1 and 3
    assert q1["mrr@10"] == 1.0
    assert q1["completeness@2"] == 0.0
    assert q1["completeness@3"] == 1.0
    assert per_query["q2"]["mrr@10"] == 0.5
    # One relevant tool at rank 2: 1/log2(3) over an ideal of 1.
    assert per_query["q2"]["ndcg@10"] == pytest.approx(1 / math.log2(3))


def test_mean_is_taken_over_the_qrels_queries() -> None:
    result = evaluate(QRELS, RUN, ["mrr@10", "recall@3"])
    assert result == {"mrr@10": pytest.approx(0.75), "recall@3": 1.0}


def test_query_absent_from_the_run_scores_zero_on_every_measure() -> None:
    qrels = {**QRELS, "q3": {"d": 1}}
    per_query = evaluate_per_query(qrels, RUN, DEFAULT_MEASURES)
    assert per_query["q3"] == dict.fromkeys(DEFAULT_MEASURES, 0.0)
    full = evaluate(QRELS, RUN, ["recall@3"])["recall@3"]
    assert evaluate(qrels, RUN, ["recall@3"])["recall@3"] == pytest.approx(full * 2 / 3)


def test_empty_run_scores_zero_everywhere() -> None:
    assert evaluate(QRELS, {}, DEFAULT_MEASURES) == dict.fromkeys(DEFAULT_MEASURES, 0.0)


def test_queries_without_relevant_tools_and_unjudged_run_queries_are_ignored() -> None:
    qrels = {**QRELS, "q4": {"e": 0}}
    run = {**RUN, "q4": {"e": 1.0}, "q5": {"f": 1.0}}
    assert set(evaluate_per_query(qrels, run)) == {"q1", "q2"}
    assert evaluate(qrels, run) == evaluate(QRELS, RUN)


def test_relevance_is_binary_at_the_threshold() -> None:
    graded = {"q1": {"a": 1, "b": 3}}
    flat = {"q1": {"a": 1, "b": 1}}
    assert evaluate(graded, RUN, ["ndcg@10"]) == evaluate(flat, RUN, ["ndcg@10"])
    # With rel_threshold=2 only "b" (rank 3) is relevant: nDCG = (1/log2(4)) / 1.
    assert evaluate(graded, RUN, ["ndcg@10"], rel_threshold=2) == {"ndcg@10": pytest.approx(0.5)}


def test_measure_names_are_case_insensitive_and_reported_in_lowercase() -> None:
    assert list(evaluate(QRELS, RUN, ["nDCG@10", "Recall@10"])) == [
        "ndcg@10",
        "recall@10",
    ]
    assert normalise_measures(["MAP@5", "map@5", "mrr@10"]) == ("map@5", "mrr@10")


@pytest.mark.parametrize("name", ["ndcg", "ndcg@0", "R@10", "f1@5", "recall@-1"])
def test_unknown_measure_is_rejected_with_the_known_names(name: str) -> None:
    with pytest.raises(BadQueryError, match="known measures: ndcg@K, recall@K"):
        evaluate(QRELS, RUN, [name])


def test_qrels_without_any_relevant_tool_are_rejected() -> None:
    with pytest.raises(BadQueryError, match="no query in qrels"):
        evaluate({"q": {"a": 0}}, RUN)


TIED_QRELS = {"t1": {"a": 1}, "t2": {"b": 1, "c": 1}, "t3": {"m": 1, "a": 1}}
TIED_RUN = {
    "t1": {"a": 0.5, "b": 0.5, "c": 0.5},
    "t2": {"a": 0.5, "b": 0.5, "c": 0.5, "d": 0.5},
    "t3": {"m": 0.7, "a": 0.3, "z": 0.3, "k": 0.3},
}


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_completeness_sees_the_same_ranking_as_ir_measures_on_tied_scores(k: int) -> None:
    # Completeness@K is 1 exactly when ir_measures' R@K is 1, on the raw tied run.
    metrics = ir_measures.iter_calc([ir_measures.R @ k], TIED_QRELS, TIED_RUN)
    recall = {m.query_id: m.value for m in metrics}
    completeness = completeness_at_k(TIED_QRELS, TIED_RUN, k)
    assert completeness == {qid: float(value == 1.0) for qid, value in recall.items()}


def test_evaluate_agrees_with_trec_eval_on_the_raw_tied_run() -> None:
    # Computed by ir_measures' pytrec_eval provider, which keeps trec_eval's tie rule.
    measures = [ir_measures.nDCG @ 3, ir_measures.R @ 2, ir_measures.RR, ir_measures.P @ 1]
    raw = ir_measures.calc_aggregate(measures, TIED_QRELS, TIED_RUN)
    ours = evaluate(TIED_QRELS, TIED_RUN, ["ndcg@3", "recall@2", "mrr@10", "precision@1"])
    assert ours == pytest.approx(
        {
            "ndcg@3": raw[ir_measures.nDCG @ 3],
            "recall@2": raw[ir_measures.R @ 2],
            "mrr@10": raw[ir_measures.RR],  # every run is shorter than 10, so the cutoff is moot
            "precision@1": raw[ir_measures.P @ 1],
        }
    )


def test_mrr_keeps_the_trec_eval_tie_rule_whichever_provider_computes_it() -> None:
    # ir_measures computes RR@10 with its msmarco provider, which orders ties by id ascending
    # ("a" first); toolsift hands it rank-derived scores, so tied tools stay c, b, a.
    per_query = evaluate_per_query(TIED_QRELS, TIED_RUN, ["mrr@10"])
    assert per_query["t1"]["mrr@10"] == pytest.approx(1 / 3)
    assert per_query["t2"]["mrr@10"] == pytest.approx(1 / 2)
