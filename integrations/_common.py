"""What the framework adapters of :mod:`toolsift.integrations` share (private: import an adapter, not this).

Every adapter asks toolsift's search API for the tools of a query and maps the answer onto the
framework's own tools; these are the parts that are the same logic in each:

* matching (:func:`match_hit`, :func:`first_known`, :func:`pick`): a framework tool is picked when its
  name equals a returned tool's ``name``, its ``original_name`` or its ``id``; returned tools that match
  none are skipped, never invented; picked names come in toolsift's order, each once (the adapter then
  appends its ``always_include`` ones);
* whether toolsift could not answer (:func:`unreachable`: no connection, a timeout, 429, 5xx) and what
  ``on_error`` then does (:func:`fall_back`); any other error answer is always raised;
* the query (:data:`MAX_QUERY_CHARS`, :func:`clip_query`) and the search keywords (:func:`search_kwargs`);
* the sync/async client plumbing (:func:`check_clients`, :func:`sync_client`, :func:`search_async`);
* chat messages (:func:`field`, :func:`latest_user_text`);
* the deferred-loading tool search of the Anthropic and OpenAI adapters (:class:`DeferredToolSearch`,
  :func:`check_names`, :func:`definition_parts`).

Where adapters differ on purpose (LangGraph's fallback answers only ``always_include``, LlamaIndex
matches nodes by their metadata, Anthropic's and OpenAI's tool search match by ``name`` or ``id`` and
take an id map) the difference stays in the adapter or is a parameter here.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Literal, TypeVar

from toolsift.client import (
    AsyncToolsiftClient,
    Format,
    SearchResult,
    ToolHit,
    ToolsiftAPIError,
    ToolsiftClient,
    ToolsiftConnectionError,
)
from toolsift.errors import ConfigError, ToolsiftError

__all__ = [
    "OnError", "MAX_QUERY_CHARS", "SEARCH_DESCRIPTION", "QUERY_DESCRIPTION", "AnyClient",
    "match_hit", "first_known", "pick", "unreachable", "fall_back", "clip_query", "search_kwargs",
    "check_positive", "check_clients", "sync_client", "search_async", "field", "latest_user_text",
    "check_names", "definition_parts", "DeferredToolSearch",
]

#: What to do when toolsift cannot answer: the adapter's fallback (a logged warning), or raise.
OnError = Literal["fallback", "raise"]
# The API's longest query. It is toolsift.query.structured.MAX_QUERY_CHARS, kept here as a copy: the
# integrations live in the ground layer, which may not import toolsift.query (tests/unit/test_layering.py);
# tests/unit/client/test_integrations_common.py checks that the two are equal.
MAX_QUERY_CHARS = 32_000
#: The search tool's description in the Anthropic and OpenAI tool search.
SEARCH_DESCRIPTION = ("Search the catalog of available tools and load the ones that fit. Describe in plain words "
                      "what you need to do; the matching tools become callable in your next turn.")
#: The description of the search tool's ``query`` input.
QUERY_DESCRIPTION = "What the tool should do, in plain words."

#: A sync or an async client (a class generic over the client it searches with).
AnyClient = TypeVar("AnyClient", ToolsiftClient, AsyncToolsiftClient)


# --- matching --------------------------------------------------------------------------------------------


def first_known(keys: Iterable[object], names: Collection[str]) -> str | None:
    """The first of ``keys`` that is a non-empty string in ``names``; None when none is."""
    for key in keys:
        if isinstance(key, str) and key and key in names:
            return key
    return None


def match_hit(hit: ToolHit, names: Collection[str], *, original_name: bool = True,
              aliases: Mapping[str, str] | None = None) -> str | None:
    """The framework tool name ``hit`` stands for: its ``name``, ``original_name`` or ``id``, the first
    that is in ``names``; None when none is.

    Args:
        hit: a tool of toolsift's answer.
        names: the framework's tool names.
        original_name: also match the hit's ``original_name`` (in non-brief answers); False: ``name`` or
            ``id`` only.
        aliases: toolsift tool id -> the framework's name for it: a hit whose id is a key is matched to
            that name only.
    """
    if aliases is not None and hit.id in aliases:
        return first_known((aliases[hit.id],), names)
    original = hit.raw.get("original_name") if original_name else None
    return first_known((hit.name, original, hit.id), names)


def pick(matches: Iterable[str | None], *, exclude: Collection[str] = (), limit: int | None = None) -> list[str]:
    """The matched names (``None``: a hit that matched none) in their order, each once, without those in
    ``exclude`` (the ``always_include`` ones, added after), cut to ``limit`` when given."""
    picked: list[str] = []
    for name in matches:
        if name is not None and name not in picked and name not in exclude:
            picked.append(name)
    return picked[:limit] if limit is not None else picked


# --- errors ----------------------------------------------------------------------------------------------


def unreachable(exc: ToolsiftError) -> bool:
    """Whether ``exc`` means toolsift could not answer now (no connection, a timeout, 429, 5xx), as
    opposed to a request that stays wrong on the next call (401, 400, ...)."""
    if isinstance(exc, ToolsiftConnectionError):
        return True
    return isinstance(exc, ToolsiftAPIError) and (exc.status == 429 or exc.status >= 500)


def fall_back(exc: ToolsiftError, on_error: OnError, logger: logging.Logger, message: str, *args: object) -> None:
    """Raises ``exc`` unless ``on_error`` is ``"fallback"`` and toolsift was :func:`unreachable`; then logs
    ``message`` (formatted with ``exc`` and ``args``) as a warning, and the caller falls back."""
    if on_error == "raise" or not unreachable(exc):
        raise exc
    logger.warning(message, exc, *args)


# --- the search ------------------------------------------------------------------------------------------


def clip_query(text: object, *, strip: bool = True) -> str:
    """``text`` as a query: stripped (unless ``strip=False``) and cut to :data:`MAX_QUERY_CHARS`."""
    query = str(text)
    return (query.strip() if strip else query)[:MAX_QUERY_CHARS]


def search_kwargs(options: Mapping[str, Any] | None, *, top_k: int, format: Format,
                  brief: bool | None = None) -> dict[str, Any]:
    """The keywords of :meth:`ToolsiftClient.search`: the user's ``options`` (``servers``, ``tags``...),
    then the adapter's own (which win); ``brief`` left out when None."""
    kwargs: dict[str, Any] = {**(options or {}), "top_k": top_k, "format": format}
    if brief is not None:
        kwargs["brief"] = brief
    return kwargs


def check_positive(**values: int | None) -> None:
    """Raises :class:`ConfigError` when one of ``values`` (``top_k``, ``limit``...) is given and not positive."""
    if any(v is not None and v < 1 for v in values.values()):
        raise ConfigError(f"{' and '.join(values)} must be positive (got {', '.join(map(str, values.values()))})")


def check_clients(owner: str, client: ToolsiftClient | None, async_client: AsyncToolsiftClient | None) -> None:
    """Raises :class:`ConfigError` when ``owner`` (a class's name) is given neither client."""
    if client is None and async_client is None:
        raise ConfigError(f"{owner} needs client= (sync) or async_client= (async), or both")


def sync_client(client: ToolsiftClient | None, owner: str, async_method: str) -> ToolsiftClient:
    """``client``, or a :class:`ConfigError` saying ``owner`` was given only the async one."""
    if client is None:
        raise ConfigError(f"{owner} was given only async_client=: use {async_method}, or pass client=")
    return client


async def search_async(query: str, kwargs: Mapping[str, Any], *, client: ToolsiftClient | None = None,
                       async_client: AsyncToolsiftClient | None = None) -> SearchResult:
    """toolsift's answer for ``query``: with ``async_client`` when given, else with the sync ``client`` in a
    worker thread (the event loop is never blocked). Its errors are raised."""
    if async_client is not None:
        return await async_client.search(query, **kwargs)
    if client is None:
        raise ConfigError("no toolsift client to search with: pass client= or async_client=")
    return await asyncio.to_thread(client.search, query, **kwargs)


# --- messages --------------------------------------------------------------------------------------------


def field(item: object, key: str) -> Any:
    """A field of a message, content block or output item: a mapping's key, or an object's attribute (the
    SDKs take both)."""
    return item.get(key) if isinstance(item, Mapping) else getattr(item, key, None)


def latest_user_text(messages: Any) -> str | None:
    """The text of the last ``role: user`` message of a chat request (its text parts joined when its
    content is a list of parts), stripped; None when there is none or it has no text."""
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if field(message, "role") != "user":
            continue
        content = field(message, "content")
        if isinstance(content, list):
            content = "\n".join(str(p.get("text") or "") for p in content
                                if isinstance(p, Mapping) and p.get("type") == "text")
        text = content.strip() if isinstance(content, str) else ""
        return text or None
    return None


# --- tool search with deferred loading (Anthropic, OpenAI) ----------------------------------------------


def check_names(names: Sequence[str], always_include: Iterable[str], search: Sequence[str] = ()) -> None:
    """The API refuses a tool list with a name twice (the user's tools' ``names`` and the ``search`` tool's),
    and ``always_include`` must name the user's tools: a :class:`ConfigError` otherwise."""
    twice = sorted(n for n, count in Counter([*names, *search]).items() if count > 1)
    if twice:
        raise ConfigError(f"tool names must be unique; named more than once: {twice}")
    missing = sorted(set(always_include) - set(names))
    if missing:
        raise ConfigError(f"always_include names no tool: {missing}")


def definition_parts(hit: ToolHit) -> tuple[str, str, dict[str, Any] | None]:
    """A toolsift tool's definition (any format) as its name, description and input schema (None when it
    has none), named as the definition names it."""
    definition: Mapping[str, Any] = hit.definition or {}
    function = definition.get("function")
    if isinstance(function, Mapping):  # openai (Chat Completions)
        definition = function
    schema = definition.get("parameters") or definition.get("inputSchema") or definition.get("input_schema")
    return (str(definition.get("name") or hit.name), str(definition.get("description") or hit.description),
            dict(schema) if isinstance(schema, Mapping) else None)


class DeferredToolSearch:
    """What the Anthropic and OpenAI ``ToolSearch`` share: the search options, the answer's mapping onto
    the deferred tools, and the fallback. A subclass (generic over :data:`AnyClient`) holds the client, sets
    ``_deferred`` (the deferred tools' names) and ``_log``, and shapes the model's call and the answer in
    its API's terms.

    Matching: a hit whose id is a key of ``ids`` names the tool it maps to; any other hit names the deferred
    tool whose name equals the hit's ``name`` or its ``id`` (not ``original_name``: the search is brief).
    """

    _log: ClassVar[logging.Logger]
    _deferred: Collection[str]

    def __init__(self, *, always_include: Iterable[str], top_k: int, format: Format, ids: Mapping[str, str] | None,
                 on_error: OnError, search_options: Mapping[str, Any] | None) -> None:
        self.always_include = frozenset(always_include)
        self.top_k = top_k
        self.format: Format = format
        self.ids = dict(ids or {})
        self.on_error: OnError = on_error
        self.search_options = dict(search_options or {})  # more ToolsiftClient.search arguments (servers, tags, ...)

    def picks(self, found: SearchResult) -> list[str]:
        """The deferred tools' names that ``found``'s hits name, in rank order, each once."""
        return pick(match_hit(hit, self._deferred, original_name=False, aliases=self.ids) for hit in found.tools)

    def _search(self, client: ToolsiftClient, query: str) -> list[str]:
        """The deferred tools to load for ``query``: toolsift's picks, or the fallback's."""
        try:
            found = client.search(query, top_k=self.top_k, format=self.format, brief=True, **self.search_options)
        except ToolsiftError as exc:
            return self._fallback(exc)
        return self.picks(found)

    async def _asearch(self, client: AsyncToolsiftClient, query: str) -> list[str]:
        """As :meth:`_search`, with the async client."""
        try:
            found = await client.search(query, top_k=self.top_k, format=self.format, brief=True,
                                        **self.search_options)
        except ToolsiftError as exc:
            return self._fallback(exc)
        return self.picks(found)

    def _fallback(self, exc: ToolsiftError) -> list[str]:
        fall_back(exc, self.on_error, self._log, "toolsift did not answer (%s): loading all %d deferred tools",
                  len(self._deferred))
        return list(self._deferred)
