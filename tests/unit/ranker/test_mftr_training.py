"""Training MFTR's weights with the pairwise logistic loss."""

from __future__ import annotations

import random

import pytest

from toolsift.config import FIELDS
from toolsift.records import FieldSignals, ParameterMatch
from toolsift.ranker.mftr import MFTRRanker
from toolsift.ranker.training import TrainingConfig, TrainingQuery, pick_device, train_mftr
from toolsift.errors import ConfigError


def _cand(doc_id: str, description: float, response: float, covered: bool) -> FieldSignals:
    return FieldSignals(
        doc_id=doc_id, name=doc_id, entity="tool", agent_id=None, first_stage_score=0.0, first_stage_rank=0,
        fields={"dense": {"description": description, "parameters": 0.8 if covered else 0.1,
                          "response": response, "examples": 0.0}},
        parameters={"dense": (ParameterMatch("p", True, 0.8 if covered else 0.1),)},
        arguments=1,
    )


def _queries(n: int, seed: int) -> list[TrainingQuery]:
    """Positives: high description, noise response, their parameter covered; negatives often not."""
    rng = random.Random(seed)
    out = []
    for q in range(n):
        pos = _cand(f"q{q}-pos", rng.uniform(0.6, 0.9), rng.uniform(0, 1), True)
        negs = tuple(
            _cand(f"q{q}-neg{i}", rng.uniform(0.2, 0.65), rng.uniform(0, 1), rng.random() < 0.3) for i in range(16)
        )
        out.append(TrainingQuery(f"q{q}", (pos,), negs))
    return out


def test_training_learns_to_put_positives_first_on_held_out_queries() -> None:
    outcome = train_mftr(_queries(60, seed=1), ("dense",), TrainingConfig(epochs=5, seed=0, device="cpu"))
    ranker = MFTRRanker(outcome.weights)

    held_out = _queries(40, seed=2)
    top1 = sum(ranker.rank([*q.positives, *q.negatives], top_k=1)[0].doc_id.endswith("pos") for q in held_out)

    assert top1 / len(held_out) > 0.8
    assert outcome.weights.field_weights["dense"]["description"] > abs(outcome.weights.field_weights["dense"]["response"])
    assert outcome.pairs == 60 * 16
    assert outcome.epoch_losses[-1] < outcome.epoch_losses[0]


def test_training_keeps_tau_in_range_and_penalty_weights_non_negative() -> None:
    weights = train_mftr(_queries(30, seed=3), ("dense",), TrainingConfig(epochs=3, device="cpu")).weights

    assert 0.0 <= weights.tau["dense"] <= 1.0
    assert weights.w_req["dense"] >= 0.0 and weights.w_opt["dense"] >= 0.0
    assert set(weights.field_weights["dense"]) == set(FIELDS)


def test_training_is_reproducible_for_a_seed() -> None:
    a = train_mftr(_queries(20, seed=4), ("dense",), TrainingConfig(epochs=2, seed=7, device="cpu")).weights
    b = train_mftr(_queries(20, seed=4), ("dense",), TrainingConfig(epochs=2, seed=7, device="cpu")).weights

    assert a == b


def test_training_without_pairs_is_an_error() -> None:
    with pytest.raises(ConfigError, match="no training pairs"):
        train_mftr([TrainingQuery("q", (), ())], ("dense",))


def test_auto_device_is_cpu_without_cuda() -> None:
    import torch

    assert pick_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")


def test_unit_weights_train_exactly_as_before_and_weights_shift_the_balance() -> None:
    queries = _queries(30, seed=5)
    config = TrainingConfig(epochs=3, seed=0, device="cpu")
    plain = train_mftr(queries, ("dense",), config)
    ones = train_mftr([TrainingQuery(q.query_id, q.positives, q.negatives, 1.0) for q in queries], ("dense",), config)
    assert ones.weights == plain.weights and ones.epoch_losses == plain.epoch_losses
    # weights change what is learned: here half the queries count for nothing
    half = train_mftr([TrainingQuery(q.query_id, q.positives, q.negatives, float(i % 2)) for i, q in enumerate(queries)],
                      ("dense",), config)
    assert half.weights != plain.weights
    with pytest.raises(ConfigError, match="weight must be a number >= 0"):
        train_mftr([TrainingQuery("q", queries[0].positives, queries[0].negatives, float("nan"))], ("dense",), config)


FIXED = {"description": 0.5, "parameters": 0.2, "response": 0.2, "examples": 0.1}


def test_a_warm_start_from_the_fixed_weights_ranks_like_them_before_any_evidence_moves_it() -> None:
    from toolsift.ranker.fusion import FieldWeightRanker
    from toolsift.ranker.mftr import FIELDS_AND_RANK, MFTRWeights

    start = MFTRWeights.from_field_weights(FIXED, ("dense",)).with_features(FIELDS_AND_RANK)
    candidates = [*_queries(1, seed=4)[0].positives, *_queries(1, seed=4)[0].negatives]
    fixed = [t.doc_id for t in FieldWeightRanker(FIXED).rank(candidates, top_k=17)]
    assert [t.doc_id for t in MFTRRanker(start).rank(candidates, top_k=17)] == fixed

    # a prior far stronger than the data keeps the learned weights at the start (within Adam's step
    # of 0.01, around which they oscillate), on the start's scale
    held = train_mftr(_queries(20, seed=5), ("dense",),
                      TrainingConfig(epochs=2, learning_rate=0.01, prior=1e6, features=FIELDS_AND_RANK, device="cpu"),
                      start=start).weights
    assert held.normalise and held.features == FIELDS_AND_RANK
    for f in FIELDS_AND_RANK:
        assert held.field_weights["dense"][f] == pytest.approx(start.field_weights["dense"][f], abs=0.02)


def test_a_warm_start_learns_on_scores_normalised_over_everything_the_ranker_saw() -> None:
    """Each query's positive is the best of its pair but the worst of its context on description:
    normalised over the context the description weight must fall, over the pair alone it would rise."""
    from dataclasses import replace

    from toolsift.ranker.mftr import MFTRWeights

    start = MFTRWeights.from_field_weights(FIXED, ("dense",))
    rng = random.Random(7)
    queries = []
    for q in range(40):
        pos = replace(_cand(f"q{q}-pos", 0.5, 0.9, True), parameters={})
        neg = replace(_cand(f"q{q}-neg", 0.6, 0.1, True), parameters={})
        context = tuple(replace(_cand(f"q{q}-c{i}", rng.uniform(0.8, 1.0), rng.uniform(0, 1), True), parameters={})
                        for i in range(8))
        queries.append(TrainingQuery(f"q{q}", (pos,), (neg,), 1.0, (*context, pos, neg)))
    config = TrainingConfig(epochs=20, learning_rate=0.05, device="cpu")
    learned = train_mftr(queries, ("dense",), config, start=start).weights.field_weights["dense"]
    assert learned["response"] > start.field_weights["dense"]["response"]
    assert learned["description"] < start.field_weights["dense"]["description"]


def test_a_warm_start_must_read_the_kinds_it_trains_on() -> None:
    from toolsift.ranker.mftr import MFTRWeights

    with pytest.raises(ConfigError, match="start weights"):
        train_mftr(_queries(5, seed=1), ("dense",), TrainingConfig(device="cpu"),
                   start=MFTRWeights.from_field_weights(FIXED, ("bm25", "dense")))
