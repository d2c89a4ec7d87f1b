"""toolsift for LangChain 1.x agents: a ``create_agent`` middleware that lets toolsift pick the tools.

:class:`ToolsiftToolSelector` is a :class:`langchain.agents.middleware.AgentMiddleware` shaped like
LangChain's own ``LLMToolSelectorMiddleware``: before each model call (``wrap_model_call`` /
``awrap_model_call``) it asks toolsift's search API for the tools relevant to the conversation's latest
user message and narrows the model request's ``tools`` to those, so the model is bound to a handful of
tools instead of the agent's whole catalog::

    from langchain.agents import create_agent
    from toolsift.client import AsyncToolsiftClient, ToolsiftClient
    from toolsift.integrations.langchain import ToolsiftToolSelector

    ts = ToolsiftClient("http://127.0.0.1:8000", api_key="tsk_...")
    ats = AsyncToolsiftClient("http://127.0.0.1:8000", api_key="tsk_...")
    agent = create_agent(model="openai:gpt-4.1", tools=all_my_tools,
                         middleware=[ToolsiftToolSelector(ts, async_client=ats, top_k=8,
                                                          always_include=["ask_user"])])
    agent.invoke({"messages": [{"role": "user", "content": "what is AAPL trading at?"}]})

Matching: a tool of the request is picked when its ``name`` equals a returned tool's ``name`` (as the
asked ``format`` calls it), its ``original_name`` (in non-brief answers) or its ``id``. Returned tools
that match none are skipped, never invented; picked tools come in toolsift's rank order, then the
``always_include`` ones, then the request's provider tools (dicts), untouched.

When toolsift cannot answer (no connection, a timeout, 429, 5xx) the request goes on with all its tools
and a logged warning (``on_error="fallback"``, the default), or the error is raised
(``on_error="raise"``). Any other error answer (a wrong key: 401, a bad option: 400) is always raised:
it stays wrong on the next call. Needs the ``langchain`` extra: ``pip install 'toolsift[langchain]'``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from toolsift.client import AsyncToolsiftClient, Format, SearchResult, ToolsiftClient
from toolsift.errors import ConfigError, ToolsiftError
from toolsift.integrations._common import (OnError, check_clients, check_positive, clip_query, fall_back, match_hit,
                                           pick, search_async, search_kwargs, sync_client)

try:
    from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import BaseTool
except ImportError as exc:  # pragma: no cover - exercised by a test that hides the package
    raise ImportError(
        "toolsift.integrations.langchain needs LangChain 1.x: pip install 'toolsift[langchain]'") from exc

__all__ = ["ToolsiftToolSelector", "OnError", "match_hit"]

logger = logging.getLogger(__name__)


class ToolsiftToolSelector(AgentMiddleware[AgentState[Any], Any, Any]):
    """Narrows each model call's tools to those toolsift finds for the latest user message.

    Args:
        client: the sync client (``invoke``); also used, in a worker thread, by ``ainvoke`` when
            ``async_client`` is not given.
        async_client: the async client (``ainvoke``).
        top_k: how many tools to ask toolsift for.
        max_tools: the most tools kept from toolsift's answer (after matching); None: all that match.
            ``always_include`` tools do not count against it.
        always_include: names of the agent's tools bound on every call, whatever toolsift answers; each
            must be one of the request's tools (else :class:`~toolsift.errors.ConfigError`).
        format: the format whose tool names are matched (``openai``: OpenAI-callable names).
        brief: ask for brief answers (ids, names, one-line descriptions): only names are needed.
        on_error: ``"fallback"`` (all tools, a warning) or ``"raise"`` when toolsift cannot answer.
        search_options: more :meth:`ToolsiftClient.search` keywords (``servers``, ``tags``, ``retriever``...).

    Raises:
        ConfigError: neither client is given, or ``top_k`` / ``max_tools`` is not positive.
    """

    def __init__(self, client: ToolsiftClient | None = None, *, async_client: AsyncToolsiftClient | None = None,
                 top_k: int = 10, max_tools: int | None = None, always_include: Iterable[str] = (),
                 format: Format = "openai", brief: bool = True, on_error: OnError = "fallback",
                 search_options: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        check_clients("ToolsiftToolSelector", client, async_client)
        check_positive(top_k=top_k, max_tools=max_tools)
        self.client = client
        self.async_client = async_client
        self.top_k = top_k
        self.max_tools = max_tools
        self.always_include = list(always_include)
        self.format: Format = format
        self.brief = brief
        self.on_error: OnError = on_error
        self.search_options = dict(search_options or {})

    # --- the hooks ------------------------------------------------------------------------------------

    def wrap_model_call(self, request: ModelRequest[Any],
                        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]) -> ModelResponse[Any] | AIMessage:
        """Ask toolsift (sync client), narrow ``request.tools``, then call the model."""
        query = self._query(request)
        if query is None:
            return handler(request)
        client = sync_client(self.client, "ToolsiftToolSelector", "ainvoke")
        try:
            answer = client.search(query, **self._search_kwargs())
        except ToolsiftError as exc:
            return handler(self._failed(exc, request))
        return handler(self._narrow(request, answer))

    async def awrap_model_call(
            self, request: ModelRequest[Any],
            handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]) -> ModelResponse[Any] | AIMessage:
        """As :meth:`wrap_model_call`, with the async client (or the sync one in a worker thread)."""
        query = self._query(request)
        if query is None:
            return await handler(request)
        try:
            answer = await search_async(query, self._search_kwargs(), client=self.client,
                                        async_client=self.async_client)
        except ToolsiftError as exc:
            return await handler(self._failed(exc, request))
        return await handler(self._narrow(request, answer))

    # --- the parts ------------------------------------------------------------------------------------

    def _search_kwargs(self) -> dict[str, Any]:
        return search_kwargs(self.search_options, top_k=self.top_k, format=self.format, brief=self.brief)

    def _query(self, request: ModelRequest[Any]) -> str | None:
        """The latest user message's text; None (nothing to narrow) when there are no tools or no text."""
        if not any(not isinstance(t, dict) for t in request.tools):
            return None
        for message in reversed(request.messages):
            if isinstance(message, HumanMessage):
                return clip_query(message.text) or None
        return None

    def _failed(self, exc: ToolsiftError, request: ModelRequest[Any]) -> ModelRequest[Any]:
        fall_back(exc, self.on_error, logger, "toolsift could not answer (%s); the model gets all %d tools",
                  len(request.tools))
        return request

    def _narrow(self, request: ModelRequest[Any], answer: SearchResult) -> ModelRequest[Any]:
        tools: dict[str, BaseTool] = {t.name: t for t in request.tools if not isinstance(t, dict)}
        missing = [name for name in self.always_include if name not in tools]
        if missing:
            raise ConfigError(f"always_include names no tool of the request: {missing}; "
                              f"the request's tools: {sorted(tools)}")
        picked = pick((match_hit(hit, tools) for hit in answer.tools), exclude=self.always_include,
                      limit=self.max_tools)
        if not picked:
            logger.warning("toolsift's %d tools for the request match none of the agent's %d tools by name or id",
                           len(answer.tools), len(tools))
        kept = [tools[name] for name in [*picked, *self.always_include]]
        provider = [t for t in request.tools if isinstance(t, dict)]
        return request.override(tools=[*kept, *provider])
