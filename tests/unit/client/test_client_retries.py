"""toolsift.client's own contract, over httpx.MockTransport: what it retries and how long it waits, what it
never retries, how many attempts it makes, and how an error answer reaches the caller."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest

from toolsift.client import (
    AsyncToolsiftClient,
    ToolCall,
    ToolsiftAPIError,
    ToolsiftClient,
    ToolsiftConnectionError,
    retry_after_seconds,
)
from toolsift.errors import ConfigError, ToolsiftError

URL = "http://toolsift.test"
SEARCH_ANSWER = {
    "request_id": "a" * 32, "query": "q", "format": "toolsift", "level": "tool", "tools": [
        {"rank": 1, "id": "web/search", "name": "search", "server": "agent:web", "score": 1.5, "tokens": 40,
         "definition": {"id": "web/search", "name": "search", "description": "Searches the web."}}],
    "agents": [], "total_tokens": 40, "dropped": 0, "truncated_by": None,
}
Step = httpx.Response | Exception


class Script:
    """A transport answering each request with the next scripted response (or raising the next error)."""

    def __init__(self, *steps: Step) -> None:
        self.steps: Iterator[Step] = iter(steps)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = next(self.steps)
        if isinstance(step, Exception):
            raise step
        return step


def ok(body: Any = None) -> httpx.Response:
    return httpx.Response(200, json=SEARCH_ANSWER if body is None else body)


def error(status: int, code: str = "x", field: str | None = None, **headers: str) -> httpx.Response:
    return httpx.Response(status, json={"error": f"it went {status}", "code": code, "field": field}, headers=headers)


def connect_error() -> httpx.ConnectError:
    return httpx.ConnectError("connection refused")


def sync_client(script: Script, waits: list[float], **options: Any) -> ToolsiftClient:
    settings: dict[str, Any] = {"retries": 3, "backoff": 0.5, "max_backoff": 8.0, "jitter": 0.0, **options}
    return ToolsiftClient(URL, "tsk_key", http_client=httpx.Client(transport=httpx.MockTransport(script)),
                          sleep=waits.append, **settings)


def async_client(script: Script, waits: list[float], **options: Any) -> AsyncToolsiftClient:
    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    settings: dict[str, Any] = {"retries": 3, "backoff": 0.5, "max_backoff": 8.0, "jitter": 0.0, **options}
    return AsyncToolsiftClient(URL, "tsk_key", http_client=httpx.AsyncClient(transport=httpx.MockTransport(script)),
                               sleep=sleep, **settings)



def sync_search(script: Script, waits: list[float], **options: Any) -> Any:
    with sync_client(script, waits, **options) as client:
        return client.search("find a tool")


def async_search(script: Script, waits: list[float], **options: Any) -> Any:
    async def run() -> Any:
        async with async_client(script, waits, **options) as client:
            return await client.search("find a tool")

    return asyncio.run(run())


BOTH = pytest.mark.parametrize("search", [sync_search, async_search], ids=["sync", "async"])


# --- what is retried ------------------------------------------------------------------------------


@BOTH
@pytest.mark.parametrize("failure", [lambda: error(502), lambda: error(503), lambda: error(504), connect_error,
                                     lambda: httpx.ConnectTimeout("slow to connect")],
                         ids=["502", "503", "504", "connect-error", "connect-timeout"])
def test_a_search_is_retried_after_a_gateway_error_or_a_failed_connection_with_exponential_backoff(
        search: Callable[..., Any], failure: Callable[[], Step]) -> None:
    script, waits = Script(failure(), failure(), failure(), ok()), []

    found = search(script, waits)

    assert len(script.requests) == 4
    assert waits == [0.5, 1.0, 2.0]
    assert found.request_id == "a" * 32 and [t.id for t in found.tools] == ["web/search"]


@BOTH
def test_the_backoff_never_waits_longer_than_max_backoff(search: Callable[..., Any]) -> None:
    script, waits = Script(*[error(503)] * 5, ok()), []

    search(script, waits, retries=5, backoff=1.0, max_backoff=3.0)

    assert waits == [1.0, 2.0, 3.0, 3.0, 3.0]


@BOTH
def test_jitter_adds_at_most_its_seconds_to_each_backoff_wait(search: Callable[..., Any]) -> None:
    script, waits = Script(error(503), error(503), ok()), []

    search(script, waits, jitter=0.25)

    assert 0.5 <= waits[0] <= 0.75 and 1.0 <= waits[1] <= 1.25


@BOTH
def test_a_429_waits_what_its_retry_after_asks_instead_of_the_backoff(search: Callable[..., Any]) -> None:
    script, waits = Script(error(429, "rate_limited", **{"Retry-After": "7"}), ok()), []

    search(script, waits)

    assert waits == [7.0] and len(script.requests) == 2


@BOTH
def test_a_retry_after_longer_than_max_retry_after_is_cut_to_it(search: Callable[..., Any]) -> None:
    script, waits = Script(error(429, **{"Retry-After": "3600"}), error(503, **{"Retry-After": "90"}), ok()), []

    search(script, waits, max_retry_after=20.0)

    assert waits == [20.0, 20.0]


def test_a_retry_after_is_read_as_seconds_or_as_an_http_date() -> None:
    now = datetime(2026, 11, 27, 12, 0, 0, tzinfo=UTC)

    assert retry_after_seconds("12") == 12.0
    assert retry_after_seconds(format_datetime(now + timedelta(seconds=30), usegmt=True), now=now) == 30.0
    assert retry_after_seconds(format_datetime(now - timedelta(seconds=30), usegmt=True), now=now) == 0.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None
    assert retry_after_seconds("-5") == 0.0 and retry_after_seconds("nan") is None


@BOTH
def test_a_429_without_retry_after_waits_the_backoff(search: Callable[..., Any]) -> None:
    script, waits = Script(error(429), ok()), []

    search(script, waits)

    assert waits == [0.5]


# --- bounded attempts -----------------------------------------------------------------------------


@BOTH
def test_when_the_attempts_run_out_the_last_error_answer_is_raised(search: Callable[..., Any]) -> None:
    script, waits = Script(error(503), error(503), error(502, "bad_gateway"), ok()), []

    with pytest.raises(ToolsiftAPIError) as raised:
        search(script, waits, retries=2)

    assert len(script.requests) == 3 and len(waits) == 2
    assert raised.value.status == 502 and raised.value.code == "bad_gateway"


@BOTH
def test_when_no_connection_can_be_made_the_attempts_end_in_a_connection_error(search: Callable[..., Any]) -> None:
    script, waits = Script(*[connect_error() for _ in range(4)]), []

    with pytest.raises(ToolsiftConnectionError) as raised:
        search(script, waits)

    assert len(script.requests) == 4 and raised.value.not_sent
    assert isinstance(raised.value, ToolsiftError) and "could not connect" in str(raised.value)


@BOTH
def test_retries_zero_makes_one_attempt(search: Callable[..., Any]) -> None:
    script, waits = Script(error(503), ok()), []

    with pytest.raises(ToolsiftAPIError):
        search(script, waits, retries=0)

    assert len(script.requests) == 1 and waits == []


def test_a_negative_retry_count_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="retries"):
        ToolsiftClient(URL, retries=-1)


# --- what is never retried ------------------------------------------------------------------------


@BOTH
@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 413, 415, 422, 500])
def test_a_client_error_or_a_500_is_raised_at_once(search: Callable[..., Any], status: int) -> None:
    script, waits = Script(error(status), ok()), []

    with pytest.raises(ToolsiftAPIError) as raised:
        search(script, waits)

    assert raised.value.status == status and len(script.requests) == 1 and waits == []


@BOTH
def test_a_read_timeout_is_not_retried_because_the_server_may_still_be_running_the_call(
        search: Callable[..., Any]) -> None:
    script, waits = Script(httpx.ReadTimeout("no answer"), ok()), []

    with pytest.raises(ToolsiftConnectionError) as raised:
        search(script, waits)

    assert len(script.requests) == 1 and not raised.value.not_sent


@pytest.mark.parametrize("status", [502, 503, 504])
def test_feedback_is_not_sent_again_after_a_gateway_error_as_it_may_have_been_stored(status: int) -> None:
    script, waits = Script(error(status), ok({"request_id": "a" * 32, "stored": 1})), []

    with sync_client(script, waits) as client, pytest.raises(ToolsiftAPIError):
        client.feedback("a" * 32, [ToolCall("web/search", called=True, success=True)])

    assert len(script.requests) == 1


def test_feedback_is_retried_after_a_429_or_a_failed_connection_as_nothing_was_stored() -> None:
    script, waits = Script(error(429, **{"Retry-After": "1"}), connect_error(), ok({"request_id": "a" * 32, "stored": 1})), []

    with sync_client(script, waits) as client:
        stored = client.feedback("a" * 32, [ToolCall("web/search", called=True, success=True)])

    assert stored.stored == 1 and len(script.requests) == 3 and waits == [1.0, 1.0]


# --- error translation and what is sent -----------------------------------------------------------


@BOTH
def test_an_error_answer_becomes_a_toolsift_api_error_with_status_code_field_and_message(
        search: Callable[..., Any]) -> None:
    script, waits = Script(error(400, "bad_request", "pinned.0")), []

    with pytest.raises(ToolsiftAPIError) as raised:
        search(script, waits)

    problem = raised.value
    assert isinstance(problem, ToolsiftError)
    assert (problem.status, problem.code, problem.field, problem.message) == (400, "bad_request", "pinned.0",
                                                                              "it went 400")
    assert "pinned.0" in str(problem) and "400" in str(problem)


def test_an_error_answer_that_is_not_the_apis_body_still_says_its_status_and_text() -> None:
    script, waits = Script(httpx.Response(502, text="<html>Bad Gateway</html>")), []

    with pytest.raises(ToolsiftAPIError) as raised:
        sync_search(script, waits, retries=0)

    assert raised.value.code == "http_502" and "Bad Gateway" in raised.value.message and raised.value.field is None


def test_a_successful_answer_that_is_not_json_is_an_api_error() -> None:
    script, waits = Script(httpx.Response(200, text="hello")), []

    with pytest.raises(ToolsiftAPIError, match="not JSON"):
        sync_search(script, waits)


def test_the_key_is_sent_as_a_bearer_token_and_only_the_asked_options_are_in_the_body() -> None:
    script, waits = Script(ok()), []

    with sync_client(script, waits) as client:
        client.search("find", top_k=3, brief=True, pinned=["a/b"], servers=["web"], max_results=4)

    sent = script.requests[0]
    assert sent.headers["authorization"] == "Bearer tsk_key"
    assert sent.url == httpx.URL(f"{URL}/v1/search")
    assert json.loads(sent.content) == {"query": "find", "top_k": 3, "level": "tool", "format": "toolsift",
                                        "brief": True, "pinned": ["a/b"], "max_results": 4,
                                        "filters": {"servers": ["web"], "tags": []}}


def test_a_tool_id_with_slashes_is_sent_as_one_path_segment() -> None:
    tool = {"id": "agent:web/search", "name": "search", "definition": {"type": "function", "function": {
        "name": "search", "description": "Searches.", "parameters": {"type": "object"}}}, "tokens": 9}
    script, waits = Script(ok(tool)), []

    with sync_client(script, waits) as client:
        found = client.get_tool("agent:web/search", format="openai")

    assert script.requests[0].url.raw_path == b"/v1/tools/agent%3Aweb%2Fsearch?format=openai"
    assert (found.id, found.description, found.tokens) == ("agent:web/search", "Searches.", 9)


def test_an_injected_http_client_is_left_open_and_an_own_one_is_closed() -> None:
    injected = httpx.Client(transport=httpx.MockTransport(Script(ok())))
    with ToolsiftClient(URL, http_client=injected):
        pass
    own = ToolsiftClient(URL)
    own.close()

    assert not injected.is_closed and own._http.is_closed
