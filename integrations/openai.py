"""toolsift as the search behind OpenAI's client-executed ``tool_search`` (Responses API, deferred loading).

The user's function tools go to ``responses.create`` with ``defer_loading: true`` beside a
``{"type": "tool_search", "execution": "client"}`` tool. When the model wants tools it emits a
``tool_search_call`` item; the client answers with a ``tool_search_output`` input item listing the
definitions to load, and the model can call them in its next turn::

    from openai import OpenAI
    from toolsift.client import ToolsiftClient
    from toolsift.integrations.openai import ToolSearch

    search = ToolSearch(ToolsiftClient("http://127.0.0.1:8000", api_key="tsk_..."), my_tools, always_include=["echo"])
    items = [{"role": "user", "content": "Find recent news about OpenSearch"}]
    response = gpt.responses.create(model=..., tools=search.tools, input=items)
    items += response.output
    items += [search.answer(item) for item in response.output if search.is_search(item)]
    response = gpt.responses.create(model=..., tools=search.tools, input=items)

:class:`AsyncToolSearch` does the same over an :class:`~toolsift.client.AsyncToolsiftClient`
(``await search.answer(item)``).

Matching: toolsift searches its index (``brief=True``, format ``openai``: the callable names). A hit
whose id is a key of ``ids`` names the tool it maps to; any other hit names the user's tool whose
``name`` equals the hit's ``name`` or its ``id`` (two servers' tools sharing a name: map their ids).
Hits with no such deferred tool are skipped, never invented; the tools in ``always_include`` are never
deferred, so they stay loaded whatever the search says. Tool names must be unique
(:class:`~toolsift.errors.ConfigError` otherwise, as for an ``always_include`` name of no tool). Function
and custom tools are deferred; other tools (namespaces, MCP servers, hosted tools) are sent as they are
and not searched.

When toolsift cannot answer (no connection, a timeout, a 429 or 5xx after the client's retries), the
default ``on_error="fallback"`` logs a warning and loads every deferred tool; ``on_error="raise"`` lets
the client's error (a :class:`~toolsift.errors.ToolsiftError`) through. Other API errors (a wrong key,
a bad filter) are always raised.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Generic, TypeGuard, cast

from toolsift.client import AsyncToolsiftClient, Format, ToolHit, ToolsiftClient
from toolsift.errors import ToolsiftError
from toolsift.integrations._common import (QUERY_DESCRIPTION, SEARCH_DESCRIPTION, AnyClient, DeferredToolSearch,
                                           OnError, check_names, definition_parts, field)

try:
    from openai.types.responses import (
        FunctionToolParam,
        ResponseToolSearchCall,
        ResponseToolSearchOutputItemParamParam,
        ToolParam,
        ToolSearchToolParam,
    )
except ImportError as exc:
    raise ImportError("toolsift.integrations.openai needs an openai package with the Responses API's "
                      "tool_search types (a core dependency of toolsift): pip install -U openai") from exc

__all__ = ["ToolSearch", "AsyncToolSearch", "NotASearchCallError", "OnError", "defer", "tool_search_tool",
           "function_tool"]

log = logging.getLogger(__name__)

_DEFERRABLE = ("function", "custom")
_PARAMETERS: dict[str, object] = {
    "type": "object", "required": ["query"], "additionalProperties": False,
    "properties": {"query": {"type": "string", "description": QUERY_DESCRIPTION}}}


class NotASearchCallError(ToolsiftError):
    """:meth:`ToolSearch.answer` was given an item that is not a client-executed ``tool_search_call``."""


def tool_search_tool(*, description: str = SEARCH_DESCRIPTION,
                     parameters: Mapping[str, object] | None = None) -> ToolSearchToolParam:
    """The ``tool_search`` tool, executed by the client (input ``{"query": str}`` unless ``parameters``)."""
    return {"type": "tool_search", "execution": "client", "description": description,
            "parameters": dict(parameters or _PARAMETERS)}


def defer(tools: Iterable[Mapping[str, Any]], *, keep: Iterable[str] = ()) -> list[ToolParam]:
    """Copies of ``tools`` (Responses ``ToolParam`` dicts): function and custom tools with
    ``defer_loading: true``, except those named in ``keep``; other tools as they are."""
    kept = set(keep)
    return [cast(ToolParam, {**t, "defer_loading": True} if t.get("type") in _DEFERRABLE and t.get("name") not in kept
                 else dict(t)) for t in tools]


def function_tool(hit: ToolHit) -> FunctionToolParam:
    """A Responses function tool from a toolsift tool with a definition (any format), named as the
    definition names it (not strict: catalog schemas seldom meet strict mode's rules)."""
    name, description, schema = definition_parts(hit)
    return {"type": "function", "name": name, "description": description,
            "parameters": schema if schema is not None else {"type": "object", "properties": {}}, "strict": False}


def _query(arguments: Any) -> str:
    if isinstance(arguments, str):
        text = arguments
        try:
            arguments = json.loads(text)
        except ValueError:
            return text.strip()
    if not isinstance(arguments, Mapping):
        return ""
    if isinstance(arguments.get("query"), str):
        return str(arguments["query"]).strip()
    words: list[str] = []
    for value in arguments.values():  # another schema's arguments, e.g. {"paths": [...]}
        words += [str(v) for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)]
    return " ".join(words).strip()


class _Base(DeferredToolSearch, Generic[AnyClient]):
    _log = log

    def __init__(self, client: AnyClient, tools: Iterable[Mapping[str, Any]], *,
                 always_include: Iterable[str] = (), top_k: int = 5, format: Format = "openai",
                 ids: Mapping[str, str] | None = None, description: str = SEARCH_DESCRIPTION,
                 on_error: OnError = "fallback", search_options: Mapping[str, Any] | None = None) -> None:
        super().__init__(always_include=always_include, top_k=top_k, format=format, ids=ids, on_error=on_error,
                         search_options=search_options)
        self.client: AnyClient = client
        self.deferred_tools = defer(tools, keep=self.always_include)
        check_names([str(cast(Mapping[str, Any], t).get("name")) for t in self.deferred_tools if "name" in t],
                    self.always_include)
        self.search_tool = tool_search_tool(description=description)
        self._deferred: dict[str, ToolParam] = {  # name -> the deferred function or custom tool
            str(d["name"]): t for t in self.deferred_tools
            if (d := cast(Mapping[str, Any], t)).get("type") in _DEFERRABLE and d.get("defer_loading")}

    @property
    def tools(self) -> list[ToolParam]:
        """What to send as ``tools``: the ``tool_search`` tool, then the user's tools (all deferred but the
        ``always_include`` ones)."""
        return [self.search_tool, *self.deferred_tools]

    @staticmethod
    def is_search(item: object) -> TypeGuard[ResponseToolSearchCall | Mapping[str, Any]]:
        """Whether ``item`` (an output item or its dict) is a client-executed ``tool_search_call``."""
        return bool(field(item, "type") == "tool_search_call" and field(item, "execution") == "client")

    def _start(self, item: ResponseToolSearchCall | Mapping[str, Any]) -> tuple[str | None, str]:
        if not self.is_search(item):
            raise NotASearchCallError(f"not a client-executed tool_search_call: {field(item, 'type')!r}")
        call_id = field(item, "call_id")
        return (str(call_id) if call_id is not None else None), _query(field(item, "arguments"))

    def _output(self, call_id: str | None, names: Sequence[str]) -> ResponseToolSearchOutputItemParamParam:
        output: ResponseToolSearchOutputItemParamParam = {
            "type": "tool_search_output", "execution": "client", "status": "completed",
            "tools": [cast(Any, self._deferred[n]) for n in names]}
        if call_id is not None:
            output["call_id"] = call_id
        return output


class ToolSearch(_Base[ToolsiftClient]):
    """OpenAI's client-executed tool search answered by toolsift (sync).

    Args:
        client: the toolsift client.
        tools: the user's Responses tools (``FunctionToolParam`` dicts ...), deferred but those in ``always_include``.
        always_include: names of tools never deferred (loaded from the start).
        top_k: how many tools toolsift returns per search.
        format: the toolsift format whose names match the tools' names (``openai``: callable names).
        ids: toolsift tool id -> the user's tool name, for tools named otherwise.
        description: the ``tool_search`` tool's description.
        on_error: ``fallback`` (default) or ``raise`` when toolsift cannot answer.
        search_options: more :meth:`ToolsiftClient.search` arguments (``servers``, ``tags``, ``instruction``, ...).
    """

    def answer(self, item: ResponseToolSearchCall | Mapping[str, Any]) -> ResponseToolSearchOutputItemParamParam:
        """The ``tool_search_output`` input item answering the call: the definitions of the deferred
        tools toolsift picked (none for an empty query or no match)."""
        call_id, query = self._start(item)
        if not query:
            return self._output(call_id, [])
        return self._output(call_id, self._search(self.client, query))


class AsyncToolSearch(_Base[AsyncToolsiftClient]):
    """:class:`ToolSearch` over an :class:`~toolsift.client.AsyncToolsiftClient` (``await answer(...)``)."""

    async def answer(self, item: ResponseToolSearchCall | Mapping[str, Any]) -> ResponseToolSearchOutputItemParamParam:
        """As :meth:`ToolSearch.answer`."""
        call_id, query = self._start(item)
        if not query:
            return self._output(call_id, [])
        return self._output(call_id, await self._asearch(self.client, query))
