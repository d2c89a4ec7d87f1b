"""The one ranker: base order, a reranker on the top M, fusion by λ, and the wire contract."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import torch

from toolsift.errors import ConfigError
from toolsift.records import FieldSignals, ParameterMatch
from toolsift.query.structured import StructuredQuery
from toolsift.ranker.fusion import FieldWeightRanker
from toolsift.ranker.ranking_pipeline import RankingPipeline
from toolsift.ranker.protocol import Candidate, RankRequest, RankResponse

WEIGHTS = {"description": 1.0, "parameters": 0.0, "response": 0.0, "examples": 0.0}


class WordOverlapReranker:
    """A deterministic reranker for fusion tests: the share of query words found in the document."""

    name = "word-overlap"
    kind = "cross-encoder"
    device = torch.device("cpu")
    batch_size = 8

    def __init__(self) -> None:
        self.calls: list[int] = []

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.calls.append(len(pairs))
        out = []
        for query, doc in pairs:
            words = set(query.lower().split())
            out.append(len(words & set(doc.lower().split())) / max(len(words), 1))
        return out


def candidate(i: int, description_score: float, document: str) -> FieldSignals:
    return FieldSignals(
        doc_id=f"t{i}", name=f"tool{i}", entity="tool", agent_id=None, first_stage_score=description_score,
        first_stage_rank=i, fields={"bm25": {"description": description_score}},
        parameters={"bm25": (ParameterMatch("city", True, 0.0),)}, parameter_names=(("city", True),),
        document=document,
    )


@pytest.fixture()
def request_() -> RankRequest:
    # Base order by description score: t1 > t2 > t3 > t4 > t5; only t3 and t5 mention the date.
    cands = [
        candidate(1, 5.0, "name: alarm set an alarm"),
        candidate(2, 4.0, "name: weather forecast"),
        candidate(3, 3.0, "name: today returns today's date"),
        candidate(4, 2.0, "name: stocks"),
        candidate(5, 1.0, "name: calendar what date is it today"),
    ]
    return RankRequest.build(StructuredQuery.from_text("what date is it today"), cands, top_k=5)


def order(response: RankResponse) -> list[str]:
    return [r.doc_id for r in response.results]


def test_without_a_reranker_the_base_ranker_decides(request_: RankRequest) -> None:
    answer = RankingPipeline(FieldWeightRanker(WEIGHTS)).rank(request_)
    assert order(answer) == ["t1", "t2", "t3", "t4", "t5"]
    assert answer.reranker is None and answer.reranked == 0
    assert all(r.reranker_score is None for r in answer.results)


def test_lambda_zero_keeps_the_base_order_but_reports_reranker_scores(request_: RankRequest) -> None:
    answer = RankingPipeline(FieldWeightRanker(WEIGHTS), WordOverlapReranker(), rerank_top=5, fusion_weight=0.0).rank(request_)
    assert order(answer) == ["t1", "t2", "t3", "t4", "t5"]
    assert answer.results[2].reranker_score == pytest.approx(2 / 5)  # "date" and "today" of five words


def test_lambda_one_orders_the_top_m_by_the_reranker_and_leaves_the_rest_below(request_: RankRequest) -> None:
    reranker = WordOverlapReranker()
    answer = RankingPipeline(FieldWeightRanker(WEIGHTS), reranker, rerank_top=3, fusion_weight=1.0).rank(request_)
    assert reranker.calls == [3]  # only the top M were scored
    assert order(answer)[0] == "t3"  # the only one of the top 3 that mentions the date
    assert order(answer)[3:] == ["t4", "t5"]  # beyond M: base order, below every reranked result
    assert min(r.score for r in answer.results[:3]) > max(r.score for r in answer.results[3:])
    head = answer.results[0]
    assert head.base_score == pytest.approx(0.5)  # t3: (3 − 1) / (5 − 1), the min-max normalised description
    assert head.contributions["reranker"] == pytest.approx(1.0)
    assert answer.reranked == 3 and answer.fusion_weight == 1.0 and answer.reranker == "word-overlap"


def test_fused_score_is_the_weighted_sum_of_min_max_normalised_scores(request_: RankRequest) -> None:
    answer = RankingPipeline(FieldWeightRanker(WEIGHTS), WordOverlapReranker(), rerank_top=5, fusion_weight=0.4).rank(request_)
    by_id = {r.doc_id: r for r in answer.results}
    # t5: lowest base score (0 after min-max), highest overlap (1 after min-max) → 0.6·0 + 0.4·1
    assert by_id["t5"].score == pytest.approx(0.4)
    # t1: highest base score, no overlap → 0.6·1 + 0.4·0
    assert by_id["t1"].score == pytest.approx(0.6)


def test_a_request_can_switch_the_reranker_off(request_: RankRequest) -> None:
    reranker = WordOverlapReranker()
    no_rerank = request_.model_copy(update={"rerank": False})
    answer = RankingPipeline(FieldWeightRanker(WEIGHTS), reranker, fusion_weight=1.0).rank(no_rerank)
    assert reranker.calls == [] and order(answer)[0] == "t1"


def test_no_candidates_give_an_empty_answer() -> None:
    req = RankRequest.build(StructuredQuery.from_text("anything"), [], top_k=3)
    assert RankingPipeline(FieldWeightRanker(WEIGHTS), WordOverlapReranker()).rank(req).results == []


@pytest.mark.parametrize("kwargs", [{"rerank_top": 0}, {"fusion_weight": 1.5}, {"fusion_weight": -0.1}])
def test_bad_settings_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        RankingPipeline(FieldWeightRanker(WEIGHTS), **kwargs)  # type: ignore[arg-type]


def test_signals_survive_the_wire_unchanged(request_: RankRequest) -> None:
    again = RankRequest.model_validate_json(request_.model_dump_json())
    assert again == request_
    original = candidate(3, 3.0, "name: today")
    assert Candidate.from_signals(original).signals() == original
    assert again.structured_query().text == "what date is it today"


def test_the_degraded_answer_is_first_stage_order_and_says_why(request_: RankRequest) -> None:
    shuffled = request_.model_copy(update={"candidates": list(reversed(request_.candidates)), "top_k": 2})
    answer = RankResponse.first_stage_order(shuffled, "service down")
    assert answer.degraded and answer.degraded_reason == "service down"
    assert order(answer) == ["t1", "t2"]


def test_requests_over_the_limits_are_refused() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="document"):
        Candidate(doc_id="x", name="x", document="y" * 20_001)
    with pytest.raises(ValidationError, match="top_k"):
        RankRequest(query={"tool_needs": [{"user_intent": "x"}]}, candidates=[], top_k=0)
