"""toolsift.integrations.langchain against LangChain 1.x's real middleware interfaces and the real search API
(on the real node, over the tenant catalog): the agent's tools are LangChain StructuredTools built from
the definitions the acme tenant sees, and the middleware narrows them to toolsift's picks."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import BaseTool

from tests.integration.adapter_support import RecordingChatModel, acme_definitions, assert_import_names
from tests.integration.adapter_support import closed_port_url, ranked_names, structured_tools
from tests.integration.adapter_support import key  # noqa: F401 - a fixture
from tests.integration.conftest import TenantCatalog
from toolsift.client import AsyncToolsiftClient, ToolsiftAPIError, ToolsiftClient, ToolsiftConnectionError
from toolsift.integrations.langchain import ToolsiftToolSelector

pytestmark = pytest.mark.integration

QUERY = "what is the current stock price of Apple and its latest dividends"


@pytest.fixture(scope="module")
def tools(tenant_api: str, tenant_catalog: TenantCatalog, key: str) -> list[BaseTool]:
    """A StructuredTool per tool the acme tenant owns, from its OpenAI definition (named as toolsift names it)."""
    built = structured_tools(acme_definitions(tenant_api, tenant_catalog, key))
    assert len({t.name for t in built}) == len(built) > 20
    return built


def picks(api: str, key: str, tools: list[BaseTool], top_k: int) -> list[str]:
    """The names toolsift's own answer holds that are the agent's tools, in rank order."""
    return ranked_names(api, key, QUERY, top_k, {t.name for t in tools})


def request_for(tools: list[BaseTool], text: str = QUERY) -> ModelRequest[Any]:
    return ModelRequest(model=RecordingChatModel(responses=[AIMessage("done")]),
                        messages=[HumanMessage("hello"), AIMessage("hi, what do you need?"), HumanMessage(text)],
                        tools=list(tools))


def test_wrap_model_call_narrows_the_tools_to_toolsifts_picks_then_the_always_included(
        tenant_api: str, key: str, tools: list[BaseTool]) -> None:
    expected = picks(tenant_api, key, tools, top_k=6)
    always = next(t.name for t in tools if t.name not in expected)
    provider_tool = {"type": "web_search"}
    request = request_for(tools).override(tools=[*tools, provider_tool])
    seen: list[ModelRequest[Any]] = []

    def handler(r: ModelRequest[Any]) -> ModelResponse[Any]:
        seen.append(r)
        return ModelResponse(result=[AIMessage("done")])

    with ToolsiftClient(tenant_api, key) as ts:
        result = ToolsiftToolSelector(ts, top_k=6, always_include=[always]).wrap_model_call(request, handler)

    assert 0 < len(expected) <= 6 and isinstance(result, ModelResponse)
    narrowed = seen[0].tools
    assert [t.name for t in narrowed if isinstance(t, BaseTool)] == [*expected, always]
    assert narrowed[-1] == provider_tool  # provider tools pass untouched
    assert all(isinstance(t, dict) or t in tools for t in narrowed)  # the agent's own objects, none invented


def test_max_tools_caps_toolsifts_picks_but_not_the_always_included(
        tenant_api: str, key: str, tools: list[BaseTool]) -> None:
    expected = picks(tenant_api, key, tools, top_k=10)
    always = [t.name for t in tools if t.name not in expected][:2]
    seen: list[list[str]] = []

    def handler(r: ModelRequest[Any]) -> ModelResponse[Any]:
        seen.append([t.name for t in r.tools if isinstance(t, BaseTool)])
        return ModelResponse(result=[AIMessage("done")])

    with ToolsiftClient(tenant_api, key) as ts:
        ToolsiftToolSelector(ts, top_k=10, max_tools=2, always_include=always).wrap_model_call(request_for(tools),
                                                                                             handler)

    assert len(expected) >= 2 and seen == [[*expected[:2], *always]]


def test_awrap_model_call_narrows_the_same_way_with_the_async_client_or_the_sync_one_in_a_thread(
        tenant_api: str, key: str, tools: list[BaseTool]) -> None:
    expected = picks(tenant_api, key, tools, top_k=5)
    seen: list[list[str]] = []

    async def handler(r: ModelRequest[Any]) -> ModelResponse[Any]:
        seen.append([t.name for t in r.tools if isinstance(t, BaseTool)])
        return ModelResponse(result=[AIMessage("done")])

    async def call(ts: ToolsiftClient) -> None:
        async with AsyncToolsiftClient(tenant_api, key) as ats:
            await ToolsiftToolSelector(async_client=ats, top_k=5).awrap_model_call(request_for(tools), handler)
        await ToolsiftToolSelector(ts, top_k=5).awrap_model_call(request_for(tools), handler)

    with ToolsiftClient(tenant_api, key) as ts:
        asyncio.run(call(ts))

    assert seen == [expected, expected] and expected


def test_a_create_agent_run_binds_the_model_to_the_narrowed_tools_only(
        tenant_api: str, key: str, tools: list[BaseTool]) -> None:
    expected = picks(tenant_api, key, tools, top_k=5)
    always = next(t.name for t in tools if t.name not in expected)
    model = RecordingChatModel(responses=[AIMessage("Apple trades at ...")])

    with ToolsiftClient(tenant_api, key) as ts:
        agent = create_agent(model=model, tools=tools,
                             middleware=[ToolsiftToolSelector(ts, top_k=5, always_include=[always])])
        state = agent.invoke({"messages": [HumanMessage(QUERY)]})

    assert model.bound == [[*expected, always]] and len(tools) > len(expected) + 1
    assert state["messages"][-1].content == "Apple trades at ..."


def test_an_unreachable_toolsift_falls_back_to_all_tools_with_a_warning(
        tools: list[BaseTool], caplog: pytest.LogCaptureFixture) -> None:
    seen: list[int] = []

    def handler(r: ModelRequest[Any]) -> ModelResponse[Any]:
        seen.append(len(r.tools))
        return ModelResponse(result=[AIMessage("done")])

    with ToolsiftClient(closed_port_url(), "tsk_x", retries=0) as ts, \
            caplog.at_level(logging.WARNING, logger="toolsift.integrations.langchain"):
        ToolsiftToolSelector(ts).wrap_model_call(request_for(tools), handler)

    assert seen == [len(tools)] and "toolsift could not answer" in caplog.text


def test_an_unreachable_toolsift_raises_when_asked_to_and_a_wrong_key_always_raises(
        tenant_api: str, tools: list[BaseTool]) -> None:
    def handler(r: ModelRequest[Any]) -> ModelResponse[Any]:
        raise AssertionError("the model must not be called")

    with ToolsiftClient(closed_port_url(), "tsk_x", retries=0) as down, pytest.raises(ToolsiftConnectionError):
        ToolsiftToolSelector(down, on_error="raise").wrap_model_call(request_for(tools), handler)
    with ToolsiftClient(tenant_api, "tsk_wrong") as wrong, pytest.raises(ToolsiftAPIError) as raised:
        ToolsiftToolSelector(wrong).wrap_model_call(request_for(tools), handler)

    assert raised.value.status == 401


def test_without_langchain_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    assert_import_names(monkeypatch, "toolsift.integrations.langchain", without="langchain.agents.middleware",
                        match=r"pip install 'toolsift\[langchain\]'")
