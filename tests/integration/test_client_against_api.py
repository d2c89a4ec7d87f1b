"""toolsift.client against the real search API (served by uvicorn on loopback) on the real node: the sync
and the async client search, brief and pinned, fetch a tool, send feedback, and meet the API's errors."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.integration.conftest import TenantCatalog
from toolsift.client import AsyncToolsiftClient, ToolCall, ToolsiftAPIError, ToolsiftClient

pytestmark = pytest.mark.integration

QUERY = "search the web for recent news articles"


@pytest.fixture(scope="module")
def api(tenant_api: str) -> str:
    return tenant_api


def acme_tools(catalog: TenantCatalog) -> list[str]:
    return sorted(d for d, o in catalog.owner.items() if o == "acme" and not d.startswith("agent:"))


def test_the_sync_client_searches_fetches_the_tool_and_sends_feedback(api: str, tenant_catalog: TenantCatalog) -> None:
    with ToolsiftClient(api, tenant_catalog.keys["acme"], retries=0) as ts:
        found = ts.search(QUERY, top_k=5, format="openai")
        first = found.tools[0]
        tool = ts.get_tool(first.id, format="openai")
        stored = ts.feedback(found.request_id, [ToolCall(first.id, called=True, success=True),
                                                {"tool_id": found.tools[1].id, "called": False}])

    assert len(found.tools) == 5 and len(found.request_id) == 32 and found.format == "openai"
    assert [t.rank for t in found.tools] == [1, 2, 3, 4, 5] and found.raw["tools"][0]["id"] == first.id
    assert first.definition is not None and first.definition["type"] == "function" and first.description
    assert (tool.id, tool.name, tool.definition) == (first.id, first.name, first.definition)
    assert stored.stored == 2 and stored.request_id == found.request_id


def test_the_sync_client_asks_for_brief_entries_and_pinned_tools(api: str, tenant_catalog: TenantCatalog) -> None:
    with ToolsiftClient(api, tenant_catalog.keys["acme"]) as ts:
        plain = ts.search(QUERY, top_k=3)
        extra = next(t for t in acme_tools(tenant_catalog) if t not in {h.id for h in plain.tools})
        both = ts.search(QUERY, top_k=3, brief=True, pinned=[extra], max_results=2)
        over = ts.search(QUERY, top_k=3, pinned=[extra], max_results=1, token_budget=1)

    assert both.brief and [t.id for t in both.tools] == [extra, plain.tools[0].id]
    assert [t.pinned for t in both.tools] == [True, False]
    assert all(t.definition is None and t.description and "\n" not in t.description for t in both.tools)
    assert both.truncated_by == "max_results" and not both.pinned_over_budget
    assert [t.id for t in over.tools] == [extra] and over.pinned_over_budget and over.tools[0].score is None


def test_the_async_client_does_the_same_calls(api: str, tenant_catalog: TenantCatalog) -> None:
    async def calls() -> tuple[Any, ...]:
        async with AsyncToolsiftClient(api, tenant_catalog.keys["acme"]) as ts:
            found = await ts.search(QUERY, top_k=4, format="mcp")
            extra = next(t for t in acme_tools(tenant_catalog) if t not in {h.id for h in found.tools})
            brief = await ts.search(QUERY, top_k=4, brief=True, pinned=[extra])
            tool = await ts.get_tool(found.tools[0].id, format="mcp")
            stored = await ts.feedback(brief.request_id, [ToolCall(extra, called=True, success=False)])
            health = await ts.health()
            return found, extra, brief, tool, stored, health

    found, extra, brief, tool, stored, health = asyncio.run(calls())

    assert [t.id for t in brief.tools] == [extra, *[t.id for t in found.tools]]
    assert tool.definition is not None and "inputSchema" in tool.definition and tool.id == found.tools[0].id
    assert stored.stored == 1
    assert health.status == "ok" and health.documents > 0 and health.index == tenant_catalog.settings.index


def test_the_clients_get_a_toolset(api: str, tenant_catalog: TenantCatalog) -> None:
    with ToolsiftClient(api, tenant_catalog.keys["acme"]) as ts:
        tool_set = ts.toolset(tenant_catalog.queries[0], format="mcp")

    assert tool_set.history and tool_set.tools and all(t.raw["need"] for t in tool_set.tools)


def test_a_wrong_key_is_an_api_error_with_status_401_and_is_not_retried(api: str) -> None:
    waits: list[float] = []

    with ToolsiftClient(api, "tsk_wrong", sleep=waits.append) as ts, pytest.raises(ToolsiftAPIError) as raised:
        ts.search(QUERY)

    assert raised.value.status == 401 and raised.value.code == "unauthorized" and waits == []


def test_the_async_client_meets_the_same_401(api: str) -> None:
    async def call() -> None:
        async with AsyncToolsiftClient(api, "tsk_wrong") as ts:
            await ts.search(QUERY)

    with pytest.raises(ToolsiftAPIError) as raised:
        asyncio.run(call())

    assert raised.value.status == 401


def test_another_tenants_pinned_tool_or_tool_is_an_api_error_naming_the_field(
        api: str, tenant_catalog: TenantCatalog) -> None:
    globex = next(d for d, o in tenant_catalog.owner.items() if o == "globex" and not d.startswith("agent:"))

    with ToolsiftClient(api, tenant_catalog.keys["acme"]) as ts:
        with pytest.raises(ToolsiftAPIError) as pinned:
            ts.search(QUERY, pinned=[globex])
        with pytest.raises(ToolsiftAPIError) as fetched:
            ts.get_tool(globex)

    assert (pinned.value.status, pinned.value.code, pinned.value.field) == (400, "bad_query", "pinned.0")
    assert globex in pinned.value.message
    assert (fetched.value.status, fetched.value.code) == (404, "not_found")
