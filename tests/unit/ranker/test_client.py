"""RemoteRanker against a real service over loopback HTTP: it never hangs and never fails a search.

Down, slow, unauthorised or failing services give the first-stage order marked ``degraded`` with the
reason; a request the service rejects as malformed is a bug on the caller's side and raises.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest
import torch

from toolsift.config import DEFAULT_FIELD_WEIGHTS, FIELDS
from toolsift.errors import BadQueryError
from toolsift.records import FieldSignals
from toolsift.query.structured import StructuredQuery
from toolsift.ranker.ranker_client import RemoteRanker
from toolsift.ranker.fusion import FieldWeightRanker
from toolsift.ranker.ranking_pipeline import RankingPipeline
from toolsift.ranker.protocol import RankRequest
from toolsift.ranker.ranker_service import create_app
from toolsift.records import RankedTool

TOKEN = "client-test-token"


def _request(top_k: int = 4) -> RankRequest:
    """Six candidates whose field scores reverse their first-stage order."""
    candidates = [
        FieldSignals(doc_id=f"tool_{i}", name=f"tool {i}", entity="tool", agent_id=None,
                     first_stage_score=float(10 - i), first_stage_rank=i + 1,
                     fields={"bm25": {f: float(i) for f in FIELDS}}, document=f"name: tool {i}")
        for i in range(6)
    ]
    return RankRequest.build(StructuredQuery.from_text("find the right tool"), candidates, top_k=top_k)


FIRST_STAGE = ["tool_0", "tool_1", "tool_2", "tool_3"]
RANKED = ["tool_5", "tool_4", "tool_3", "tool_2"]


def _pipeline() -> RankingPipeline:
    return RankingPipeline(FieldWeightRanker(DEFAULT_FIELD_WEIGHTS))


def _app(pipeline: RankingPipeline | None = None, *, token: str | None = None) -> Any:
    return create_app(pipeline or _pipeline(), token=token, max_request_bytes=1_000_000, batch_wait_ms=1.0)


class SlowRanker(FieldWeightRanker):
    """The fixed-weight ranker, taking ``seconds`` per request (an overloaded service)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(DEFAULT_FIELD_WEIGHTS)
        self.seconds = seconds

    def rank(self, candidates: Sequence[FieldSignals], top_k: int) -> list[RankedTool]:
        time.sleep(self.seconds)
        return super().rank(candidates, top_k)


class BrokenReranker:
    """A reranker whose model call always fails (say, the GPU fell off the bus)."""

    name = "broken"
    kind = "cross-encoder"
    device = torch.device("cpu")
    batch_size = 8

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        raise RuntimeError("CUDA error: an illegal memory access was encountered")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_healthy_service_answers_like_the_pipeline(serve_app: Callable[[Any], Any]) -> None:
    served = serve_app(_app(token=TOKEN))
    remote = RemoteRanker(served.url, timeout=5.0, token=TOKEN)

    answer = remote.rank(_request())

    assert answer.degraded is False
    assert [r.doc_id for r in answer.results] == RANKED
    assert answer.model_dump(exclude={"timings_ms"}) == _pipeline().rank(_request()).model_dump(exclude={"timings_ms"})
    remote.close()


def test_a_service_that_is_down_gives_the_first_stage_order_marked_degraded() -> None:
    remote = RemoteRanker(f"http://127.0.0.1:{_closed_port()}", timeout=2.0)

    started = time.perf_counter()
    answer = remote.rank(_request())

    assert time.perf_counter() - started < 2.0
    assert answer.degraded is True
    assert answer.ranker == "first-stage"
    assert "unreachable" in (answer.degraded_reason or "")
    assert [r.doc_id for r in answer.results] == FIRST_STAGE
    assert [r.score for r in answer.results] == [10.0, 9.0, 8.0, 7.0]


def test_a_service_slower_than_the_timeout_gives_the_first_stage_order(serve_app: Callable[[Any], Any]) -> None:
    served = serve_app(_app(RankingPipeline(SlowRanker(1.5))))
    remote = RemoteRanker(served.url, timeout=0.3)

    started = time.perf_counter()
    answer = remote.rank(_request())

    assert time.perf_counter() - started < 1.2
    assert answer.degraded is True
    assert "did not answer within the timeout" in (answer.degraded_reason or "")
    assert [r.doc_id for r in answer.results] == FIRST_STAGE


@pytest.mark.parametrize("token", [None, "not-the-token"], ids=["no-token", "wrong-token"])
def test_an_unauthorised_client_is_degraded_not_failed(serve_app: Callable[[Any], Any], token: str | None) -> None:
    served = serve_app(_app(token=TOKEN))

    answer = RemoteRanker(served.url, timeout=5.0, token=token).rank(_request())

    assert answer.degraded is True
    assert "answered 401" in (answer.degraded_reason or "")
    assert "bearer token" in (answer.degraded_reason or "")
    assert (answer.degraded_reason or "").endswith("(unauthorized)")
    assert [r.doc_id for r in answer.results] == FIRST_STAGE


def test_a_failing_model_is_degraded_with_the_services_reason(serve_app: Callable[[Any], Any]) -> None:
    served = serve_app(_app(RankingPipeline(FieldWeightRanker(DEFAULT_FIELD_WEIGHTS), BrokenReranker())))

    answer = RemoteRanker(served.url, timeout=5.0).rank(_request())

    assert answer.degraded is True
    assert "answered 503" in (answer.degraded_reason or "")
    assert "illegal memory access" in (answer.degraded_reason or "")
    assert (answer.degraded_reason or "").endswith("(reranker_failed)")


def test_a_request_outside_the_schema_raises_naming_the_field(serve_app: Callable[[Any], Any]) -> None:
    served = serve_app(_app())
    # model_construct skips validation: the service's schema is what refuses it (400 bad_request, field top_k)
    invalid = RankRequest.model_construct(**{**dict(_request()), "top_k": 0})

    with pytest.raises(BadQueryError, match=r"\(400\): top_k: .*\(bad_request\)$"):
        RemoteRanker(served.url, timeout=5.0).rank(invalid)


def test_a_malformed_structured_query_raises(serve_app: Callable[[Any], Any]) -> None:
    served = serve_app(_app())
    invalid = RankRequest.model_construct(**{**dict(_request()), "query": {"tool_needs": []}})

    with pytest.raises(BadQueryError, match=r"\(400\): query: .*tool_needs.*\(bad_query\)$"):
        RemoteRanker(served.url, timeout=5.0).rank(invalid)


def test_candidates_built_from_signals_are_what_validating_the_same_signals_gives() -> None:
    """Validated as the service validates them: from their JSON (the wire model's types are strict)."""
    import json
    from dataclasses import asdict

    from toolsift.ranker.protocol import Candidate
    from toolsift.records import ParameterMatch

    signals = FieldSignals(doc_id="t", name="weather", entity="tool", agent_id="agent:w", first_stage_score=1.5,
                           first_stage_rank=2, fields={"bm25": {"description": 3.0}},
                           parameters={"bm25": (ParameterMatch("city", True, 0.7),)},
                           parameter_names=(("city", True), ("unit", False)), arguments=1, document="doc",
                           derived=("examples",))
    built = Candidate.from_signals(signals)

    assert built.model_dump() == Candidate.model_validate_json(json.dumps(asdict(signals))).model_dump()
    assert built.signals() == signals
