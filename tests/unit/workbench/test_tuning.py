"""The workbench's tunable weights: the fixed ranker as sliders, validation, re-ranking, caching."""

from __future__ import annotations

import random

import pytest

from toolsift.errors import BadQueryError
from toolsift.records import FieldSignals, ParameterMatch
from toolsift.query.structured import StructuredQuery
from toolsift.ranker.artifact import WeightsArtifact, load_artifact
from toolsift.ranker.fusion import FieldWeightRanker
from toolsift.ranker.mftr import MFTRRanker, MFTRWeights, normalise_columns
from toolsift.workbench.tuning import CachedReranker, Proposal, parse_weights, rank_with, slider_ranges

FIELD_WEIGHTS = {"description": 1.0, "parameters": 0.3, "response": 0.3, "examples": 0.5}


def candidates(n: int = 30, seed: int = 7, *, arguments: int = 0) -> list[FieldSignals]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        out.append(FieldSignals(
            doc_id=f"t{i}", name=f"tool {i}", entity="tool", agent_id=f"a{i % 3}",
            first_stage_score=1.0 / (i + 1), first_stage_rank=i + 1,
            fields={"bm25": {f: rng.uniform(0, 20) for f in FIELD_WEIGHTS},
                    "dense": {f: rng.uniform(-0.1, 0.9) for f in FIELD_WEIGHTS}},
            parameters={"bm25": (ParameterMatch("city", True, 3.0 if i % 2 else 0.0),),
                        "dense": (ParameterMatch("city", True, 0.6 if i % 2 else 0.1),)} if arguments else {},
            arguments=arguments,
        ))
    return out


def test_the_fixed_field_weights_as_sliders_rank_exactly_like_the_fixed_ranker() -> None:
    signals = candidates()
    fixed = FieldWeightRanker(FIELD_WEIGHTS).rank(signals, top_k=30)
    tunable = MFTRRanker(MFTRWeights.from_field_weights(FIELD_WEIGHTS, ("bm25", "dense"))).rank(signals, top_k=30)
    assert [t.doc_id for t in tunable] == [t.doc_id for t in fixed]
    assert [round(t.score, 5) for t in tunable] == [round(t.score, 5) for t in fixed]


def test_the_sliders_count_derived_fields_like_the_fixed_ranker() -> None:
    from dataclasses import replace

    signals = [replace(c, derived=("examples",) if i % 3 == 0 else ()) for i, c in enumerate(candidates())]
    fixed = FieldWeightRanker(FIELD_WEIGHTS, derived_weight=0.5).rank(signals, top_k=30)
    weights = MFTRWeights.from_field_weights(FIELD_WEIGHTS, ("bm25", "dense"), derived_weight=0.5)
    tunable = MFTRRanker(MFTRWeights.from_dict(weights.to_dict())).rank(signals, top_k=30)
    assert [t.doc_id for t in tunable] == [t.doc_id for t in fixed]
    assert [round(t.score, 5) for t in tunable] == [round(t.score, 5) for t in fixed]
    with pytest.raises(BadQueryError, match="derived_weight"):
        parse_weights({"derived_weight": 2.0}, weights)


def test_normalising_maps_each_column_to_0_1_and_a_constant_column_to_1_when_positive() -> None:
    import torch

    fields = torch.tensor([[[2.0, 0.0, 5.0]], [[4.0, 0.0, 5.0]], [[3.0, 0.0, 5.0]]])
    out = normalise_columns(fields)
    assert out[:, 0, 0].tolist() == [0.0, 1.0, 0.5]
    assert out[:, 0, 1].tolist() == [0.0, 0.0, 0.0]
    assert out[:, 0, 2].tolist() == [1.0, 1.0, 1.0]


def test_weights_from_the_browser_are_checked_against_the_rankings_shape() -> None:
    like = MFTRWeights.from_field_weights(FIELD_WEIGHTS, ("bm25", "dense"))
    moved = parse_weights({"field_weights": {"bm25": {**FIELD_WEIGHTS}, "dense": {**FIELD_WEIGHTS, "examples": 0}}}, like)
    assert moved.field_weights["dense"]["examples"] == 0 and moved.normalise
    with pytest.raises(BadQueryError, match="penalty weights must not be negative"):
        parse_weights({"w_req": {"bm25": -1.0, "dense": 0.0}}, like)
    with pytest.raises(BadQueryError, match="kinds"):
        parse_weights({"kinds": ["dense"], "field_weights": {"dense": FIELD_WEIGHTS}, "tau": {"dense": 0.3},
                       "w_req": {"dense": 0}, "w_opt": {"dense": 0}}, like)
    with pytest.raises(BadQueryError, match="normalise"):
        parse_weights({"normalise": False}, like)
    with pytest.raises(BadQueryError, match="malformed"):
        parse_weights({"field_weights": {"bm25": {"description": "a lot"}}}, like)


def test_every_slider_range_holds_its_current_value_with_room_to_double_it() -> None:
    learned = MFTRWeights.initial(("dense",), field_weight=3.0, w_req=0.8)
    ranges = slider_ranges(learned)["dense"]
    assert ranges["description"][0] <= -6.0 and ranges["description"][1] >= 6.0  # learned weights may go negative
    assert ranges["w_req"][0] == 0.0 and ranges["w_req"][1] >= 1.6
    fixed = slider_ranges(MFTRWeights.from_field_weights(FIELD_WEIGHTS, ("bm25",)))["bm25"]
    assert fixed["description"][0] == 0.0  # normalised scores: a negative weight means nothing useful


def test_a_missing_required_parameter_penalty_moves_tools_that_miss_it_down() -> None:
    signals = candidates(arguments=1)
    base = MFTRWeights.from_field_weights(FIELD_WEIGHTS, ("bm25", "dense"))
    query = StructuredQuery.from_text("weather in Paris")
    before = rank_with(Proposal(base), query, signals, top_k=30)
    penalised = MFTRWeights.from_dict({**base.to_dict(), "w_req": {"bm25": 0.0, "dense": 5.0}})
    after = rank_with(Proposal(penalised), query, signals, top_k=30)
    missing = {t.doc_id for t in after if t.missing_required == ("city",)}
    assert missing and len(missing) < 30
    # with a large penalty every tool that misses the parameter ranks below every tool that covers it
    assert [t.doc_id in missing for t in after] == sorted((t.doc_id in missing for t in after))
    assert [t.doc_id for t in before] != [t.doc_id for t in after]


def test_tuned_weights_survive_the_artifact_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    weights = MFTRWeights.from_field_weights(FIELD_WEIGHTS, ("bm25", "dense"))
    saved = WeightsArtifact(weights, config={"tuned_in": "workbench"}).save(tmp_path, "tuned")
    loaded = load_artifact(tmp_path / "tuned")
    assert loaded.weights == weights and loaded.version == "tuned/v001"
    assert MFTRRanker(loaded.weights).name == "field-weights-tuned"
    assert saved.digest == loaded.digest


class CountingReranker:
    name, kind, batch_size = "counting", "cross-encoder", 8

    def __init__(self) -> None:
        import torch

        self.device = torch.device("cpu")
        self.scored: list[tuple[str, str]] = []

    def score_pairs(self, pairs):  # type: ignore[no-untyped-def]
        self.scored.extend(pairs)
        return [len(doc) / 100 for _, doc in pairs]


def test_the_cached_reranker_scores_each_pair_once() -> None:
    inner = CountingReranker()
    cached = CachedReranker(inner)  # type: ignore[arg-type]
    first = cached.score_pairs([("q", "abc"), ("q", "de")])
    again = cached.score_pairs([("q", "de"), ("q", "abc"), ("q", "xyz1")])
    assert first == [0.03, 0.02] and again == [0.02, 0.03, 0.04]
    assert inner.scored == [("q", "abc"), ("q", "de"), ("q", "xyz1")]
