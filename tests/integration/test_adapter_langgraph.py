"""toolsift.integrations.langgraph against the real langgraph-bigtool agent and the real search API (on the
real node, over the tenant catalog): the registry holds LangChain StructuredTools built from the definitions
the acme tenant sees, and toolsift answers the agent's ``retrieve_tools`` calls with keys of that registry."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph_bigtool import create_agent

from tests.integration.adapter_support import RecordingChatModel, acme_definitions, assert_import_names
from tests.integration.adapter_support import closed_port_url, ranked_names, structured_tools
from tests.integration.adapter_support import key  # noqa: F401 - a fixture
from tests.integration.conftest import TenantCatalog
from toolsift.client import AsyncToolsiftClient, ToolsiftAPIError, ToolsiftClient, ToolsiftConnectionError
from toolsift.errors import ConfigError
from toolsift.integrations.langgraph import (
    RegistryTool,
    build_tool_registry,
    make_retrieve_tools_coroutine,
    make_retrieve_tools_function,
)

pytestmark = pytest.mark.integration

QUERY = "find npm packages for parsing dates and check their vulnerabilities"


@pytest.fixture(scope="module")
def registry(tenant_api: str, tenant_catalog: TenantCatalog, key: str) -> dict[str, RegistryTool]:
    """The registry of a StructuredTool per tool the acme tenant owns, from its OpenAI definition."""
    tools = structured_tools(acme_definitions(tenant_api, tenant_catalog, key))
    built = build_tool_registry(tools)
    assert len(built) == len(tools) > 20 and all(name == getattr(tool, "name", None) for name, tool in built.items())
    return built


def picks(api: str, key: str, registry: dict[str, RegistryTool], top_k: int) -> list[str]:
    """The names toolsift's own answer holds that are registry keys, in rank order."""
    return ranked_names(api, key, QUERY, top_k, registry.keys())


def retrieval_turn(query: str) -> list[AIMessage]:
    """The fake model's answers: a ``retrieve_tools`` call, then a plain reply once tools are bound."""
    call = {"name": "retrieve_tools", "args": {"query": query}, "id": "call_1", "type": "tool_call"}
    return [AIMessage("", tool_calls=[call]), AIMessage("I have the tools now.")]


def test_the_function_returns_registry_keys_in_toolsifts_order_then_the_always_included(
        tenant_api: str, key: str, registry: dict[str, RegistryTool]) -> None:
    expected = picks(tenant_api, key, registry, top_k=6)
    always = next(k for k in registry if k not in expected)

    with ToolsiftClient(tenant_api, key) as ts:
        ids = make_retrieve_tools_function(ts, registry, top_k=6, always_include=[always])(QUERY)
        capped = make_retrieve_tools_function(ts, registry, top_k=6, limit=2)(QUERY)

    assert 0 < len(expected) <= 6 and ids == [*expected, always] and capped == expected[:2]


def test_the_coroutine_returns_the_same_keys(tenant_api: str, key: str, registry: dict[str, RegistryTool]) -> None:
    expected = picks(tenant_api, key, registry, top_k=5)

    async def call() -> list[str]:
        async with AsyncToolsiftClient(tenant_api, key) as ats:
            return await make_retrieve_tools_coroutine(ats, registry, top_k=5)(QUERY)

    assert asyncio.run(call()) == expected and expected


def test_a_bigtool_agent_run_puts_toolsifts_picks_in_selected_tool_ids_and_binds_them(
        tenant_api: str, key: str, registry: dict[str, RegistryTool]) -> None:
    expected = picks(tenant_api, key, registry, top_k=4)
    llm = RecordingChatModel(responses=retrieval_turn(QUERY))

    with ToolsiftClient(tenant_api, key) as ts:
        async_client = AsyncToolsiftClient(tenant_api, key)
        graph = create_agent(llm, registry,
                             retrieve_tools_function=make_retrieve_tools_function(ts, registry, top_k=4),
                             retrieve_tools_coroutine=make_retrieve_tools_coroutine(async_client, registry, top_k=4))
        state = graph.compile().invoke({"messages": [HumanMessage(QUERY)]})
    asyncio.run(async_client.aclose())

    assert expected and state["selected_tool_ids"] == expected
    assert llm.bound == [["retrieve_tools"], ["retrieve_tools", *expected]]
    told = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert len(told) == 1 and told[0].content == f"Available tools: {expected}"
    assert state["messages"][-1].content == "I have the tools now."


def test_a_bigtool_agent_run_asynchronously_uses_the_coroutine(
        tenant_api: str, key: str, registry: dict[str, RegistryTool]) -> None:
    expected = picks(tenant_api, key, registry, top_k=3)
    llm = RecordingChatModel(responses=retrieval_turn(QUERY))

    async def run() -> dict[str, Any]:
        async with AsyncToolsiftClient(tenant_api, key) as ats:
            sync_never = ToolsiftClient(closed_port_url(), retries=0)  # the async run must not use it
            graph = create_agent(llm, registry,
                                 retrieve_tools_function=make_retrieve_tools_function(sync_never, registry,
                                                                                      on_error="raise"),
                                 retrieve_tools_coroutine=make_retrieve_tools_coroutine(ats, registry, top_k=3))
            result: dict[str, Any] = await graph.compile().ainvoke({"messages": [HumanMessage(QUERY)]})
            return result

    state = asyncio.run(run())

    assert expected and state["selected_tool_ids"] == expected
    assert llm.bound[-1] == ["retrieve_tools", *expected]


def test_an_unreachable_toolsift_returns_only_the_always_included_with_a_warning(
        registry: dict[str, RegistryTool], caplog: pytest.LogCaptureFixture) -> None:
    always = sorted(registry)[:2]

    with ToolsiftClient(closed_port_url(), retries=0) as down, \
            caplog.at_level(logging.WARNING, logger="toolsift.integrations.langgraph"):
        ids = make_retrieve_tools_function(down, registry, always_include=always)(QUERY)
        none = make_retrieve_tools_function(down, registry)(QUERY)

    assert ids == always and none == [] and "toolsift could not answer" in caplog.text


def test_an_unreachable_toolsift_raises_when_asked_to_and_a_wrong_key_always_raises(
        tenant_api: str, registry: dict[str, RegistryTool]) -> None:
    with ToolsiftClient(closed_port_url(), retries=0) as down, pytest.raises(ToolsiftConnectionError):
        make_retrieve_tools_function(down, registry, on_error="raise")(QUERY)

    async def wrong_key() -> list[str]:
        async with AsyncToolsiftClient(tenant_api, "tsk_wrong") as ats:
            return await make_retrieve_tools_coroutine(ats, registry)(QUERY)

    with pytest.raises(ToolsiftAPIError) as raised:
        asyncio.run(wrong_key())

    assert raised.value.status == 401


def test_an_always_included_key_outside_the_registry_or_a_shared_name_is_a_config_error(
        registry: dict[str, RegistryTool]) -> None:
    tool = next(t for t in registry.values() if isinstance(t, BaseTool))

    with ToolsiftClient(closed_port_url(), retries=0) as ts, pytest.raises(ConfigError, match="always_include"):
        make_retrieve_tools_function(ts, registry, always_include=["no_such_tool"])
    with pytest.raises(ConfigError, match="taken"):
        build_tool_registry([tool, tool])


def test_without_langgraph_bigtool_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    assert_import_names(monkeypatch, "toolsift.integrations.langgraph", without="langgraph_bigtool",
                        match=r"pip install 'toolsift\[langgraph\]'")
