"""toolsift.integrations.openai against the real toolsift API (the tenant catalog on the real node) and the real
openai SDK: its own models parse the model's ``tool_search_call`` and the answer, and a real ``openai.OpenAI``
sends the deferred tools and the ``tool_search_output`` to a loopback server standing in for the Responses
API, which records the JSON body. No LLM is needed: the contract is tools in, loaded tools out."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import openai
import pytest
from openai.types.responses import (
    FunctionToolParam,
    Response,
    ResponseToolSearchCall,
    ResponseToolSearchOutputItem,
    ResponseToolSearchOutputItemParamParam,
)

from tests.integration.adapter_support import Recorder, assert_import_names, assert_refuses_bad_tool_lists
from tests.integration.adapter_support import brief_hits, visible_fixture
from tests.integration.adapter_support import key, recorder, visible_ids  # noqa: F401 - fixtures
from toolsift.client import AsyncToolsiftClient, ToolsiftAPIError, ToolsiftClient, ToolsiftConnectionError
from toolsift.bench.load import free_port
from toolsift.integrations.openai import AsyncToolSearch, NotASearchCallError, ToolSearch, defer, function_tool, tool_search_tool

pytestmark = pytest.mark.integration

QUERY = "search the web for recent news articles"
TOP_K = 5


#: Every tool acme may see (its own and the public ones) as Responses function tools, by toolsift id, built
#: from the API's own definitions (a name two servers share is made unique, as an agent must).
visible = visible_fixture(function_tool)


def call(arguments: Any, call_id: str = "call_1") -> ResponseToolSearchCall:
    return ResponseToolSearchCall.model_validate({"id": "tsc_1", "type": "tool_search_call", "call_id": call_id,
                                                  "execution": "client", "status": "completed",
                                                  "arguments": arguments})


def loaded(output: ResponseToolSearchOutputItemParamParam) -> list[str]:
    """The loaded tools' names, the item first read back by the SDK's own output model."""
    parsed = ResponseToolSearchOutputItem.model_validate({"id": "tso_1", **output})
    assert all(t.type == "function" for t in parsed.tools)
    return [t.name for t in parsed.tools]  # type: ignore[union-attr]


def test_the_output_item_for_a_tool_search_call_loads_toolsifts_picks_among_the_deferred_tools(
        tenant_api: str, key: str, visible: dict[str, FunctionToolParam]) -> None:
    with ToolsiftClient(tenant_api, key) as ts:
        search = ToolSearch(ts, visible.values(), ids={i: t["name"] for i, t in visible.items()}, top_k=TOP_K)
        output = search.answer(call({"query": QUERY}))
    hits = brief_hits(tenant_api, key, QUERY, TOP_K)

    assert loaded(output) == [visible[i]["name"] for i, _ in hits] and len(hits) == TOP_K
    assert (output["type"], output["call_id"], output["execution"], output["status"]) == (
        "tool_search_output", "call_1", "client", "completed")
    assert list(output["tools"]) == [{**visible[i], "defer_loading": True} for i, _ in hits]
    assert search.tools[0] == tool_search_tool() and search.tools[0]["execution"] == "client"
    assert all(t.get("defer_loading") is True for t in search.tools[1:]) and len(search.tools) == len(visible) + 1


def test_hits_the_user_has_no_tool_for_are_skipped_and_always_tools_stay_loaded_and_unlisted(
        tenant_api: str, key: str, visible: dict[str, FunctionToolParam]) -> None:
    hits = brief_hits(tenant_api, key, QUERY, TOP_K)
    missing, kept = hits[0][0], hits[1][0]
    always = visible[kept]["name"]
    with ToolsiftClient(tenant_api, key) as ts:
        search = ToolSearch(ts, [t for i, t in visible.items() if i != missing], always_include=[always],
                            ids={i: t["name"] for i, t in visible.items()}, top_k=TOP_K)
        names = loaded(search.answer(call({"query": QUERY})))

    assert names == [visible[i]["name"] for i, _ in hits[2:]]
    assert next(t for t in search.tools if t.get("name") == always).get("defer_loading") is None


def test_without_an_id_map_the_tools_are_matched_by_the_name_toolsift_gives_them_and_json_arguments_are_read(
        tenant_api: str, key: str, visible: dict[str, FunctionToolParam]) -> None:
    with ToolsiftClient(tenant_api, key) as ts:
        names = loaded(ToolSearch(ts, visible.values(), top_k=TOP_K).answer(call(json.dumps({"query": QUERY}))))
    known = {t["name"] for t in visible.values()}

    assert names and names == [n for _, n in brief_hits(tenant_api, key, QUERY, TOP_K) if n in known]


def test_the_async_search_answers_the_same(tenant_api: str, key: str, visible: dict[str, FunctionToolParam],
                                           visible_ids: dict[str, str]) -> None:
    async def answer() -> ResponseToolSearchOutputItemParamParam:
        async with AsyncToolsiftClient(tenant_api, key) as ts:
            search = AsyncToolSearch(ts, visible.values(), ids=visible_ids, top_k=TOP_K)
            return await search.answer(call({"query": QUERY}).model_dump())

    assert loaded(asyncio.run(answer())) == [visible[i]["name"] for i, _ in brief_hits(tenant_api, key, QUERY, TOP_K)]


def test_an_unreachable_toolsift_falls_back_to_every_deferred_tool_with_a_warning_or_raises_when_asked(
        visible: dict[str, FunctionToolParam], caplog: pytest.LogCaptureFixture) -> None:
    tools = list(visible.values())
    with ToolsiftClient(f"http://127.0.0.1:{free_port()}", retries=0) as ts:
        with caplog.at_level(logging.WARNING, logger="toolsift.integrations.openai"):
            names = loaded(ToolSearch(ts, tools, always_include=[tools[0]["name"]]).answer(call({"query": QUERY})))
        with pytest.raises(ToolsiftConnectionError):
            ToolSearch(ts, tools, on_error="raise").answer(call({"query": QUERY}))

    assert names == [t["name"] for t in tools[1:]] and "toolsift did not answer" in caplog.text


def test_a_wrong_key_is_raised_not_hidden_by_the_fallback(
        tenant_api: str, visible: dict[str, FunctionToolParam]) -> None:
    with ToolsiftClient(tenant_api, "tsk_wrong") as ts, pytest.raises(ToolsiftAPIError) as raised:
        ToolSearch(ts, visible.values()).answer(call({"query": QUERY}))

    assert raised.value.status == 401


def test_an_empty_query_loads_nothing_and_other_items_are_refused(
        tenant_api: str, key: str, visible: dict[str, FunctionToolParam]) -> None:
    with ToolsiftClient(tenant_api, key) as ts:
        search = ToolSearch(ts, visible.values())
        empty = search.answer(call({"query": " "}))
        with pytest.raises(NotASearchCallError):
            search.answer({"type": "tool_search_call", "execution": "server", "arguments": {"query": QUERY}})

    assert loaded(empty) == [] and empty["call_id"] == "call_1"


# --- the SDK on the wire: a loopback server stands in for the Responses API --------------------------------


def response(output: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "created_at": 1.0, "model": "gpt-test", "status": "completed",
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}


def test_the_sdk_sends_the_deferred_tools_and_the_tool_search_output_as_its_types_say(
        tenant_api: str, key: str, visible: dict[str, FunctionToolParam], visible_ids: dict[str, str],
        recorder: Recorder) -> None:
    wire_call = {"id": "tsc_7", "type": "tool_search_call", "call_id": "call_7", "execution": "client",
                 "status": "completed", "arguments": {"query": QUERY}}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": "done", "annotations": []}]}
    recorder.answers += [response([wire_call]), response([message])]
    gpt = openai.OpenAI(base_url=f"{recorder.url}/v1", api_key="sk-test", max_retries=0)
    items: list[Any] = [{"role": "user", "content": QUERY}]

    with ToolsiftClient(tenant_api, key) as ts:
        search = ToolSearch(ts, visible.values(), ids=visible_ids, top_k=TOP_K)
        first = gpt.responses.create(model="gpt-test", tools=search.tools, input=items)
        items += first.output
        items += [search.answer(item) for item in first.output if search.is_search(item)]
        last = gpt.responses.create(model="gpt-test", tools=search.tools, input=items)

    (path, _, sent_first), (_, _, sent) = recorder.requests
    picks = [visible[i]["name"] for i, _ in brief_hits(tenant_api, key, QUERY, TOP_K)]
    assert path == "/v1/responses" and isinstance(first, Response)
    assert isinstance(first.output[0], ResponseToolSearchCall) and last.output_text == "done"
    assert sent_first["tools"] == sent["tools"] and sent["tools"][0] == {
        "type": "tool_search", "execution": "client", "description": search.search_tool["description"],
        "parameters": search.search_tool["parameters"]}
    assert sent["tools"][1:] == [{**t, "defer_loading": True} for t in visible.values()]
    by_name = {t["name"]: t for t in visible.values()}
    assert sent["input"][1] == wire_call
    assert sent["input"][2] == {"type": "tool_search_output", "execution": "client", "status": "completed",
                                "call_id": "call_7", "tools": [{**by_name[n], "defer_loading": True} for n in picks]}
    assert len(picks) == TOP_K and len(sent["input"]) == 3


def test_defer_marks_function_and_custom_tools_but_not_kept_or_other_tools() -> None:
    tools: list[Any] = [{"type": "function", "name": "a", "parameters": {}, "strict": False},
                        {"type": "custom", "name": "b"}, {"type": "function", "name": "c", "parameters": {},
                                                         "strict": False},
                        {"type": "web_search"}]

    deferred = defer(tools, keep=["c"])

    assert deferred == [{**tools[0], "defer_loading": True}, {**tools[1], "defer_loading": True}, tools[2], tools[3]]
    assert "defer_loading" not in tools[0]


def test_without_the_tool_search_types_the_import_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    assert_import_names(monkeypatch, "toolsift.integrations.openai", without="openai.types.responses",
                        match=r"tool_search types .* pip install -U openai")


def test_tools_named_twice_or_an_always_include_name_without_a_tool_are_refused_before_any_call(
        tenant_api: str, key: str, visible: dict[str, FunctionToolParam]) -> None:
    assert_refuses_bad_tool_lists(tenant_api, key, visible.values(), ToolSearch)
