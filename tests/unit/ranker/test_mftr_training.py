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
