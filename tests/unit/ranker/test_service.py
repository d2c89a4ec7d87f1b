"""The ranker service (`toolsift serve ranker`): the in-process pipeline's answers over HTTP.

The pipeline is the real one: the fixed-weight base ranker plus a real (tiny, seeded) BERT
cross-encoder loaded through :class:`CrossEncoderReranker`. The app runs in-process (TestClient, or
httpx over ASGI for concurrent requests), lifespan included, so the micro-batcher is the real one.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from toolsift.access import ApiKey, KeyRing, hash_key
from toolsift.config import DEFAULT_FIELD_WEIGHTS, FIELDS
from toolsift.records import FieldSignals
from toolsift.query.structured import StructuredQuery
from toolsift.ranker.fusion import FieldWeightRanker
from toolsift.ranker.ranking_pipeline import RankingPipeline
from toolsift.ranker.protocol import MAX_DOCUMENT_CHARS, RankRequest, RankResponse
from toolsift.ranker.rerankers import CrossEncoderReranker
from toolsift.ranker.ranker_service import create_app

TOKEN = "s3cret-token"
TOOLS = [
    ("send_email", "Send an email to a recipient with a subject and a body."),
    ("weather", "Get the weather forecast for a city and a date."),
    ("stock_price", "Query the stock price of a ticker symbol on a given day."),
    ("translate", "Translate a text from one language to another."),
    ("calendar_add", "Add an event to the user's calendar at a given time."),
    ("wiki", "Search Wikipedia for an article about a topic."),
    ("calculator", "Evaluate a basic arithmetic expression."),
    ("reset_password", "Reset a forgotten account password by email."),
    ("alarm", "Set an alarm clock for a time of day."),
    ("news", "Fetch the latest news headlines on a subject."),
    ("dictionary", "Look up the definition of an English word."),
    ("flights", "Search flights between two airports on a date."),
]
QUERIES = [
    "email my boss that I am late",
    "what is the weather in Paris tomorrow",
    "how much was SQ stock yesterday",
    "what does plethora mean",
    "book a flight from Berlin to Rome",
    "remind me at 7am",
]


def _candidates(query: str) -> list[FieldSignals]:
    """Twelve candidates with BM25 field scores that vary with the query (first stage: list order)."""
    out = []
    for i, (name, text) in enumerate(TOOLS):
        seed = sum(ord(c) for c in query + name)
        scores = {f: float((seed * (k + 3)) % 17) / 2 for k, f in enumerate(FIELDS)}
        out.append(FieldSignals(doc_id=f"tool_{i}", name=name, entity="tool", agent_id=None,
                                first_stage_score=float(20 - i), first_stage_rank=i + 1,
                                fields={"bm25": scores}, document=f"name: {name}\ndescription: {text}"))
    return out


def _request(query: str, *, top_k: int = 10, rerank: bool = True) -> RankRequest:
    return RankRequest.build(StructuredQuery.from_text(query), _candidates(query), top_k=top_k, rerank=rerank)


@pytest.fixture(scope="module")
def pipeline(seeded_cross_encoder: Path) -> RankingPipeline:
    reranker = CrossEncoderReranker(seeded_cross_encoder, device="cpu", batch_size=8)
    return RankingPipeline(FieldWeightRanker(DEFAULT_FIELD_WEIGHTS), reranker, rerank_top=8, fusion_weight=0.5)


def _app(pipeline: RankingPipeline, **kwargs: Any) -> FastAPI:
    # TestClient sends `Host: testserver`
    options: dict[str, Any] = {"token": None, "max_request_bytes": 1_000_000, "batch_wait_ms": 5.0,
                               "allowed_hosts": ["testserver"]}
    return create_app(pipeline, **{**options, **kwargs})


@pytest.fixture()
def client(pipeline: RankingPipeline) -> Iterator[TestClient]:
    with TestClient(_app(pipeline)) as test_client:
        yield test_client


def assert_same_answer(served: RankResponse, local: RankResponse) -> None:
    """Same ranking, same explanation; floats equal up to batch-padding noise."""
    assert [r.doc_id for r in served.results] == [r.doc_id for r in local.results]
    assert (served.ranker, served.reranker, served.reranked, served.fusion_weight, served.weights_version) == (
        local.ranker, local.reranker, local.reranked, local.fusion_weight, local.weights_version)
    assert served.degraded is False
    for s, o in zip(served.results, local.results):
        assert s.score == pytest.approx(o.score, abs=1e-5)
        assert s.base_score == pytest.approx(o.base_score, abs=1e-5)
        if o.reranker_score is None:
            assert s.reranker_score is None
        else:
            assert s.reranker_score == pytest.approx(o.reranker_score, abs=1e-5)
        assert s.contributions == pytest.approx(o.contributions, abs=1e-5)
        assert (s.field_scores, s.missing_required, s.first_stage_rank) == (
            o.field_scores, o.missing_required, o.first_stage_rank)


def _post(client: TestClient, request: RankRequest, **headers: str) -> httpx.Response:
    return client.post("/v1/rank", content=request.model_dump_json(),
                       headers={"Content-Type": "application/json", **headers})


# --- answers ------------------------------------------------------------------------------------------


def test_the_service_answers_what_the_in_process_pipeline_answers(client: TestClient,
                                                                   pipeline: RankingPipeline) -> None:
    request = _request(QUERIES[0])

    answer = _post(client, request)

    assert answer.status_code == 200
    served = RankResponse.model_validate_json(answer.content)
    local = pipeline.rank(request)
    assert served.reranked == 8 and served.reranker == pipeline.reranker.name  # type: ignore[union-attr]
    assert_same_answer(served, local)
    # the reranker changed the order the base ranker alone gives
    assert [r.doc_id for r in served.results] != [t.doc_id for t in pipeline.base.rank(request.signals(), 10)]


def test_the_answer_carries_server_side_timings(client: TestClient) -> None:
    timings = _post(client, _request(QUERIES[1])).json()["timings_ms"]

    assert set(timings) == {"base", "queue", "rerank", "total"}
    assert timings["rerank"] > 0
    assert timings["total"] >= timings["base"] + timings["rerank"]


def test_without_rerank_the_base_ranking_is_served(client: TestClient, pipeline: RankingPipeline) -> None:
    request = _request(QUERIES[2], top_k=5, rerank=False)

    served = RankResponse.model_validate_json(_post(client, request).content)

    assert served.reranked == 0 and served.reranker is None
    assert served.timings_ms["rerank"] == 0.0
    assert_same_answer(served, pipeline.rank(request))


def test_concurrent_requests_share_reranker_batches_and_each_gets_its_own_answer(
    pipeline: RankingPipeline,
) -> None:
    app = _app(pipeline, batch_wait_ms=150.0, allowed_hosts=["ranker"])
    requests = [_request(q) for q in QUERIES]

    async def all_at_once() -> list[httpx.Response]:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://ranker") as http:
                return await asyncio.gather(*(
                    http.post("/v1/rank", content=r.model_dump_json(), headers={"Content-Type": "application/json"})
                    for r in requests
                ))

    answers = asyncio.run(all_at_once())

    assert [a.status_code for a in answers] == [200] * len(requests)
    assert max(app.state.batcher.batches) > 1  # several requests went to the model in one call
    assert sum(app.state.batcher.batches) == len(requests)
    for request, answer in zip(requests, answers):
        served = RankResponse.model_validate_json(answer.content)
        assert_same_answer(served, pipeline.rank(request))
    shared = [RankResponse.model_validate_json(a.content).timings_ms["queue"] for a in answers]
    assert max(shared) > 0


def test_a_batch_never_exceeds_max_batch_pairs(pipeline: RankingPipeline) -> None:
    app = _app(pipeline, batch_wait_ms=150.0, max_batch_pairs=8, allowed_hosts=["ranker"])  # 8 pairs a request
    requests = [_request(q) for q in QUERIES[:3]]

    async def all_at_once() -> list[httpx.Response]:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://ranker") as http:
                return await asyncio.gather(*(http.post("/v1/rank", content=r.model_dump_json()) for r in requests))

    answers = asyncio.run(all_at_once())

    assert [a.status_code for a in answers] == [200, 200, 200]
    assert list(app.state.batcher.batches) == [1, 1, 1]


# --- auth -----------------------------------------------------------------------------------------------


@pytest.fixture()
def guarded(pipeline: RankingPipeline) -> Iterator[TestClient]:
    with TestClient(_app(pipeline, token=TOKEN)) as test_client:
        yield test_client


@pytest.mark.parametrize("authorization", [None, "Bearer wrong-token", f"Basic {TOKEN}", "Bearer", TOKEN],
                         ids=["none", "wrong-token", "wrong-scheme", "empty", "no-scheme"])
def test_with_a_token_configured_rank_and_metrics_need_it(guarded: TestClient, authorization: str | None) -> None:
    headers = {"Authorization": authorization} if authorization is not None else {}

    for answer in (_post(guarded, _request(QUERIES[0]), **headers), guarded.get("/metrics", headers=headers)):
        assert answer.status_code == 401
        assert answer.headers["WWW-Authenticate"].startswith("Bearer")
        assert answer.json() == {"error": "a valid bearer token is required (Authorization: Bearer <token>)",
                                 "code": "unauthorized", "field": None}  # refused before the body is read


def test_the_right_token_is_let_in_and_health_needs_none(guarded: TestClient) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}

    assert _post(guarded, _request(QUERIES[0]), **bearer).status_code == 200
    assert guarded.get("/metrics", headers=bearer).status_code == 200
    assert guarded.get("/health").status_code == 200


SEARCH_KEY, ADMIN_KEY = "tsk_search-key-for-the-ranker", "tsk_admin-key-for-the-ranker"
KEYS = KeyRing([ApiKey(name="acme-search", tenant="acme", role="search", sha256=hash_key(SEARCH_KEY)),
                ApiKey(name="ops", tenant="*", role="admin", sha256=hash_key(ADMIN_KEY))])


@pytest.mark.parametrize("token", [None, TOKEN], ids=["keys-only", "keys-and-token"])
def test_with_api_keys_configured_rank_and_metrics_take_any_configured_key(pipeline: RankingPipeline,
                                                                           token: str | None) -> None:
    with TestClient(_app(pipeline, keys=KEYS, token=token)) as keyed:
        for headers in ({}, {"Authorization": "Bearer tsk_not-a-configured-key"}):
            for answer in (_post(keyed, _request(QUERIES[0]), **headers), keyed.get("/metrics", headers=headers)):
                assert answer.status_code == 401
                assert answer.json()["code"] == "unauthorized"
        for headers in ({"Authorization": f"Bearer {SEARCH_KEY}"}, {"Authorization": f"Bearer {ADMIN_KEY}"},
                        {"X-API-Key": SEARCH_KEY}):
            assert _post(keyed, _request(QUERIES[0]), **headers).status_code == 200
            assert keyed.get("/metrics", headers=headers).status_code == 200
        # the ranker token still works beside the keys (existing deployments)
        assert _post(keyed, _request(QUERIES[0]), Authorization=f"Bearer {TOKEN}").status_code == (
            200 if token else 401)
        assert keyed.get("/health").status_code == 200


def test_a_request_for_a_foreign_host_is_refused_before_any_route(pipeline: RankingPipeline) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    with TestClient(_app(pipeline, token=TOKEN, allowed_hosts=["127.0.0.1", "localhost"])) as guarded_host:
        for answer in (_post(guarded_host, _request(QUERIES[0]), **bearer), guarded_host.get("/health"),
                       guarded_host.get("/metrics", headers=bearer)):
            assert answer.status_code == 403
            assert answer.json()["code"] == "forbidden" and "testserver" in answer.json()["error"]
        rebound = _post(guarded_host, _request(QUERIES[0]), **bearer, Host="localhost:8300")
        assert rebound.status_code == 200
        assert 'toolsift_ranker_requests_total{status="200"} 1.0' in guarded_host.get(
            "/metrics", headers={**bearer, "Host": "127.0.0.1:8300"}).text  # the refused ones never reached /v1/rank


def test_a_service_built_without_allowed_hosts_answers_loopback_names_only(pipeline: RankingPipeline) -> None:
    with TestClient(create_app(pipeline, token=None, max_request_bytes=1_000_000, batch_wait_ms=5.0)) as default:
        assert default.get("/health").status_code == 403
        assert default.get("/health", headers={"Host": "127.0.0.1:8300"}).status_code == 200
        assert default.get("/health", headers={"Host": "[::1]:8300"}).status_code == 200


# --- limits and the error model ------------------------------------------------------------------------


def test_a_body_over_the_size_limit_is_refused_before_parsing(pipeline: RankingPipeline) -> None:
    body = _request(QUERIES[0]).model_dump_json().encode()
    with TestClient(_app(pipeline, max_request_bytes=len(body) - 1)) as small:
        declared = small.post("/v1/rank", content=body, headers={"Content-Type": "application/json"})
        streamed = small.post("/v1/rank", content=iter([body[:1000], body[1000:]]))  # chunked: no Content-Length
        garbage = small.post("/v1/rank", content=b"x" * (len(body) + 10))  # too big is said before "not JSON"
        fits = small.post("/v1/rank", content=_request("mail", top_k=1).model_dump_json())

    for answer in (declared, streamed, garbage):
        assert answer.status_code == 413
        assert answer.json()["code"] == "request_too_large" and "ranker_max_request_bytes" in answer.json()["error"]
    assert fits.status_code == 200


def test_a_rank_request_from_another_sites_page_or_not_as_json_is_refused(client: TestClient) -> None:
    body = _request(QUERIES[0]).model_dump_json()
    foreign = _post(client, _request(QUERIES[0]), Origin="https://attacker.example")
    cross_site = _post(client, _request(QUERIES[0]), **{"Sec-Fetch-Site": "cross-site"})
    as_text = client.post("/v1/rank", content=body, headers={"Content-Type": "text/plain"})

    assert (foreign.status_code, foreign.json()["code"], foreign.json()["field"]) == (403, "forbidden", "Origin")
    assert (cross_site.status_code, cross_site.json()["field"]) == (403, "Sec-Fetch-Site")
    assert (as_text.status_code, as_text.json()["code"]) == (415, "unsupported_media_type")
    assert 'toolsift_ranker_requests_total{status="200"}' not in client.get("/metrics").text  # none reached /v1/rank


def _with(request: RankRequest, **changes: Any) -> bytes:
    data = json.loads(request.model_dump_json())
    for path, value in changes.items():
        target = data
        *head, last = path.split("__")
        for key in head:
            target = target[int(key)] if key.isdigit() else target[key]
        target[last] = value
    return json.dumps(data).encode()


@pytest.mark.parametrize(("changes", "field"), [
    ({"top_k": 0}, "top_k"),
    ({"candidates__0__document": "x" * (MAX_DOCUMENT_CHARS + 1)}, "candidates.0.document"),
    ({"candidates__3__doc_id": ""}, "candidates.3.doc_id"),
    ({"candidates__1__surprise": 1}, "candidates.1.surprise"),
    ({"rerank": "perhaps"}, "rerank"),
])
def test_a_request_outside_the_schema_is_400_naming_the_field(client: TestClient, changes: dict[str, Any],
                                                                field: str) -> None:
    answer = client.post("/v1/rank", content=_with(_request(QUERIES[0]), **changes))

    assert answer.status_code == 400
    error = answer.json()
    assert (set(error), error["code"], error["field"]) == ({"error", "code", "field"}, "bad_request", field)
    assert error["error"].startswith(f"{field}: "), error["error"]


def test_too_many_candidates_is_400(client: TestClient) -> None:
    data = json.loads(_request(QUERIES[0]).model_dump_json())
    data["candidates"] = data["candidates"][:1] * 1001

    answer = client.post("/v1/rank", content=json.dumps(data))

    assert answer.status_code == 400
    assert answer.json()["field"] == "candidates" and answer.json()["error"].startswith("candidates: ")


@pytest.mark.parametrize(("body", "code", "field", "words"), [
    (b"{not json", "bad_request", None, "not valid JSON"),
    (b"", "bad_request", None, "not valid JSON"),
    (b'{"query": "caf\xe9"}', "bad_request", None, ""),
    (_with(_request(QUERIES[0]), query={"tool_needs": "send an email"}), "bad_query", "query", "tool_needs"),
    (_with(_request(QUERIES[0]), query={"tool_needs": [{"user_intent": 5}]}), "bad_query", "query", "tool_needs"),
], ids=["not-json", "empty", "not-utf-8", "needs-not-a-list", "intent-not-text"])
def test_a_malformed_body_or_structured_query_is_400(client: TestClient, body: bytes, code: str, field: str | None,
                                                     words: str) -> None:
    answer = client.post("/v1/rank", content=body)

    assert answer.status_code == 400
    assert (answer.json()["code"], answer.json()["field"]) == (code, field)
    assert words in answer.json()["error"]


def test_a_failing_model_is_503_and_the_service_keeps_answering(pipeline: RankingPipeline,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    reranker = pipeline.reranker
    assert isinstance(reranker, CrossEncoderReranker)

    def out_of_memory(*args: Any, **kwargs: Any) -> Sequence[float]:
        raise RuntimeError("CUDA out of memory")

    with TestClient(_app(pipeline)) as test_client:
        with monkeypatch.context() as patch:
            patch.setattr(reranker.model, "predict", out_of_memory)
            failed = _post(test_client, _request(QUERIES[0]))
        recovered = _post(test_client, _request(QUERIES[0]))
        metrics = test_client.get("/metrics").text

    assert failed.status_code == 503
    assert failed.json() == {"error": "the reranker failed: RuntimeError: CUDA out of memory",
                             "code": "reranker_failed", "field": None}
    assert recovered.status_code == 200
    assert "toolsift_ranker_reranker_failures_total 1.0" in metrics
    assert 'toolsift_ranker_requests_total{status="503"} 1.0' in metrics


def test_an_unexpected_error_is_a_500_without_a_trace_and_stopping_is_a_503(pipeline: RankingPipeline,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("a bug's detail")

    app = _app(pipeline)
    with TestClient(app) as test_client:
        with monkeypatch.context() as patch:
            patch.setattr(pipeline, "base_pass", broken)
            failed = _post(test_client, _request(QUERIES[0]))
        app.state.batcher.closing = True  # as while the service stops
        stopping = _post(test_client, _request(QUERIES[0]))
        app.state.batcher.closing = False
        metrics = test_client.get("/metrics").text

    assert failed.status_code == 500
    assert failed.json() == {"error": "internal error (see the service's log)", "code": "internal_error", "field": None}
    assert "Traceback" not in failed.text and "a bug's detail" not in failed.text
    assert (stopping.status_code, stopping.json()["code"], stopping.json()["field"]) == (503, "shutting_down", None)
    assert 'toolsift_ranker_requests_total{status="500"} 1.0' in metrics
    assert 'toolsift_ranker_requests_total{status="503"} 1.0' in metrics


def test_unknown_routes_and_methods_answer_in_the_error_model(client: TestClient) -> None:
    missing = client.get("/v1/nothing")
    wrong_method = client.get("/v1/rank")

    assert (missing.status_code, missing.json()["code"], missing.json()["field"]) == (404, "not_found", None)
    assert (wrong_method.status_code, wrong_method.json()["code"]) == (405, "method_not_allowed")
    assert isinstance(missing.json()["error"], str) and isinstance(wrong_method.json()["error"], str)


# --- health and metrics ----------------------------------------------------------------------------------


def test_health_says_what_is_served(client: TestClient, pipeline: RankingPipeline) -> None:
    answer = client.get("/health")

    assert answer.status_code == 200
    body = answer.json()
    assert body["status"] == "ok"
    assert (body["ranker"], body["reranker"], body["device"], body["weights_version"]) == (
        "field-weights-v0", pipeline.reranker.name, "cpu", None)  # type: ignore[union-attr]


def test_metrics_are_prometheus_text_with_the_service_figures(client: TestClient) -> None:
    for query in QUERIES[:2]:
        assert _post(client, _request(query)).status_code == 200
    assert client.post("/v1/rank", content=b"{").status_code == 400

    answer = client.get("/metrics")

    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    text = answer.text
    assert 'toolsift_ranker_requests_total{status="200"} 2.0' in text
    assert 'toolsift_ranker_requests_total{status="400"} 1.0' in text
    assert "toolsift_ranker_request_duration_seconds_count 3.0" in text
    assert "toolsift_ranker_batch_pairs_count 2.0" in text
    assert "toolsift_ranker_batch_pairs_sum 16.0" in text
    assert "toolsift_ranker_batch_requests_bucket" in text
    assert "toolsift_ranker_pairs_scored_total 16.0" in text
    assert "toolsift_ranker_queue_depth 0.0" in text
    assert 'toolsift_ranker_info{device="cpu"' in text
    assert "gpu" not in text  # GPU figures only on CUDA


def test_each_app_has_its_own_registry(pipeline: RankingPipeline) -> None:
    with TestClient(_app(pipeline)) as first, TestClient(_app(pipeline)) as second:
        _post(first, _request(QUERIES[0]))
        assert 'toolsift_ranker_requests_total{status="200"} 1.0' in first.get("/metrics").text
        assert "toolsift_ranker_requests_total{" not in second.get("/metrics").text


# --- OpenSearch's search pipeline: /v1/opensearch/query and /v1/opensearch/rank ----------------------


class _Stages:
    """Records what the routes hand over; answers like the real stages."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def first_stage(self, index: str, request: Any) -> dict[str, Any]:
        self.calls.append(("query", index, dict(request)))
        return {"body": json.dumps({"query": {"match_all": {}}})}

    def rank_hits(self, index: str, ids: Sequence[str], request: Any) -> dict[str, Any]:
        self.calls.append(("rank", index, list(ids)))
        if request.get("text") == "bad":
            from toolsift.errors import BadQueryError

            raise BadQueryError("tool_needs[0] has no text")
        return {"order": [float(len(ids) - i) for i in range(len(ids))], "scores": [0.5] * len(ids),
                "ranks": list(range(1, len(ids) + 1))}


def test_the_pipeline_routes_hand_the_request_to_the_stages(pipeline: RankingPipeline) -> None:
    stages = _Stages()
    with TestClient(_app(pipeline, token=TOKEN, stages=stages)) as http:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        query = http.post("/v1/opensearch/query", headers=auth, json={"index": "toolsift-tools", "request": {"text": "x"}})
        assert query.status_code == 200 and json.loads(query.json()["body"]) == {"query": {"match_all": {}}}
        rank = http.post("/v1/opensearch/rank", headers=auth,
                         json={"index": "toolsift-tools", "ids": ["a", "b"], "request": {"text": "x"}})
        assert rank.json() == {"order": [2.0, 1.0], "scores": [0.5, 0.5], "ranks": [1, 2]}
    assert stages.calls == [("query", "toolsift-tools", {"text": "x"}), ("rank", "toolsift-tools", ["a", "b"])]


def test_the_pipeline_routes_take_the_token_and_name_bad_fields(pipeline: RankingPipeline) -> None:
    with TestClient(_app(pipeline, token=TOKEN, stages=_Stages())) as http:
        refused = http.post("/v1/opensearch/rank", json={"index": "toolsift-tools", "ids": [], "request": {}})
        assert refused.status_code == 401 and refused.json()["code"] == "unauthorized"
        auth = {"Authorization": f"Bearer {TOKEN}"}
        bad_index = http.post("/v1/opensearch/query", headers=auth, json={"index": "../etc", "request": {}})
        assert (bad_index.status_code, bad_index.json()["code"], bad_index.json()["field"]) == (
            400, "bad_request", "index")
        bad_query = http.post("/v1/opensearch/rank", headers=auth,
                              json={"index": "toolsift-tools", "ids": ["a"], "request": {"text": "bad"}})
        assert (bad_query.status_code, bad_query.json()["code"]) == (400, "bad_query")
        assert "tool_needs[0]" in bad_query.json()["error"]


def test_a_service_without_stages_says_it_does_not_serve_the_pipeline(pipeline: RankingPipeline) -> None:
    with TestClient(_app(pipeline)) as http:
        answer = http.post("/v1/opensearch/query", json={"index": "toolsift-tools", "request": {}})
        assert (answer.status_code, answer.json()["code"]) == (404, "not_found")
        assert "search pipeline" in answer.json()["error"]
