"""toolsift.integrations.litellm against litellm's real CustomLogger hooks and the real search API (on the
real node, over the tenant catalog): chat requests carry the OpenAI-format definitions the acme tenant
sees (toolsift's ``format="openai"``), and the filter narrows them to toolsift's picks.

The proxy's own dispatcher (``litellm.proxy.utils.ProxyLogging.pre_call_hook``) cannot be imported here
(it needs the ``litellm[proxy]`` extra's ``backoff``), so ``async_pre_call_hook`` is called directly, as
the proxy calls it; the SDK path runs a real ``litellm.acompletion(..., mock_response=...)``."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm's import would fetch it: no network here

import litellm  # noqa: E402
from litellm.caching.dual_cache import DualCache  # noqa: E402
from litellm.integrations.custom_logger import CustomLogger  # noqa: E402
from litellm.types.proxy.auth.user_api_key_auth import UserAPIKeyAuth  # noqa: E402
from litellm.types.utils import CallTypes  # noqa: E402

from tests.integration.adapter_support import acme_definitions, assert_import_names, closed_port_url  # noqa: E402
from tests.integration.adapter_support import ranked_names  # noqa: E402
from tests.integration.adapter_support import key  # noqa: E402, F401 - a fixture
from tests.integration.conftest import TenantCatalog  # noqa: E402
from toolsift.client import AsyncToolsiftClient, ToolsiftAPIError, ToolsiftClient  # noqa: E402
from toolsift.client import ToolsiftConnectionError  # noqa: E402
from toolsift.integrations.litellm import ToolsiftToolFilter, latest_user_text  # noqa: E402

pytestmark = pytest.mark.integration

QUERY = "what is the current stock price of Apple and its latest dividends"
NOT_A_FUNCTION = {"type": "web_search_preview"}


@pytest.fixture(scope="module")
def tools(tenant_api: str, tenant_catalog: TenantCatalog, key: str) -> list[dict[str, Any]]:
    """The OpenAI-format definition of each tool the acme tenant owns, as toolsift's API returns it."""
    definitions = acme_definitions(tenant_api, tenant_catalog, key)
    assert all(d["type"] == "function" for d in definitions)
    return definitions


def names(tools: list[dict[str, Any]]) -> list[str]:
    return [t["function"]["name"] for t in tools if t.get("type") == "function"]


def picks(api: str, key: str, tools: list[dict[str, Any]], top_k: int) -> list[str]:
    """The request's functions toolsift's own answer names, in rank order."""
    return ranked_names(api, key, QUERY, top_k, set(names(tools)))


def chat(tools: list[dict[str, Any]], text: str = QUERY, **extra: Any) -> dict[str, Any]:
    """A chat completion request as the proxy hands it to the hook."""
    return {"model": "gpt-4o-mini", "tools": tools, "temperature": 0, **extra,
            "messages": [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "hello"},
                         {"role": "assistant", "content": "hi, what do you need?"},
                         {"role": "user", "content": text}]}


async def proxy_call(hook: ToolsiftToolFilter, data: dict[str, Any], call_type: Any = "acompletion") -> Any:
    """The hook called as the proxy calls it."""
    return await hook.async_pre_call_hook(UserAPIKeyAuth(api_key="sk-caller"), DualCache(), data, call_type)


def with_client(api: str, key: str, body: Callable[[AsyncToolsiftClient], Awaitable[Any]]) -> Any:
    async def run() -> Any:
        async with AsyncToolsiftClient(api, key, retries=0) as ats:
            return await body(ats)
    return asyncio.run(run())


def test_the_proxy_hook_narrows_a_chat_requests_tools_to_toolsifts_picks_then_the_always_included(
        tenant_api: str, key: str, tools: list[dict[str, Any]]) -> None:
    expected = picks(tenant_api, key, tools, top_k=8)
    always = next(n for n in names(tools) if n not in expected)
    data = chat([*tools, NOT_A_FUNCTION])

    narrowed = with_client(tenant_api, key, lambda ats: proxy_call(
        ToolsiftToolFilter(ats, top_k=8, always_include=[always, "not_in_this_request"]), data))

    assert 0 < len(expected) <= 8 and names(narrowed["tools"]) == [*expected, always]
    assert narrowed["tools"][-1] == NOT_A_FUNCTION  # tools that are not functions pass untouched
    assert all(any(t is u for u in tools) for t in narrowed["tools"][:-1])  # the request's own dicts, none invented
    assert {k: v for k, v in narrowed.items() if k != "tools"} == {k: v for k, v in data.items() if k != "tools"}
    assert len(data["tools"]) == len(tools) + 1  # the caller's dict is not changed


def test_a_tool_choice_naming_a_function_keeps_that_function(tenant_api: str, key: str,
                                                             tools: list[dict[str, Any]]) -> None:
    expected = picks(tenant_api, key, tools, top_k=5)
    forced = next(n for n in names(tools) if n not in expected)
    data = chat(tools, tool_choice={"type": "function", "function": {"name": forced}})

    narrowed = with_client(tenant_api, key,
                           lambda ats: proxy_call(ToolsiftToolFilter(ats, top_k=5), data, "completion"))

    assert names(narrowed["tools"]) == [*expected, forced] and narrowed["tool_choice"] == data["tool_choice"]


def test_requests_without_tools_or_user_text_or_of_another_call_type_are_left_as_they_are(
        tools: list[dict[str, Any]]) -> None:
    no_tools = chat([])
    del no_tools["tools"]
    no_user = {"model": "m", "tools": tools, "messages": [{"role": "system", "content": "You are helpful."}]}
    image_only = chat(tools, text="")
    image_only["messages"][-1]["content"] = [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]
    embedding = {"model": "m", "input": QUERY, "tools": tools}

    async def calls(ats: AsyncToolsiftClient) -> list[bool]:
        hook = ToolsiftToolFilter(ats, on_error="raise")  # toolsift is down: any search would raise
        return [await proxy_call(hook, data) is data for data in (no_tools, no_user, image_only)] + [
            await proxy_call(hook, embedding, "aembedding") is embedding,
            await hook.async_pre_call_deployment_hook(chat(tools), CallTypes.acompletion) is None]

    assert with_client(closed_port_url(), "tsk_x", calls) == [True] * 5


def test_the_latest_user_messages_text_parts_are_the_query() -> None:
    messages = [{"role": "user", "content": "first"}, {"role": "assistant", "content": "ok"},
                {"role": "user", "content": [{"type": "text", "text": "stock price"},
                                             {"type": "image_url", "image_url": {"url": "x"}},
                                             {"type": "text", "text": " of Apple "}]}]

    assert latest_user_text(messages) == "stock price\n of Apple"
    assert latest_user_text([{"role": "assistant", "content": "hi"}]) is None and latest_user_text(None) is None


def test_registered_in_litellm_with_sdk_calls_an_acompletion_sends_only_the_narrowed_tools(
        tenant_api: str, key: str, tools: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    expected = picks(tenant_api, key, tools, top_k=6)

    class Recorder(CustomLogger):
        """Records the tools of each completion litellm logs as made."""

        def __init__(self) -> None:
            super().__init__()
            self.tools: list[list[str]] = []
            self.done = asyncio.Event()

        async def async_log_success_event(self, kwargs: Any, response_obj: Any, start_time: Any,
                                          end_time: Any) -> None:
            self.tools.append(names(kwargs.get("tools") or []))
            self.done.set()

    # litellm copies its callbacks into lists of its own on the first call (one logger of each class):
    # every list is put back after the test
    for name in ("callbacks", "input_callback", "success_callback", "failure_callback", "_async_success_callback",
                 "_async_failure_callback"):
        monkeypatch.setattr(litellm, name, list(getattr(litellm, name)))

    async def completions(ats: AsyncToolsiftClient) -> tuple[list[list[str]], list[str]]:
        recorder, hook = Recorder(), ToolsiftToolFilter(ats, top_k=6, sdk_calls=True)
        litellm.callbacks.extend([hook, recorder])
        answers = []
        for sdk_calls in (True, False):  # without sdk_calls the SDK runs no hook of this filter
            hook.sdk_calls = sdk_calls
            recorder.done.clear()
            reply = await litellm.acompletion(**chat(tools), mock_response="ok")
            await asyncio.wait_for(recorder.done.wait(), timeout=30)
            answers.append(reply.choices[0].message.content)
        return recorder.tools, answers

    seen, answers = with_client(tenant_api, key, completions)

    assert answers == ["ok", "ok"] and seen == [expected, names(tools)] and 0 < len(expected) < len(tools)


def test_an_unreachable_toolsift_leaves_the_request_with_all_its_tools_and_warns(
        tools: list[dict[str, Any]], caplog: pytest.LogCaptureFixture) -> None:
    data = chat(tools)

    with caplog.at_level(logging.WARNING, logger="toolsift.integrations.litellm"):
        result = with_client(closed_port_url(), "tsk_x", lambda ats: proxy_call(ToolsiftToolFilter(ats), data))

    assert result is data and "toolsift could not answer" in caplog.text


def test_an_unreachable_toolsift_raises_when_asked_to_and_a_wrong_key_always_raises(
        tenant_api: str, tools: list[dict[str, Any]]) -> None:
    with pytest.raises(ToolsiftConnectionError):
        with_client(closed_port_url(), "tsk_x",
                    lambda ats: proxy_call(ToolsiftToolFilter(ats, on_error="raise"), chat(tools)))
    with pytest.raises(ToolsiftAPIError) as raised:
        with_client(tenant_api, "tsk_wrong", lambda ats: proxy_call(ToolsiftToolFilter(ats), chat(tools)))

    assert raised.value.status == 401


def test_a_request_whose_functions_toolsift_does_not_know_is_left_as_it_is(
        tenant_api: str, key: str, caplog: pytest.LogCaptureFixture) -> None:
    data = chat([{"type": "function", "function": {"name": "my_private_tool", "parameters": {"type": "object"}}}])

    with caplog.at_level(logging.WARNING, logger="toolsift.integrations.litellm"):
        result = with_client(tenant_api, key, lambda ats: proxy_call(ToolsiftToolFilter(ats), data))

    assert result is data and "match none of its 1 functions" in caplog.text


def test_the_sync_client_works_too_in_a_worker_thread(tenant_api: str, key: str,
                                                      tools: list[dict[str, Any]]) -> None:
    expected = picks(tenant_api, key, tools, top_k=4)

    with ToolsiftClient(tenant_api, key) as ts:
        narrowed = asyncio.run(proxy_call(ToolsiftToolFilter(ts, top_k=4), chat(tools)))

    assert names(narrowed["tools"]) == expected


def test_the_filter_defines_the_proxy_hook_on_its_own_class_as_the_proxy_requires() -> None:
    # ProxyLogging.pre_call_hook calls a callback's async_pre_call_hook only when the callback's own class
    # defines it and it is not CustomLogger's
    assert "async_pre_call_hook" in vars(ToolsiftToolFilter)
    assert ToolsiftToolFilter.async_pre_call_hook != CustomLogger.async_pre_call_hook
    assert not ToolsiftToolFilter.enforces_request_content  # it rewrites requests, it does not judge them


def test_without_litellm_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    assert_import_names(monkeypatch, "toolsift.integrations.litellm", without="litellm.integrations.custom_logger",
                        match=r"pip install 'toolsift\[litellm\]'", loaded=False)
