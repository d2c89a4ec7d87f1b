"""PTR's set decision: bundle acquisition, coverage trimming, multi-view additions, cold-start size."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pytest

from toolsift.errors import ConfigError
from toolsift.sets.history_store import AcquiredBundle
from toolsift.records import Bundle
from toolsift.sets.ptr import PTRConfig, SetCandidate, SetEvidence, calibrate, calibrate_cold, recommend_set

NEVER_TRIM = PTRConfig(keep_threshold=-1.0, solve_threshold=-1.0)


def evidence(
    *,
    needs: Sequence[str] = ("plan a meal",),
    coverage: Mapping[str, Sequence[float]] | None = None,
    bundles: Sequence[tuple[str, Sequence[str], float, float]] = (),
    candidates: Sequence[tuple[str, float]] = (),
    need_votes: Sequence[Mapping[str, float]] = (),
    cooccurrence: Mapping[str, Mapping[str, int]] | None = None,
) -> SetEvidence:
    return SetEvidence(
        request=" and ".join(needs),
        needs=tuple(needs),
        candidates=tuple(SetCandidate(t, t.upper(), s) for t, s in candidates),
        coverage_of={t: np.asarray(v, dtype=np.float64) for t, v in (coverage or {}).items()},
        bundles=tuple(AcquiredBundle(Bundle(b, tuple(tools)), vote, bm25) for b, tools, vote, bm25 in bundles),
        need_votes=tuple(need_votes),
        cooccurrence=cooccurrence or {},
    )


class TestBundleAcquisition:
    def test_the_vote_alone_picks_the_bundle_its_neighbours_used(self) -> None:
        ev = evidence(bundles=[("a", ["t1", "t2"], 2.0, 1.0), ("b", ["t3"], 0.5, 9.0)])
        chosen = recommend_set(ev, PTRConfig(bm25_weight=0.0))
        assert chosen.bundle_id == "a"
        assert chosen.tool_ids == ["t1", "t2"]

    def test_bm25_alone_picks_the_bundle_whose_text_matches(self) -> None:
        ev = evidence(bundles=[("a", ["t1", "t2"], 2.0, 1.0), ("b", ["t3"], 0.5, 9.0)])
        assert recommend_set(ev, PTRConfig(bm25_weight=1.0)).bundle_id == "b"

    def test_every_kept_tool_says_which_bundle_and_need(self) -> None:
        ev = evidence(needs=["plan a meal"], coverage={"t1": [0.4]},
                      bundles=[("a", ["t1"], 1.0, 1.0)])
        member = recommend_set(ev, NEVER_TRIM).members[0]
        assert (member.reason, member.need, member.coverage) == ("kept", "plan a meal", 0.4)
        assert "in bundle a" in member.why


class TestCoverageMapping:
    def test_a_tool_covering_no_need_is_dropped_with_its_reason(self) -> None:
        ev = evidence(coverage={"t1": [0.5], "t2": [0.05]}, bundles=[("a", ["t1", "t2"], 1.0, 1.0)])
        chosen = recommend_set(ev, PTRConfig(keep_threshold=0.2))
        assert chosen.tool_ids == ["t1"]
        assert chosen.dropped[0][0] == "t2" and "covers no need" in chosen.dropped[0][1]

    def test_the_set_is_never_emptied_by_trimming(self) -> None:
        ev = evidence(coverage={"t1": [0.05], "t2": [0.1]}, bundles=[("a", ["t1", "t2"], 1.0, 1.0)])
        assert recommend_set(ev, PTRConfig(keep_threshold=0.9)).tool_ids == ["t2"]

    def test_each_tool_is_mapped_to_the_need_it_covers_best(self) -> None:
        ev = evidence(needs=["book a flight", "find a hotel"], coverage={"f": [0.7, 0.1], "h": [0.2, 0.6]},
                      bundles=[("a", ["f", "h"], 1.0, 1.0)])
        assert {m.tool_id: m.need for m in recommend_set(ev, NEVER_TRIM).members} == {
            "f": "book a flight", "h": "find a hotel"}


class TestMultiViewAdditions:
    def _unsolved_hotel(self, **extra: object) -> SetEvidence:
        return evidence(
            needs=["book a flight", "find a hotel"],
            coverage={"f": [0.7, 0.1], "h1": [0.1, 0.6], "h2": [0.1, 0.5], "x": [0.0, 0.0]},
            bundles=[("a", ["f"], 1.0, 1.0)],
            candidates=[("f", 1.0), ("h1", 0.8), ("h2", 0.7)],
            need_votes=[{"f": 2.0}, {"h2": 1.5, "h1": 0.4}],
            cooccurrence={"f": {"h2": 5, "x": 1}},
            **extra,  # type: ignore[arg-type]
        )

    def test_an_unsolved_need_gets_the_tool_most_views_agree_on(self) -> None:
        chosen = recommend_set(self._unsolved_hotel(), PTRConfig(solve_threshold=0.3, min_votes=2))
        assert chosen.tool_ids == ["f", "h2"]
        added = chosen.members[1]
        assert (added.reason, added.need) == ("added", "find a hotel")
        assert "3 of 3 views agree" in added.why
        assert chosen.unsolved == ()

    def test_no_tool_is_added_when_too_few_views_agree(self) -> None:
        chosen = recommend_set(self._unsolved_hotel(), PTRConfig(solve_threshold=0.3, min_votes=4))
        assert chosen.tool_ids == ["f"]
        assert chosen.unsolved == ("find a hotel",)

    def test_a_solved_need_adds_nothing(self) -> None:
        chosen = recommend_set(self._unsolved_hotel(), PTRConfig(solve_threshold=-1.0, min_votes=1))
        assert chosen.tool_ids == ["f"]


class TestColdStart:
    def test_the_set_is_the_head_within_the_score_ratio(self) -> None:
        ev = evidence(candidates=[("a", 1.0), ("b", 0.8), ("c", 0.3), ("d", 0.2)])
        chosen = recommend_set(ev, PTRConfig(cold_ratio=0.5, max_size=3))
        assert chosen.tool_ids == ["a", "b"]
        assert chosen.bundle_id is None and all(m.reason == "retrieved" for m in chosen.members)

    def test_the_set_size_is_capped(self) -> None:
        ev = evidence(candidates=[("a", 1.0), ("b", 0.99), ("c", 0.98), ("d", 0.97)])
        assert len(recommend_set(ev, PTRConfig(max_size=3)).members) == 3

    def test_a_further_need_adds_its_closest_retrieved_tool(self) -> None:
        ev = evidence(needs=["book a flight", "find a hotel"],
                      coverage={"f": [0.7, 0.1], "f2": [0.6, 0.1], "h": [0.1, 0.6]},
                      candidates=[("f", 1.0), ("f2", 0.2), ("h", 0.1)])
        chosen = recommend_set(ev, PTRConfig(cold_ratio=0.5, max_size=3))
        assert chosen.tool_ids == ["f", "h"]
        assert chosen.members[1].need == "find a hotel"

    def test_one_need_with_many_similar_tools_cannot_fill_the_set_alone(self) -> None:
        ev = evidence(needs=["find today's headlines", "convert it to PDF"],
                      coverage={"pdf1": [0.1, 0.8], "pdf2": [0.1, 0.7], "pdf3": [0.1, 0.6], "news": [0.7, 0.0]},
                      candidates=[("pdf1", 1.0), ("pdf2", 0.9), ("pdf3", 0.8)])
        chosen = recommend_set(ev, PTRConfig(cold_ratio=0.3, max_size=3))
        assert chosen.tool_ids == ["news", "pdf1", "pdf2"]
        assert chosen.members[0].reason == "added"  # found by the need's own retrieval, not the request's
        assert [m.need for m in chosen.members[:2]] == ["find today's headlines", "convert it to PDF"]

    def test_no_candidates_gives_an_empty_set_with_every_need_unsolved(self) -> None:
        chosen = recommend_set(evidence(), PTRConfig())
        assert chosen.tool_ids == [] and chosen.unsolved == ("plan a meal",)


class TestCalibration:
    def test_it_keeps_the_conservative_point_when_trimming_does_not_help(self) -> None:
        ev = evidence(coverage={"t1": [0.5], "t2": [0.05]}, bundles=[("a", ["t1", "t2"], 1.0, 1.0)])
        config, score = calibrate([ev], [["t1", "t2"]])
        assert (config.keep_threshold, config.solve_threshold) == (-1.0, -1.0)
        assert score == 1.0

    def test_it_learns_to_drop_when_the_bundles_carry_extra_tools(self) -> None:
        ev = evidence(coverage={"t1": [0.5], "t2": [0.05]}, bundles=[("a", ["t1", "t2"], 1.0, 1.0)])
        config, score = calibrate([ev], [["t1"]])
        assert config.keep_threshold > 0.05 and score == 1.0

    def test_it_learns_the_acquisition_weight(self) -> None:
        by_bm25 = evidence(bundles=[("a", ["t1"], 2.0, 1.0), ("b", ["t2"], 0.5, 9.0)])
        config, _ = calibrate([by_bm25], [["t2"]])
        assert config.bm25_weight >= 0.75

    def test_the_cold_ratio_is_learned_with_the_bundles_withheld(self) -> None:
        ev = evidence(candidates=[("a", 1.0), ("b", 0.45), ("c", 0.35)], bundles=[("x", ["a", "b", "c"], 1.0, 1.0)])
        assert calibrate_cold([ev], [["a", "b"]])[0].cold_ratio == 0.4
        assert calibrate_cold([ev], [["a", "b", "c"]])[0].cold_ratio == 0.2

    def test_gold_must_match_the_evidence(self) -> None:
        with pytest.raises(ConfigError):
            calibrate([], [])


def test_settings_are_checked_and_round_trip() -> None:
    with pytest.raises(ConfigError, match="bm25_weight"):
        PTRConfig(bm25_weight=1.5)
    with pytest.raises(ConfigError, match="cold_ratio"):
        PTRConfig(cold_ratio=0.0)
    config = PTRConfig(keep_threshold=0.2, min_votes=3)
    assert PTRConfig.from_dict({**config.to_dict(), "unknown": 1}) == config
