"""toolsift for LiteLLM: a proxy hook that narrows a chat request's ``tools`` to those toolsift picks.

:class:`ToolsiftToolFilter` is a :class:`litellm.integrations.custom_logger.CustomLogger`. In the LiteLLM
proxy, its ``async_pre_call_hook`` runs before each request is routed: for a chat completion
(call type ``completion`` / ``acompletion``) with OpenAI-format ``tools`` and a user message, it asks
toolsift's search API with the latest user message's text and answers the request with ``tools``
narrowed to the ones toolsift picks. A ``custom_callbacks.py`` beside the proxy's ``config.yaml``::

    import os
    from toolsift.client import AsyncToolsiftClient
    from toolsift.integrations.litellm import ToolsiftToolFilter

    toolsift_filter = ToolsiftToolFilter(
        AsyncToolsiftClient(os.environ["TOOLSIFT_URL"], os.environ["TOOLSIFT_API_KEY"]),
        top_k=10, always_include=["ask_user"])

and in ``config.yaml``: ``litellm_settings: {callbacks: custom_callbacks.toolsift_filter}``.

The LiteLLM SDK (``litellm.acompletion`` without the proxy) never runs ``async_pre_call_hook``; it runs
``async_pre_call_deployment_hook`` of each callback in ``litellm.callbacks``. With ``sdk_calls=True`` this
filter narrows there too (``litellm.callbacks = [ToolsiftToolFilter(client, sdk_calls=True)]``); leave it
off in the proxy, which runs both hooks.

Matching: a request tool ``{"type": "function", "function": {"name": N}}`` is kept when ``N`` equals a
returned tool's ``name`` (as the asked ``format`` calls it: ``openai`` by default), its ``original_name``
(in answers that are not brief: ``brief=False``) or its ``id``. Returned
tools that match none are skipped, never invented; kept tools come in toolsift's order, then the
``always_include`` ones the request has and the function a ``tool_choice`` names, then the request's
tools that are not functions, untouched. A request is left as it is when it has no tools, no user
message text, another call type, or when toolsift's answer matches none of its functions (an empty
``tools`` list is an error for most providers).

When toolsift cannot answer (no connection, a timeout, 429, 5xx), the request goes on with all its tools
and a logged warning (``on_error="fallback"``, the default), or the client's error is raised
(``on_error="raise"``; the proxy then answers the caller with an error). Any other error answer (a wrong
key: 401, a bad option: 400) is always raised. A subclass must define ``async_pre_call_hook`` itself:
the proxy only calls the hook a callback's own class defines. Needs the ``litellm`` extra:
``pip install 'toolsift[litellm]'``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from toolsift.client import AsyncToolsiftClient, Format, SearchResult, ToolsiftClient
from toolsift.errors import ToolsiftError
from toolsift.integrations._common import (OnError, check_positive, clip_query, fall_back, latest_user_text, match_hit,
                                           pick, search_async, search_kwargs)

try:
    from litellm.integrations.custom_logger import CustomLogger
    from litellm.types.utils import CallTypes
except ImportError as exc:  # pragma: no cover - the extra is installed in the test environment
    raise ImportError("toolsift.integrations.litellm needs litellm: pip install 'toolsift[litellm]'") from exc

if TYPE_CHECKING:
    from litellm.caching.dual_cache import DualCache
    from litellm.types.proxy.auth.user_api_key_auth import UserAPIKeyAuth
    from litellm.types.utils import CallTypesLiteral

__all__ = ["ToolsiftToolFilter", "OnError", "CHAT_CALL_TYPES", "latest_user_text"]

logger = logging.getLogger(__name__)

#: The call types whose requests are narrowed (chat completions: OpenAI-format ``tools``).
CHAT_CALL_TYPES = frozenset({"completion", "acompletion"})


def _function_name(tool: Any) -> str | None:
    function = tool.get("function") if isinstance(tool, Mapping) and tool.get("type") == "function" else None
    name = function.get("name") if isinstance(function, Mapping) else None
    return name if isinstance(name, str) and name else None


class ToolsiftToolFilter(CustomLogger):
    """Narrows chat requests' ``tools`` to those toolsift finds for the latest user message.

    Args:
        client: the async client (or a sync one, then run in a worker thread).
        top_k: how many tools to ask toolsift for (over the whole catalog the key sees).
        always_include: function names kept whenever a request has them, whatever toolsift answers.
        format: the format whose tool names are matched (``openai``: the names chat requests use).
        brief: ask for brief answers (ids, names, one-line descriptions): only names are needed;
            ``False`` adds each tool's ``original_name`` to match on.
        on_error: ``"fallback"`` (all tools, a warning) or ``"raise"`` when toolsift cannot answer.
        sdk_calls: also narrow ``litellm.acompletion`` calls made with the SDK (its
            ``async_pre_call_deployment_hook``); off for the proxy, which runs both hooks.
        search_options: more :meth:`~toolsift.client.AsyncToolsiftClient.search` keywords (``servers``,
            ``tags``, ``retriever``...).

    Raises:
        ConfigError: ``top_k`` is not positive.
    """

    def __init__(self, client: AsyncToolsiftClient | ToolsiftClient, *, top_k: int = 10,
                 always_include: Iterable[str] = (), format: Format = "openai", brief: bool = True,
                 on_error: OnError = "fallback", sdk_calls: bool = False,
                 search_options: Mapping[str, Any] | None = None) -> None:
        check_positive(top_k=top_k)
        super().__init__()
        self.client = client
        self.top_k = top_k
        self.always_include = list(dict.fromkeys(always_include))
        self.format: Format = format
        self.brief = brief
        self.on_error: OnError = on_error
        self.sdk_calls = sdk_calls
        self.search_options = dict(search_options or {})

    async def async_pre_call_hook(self, user_api_key_dict: UserAPIKeyAuth, cache: DualCache, data: dict[str, Any],
                                  call_type: CallTypesLiteral) -> dict[str, Any] | None:
        """The proxy's pre-call hook: ``data`` with its tools narrowed (a new dict), or ``data`` itself
        when there is nothing to narrow."""
        if getattr(call_type, "value", call_type) not in CHAT_CALL_TYPES:
            return data
        return await self.narrow(data)

    async def async_pre_call_deployment_hook(self, kwargs: dict[str, object],
                                             call_type: CallTypes | None) -> dict[str, Any] | None:
        """The SDK's hook (``litellm.acompletion``): narrows only with ``sdk_calls=True``; None (no change)
        otherwise."""
        if not self.sdk_calls or call_type is None or call_type.value not in CHAT_CALL_TYPES:
            return None
        return await self.narrow(kwargs)

    async def narrow(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """A chat request (``messages``, ``tools``) with its function tools narrowed to toolsift's picks:
        a new dict, or ``data`` itself when there is nothing to narrow."""
        request = data if isinstance(data, dict) else dict(data)
        tools = request.get("tools")
        query = latest_user_text(request.get("messages"))
        functions = {n: t for t in tools or () if (n := _function_name(t)) is not None}
        if not functions or query is None:
            return request
        try:
            answer = await self._search(query)
        except ToolsiftError as exc:
            fall_back(exc, self.on_error, logger, "toolsift could not answer (%s); the request keeps all %d tools",
                      len(tools or ()))
            return request
        kept = self._keep(answer, functions, request.get("tool_choice"))
        if kept is None:
            return request
        others = [t for t in tools or () if _function_name(t) is None]
        return {**request, "tools": [functions[name] for name in kept] + others}

    async def _search(self, query: str) -> SearchResult:
        options = search_kwargs(self.search_options, top_k=self.top_k, format=self.format, brief=self.brief)
        if isinstance(self.client, AsyncToolsiftClient):
            return await search_async(clip_query(query), options, async_client=self.client)
        return await search_async(clip_query(query), options, client=self.client)

    def _keep(self, answer: SearchResult, functions: Mapping[str, Any], tool_choice: Any) -> list[str] | None:
        """The function names kept, in order; None when toolsift's answer matches none of them."""
        forced = _function_name(tool_choice) if isinstance(tool_choice, Mapping) else None
        always = [n for n in [*self.always_include, forced] if n is not None and n in functions]
        picked = pick((match_hit(hit, functions) for hit in answer.tools), exclude=always)
        if not picked:
            logger.warning("toolsift's %d tools for the request match none of its %d functions by name or id; "
                           "the request keeps them all", len(answer.tools), len(functions))
            return None
        return list(dict.fromkeys([*picked, *always]))
