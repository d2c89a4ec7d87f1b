"""toolsift as the search behind Anthropic's tool search with deferred loading (Messages API, client-side).

The user's tools go to ``messages.create`` with ``defer_loading: true``: the model sees none of their
definitions up front, only a custom search tool (``toolsift_search``). When the model calls it, the
client answers with a ``tool_result`` whose content is ``tool_reference`` blocks, one per tool to load;
the API then expands each reference into the deferred tool's definition, and the model can call it::

    import anthropic
    from toolsift.client import ToolsiftClient
    from toolsift.integrations.anthropic import ToolSearch

    search = ToolSearch(ToolsiftClient("http://127.0.0.1:8000", api_key="tsk_..."), my_tools, always_include=["echo"])
    messages = [{"role": "user", "content": "Find recent news about OpenSearch"}]
    reply = claude.messages.create(model=..., max_tokens=1024, tools=search.tools, messages=messages)
    for block in reply.content:
        if search.is_search(block):  # the model asked for tools
            messages += [{"role": "assistant", "content": reply.content},
                         {"role": "user", "content": [search.answer(block)]}]

:class:`AsyncToolSearch` does the same over an :class:`~toolsift.client.AsyncToolsiftClient`
(``await search.answer(block)``).

Matching: toolsift searches its index (``brief=True``, format ``openai`` by default: names that are
valid Anthropic tool names). A hit whose id is a key of ``ids`` names the tool it maps to; any other hit
names the user's tool whose ``name`` equals the hit's ``name`` or its ``id`` (two servers' tools sharing
a name: map their ids). Hits with no such deferred tool are skipped, never invented; the tools in
``always_include`` are never deferred, so they stay loaded whatever the search says. Tool names must be
unique (:class:`~toolsift.errors.ConfigError` otherwise, as for an ``always_include`` name of no tool).

When toolsift cannot answer (no connection, a timeout, a 429 or 5xx after the client's retries), the
default ``on_error="fallback"`` logs a warning and references every deferred tool; ``on_error="raise"``
lets the client's error (a :class:`~toolsift.errors.ToolsiftError`) through. Other API errors (a wrong
key, a bad filter) are always raised.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Generic, TypeGuard, cast

from toolsift.client import AsyncToolsiftClient, Format, ToolHit, ToolsiftClient
from toolsift.errors import ToolsiftError
from toolsift.integrations._common import (QUERY_DESCRIPTION, SEARCH_DESCRIPTION, AnyClient, DeferredToolSearch,
                                           OnError, check_names, definition_parts, field)

try:
    from anthropic.types import ToolParam, ToolReferenceBlockParam, ToolResultBlockParam, ToolUseBlock
except ImportError as exc:
    raise ImportError("toolsift.integrations.anthropic needs the anthropic package: "
                      "pip install 'toolsift[anthropic]'") from exc

__all__ = ["ToolSearch", "AsyncToolSearch", "NotASearchCallError", "SEARCH_TOOL_NAME", "OnError", "defer",
           "search_tool", "tool_param"]

log = logging.getLogger(__name__)

#: The name of the search tool offered to the model.
SEARCH_TOOL_NAME = "toolsift_search"


class NotASearchCallError(ToolsiftError):
    """:meth:`ToolSearch.answer` was given a ``tool_use`` of another tool than the search tool."""


def defer(tools: Iterable[Mapping[str, Any]], *, keep: Iterable[str] = ()) -> list[ToolParam]:
    """Copies of ``tools`` (``ToolParam`` dicts) with ``defer_loading: true``, except those named in
    ``keep``, which are left as they are (loaded from the start)."""
    kept = set(keep)
    return [cast(ToolParam, dict(t) if t["name"] in kept else {**t, "defer_loading": True}) for t in tools]


def search_tool(*, name: str = SEARCH_TOOL_NAME, description: str = SEARCH_DESCRIPTION) -> ToolParam:
    """The custom search tool the model calls (never deferred): input ``{"query": str}``."""
    return {"name": name, "description": description,
            "input_schema": {"type": "object", "required": ["query"], "properties": {
                "query": {"type": "string", "description": QUERY_DESCRIPTION}}}}


def tool_param(hit: ToolHit) -> ToolParam:
    """An Anthropic ``ToolParam`` from a toolsift tool with a definition (any format), named as the
    definition names it."""
    name, description, schema = definition_parts(hit)
    return {"name": name, "description": description,
            "input_schema": schema if schema is not None else {"type": "object"}}


def _query(arguments: Any) -> str:
    if isinstance(arguments, Mapping):
        if isinstance(arguments.get("query"), str):
            return str(arguments["query"]).strip()
        return " ".join(str(v) for v in arguments.values() if isinstance(v, (str, int, float))).strip()
    return arguments.strip() if isinstance(arguments, str) else ""


class _Base(DeferredToolSearch, Generic[AnyClient]):
    _log = log

    def __init__(self, client: AnyClient, tools: Iterable[Mapping[str, Any]], *,
                 always_include: Iterable[str] = (), top_k: int = 5, format: Format = "openai",
                 ids: Mapping[str, str] | None = None, name: str = SEARCH_TOOL_NAME,
                 description: str = SEARCH_DESCRIPTION, on_error: OnError = "fallback",
                 search_options: Mapping[str, Any] | None = None) -> None:
        super().__init__(always_include=always_include, top_k=top_k, format=format, ids=ids, on_error=on_error,
                         search_options=search_options)
        self.client: AnyClient = client
        self.deferred_tools = defer(tools, keep=self.always_include)
        check_names([str(cast(Mapping[str, Any], t).get("name")) for t in self.deferred_tools if "name" in t],
                    self.always_include, [name])
        self.search_tool = search_tool(name=name, description=description)
        self._deferred = [t["name"] for t in self.deferred_tools if t.get("defer_loading")]

    @property
    def tools(self) -> list[ToolParam]:
        """What to send as ``tools``: the search tool, then the user's tools (all deferred but the
        ``always_include`` ones)."""
        return [self.search_tool, *self.deferred_tools]

    def is_search(self, block: object) -> TypeGuard[ToolUseBlock | Mapping[str, Any]]:
        """Whether ``block`` (a content block or its dict) is a ``tool_use`` of the search tool."""
        return bool(field(block, "type") == "tool_use" and field(block, "name") == self.search_tool["name"])

    def _start(self, block: ToolUseBlock | Mapping[str, Any]) -> tuple[str, str]:
        if not self.is_search(block):
            raise NotASearchCallError(f"not a tool_use of {self.search_tool['name']!r}: {field(block, 'name')!r}")
        return str(field(block, "id")), _query(field(block, "input"))

    @staticmethod
    def _result(tool_use_id: str, names: Sequence[str]) -> ToolResultBlockParam:
        if not names:
            return {"type": "tool_result", "tool_use_id": tool_use_id,
                    "content": [{"type": "text", "text": "No tool matched; try other words."}]}
        refs: list[ToolReferenceBlockParam] = [{"type": "tool_reference", "tool_name": n} for n in names]
        return {"type": "tool_result", "tool_use_id": tool_use_id, "content": refs}

    def _malformed(self, tool_use_id: str) -> ToolResultBlockParam:
        return {"type": "tool_result", "tool_use_id": tool_use_id, "is_error": True,
                "content": f"{self.search_tool['name']} needs a non-empty 'query'."}


class ToolSearch(_Base[ToolsiftClient]):
    """Anthropic tool search answered by toolsift (sync).

    Args:
        client: the toolsift client.
        tools: the user's tools (``ToolParam`` dicts), deferred but those in ``always_include``.
        always_include: names of tools never deferred (loaded from the start).
        top_k: how many tools toolsift returns per search.
        format: the toolsift format whose names match the tools' names (``openai``: callable names).
        ids: toolsift tool id -> the user's tool name, for tools named otherwise.
        name, description: the search tool's.
        on_error: ``fallback`` (default) or ``raise`` when toolsift cannot answer.
        search_options: more :meth:`ToolsiftClient.search` arguments (``servers``, ``tags``, ``instruction``, ...).
    """

    def answer(self, block: ToolUseBlock | Mapping[str, Any]) -> ToolResultBlockParam:
        """The ``tool_result`` answering the model's search call: ``tool_reference`` blocks naming the
        deferred tools toolsift picked (a text block when none fits; ``is_error`` for an empty query)."""
        tool_use_id, query = self._start(block)
        if not query:
            return self._malformed(tool_use_id)
        return self._result(tool_use_id, self._search(self.client, query))


class AsyncToolSearch(_Base[AsyncToolsiftClient]):
    """:class:`ToolSearch` over an :class:`~toolsift.client.AsyncToolsiftClient` (``await answer(...)``)."""

    async def answer(self, block: ToolUseBlock | Mapping[str, Any]) -> ToolResultBlockParam:
        """As :meth:`ToolSearch.answer`."""
        tool_use_id, query = self._start(block)
        if not query:
            return self._malformed(tool_use_id)
        return self._result(tool_use_id, await self._asearch(self.client, query))
