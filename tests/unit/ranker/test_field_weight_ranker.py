"""Ranking v0: min-max normalised field scores, summed with the field weights."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from toolsift.config import FIELDS
from toolsift.records import FieldSignals, ParameterMatch
from toolsift.ranker.fusion import FieldWeightRanker, min_max
from toolsift.ranker.types import Ranker
from toolsift.records import RankedTool


def _signals(
    doc_id: str,
    *,
    bm25: Mapping[str, float] | None = None,
    dense: Mapping[str, float] | None = None,
    rank: int = 0,
    parameters: Mapping[str, tuple[ParameterMatch, ...]] | None = None,
) -> FieldSignals:
    fields: dict[str, dict[str, float]] = {}
    if bm25 is not None:
        fields["bm25"] = {f: bm25.get(f, 0.0) for f in FIELDS}
    if dense is not None:
        fields["dense"] = {f: dense.get(f, 0.0) for f in FIELDS}
    return FieldSignals(
        doc_id=doc_id,
        name=f"name-{doc_id}",
        entity="tool",
        agent_id=f"agent-{doc_id}",
        first_stage_score=0.0,
        first_stage_rank=rank,
        fields=fields,
        parameters=parameters or {},
        arguments=1 if parameters and any(parameters.values()) else 0,
    )


# --- min_max -----------------------------------------------------------------------------------------


def test_min_max_of_nothing_is_nothing() -> None:
    assert min_max([]) == []


def test_min_max_maps_the_range_onto_zero_one() -> None:
    assert min_max([2.0, 4.0, 3.0]) == [0.0, 1.0, 0.5]
    assert min_max([-1.0, 1.0, 0.0]) == [0.0, 1.0, 0.5]


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([3.0, 3.0], [1.0, 1.0]),  # all candidates equally good
        ([0.7], [1.0]),  # a single positive score
        ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0]),  # nobody matched
        ([-0.4, -0.4], [0.0, 0.0]),  # equal negative cosines are no evidence
    ],
)
def test_min_max_of_a_constant_list_is_one_when_positive_else_zero(values: list[float], expected: list[float]) -> None:
    assert min_max(values) == expected


# --- ranking ------------------------------------------------------------------------------------------


WEIGHTS = {"description": 1.0, "parameters": 0.0, "response": 0.8, "examples": 0.0}


def _three() -> list[FieldSignals]:
    return [
        _signals("a", bm25={"description": 10.0, "response": 0.0}, rank=1),
        _signals("b", bm25={"description": 5.0, "response": 4.0}, rank=2),
        _signals("c", bm25={"description": 0.0, "response": 2.0}, rank=3),
    ]


def test_ranking_orders_by_the_weighted_sum_of_normalised_field_scores() -> None:
    ranked = FieldWeightRanker(WEIGHTS).rank(_three(), top_k=10)

    # description → a 1.0, b 0.5, c 0.0; response → a 0.0, b 1.0, c 0.5
    # score → a 1.0, b 0.5 + 0.8 = 1.3, c 0.8 * 0.5 = 0.4
    assert [r.doc_id for r in ranked] == ["b", "a", "c"]
    assert [r.score for r in ranked] == pytest.approx([1.3, 1.0, 0.4])


def test_every_result_explains_its_score_field_by_field() -> None:
    b = FieldWeightRanker(WEIGHTS).rank(_three(), top_k=10)[0]

    assert b.field_scores == {"description": 0.5, "parameters": 0.0, "response": 1.0, "examples": 0.0}
    assert b.contributions == pytest.approx({"description": 0.5, "parameters": 0.0, "response": 0.8, "examples": 0.0})
    assert sum(b.contributions.values()) == pytest.approx(b.score)
    assert b.raw_scores == {"bm25": {"description": 5.0, "parameters": 0.0, "response": 4.0, "examples": 0.0}}
    assert (b.name, b.entity, b.agent_id, b.first_stage_rank) == ("name-b", "tool", "agent-b", 2)


def test_contributions_sum_to_the_score_for_every_result() -> None:
    weights = {"description": 0.7, "parameters": 0.2, "response": 0.3, "examples": 0.4}
    cands = [
        _signals("x", bm25={"description": 3.0, "parameters": 1.0, "response": 0.5, "examples": 2.0}),
        _signals("y", bm25={"description": 1.0, "parameters": 2.0, "response": 1.5, "examples": 0.0}),
        _signals("z", bm25={"description": 2.0, "parameters": 0.0, "response": 1.0, "examples": 1.0}),
    ]
    for r in FieldWeightRanker(weights).rank(cands, top_k=3):
        assert sum(r.contributions.values()) == pytest.approx(r.score)
        assert all(0.0 <= s <= 1.0 for s in r.field_scores.values())


def test_top_k_cuts_the_list() -> None:
    ranked = FieldWeightRanker(WEIGHTS).rank(_three(), top_k=2)

    assert [r.doc_id for r in ranked] == ["b", "a"]


def test_no_candidates_rank_to_an_empty_list() -> None:
    assert FieldWeightRanker(WEIGHTS).rank([], top_k=5) == []


def test_candidates_without_any_field_score_all_score_zero_in_first_stage_order() -> None:
    """A client of the ranker service may send bare candidates (``fields`` empty): ranked, not a crash."""
    ranked = FieldWeightRanker({f: 1.0 for f in FIELDS}).rank([_signals("b", rank=2), _signals("a", rank=1)], top_k=5)

    assert [(r.doc_id, r.score) for r in ranked] == [("a", 0.0), ("b", 0.0)]


def test_ties_keep_the_first_stage_order_then_the_id() -> None:
    cands = [
        _signals("late", bm25={"description": 1.0}, rank=3),
        _signals("zeta", bm25={"description": 1.0}, rank=1),
        _signals("alpha", bm25={"description": 1.0}, rank=1),
    ]
    ranked = FieldWeightRanker(WEIGHTS).rank(cands, top_k=3)

    assert [r.doc_id for r in ranked] == ["alpha", "zeta", "late"]


def test_fields_without_a_weight_count_zero() -> None:
    ranker = FieldWeightRanker({"description": 2.0, "colour": 5.0})

    assert ranker.field_weights == {"description": 2.0, "parameters": 0.0, "response": 0.0, "examples": 0.0}


def test_hybrid_field_scores_average_the_normalised_kinds() -> None:
    cands = [
        _signals("a", bm25={"description": 10.0}, dense={"description": 0.2}),
        _signals("b", bm25={"description": 0.0}, dense={"description": 0.6}),
        _signals("c", bm25={"description": 5.0}, dense={"description": 0.6}),
    ]
    ranked = {r.doc_id: r for r in FieldWeightRanker({"description": 1.0}).rank(cands, top_k=3)}

    # bm25 → a 1.0, b 0.0, c 0.5; dense → a 0.0, b 1.0, c 1.0
    assert ranked["a"].field_scores["description"] == pytest.approx(0.5)
    assert ranked["b"].field_scores["description"] == pytest.approx(0.5)
    assert ranked["c"].field_scores["description"] == pytest.approx(0.75)
    assert ranked["c"].raw_scores["dense"]["description"] == 0.6


# --- missing required parameters -------------------------------------------------------------------------


def test_nothing_is_missing_when_the_query_has_no_arguments() -> None:
    no_args = _signals("t", bm25={}, parameters={"bm25": ()})
    never_scored = _signals("u", bm25={})

    ranked = FieldWeightRanker(WEIGHTS).rank([no_args, never_scored], top_k=2)

    assert [r.missing_required for r in ranked] == [(), ()]


def test_required_parameters_no_argument_covers_are_missing() -> None:
    cand = _signals(
        "t",
        bm25={},
        parameters={
            "bm25": (
                ParameterMatch("units", True, 0.0),
                ParameterMatch("city", True, 2.5),
                ParameterMatch("date", False, 0.0),  # optional: never missing
                ParameterMatch("api_key", True, 0.0),
            )
        },
    )

    (ranked,) = FieldWeightRanker(WEIGHTS).rank([cand], top_k=1)

    assert ranked.missing_required == ("api_key", "units")


def test_a_parameter_is_missing_only_when_every_kind_in_use_misses_it() -> None:
    cand = _signals(
        "t",
        bm25={},
        dense={},
        parameters={
            "bm25": (ParameterMatch("city", True, 0.0), ParameterMatch("units", True, 0.0), ParameterMatch("day", True, 1.0)),
            # dense threshold is 0.35: city (0.9) is covered semantically, units (0.35) and day (0.1) are not
            "dense": (ParameterMatch("city", True, 0.9), ParameterMatch("units", True, 0.35), ParameterMatch("day", True, 0.1)),
        },
    )

    (ranked,) = FieldWeightRanker(WEIGHTS).rank([cand], top_k=1)

    assert ranked.missing_required == ("units",)


def test_the_field_weight_ranker_satisfies_the_ranker_protocol() -> None:
    ranker: Ranker = FieldWeightRanker(WEIGHTS)
    result = ranker.rank(_three(), top_k=1)

    assert ranker.name == "field-weights-v0"
    assert all(isinstance(r, RankedTool) for r in result)


def test_a_derived_field_counts_at_the_derived_weight_of_its_field_weight() -> None:
    from dataclasses import replace

    weights = {"description": 1.0, "parameters": 0.0, "response": 0.0, "examples": 0.5}
    # The name-as-intent of "conference_search" matches "search"; "wiki" does not match "wikipedia".
    named = replace(_signals("named", bm25={"description": 6.0, "examples": 3.0}), derived=("examples",))
    described = _signals("described", bm25={"description": 8.0})
    floor = _signals("floor", bm25={"description": 2.0})
    cands = [named, described, floor]

    full = {r.doc_id: r for r in FieldWeightRanker(weights).rank(cands, top_k=3)}
    halved = {r.doc_id: r for r in FieldWeightRanker(weights, derived_weight=0.5).rank(cands, top_k=3)}

    assert full["named"].contributions["examples"] == pytest.approx(0.5)
    assert halved["named"].contributions["examples"] == pytest.approx(0.25)
    assert halved["named"].field_scores["examples"] == pytest.approx(1.0)  # the score shown is the field's own
    assert [r.doc_id for r in FieldWeightRanker(weights).rank(cands, top_k=3)][0] == "named"
    assert [r.doc_id for r in FieldWeightRanker(weights, derived_weight=0.5).rank(cands, top_k=3)][0] == "described"
