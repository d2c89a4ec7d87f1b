"""MFTR's relevance model (§3.4): field weights, bias, and the missing-parameter penalty."""

from __future__ import annotations

import math

import pytest
import torch

from toolsift.config import FIELDS
from toolsift.errors import BadQueryError
from toolsift.records import FieldSignals, ParameterMatch
from toolsift.ranker.mftr import FIRST_STAGE_RANK, MFTRModel, MFTRRanker, MFTRWeights, features


def _signals(doc_id: str, fields: dict[str, float], params: list[tuple[str, bool, float]] = (), kind: str = "dense",
             rank: int = 1) -> FieldSignals:  # type: ignore[assignment]
    return FieldSignals(
        doc_id=doc_id, name=doc_id, entity="tool", agent_id=None, first_stage_score=0.0, first_stage_rank=rank,
        fields={kind: {f: fields.get(f, 0.0) for f in FIELDS}},
        parameters={kind: tuple(ParameterMatch(n, r, s) for n, r, s in params)},
        arguments=1,
    )


def _weights(**over: object) -> MFTRWeights:
    base = dict(
        kinds=("dense",),
        field_weights={"dense": {"description": 2.0, "parameters": 1.0, "response": 0.5, "examples": 0.25}},
        bias=0.1, tau={"dense": 0.4}, w_req={"dense": 3.0}, w_opt={"dense": 1.0},
    )
    base.update(over)
    return MFTRWeights(**base)  # type: ignore[arg-type]


def _score(weights: MFTRWeights, cand: FieldSignals) -> float:
    with torch.no_grad():
        return float(MFTRModel(weights)(features([cand], weights.kinds))[0])


def test_score_is_the_weighted_field_sum_plus_bias_without_parameters() -> None:
    cand = _signals("t", {"description": 0.5, "response": 0.2, "examples": 0.4})

    assert _score(_weights(), cand) == pytest.approx(2.0 * 0.5 + 0.5 * 0.2 + 0.25 * 0.4 + 0.1)


def test_a_required_parameter_below_tau_costs_w_req_and_one_above_costs_nothing() -> None:
    plain = _score(_weights(), _signals("t", {}))
    missing = _score(_weights(), _signals("t", {}, [("city", True, 0.0)]))
    covered = _score(_weights(), _signals("t", {}, [("city", True, 0.9)]))

    # The penalty follows the paper's text: it activates when s_pj falls below τ (the printed
    # Eq. 5 has the sign flipped).
    assert missing == pytest.approx(plain - 3.0 / (1 + math.exp(-15 * 0.4)), abs=1e-5)
    assert covered == pytest.approx(plain - 3.0 / (1 + math.exp(-15 * (0.4 - 0.9))), abs=1e-5)
    assert plain - missing > 2.9
    assert plain - covered < 0.01


def test_optional_parameters_use_w_opt() -> None:
    req = _score(_weights(), _signals("t", {}, [("x", True, 0.0)]))
    opt = _score(_weights(), _signals("t", {}, [("x", False, 0.0)]))

    assert opt - req == pytest.approx((3.0 - 1.0) * (1 / (1 + math.exp(-6))), abs=1e-5)


def test_the_penalty_can_be_switched_off_for_the_ablation() -> None:
    weights = _weights(penalty=False)

    assert _score(weights, _signals("t", {}, [("x", True, 0.0)])) == pytest.approx(_score(weights, _signals("t", {})))


def test_padding_slots_of_narrower_tools_carry_no_penalty() -> None:
    wide = _signals("wide", {}, [("a", True, 0.9), ("b", True, 0.9), ("c", True, 0.9)])
    narrow = _signals("narrow", {}, [("a", True, 0.9)])
    batch = features([wide, narrow], ("dense",))

    with torch.no_grad():
        penalties = MFTRModel(_weights()).parameter_penalties(batch).sum(dim=(1, 2)).tolist()

    assert batch.params.shape[-1] == 3
    assert penalties[1] == pytest.approx(penalties[0] / 3, rel=1e-4)


def test_ranker_orders_by_score_and_explains_each_result() -> None:
    good = _signals("good", {"description": 0.8}, [("city", True, 0.9)], rank=2)
    unusable = _signals("unusable", {"description": 0.85}, [("city", True, 0.0)], rank=1)

    ranked = MFTRRanker(_weights()).rank([unusable, good], top_k=2)

    assert [r.doc_id for r in ranked] == ["good", "unusable"]
    assert ranked[1].missing_required == ("city",)
    assert ranked[0].missing_required == ()
    assert set(ranked[0].contributions) == {*FIELDS, "bias", "penalty"}
    assert ranked[0].score == pytest.approx(sum(ranked[0].contributions.values()), abs=1e-5)


def test_weights_for_another_score_kind_are_refused() -> None:
    with pytest.raises(BadQueryError, match="retriever"):
        MFTRRanker(_weights()).rank([_signals("t", {}, kind="bm25")], top_k=1)


def test_weights_survive_a_round_trip_through_json_form() -> None:
    weights = _weights()

    assert MFTRWeights.from_dict(weights.to_dict()) == weights


def test_first_stage_weights_drop_negative_fields_and_scale_to_one() -> None:
    weights = _weights(field_weights={"dense": {"description": 4.0, "parameters": 2.0, "response": -1.0, "examples": 1.0}})

    assert weights.first_stage_weights() == {"description": 1.0, "parameters": 0.5, "response": 0.0, "examples": 0.25}


def test_field_shares_are_fractions_of_the_absolute_weights() -> None:
    shares = _weights(field_weights={"dense": {"description": 2.0, "parameters": -1.0, "response": 1.0, "examples": 0.0}}).field_shares("dense")

    assert shares == {"description": 0.5, "parameters": 0.25, "response": 0.25, "examples": 0.0}


def test_mean_of_fields_is_the_unweighted_average_without_penalty() -> None:
    weights = MFTRWeights.mean_of_fields(("bm25", "dense"))

    assert all(w == 0.125 for k in weights.kinds for w in weights.field_weights[k].values())
    assert weights.penalty is False


def test_the_first_stage_rank_feature_is_a_dcg_discount_and_zero_outside_the_first_stage() -> None:
    names = (*FIELDS, FIRST_STAGE_RANK)
    cands = [_signals("a", {}, rank=1), _signals("b", {}, rank=3), _signals("c", {}, rank=0)]

    batch = features(cands, ("dense",), names=names)

    assert batch.fields[:, 0, -1].tolist() == pytest.approx([1.0, 0.5, 0.0])


def test_only_the_first_kind_carries_the_rank_feature_so_hybrid_weights_do_not_count_it_twice() -> None:
    cand = FieldSignals(doc_id="a", name="a", entity="tool", agent_id=None, first_stage_score=0.0, first_stage_rank=1,
                        fields={"bm25": {}, "dense": {}})

    batch = features([cand], ("bm25", "dense"), names=(*FIELDS, FIRST_STAGE_RANK))

    assert batch.fields[0, :, -1].tolist() == [1.0, 0.0]


def test_a_learned_rank_weight_lifts_the_first_stage_favourite_and_survives_json() -> None:
    names = (*FIELDS, FIRST_STAGE_RANK)
    weights = MFTRWeights.initial(("dense",), features=names, penalty=False)
    weights = MFTRWeights.from_dict({**weights.to_dict(), "field_weights": {"dense": {
        "description": 1.0, "parameters": 0.0, "response": 0.0, "examples": 0.0, FIRST_STAGE_RANK: 0.5}}})
    tied = [_signals("late", {"description": 0.5}, rank=7), _signals("early", {"description": 0.5}, rank=1)]

    ranked = MFTRRanker(weights).rank(tied, 2)

    assert [t.doc_id for t in ranked] == ["early", "late"]
    assert ranked[0].contributions[FIRST_STAGE_RANK] == pytest.approx(0.5)
    assert MFTRWeights.from_dict(weights.to_dict()) == weights
