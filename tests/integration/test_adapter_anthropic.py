"""toolsift.integrations.anthropic against the real toolsift API (the tenant catalog on the real node) and the
real anthropic SDK: its own types parse the model's search call and check the answer, and a real
``anthropic.Anthropic`` sends the deferred tools and the ``tool_result`` to a loopback server standing in for
Anthropic's API, which records the JSON body. No LLM is needed: the contract is tools in, references out."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import anthropic
import pytest
from anthropic.types import Message, ToolParam, ToolResultBlockParam, ToolUseBlock
from pydantic import TypeAdapter

from tests.integration.adapter_support import Recorder, assert_import_names, assert_refuses_bad_tool_lists
from tests.integration.adapter_support import brief_hits, visible_fixture
from tests.integration.adapter_support import key, recorder, visible_ids  # noqa: F401 - fixtures
from toolsift.client import AsyncToolsiftClient, ToolsiftAPIError, ToolsiftClient, ToolsiftConnectionError
from toolsift.bench.load import free_port
from toolsift.integrations.anthropic import SEARCH_TOOL_NAME, AsyncToolSearch, NotASearchCallError, ToolSearch, defer, tool_param

pytestmark = pytest.mark.integration

QUERY = "search the web for recent news articles"
TOP_K = 5


#: Every tool acme may see (its own and the public ones) as Anthropic tools, by toolsift id, built from the
#: API's own definitions (a name two servers share is made unique, as an agent must).
visible = visible_fixture(tool_param)


def use(query: Any, block_id: str = "toolu_01") -> ToolUseBlock:
    return ToolUseBlock.model_validate({"type": "tool_use", "id": block_id, "name": SEARCH_TOOL_NAME,
                                        "input": {"query": query}})


def references(result: ToolResultBlockParam) -> list[str]:
    TypeAdapter(ToolResultBlockParam).validate_python(result)  # the SDK's own shape
    content = result["content"]
    assert not isinstance(content, str)
    return [b["tool_name"] for b in content if b["type"] == "tool_reference"]


def test_the_answer_to_a_search_call_references_toolsifts_picks_among_the_deferred_tools(
        tenant_api: str, key: str, visible: dict[str, ToolParam]) -> None:
    tools = list(visible.values())
    with ToolsiftClient(tenant_api, key) as ts:
        search = ToolSearch(ts, tools, ids={i: t["name"] for i, t in visible.items()}, top_k=TOP_K)
        result = search.answer(use(QUERY))
    hits = brief_hits(tenant_api, key, QUERY, TOP_K)

    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_01" and "is_error" not in result
    assert references(result) == [visible[i]["name"] for i, _ in hits] and len(hits) == TOP_K
    assert search.tools[0] == {**search.tools[0], "name": SEARCH_TOOL_NAME} and "defer_loading" not in search.tools[0]
    assert all(t.get("defer_loading") is True for t in search.tools[1:]) and len(search.tools) == len(tools) + 1


def test_hits_the_user_has_no_tool_for_are_skipped_and_always_tools_stay_loaded_and_unreferenced(
        tenant_api: str, key: str, visible: dict[str, ToolParam]) -> None:
    hits = brief_hits(tenant_api, key, QUERY, TOP_K)
    missing, kept = hits[0][0], hits[1][0]
    tools = [t for i, t in visible.items() if i != missing]
    always = visible[kept]["name"]
    with ToolsiftClient(tenant_api, key) as ts:
        search = ToolSearch(ts, tools, always_include=[always], ids={i: t["name"] for i, t in visible.items()},
                            top_k=TOP_K)
        named = references(search.answer(use(QUERY)))

    assert named == [visible[i]["name"] for i, _ in hits[2:]]
    assert next(t for t in search.tools if t["name"] == always).get("defer_loading") is None


def test_without_an_id_map_the_tools_are_matched_by_the_name_toolsift_gives_them(
        tenant_api: str, key: str, visible: dict[str, ToolParam]) -> None:
    with ToolsiftClient(tenant_api, key) as ts:
        named = references(ToolSearch(ts, visible.values(), top_k=TOP_K).answer(use(QUERY)))
    names = {t["name"] for t in visible.values()}

    assert named and named == [n for _, n in brief_hits(tenant_api, key, QUERY, TOP_K) if n in names]


def test_the_async_search_answers_the_same(tenant_api: str, key: str, visible: dict[str, ToolParam], visible_ids: dict[str, str]) -> None:
    async def answer() -> ToolResultBlockParam:
        async with AsyncToolsiftClient(tenant_api, key) as ts:
            return await AsyncToolSearch(ts, visible.values(), ids=visible_ids, top_k=TOP_K).answer(use(QUERY).model_dump())

    hits = brief_hits(tenant_api, key, QUERY, TOP_K)
    assert references(asyncio.run(answer())) == [visible[i]["name"] for i, _ in hits]


def test_an_unreachable_toolsift_falls_back_to_every_deferred_tool_with_a_warning_or_raises_when_asked(
        visible: dict[str, ToolParam], caplog: pytest.LogCaptureFixture) -> None:
    tools = list(visible.values())
    with ToolsiftClient(f"http://127.0.0.1:{free_port()}", retries=0) as ts:
        with caplog.at_level(logging.WARNING, logger="toolsift.integrations.anthropic"):
            named = references(ToolSearch(ts, tools, always_include=[tools[0]["name"]]).answer(use(QUERY)))
        with pytest.raises(ToolsiftConnectionError):
            ToolSearch(ts, tools, on_error="raise").answer(use(QUERY))

    assert named == [t["name"] for t in tools[1:]] and "toolsift did not answer" in caplog.text


def test_a_wrong_key_is_raised_not_hidden_by_the_fallback(tenant_api: str, visible: dict[str, ToolParam]) -> None:
    with ToolsiftClient(tenant_api, "tsk_wrong") as ts, pytest.raises(ToolsiftAPIError) as raised:
        ToolSearch(ts, visible.values()).answer(use(QUERY))

    assert raised.value.status == 401


def test_an_empty_query_is_an_error_result_and_another_tools_call_is_refused(
        tenant_api: str, key: str, visible: dict[str, ToolParam]) -> None:
    with ToolsiftClient(tenant_api, key) as ts:
        search = ToolSearch(ts, visible.values())
        empty = search.answer(use("  "))
        with pytest.raises(NotASearchCallError):
            search.answer({"type": "tool_use", "id": "toolu_02", "name": "get_weather", "input": {}})

    assert empty["is_error"] is True and empty["tool_use_id"] == "toolu_01"


# --- the SDK on the wire: a loopback server stands in for Anthropic's Messages API -----------------------


def message(content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test", "content": content,
            "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}


def test_the_sdk_sends_the_deferred_tools_and_the_tool_reference_result_as_the_protocol_says(
        tenant_api: str, key: str, visible: dict[str, ToolParam], visible_ids: dict[str, str], recorder: Recorder) -> None:
    call = {"type": "tool_use", "id": "toolu_9", "name": SEARCH_TOOL_NAME, "input": {"query": QUERY}}
    recorder.answers += [message([call], "tool_use"), message([{"type": "text", "text": "done"}], "end_turn")]
    claude = anthropic.Anthropic(base_url=recorder.url, api_key="sk-ant-test", max_retries=0)
    messages: list[Any] = [{"role": "user", "content": QUERY}]

    with ToolsiftClient(tenant_api, key) as ts:
        search = ToolSearch(ts, visible.values(), ids=visible_ids, top_k=TOP_K)
        first = claude.messages.create(model="claude-test", max_tokens=256, tools=search.tools, messages=messages)
        block = next(b for b in first.content if search.is_search(b))
        answer = search.answer(block)
        messages += [{"role": "assistant", "content": first.content}, {"role": "user", "content": [answer]}]
        last = claude.messages.create(model="claude-test", max_tokens=256, tools=search.tools, messages=messages)

    (path, _, sent_first), (_, _, sent) = recorder.requests
    picks = [visible[i]["name"] for i, _ in brief_hits(tenant_api, key, QUERY, TOP_K)]
    assert path == "/v1/messages" and isinstance(first, Message) and isinstance(block, ToolUseBlock)
    assert last.content[0].type == "text" and sent_first["tools"] == sent["tools"]
    assert sent["tools"][0] == {"name": SEARCH_TOOL_NAME, "description": search.search_tool["description"],
                                "input_schema": search.search_tool["input_schema"]}
    assert sent["tools"][1:] == [{**t, "defer_loading": True} for t in visible.values()]
    assert sent["messages"][1] == {"role": "assistant", "content": [call]}
    assert sent["messages"][2] == {"role": "user", "content": [{
        "type": "tool_result", "tool_use_id": "toolu_9",
        "content": [{"type": "tool_reference", "tool_name": name} for name in picks]}]}
    assert len(picks) == TOP_K and all(name in {t["name"] for t in visible.values()} for name in picks)


def test_defer_marks_copies_and_leaves_the_kept_tools_and_the_originals_alone() -> None:
    tools: list[ToolParam] = [{"name": "a", "input_schema": {"type": "object"}},
                              {"name": "b", "input_schema": {"type": "object"}}]

    deferred = defer(tools, keep=["b"])

    assert deferred == [{**tools[0], "defer_loading": True}, tools[1]] and "defer_loading" not in tools[0]


def test_tools_named_twice_or_an_always_include_name_without_a_tool_are_refused_before_any_call(
        tenant_api: str, key: str, visible: dict[str, ToolParam]) -> None:
    assert_refuses_bad_tool_lists(tenant_api, key, visible.values(), ToolSearch)


def test_without_the_anthropic_package_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    assert_import_names(monkeypatch, "toolsift.integrations.anthropic", without="anthropic.types",
                        match=r"pip install 'toolsift\[anthropic\]'")
