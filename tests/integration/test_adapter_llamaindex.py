"""toolsift.integrations.llamaindex against llama-index-core's real retriever and agent interfaces and the
real search API (on the real node, over the tenant catalog): the user's tools are LlamaIndex FunctionTools
built from the definitions the acme tenant sees, and the retrievers answer toolsift's picks among them."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.objects import ObjectRetriever
from llama_index.core.schema import QueryBundle
from llama_index.core.tools import BaseTool, FunctionTool

from tests.integration.adapter_support import acme_definitions, assert_import_names, closed_port_url, key  # noqa: F401 - key: a fixture
from tests.integration.conftest import TenantCatalog
from toolsift.client import AsyncToolsiftClient, SearchResult, ToolsiftAPIError, ToolsiftClient
from toolsift.client import ToolsiftConnectionError
from toolsift.errors import ConfigError
from toolsift.integrations.llamaindex import ToolsiftRetriever, ToolsiftToolRetriever

pytestmark = pytest.mark.integration

QUERY = "what is the current stock price of Apple and its latest dividends"


@pytest.fixture(scope="module")
def called() -> list[str]:
    return []


@pytest.fixture(scope="module")
def tools(tenant_api: str, tenant_catalog: TenantCatalog, key: str, called: list[str]) -> list[BaseTool]:
    """A FunctionTool per tool the acme tenant owns, from its OpenAI definition (named as toolsift names
    it); calling one records its name in ``called``."""
    def tool(name: str, description: str) -> BaseTool:
        def answer(**_: Any) -> str:
            called.append(name)
            return f"{name}: ok"
        return FunctionTool.from_defaults(fn=answer, name=name, description=description)

    built = []
    for definition in acme_definitions(tenant_api, tenant_catalog, key):
        function = definition["function"]
        built.append(tool(function["name"], function["description"] or function["name"]))
    assert len({t.metadata.name for t in built}) == len(built) > 20
    return built


def search(api: str, key: str, top_k: int, query: str = QUERY) -> SearchResult:
    with ToolsiftClient(api, key) as ts:
        return ts.search(query, top_k=top_k, format="openai")


def picks(answer: SearchResult, tools: list[BaseTool]) -> list[str]:
    """The user's tools toolsift's answer names (by name, original name or id), in its order."""
    names = {t.metadata.name for t in tools}
    found = []
    for hit in answer.tools:
        name = next((k for k in (hit.name, hit.raw.get("original_name"), hit.id) if k in names), None)
        if name is not None and name not in found:
            found.append(name)
    return found


def names(tools: list[BaseTool]) -> list[str | None]:
    return [t.metadata.name for t in tools]


def test_the_retriever_answers_one_node_per_tool_with_toolsifts_order_ids_and_scores(tenant_api: str,
                                                                                      key: str) -> None:
    answer = search(tenant_api, key, top_k=6)

    with ToolsiftClient(tenant_api, key) as ts:
        nodes = ToolsiftRetriever(ts, top_k=6).retrieve(QUERY)

    assert len(nodes) == len(answer.tools) == 6
    assert [n.node.node_id for n in nodes] == [h.id for h in answer.tools]
    assert [n.score for n in nodes] == [h.score for h in answer.tools]
    assert [n.node.metadata["name"] for n in nodes] == [h.name for h in answer.tools]
    assert all(n.node.get_content().startswith(f"{h.name}: ") for n, h in zip(nodes, answer.tools, strict=True))


def test_retrieve_returns_the_users_tools_in_toolsifts_order_then_the_always_included(
        tenant_api: str, key: str, tools: list[BaseTool]) -> None:
    expected = picks(search(tenant_api, key, top_k=8), tools)
    always = next(str(t.metadata.name) for t in tools if t.metadata.name not in expected)

    with ToolsiftClient(tenant_api, key) as ts:
        retriever = ToolsiftToolRetriever(tools, ToolsiftRetriever(ts, top_k=8), always_include=[always])
        from_str = retriever.retrieve(QUERY)
        from_bundle = retriever.retrieve(QueryBundle(query_str=QUERY))

    assert 0 < len(expected) <= 8 and names(from_str) == [*expected, always]
    assert from_bundle == from_str and all(any(t is u for u in tools) for t in from_str)  # the user's own objects


def test_aretrieve_returns_the_same_tools_with_the_async_client(tenant_api: str, key: str,
                                                               tools: list[BaseTool]) -> None:
    expected = picks(search(tenant_api, key, top_k=5), tools)
    always = [str(t.metadata.name) for t in tools if t.metadata.name not in expected][:2]

    async def retrieve() -> list[BaseTool]:
        async with AsyncToolsiftClient(tenant_api, key) as ats:
            retriever = ToolsiftToolRetriever(tools, ToolsiftRetriever(async_client=ats, top_k=5),
                                              always_include=always)
            return await retriever.aretrieve(QUERY)

    assert expected and names(asyncio.run(retrieve())) == [*expected, *always]


def test_a_function_agent_given_it_as_tool_retriever_is_offered_and_calls_only_those_tools(
        tenant_api: str, key: str, tools: list[BaseTool], called: list[str]) -> None:
    expected = picks(search(tenant_api, key, top_k=4), tools)
    always = next(str(t.metadata.name) for t in tools if t.metadata.name not in expected)
    called.clear()

    async def run() -> Any:
        async with AsyncToolsiftClient(tenant_api, key) as ats:
            retriever = ToolsiftToolRetriever(tools, ToolsiftRetriever(async_client=ats, top_k=4),
                                              always_include=[always])
            # llama-index's own mock LLM calls every tool it is offered, then answers
            agent = FunctionAgent(tool_retriever=retriever, llm=MockFunctionCallingLLM(), streaming=False)
            offered = await agent.get_tools(QUERY)
            return isinstance(agent.tool_retriever, ObjectRetriever), offered, await agent.run(QUERY)

    is_object_retriever, offered, output = asyncio.run(run())

    assert is_object_retriever and [t.metadata.name for t in offered] == [*expected, always]
    # the calls run concurrently: the agent's order of completion is its own
    assert sorted(c.tool_name for c in output.tool_calls) == sorted(called) == sorted([*expected, always])
    assert not any(c.tool_output.is_error for c in output.tool_calls)  # each called tool was found by its name
    assert len(tools) > len(expected) + 1 and str(output.response.content) == "Tool calls complete."


def test_a_blank_query_answers_every_tool_and_a_tools_name_that_tool_without_asking_toolsift(
        tools: list[BaseTool]) -> None:
    # a FunctionAgent looks the tool the LLM called up by its name (get_tools(tool_name)) before calling it
    name, always = str(tools[5].metadata.name), str(tools[9].metadata.name)

    async def lookup(retriever: ToolsiftToolRetriever) -> list[BaseTool]:
        return await retriever.aretrieve(name)

    with ToolsiftClient(closed_port_url(), "tsk_x", retries=0) as down:  # any search would raise
        retriever = ToolsiftToolRetriever(tools, ToolsiftRetriever(down), always_include=[always], on_error="raise")
        answers = [retriever.retrieve("  "), retriever.retrieve(f" {name} "), asyncio.run(lookup(retriever))]

    assert answers == [tools, [tools[5], tools[9]], [tools[5], tools[9]]]


def test_an_unreachable_toolsift_falls_back_to_all_tools_with_a_warning(
        tools: list[BaseTool], caplog: pytest.LogCaptureFixture) -> None:
    async def aretrieve(retriever: ToolsiftToolRetriever) -> list[BaseTool]:
        return await retriever.aretrieve(QUERY)

    with ToolsiftClient(closed_port_url(), "tsk_x", retries=0) as down, \
            caplog.at_level(logging.WARNING, logger="toolsift.integrations.llamaindex"):
        retriever = ToolsiftToolRetriever(tools, ToolsiftRetriever(down))  # aretrieve: the sync client in a thread
        answers = [retriever.retrieve(QUERY), asyncio.run(aretrieve(retriever))]

    assert answers == [tools, tools] and caplog.text.count("toolsift could not answer") == 2


def test_an_unreachable_toolsift_raises_when_asked_to_and_a_wrong_key_always_raises(
        tenant_api: str, tools: list[BaseTool]) -> None:
    with ToolsiftClient(closed_port_url(), "tsk_x", retries=0) as down, pytest.raises(ToolsiftConnectionError):
        ToolsiftToolRetriever(tools, ToolsiftRetriever(down), on_error="raise").retrieve(QUERY)
    with ToolsiftClient(tenant_api, "tsk_wrong") as wrong, pytest.raises(ToolsiftAPIError) as raised:
        ToolsiftToolRetriever(tools, ToolsiftRetriever(wrong)).retrieve(QUERY)

    assert raised.value.status == 401


def test_tools_sharing_a_name_or_an_unknown_always_included_name_are_config_errors(tenant_api: str,
                                                                                    tools: list[BaseTool]) -> None:
    with ToolsiftClient(tenant_api) as ts:
        retriever = ToolsiftRetriever(ts)
        with pytest.raises(ConfigError, match="a name of its own"):
            ToolsiftToolRetriever([tools[0], tools[0]], retriever)
        with pytest.raises(ConfigError, match="always_include names no tool"):
            ToolsiftToolRetriever(tools, retriever, always_include=["no_such_tool"])
    with pytest.raises(ConfigError, match="needs client"):
        ToolsiftRetriever()


def test_without_llama_index_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    assert_import_names(monkeypatch, "toolsift.integrations.llamaindex", without="llama_index.core.objects",
                        match=r"pip install 'toolsift\[llamaindex\]'", loaded=False)
