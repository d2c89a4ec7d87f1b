"""toolsift for LangGraph's big-tool agents (``langgraph-bigtool``): toolsift retrieves the tools.

``langgraph_bigtool.create_agent(llm, tool_registry, retrieve_tools_function=...,
retrieve_tools_coroutine=...)`` gives the model one tool, ``retrieve_tools(query)``; the tool ids it
returns must be keys of ``tool_registry``, and the agent binds those tools on its next turns (its state's
``selected_tool_ids``). :func:`build_tool_registry` keys the framework's tools by name, and
:func:`make_retrieve_tools_function` / :func:`make_retrieve_tools_coroutine` answer ``retrieve_tools``
with toolsift's search::

    from langgraph_bigtool import create_agent
    from toolsift.client import AsyncToolsiftClient, ToolsiftClient
    from toolsift.integrations.langgraph import (build_tool_registry, make_retrieve_tools_coroutine,
                                                 make_retrieve_tools_function)

    registry = build_tool_registry(all_my_tools)
    ts, ats = ToolsiftClient(url, api_key=key), AsyncToolsiftClient(url, api_key=key)
    agent = create_agent(llm, registry,
                         retrieve_tools_function=make_retrieve_tools_function(ts, registry, top_k=5),
                         retrieve_tools_coroutine=make_retrieve_tools_coroutine(ats, registry, top_k=5)).compile()

Matching: a returned tool stands for the registry key equal to its ``name`` (as the asked ``format``
calls it), its ``original_name`` (non-brief answers) or its ``id``; returned tools matching no key are
skipped, never invented. The ids come in toolsift's rank order, then the ``always_include`` keys.

When toolsift cannot answer (no connection, a timeout, 429, 5xx), ``retrieve_tools`` returns only the
``always_include`` keys and logs a warning (``on_error="fallback"``, the default: binding a whole big
registry is what this agent avoids), or raises the error (``on_error="raise"``). Any other error
answer (a wrong key, a bad option) is always raised. Needs the ``langgraph`` extra:
``pip install 'toolsift[langgraph]'``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from toolsift.client import AsyncToolsiftClient, Format, SearchResult, ToolsiftClient
from toolsift.errors import ConfigError, ToolsiftError
from toolsift.integrations._common import (OnError, check_positive, clip_query, fall_back, match_hit, pick,
                                           search_kwargs)

try:
    import langgraph_bigtool  # noqa: F401  (the framework these functions are for)
    from langchain_core.tools import BaseTool
except ImportError as exc:  # pragma: no cover - exercised by a test that hides the package
    raise ImportError(
        "toolsift.integrations.langgraph needs langgraph-bigtool: pip install 'toolsift[langgraph]'") from exc

__all__ = ["build_tool_registry", "make_retrieve_tools_function", "make_retrieve_tools_coroutine", "OnError",
           "RegistryTool"]

logger = logging.getLogger(__name__)

#: What langgraph-bigtool's registry holds: LangChain tools or plain callables.
RegistryTool = BaseTool | Callable[..., Any]
_DOC = "Retrieve tools to use, given a search query: describe the task the tools must do."


def build_tool_registry(tools: Iterable[RegistryTool]) -> dict[str, RegistryTool]:
    """``tool_registry`` for ``create_agent``: each tool keyed by its name (a callable's ``__name__``),
    the name toolsift's answer is matched to.

    Raises:
        ConfigError: two tools share a name.
    """
    registry: dict[str, RegistryTool] = {}
    for tool in tools:
        name = tool.name if isinstance(tool, BaseTool) else getattr(tool, "__name__", "")
        if not name or name in registry:
            raise ConfigError(f"each tool needs a name of its own; {name!r} is empty or taken")
        registry[name] = tool
    return registry


class _Retriever:
    """What the sync and async ``retrieve_tools`` share: the search options and the answer's mapping."""

    def __init__(self, registry: Mapping[str, Any], top_k: int, limit: int | None, always_include: Iterable[str],
                 format: Format, brief: bool, on_error: OnError, search_options: Mapping[str, Any] | None) -> None:
        self.registry = registry
        self.always = list(always_include)
        missing = [key for key in self.always if key not in registry]
        if missing:
            raise ConfigError(f"always_include names no key of the tool registry: {missing}")
        check_positive(top_k=top_k, limit=limit)
        self.limit = limit
        self.on_error = on_error
        self.kwargs = search_kwargs(search_options, top_k=top_k, format=format, brief=brief)

    def query(self, query: str) -> str:
        return clip_query(query)

    def ids(self, answer: SearchResult) -> list[str]:
        picked = pick((match_hit(hit, self.registry) for hit in answer.tools), exclude=self.always, limit=self.limit)
        return [*picked, *self.always]

    def failed(self, exc: ToolsiftError) -> list[str]:
        # on purpose not all the registry: binding a whole big registry is what this agent avoids
        fall_back(exc, self.on_error, logger, "toolsift could not answer (%s); retrieve_tools returns only %s",
                  self.always)
        return list(self.always)


def make_retrieve_tools_function(client: ToolsiftClient, registry: Mapping[str, Any], *, top_k: int = 5,
                                 limit: int | None = None, always_include: Iterable[str] = (),
                                 format: Format = "openai", brief: bool = True, on_error: OnError = "fallback",
                                 search_options: Mapping[str, Any] | None = None) -> Callable[[str], list[str]]:
    """``retrieve_tools_function`` for ``create_agent``: ``retrieve_tools(query) -> [registry keys]``.

    Args:
        client: the sync client.
        registry: the agent's ``tool_registry`` (its keys are what may be returned).
        top_k: how many tools to ask toolsift for.
        limit: the most keys returned from toolsift's answer (``always_include`` ones apart); None: all.
        always_include: registry keys returned by every retrieval, after toolsift's.
        format: the format whose tool names are matched to the keys.
        brief: ask for brief answers (only names and ids are needed).
        on_error: ``"fallback"`` (``always_include`` only, a warning) or ``"raise"``.
        search_options: more :meth:`ToolsiftClient.search` keywords (``servers``, ``tags``, ...).

    Raises:
        ConfigError: an ``always_include`` key not in ``registry``, or ``top_k`` / ``limit`` not positive.
    """
    shared = _Retriever(registry, top_k, limit, always_include, format, brief, on_error, search_options)

    def retrieve_tools(query: str) -> list[str]:
        try:
            return shared.ids(client.search(shared.query(query), **shared.kwargs))
        except ToolsiftError as exc:
            return shared.failed(exc)

    retrieve_tools.__doc__ = _DOC
    return retrieve_tools


def make_retrieve_tools_coroutine(client: AsyncToolsiftClient, registry: Mapping[str, Any], *, top_k: int = 5,
                                  limit: int | None = None, always_include: Iterable[str] = (),
                                  format: Format = "openai", brief: bool = True, on_error: OnError = "fallback",
                                  search_options: Mapping[str, Any] | None = None
                                  ) -> Callable[[str], Awaitable[list[str]]]:
    """``retrieve_tools_coroutine`` for ``create_agent``: as :func:`make_retrieve_tools_function`, with
    the async client."""
    shared = _Retriever(registry, top_k, limit, always_include, format, brief, on_error, search_options)

    async def retrieve_tools(query: str) -> list[str]:
        try:
            return shared.ids(await client.search(shared.query(query), **shared.kwargs))
        except ToolsiftError as exc:
            return shared.failed(exc)

    retrieve_tools.__doc__ = _DOC
    return retrieve_tools
