"""A typed Python client for toolsift's search API (``toolsift serve api``).

:class:`ToolsiftClient` (sync) and :class:`AsyncToolsiftClient` (asyncio) call the API over httpx and
answer with frozen records (:class:`SearchResult`, :class:`ToolsetResult`, :class:`ToolHit`,
:class:`FeedbackResult`, :class:`Health`), each keeping the answer's JSON as ``raw``::

    with ToolsiftClient("http://127.0.0.1:8500", api_key="tsk_...") as ts:
        found = ts.search("search the web for news", top_k=5, format="openai", brief=True)
        tool = ts.get_tool(found.tools[0].id, format="openai")
        ts.feedback(found.request_id, [ToolCall(tool.id, called=True, success=True)])

Errors: an answer with an error status is a :class:`ToolsiftAPIError` (``status``, ``code``,
``field``, ``message``: the API's ``{"error", "code", "field"}`` body); a call that got no answer (no
connection, a timeout) is a :class:`ToolsiftConnectionError`. Both are
:class:`~toolsift.errors.ToolsiftError`\\ s.

Retries (tenacity), at most ``retries`` more attempts after the first, waiting ``backoff``,
``2 * backoff``, ``4 * backoff``, ... (at most ``max_backoff``) plus up to ``jitter`` seconds at random:

* a connection that could not be made (connect error or connect timeout: nothing was sent) — every call;
* 429 — every call: the request was refused, not run; its ``Retry-After`` (seconds or an HTTP date) is
  waited instead of the backoff, but never more than ``max_retry_after`` seconds;
* 502, 503, 504 — only calls that may run twice: searches, tool sets, tools and health (a 503's
  ``Retry-After`` is honoured the same way). Feedback is stored once per call, so it is not sent again
  after an answer that may follow a partial write.

Nothing else is retried: no other 4xx (a bad field, a wrong key stay wrong), no 500, no read timeout
(the server may still be running the call). When the attempts run out, the last error is raised.

An injected ``http_client`` (e.g. ``httpx.Client(transport=httpx.ASGITransport(app))``) is used as it
is, with this client's URL, key and timeout on every request, and is not closed by :meth:`close`.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from types import TracebackType
from typing import Any, Literal, Self
from urllib.parse import quote

import httpx
from tenacity import AsyncRetrying, RetryCallState, Retrying, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_exponential, wait_random

from toolsift import __version__
from toolsift.errors import ConfigError, ToolsiftError

__all__ = [
    "ToolsiftClient",
    "AsyncToolsiftClient",
    "ToolsiftAPIError",
    "ToolsiftConnectionError",
    "ToolHit",
    "AgentHit",
    "SearchResult",
    "ToolsetResult",
    "FeedbackResult",
    "Health",
    "ToolCall",
    "Format",
    "Level",
    "RETRIED_STATUSES",
    "RETRIED_STATUSES_ONCE_ONLY",
    "retry_after_seconds",
]

#: How a tool's definition is returned (the API's ``format``).
Format = Literal["toolsift", "openai", "mcp"]
#: What a search returns: tools, agents, or what the request calls for.
Level = Literal["tool", "agent", "auto"]
Retriever = Literal["bm25", "minilm", "hybrid"]
MultiNeed = Literal["auto", "on", "off"]
Risky = Literal["flag", "exclude"]
Copies = Literal["once", "all"]

#: Statuses retried on calls that may run twice (searches, tool sets, tools, health).
RETRIED_STATUSES = frozenset({429, 502, 503, 504})
#: Statuses retried on a call that must not run twice (feedback): the request was refused, not run.
RETRIED_STATUSES_ONCE_ONLY = frozenset({429})
# httpx errors that mean nothing was sent: the connection was never made.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout)


# --- errors -------------------------------------------------------------------------------------------


class ToolsiftAPIError(ToolsiftError):
    """The API answered with an error status.

    Args:
        status: the HTTP status.
        message: the body's ``error`` (or its text when it is not the API's error body).
        code: the body's ``code`` (``bad_request``, ``unauthorized``, ``not_found``, ...), or
            ``http_<status>`` when the body is not the API's.
        field: the body's ``field``: the request field to blame, when one is.
        retry_after: the answer's ``Retry-After`` in seconds, when it has one.
    """

    def __init__(self, status: int, message: str, code: str, field: str | None = None,
                 retry_after: float | None = None) -> None:
        self.status = status
        self.message = message
        self.code = code
        self.field = field
        self.retry_after = retry_after
        where = f", field {field!r}" if field else ""
        super().__init__(f"HTTP {status} {code}{where}: {message}")


class ToolsiftConnectionError(ToolsiftError):
    """No answer came: the connection could not be made (``not_sent``: the request never left), or it
    failed or timed out after the request was sent."""

    def __init__(self, message: str, *, not_sent: bool) -> None:
        self.not_sent = not_sent
        super().__init__(message)


# --- records ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolHit:
    """One tool of an answer (a search's, a tool set's, or ``get_tool``'s).

    Args:
        id: the tool's id (for ``get_tool``, ``pinned`` and feedback).
        name: the name the format's client calls it by.
        description: its description: the one-line one of a brief answer, else the definition's.
        definition: the ready-to-call definition in the asked format; None in a brief answer.
        rank: its place in a search's answer (1 first); None elsewhere.
        score: its search score; None for a pinned tool the search did not rank, and elsewhere.
        server: the owning server's / agent's id, when the answer says.
        tokens: the definition's size in tokens, when the answer says.
        pinned: whether it was returned because it was pinned.
        risk: the ingest screen's reasons when the tool is flagged, else empty.
        also_on: the ids of its copies on other servers that the answer names instead of ranking them
            (one capability once), best-ranked first.
        raw: the tool's JSON as the API answered it.
    """

    id: str
    name: str
    description: str
    definition: dict[str, Any] | None
    rank: int | None = None
    score: float | None = None
    server: str | None = None
    tokens: int | None = None
    pinned: bool = False
    risk: tuple[str, ...] = ()
    also_on: tuple[str, ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, pinned_ids: Iterable[str] = ()) -> ToolHit:
        definition = data.get("definition")
        tool_id = str(data.get("id", ""))
        score = data.get("score")
        tokens = data.get("tokens")
        rank = data.get("rank")
        return cls(
            id=tool_id,
            name=str(data.get("name", "")),
            description=_description(data, definition),
            definition=dict(definition) if isinstance(definition, Mapping) else None,
            rank=rank if isinstance(rank, int) else None,
            score=float(score) if isinstance(score, (int, float)) else None,
            server=data.get("server") if isinstance(data.get("server"), str) else None,
            tokens=tokens if isinstance(tokens, int) else None,
            pinned=data.get("pinned") is True or tool_id in set(pinned_ids),
            risk=tuple(str(r) for r in data.get("risk") or ()),
            also_on=tuple(str(c.get("id", "")) for c in data.get("also_on") or () if isinstance(c, Mapping)),
            raw=dict(data),
        )


def _description(data: Mapping[str, Any], definition: Any) -> str:
    if not isinstance(definition, Mapping):  # a brief entry
        return str(data.get("description", ""))
    function = definition.get("function")
    if isinstance(function, Mapping):  # openai
        return str(function.get("description", ""))
    return str(definition.get("description", ""))


@dataclass(frozen=True)
class AgentHit:
    """One agent (server) of a search's answer."""

    id: str
    name: str
    score: float
    rank: int

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AgentHit:
        return cls(str(data.get("id", "")), str(data.get("name", "")), float(data.get("score") or 0.0),
                   int(data.get("rank") or 0))


@dataclass(frozen=True)
class SearchResult:
    """A search's answer.

    Args:
        request_id: the answer's id, for feedback.
        tools: the tools, pinned ones first, then in rank order.
        agents: the agents, when the search was at the agent level.
        format: the format of the definitions.
        brief: whether the tools are brief entries (no definitions).
        total_tokens: the tools' tokens together.
        dropped: how many tools the caps cut.
        truncated_by: the cap that cut the list (``max_results`` / ``token_budget``), or None.
        pinned_over_budget: the pinned tools alone were over ``max_results`` or the token budget.
        degraded: the search ran without a part it would use (e.g. no embedding model).
        raw: the answer's JSON.
    """

    request_id: str
    tools: list[ToolHit]
    agents: list[AgentHit]
    format: str
    brief: bool
    total_tokens: int
    dropped: int
    truncated_by: str | None
    pinned_over_budget: bool
    degraded: bool
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SearchResult:
        pinned = [str(p) for p in data.get("pinned") or ()]
        return cls(
            request_id=str(data.get("request_id", "")),
            tools=[ToolHit.from_json(t, pinned_ids=pinned) for t in data.get("tools") or ()],
            agents=[AgentHit.from_json(a) for a in data.get("agents") or ()],
            format=str(data.get("format", "")),
            brief=data.get("brief") is True,
            total_tokens=int(data.get("total_tokens") or 0),
            dropped=int(data.get("dropped") or 0),
            truncated_by=data.get("truncated_by"),
            pinned_over_budget=data.get("pinned_over_budget") is True,
            degraded=data.get("degraded") is True,
            raw=dict(data),
        )


@dataclass(frozen=True)
class ToolsetResult:
    """A tool set's answer (PTR): the tools (each tool's ``need`` and ``reason`` are in its ``raw``),
    the needs read in the request and those no tool solves."""

    request_id: str
    tools: list[ToolHit]
    needs: list[str]
    unsolved_needs: list[str]
    history: bool
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ToolsetResult:
        return cls(str(data.get("request_id", "")), [ToolHit.from_json(t) for t in data.get("tools") or ()],
                   [str(n) for n in data.get("needs") or ()], [str(n) for n in data.get("unsolved_needs") or ()],
                   data.get("history") is True, dict(data))


@dataclass(frozen=True)
class FeedbackResult:
    """What the API stored of a feedback: ``stored`` outcomes written now, ``already_recorded`` the ones
    this key had reported the same way before (kept once, not stored again)."""

    request_id: str
    stored: int
    raw: dict[str, Any] = field(repr=False, compare=False)
    already_recorded: int = 0


@dataclass(frozen=True)
class Health:
    """``/health``: the API and OpenSearch answer; the index and how many documents it holds."""

    status: str
    index: str
    documents: int
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class ToolCall:
    """What the agent did with one returned tool: called it or not, and whether the call succeeded."""

    tool_id: str
    called: bool = True
    success: bool | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"tool_id": self.tool_id, "called": self.called}
        if self.success is not None:
            body["success"] = self.success
        if self.note:
            body["note"] = self.note
        return body


# --- requests and answers, shared by both clients ---------------------------------------------------


def _search_body(query: str, *, top_k: int, level: Level, format: Format, brief: bool, pinned: Sequence[str],
                 servers: Sequence[str], tags: Sequence[str], steps: Sequence[str], max_results: int | None,
                 token_budget: int | None, instruction: str | None, explain: bool, retriever: Retriever | None,
                 multi_need: MultiNeed | None, risky: Risky | None, copies: Copies | None) -> dict[str, Any]:
    """The ``/v1/search`` body: what was asked; options left at None are the server's defaults."""
    body: dict[str, Any] = {"query": query, "top_k": top_k, "level": level, "format": format}
    if brief:
        body["brief"] = True
    if pinned:
        body["pinned"] = list(pinned)
    if servers or tags:
        body["filters"] = {"servers": list(servers), "tags": list(tags)}
    if steps:
        body["steps"] = list(steps)
    if explain:
        body["explain"] = True
    optional = {"max_results": max_results, "token_budget": token_budget, "instruction": instruction,
                "retriever": retriever, "multi_need": multi_need, "risky": risky, "copies": copies}
    body.update({k: v for k, v in optional.items() if v is not None})
    return body


def _toolset_body(query: str, *, format: Format, max_results: int | None, token_budget: int | None,
                  instruction: str | None) -> dict[str, Any]:
    optional = {"max_results": max_results, "token_budget": token_budget, "instruction": instruction}
    return {"query": query, "format": format, **{k: v for k, v in optional.items() if v is not None}}


def _feedback_body(request_id: str, calls: Iterable[ToolCall | Mapping[str, Any]]) -> dict[str, Any]:
    return {"request_id": request_id,
            "calls": [c.to_json() if isinstance(c, ToolCall) else dict(c) for c in calls]}


def _tool_path(tool_id: str) -> str:
    return f"/v1/tools/{quote(tool_id, safe='')}"


def _feedback(data: Mapping[str, Any], request_id: str) -> FeedbackResult:
    return FeedbackResult(str(data.get("request_id", request_id)), int(data.get("stored") or 0), dict(data),
                          int(data.get("already_recorded") or 0))


def _health(data: Mapping[str, Any]) -> Health:
    return Health(str(data.get("status", "")), str(data.get("index", "")), int(data.get("documents") or 0),
                  dict(data))


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """A ``Retry-After`` header in seconds (delta-seconds or an HTTP date; a past date is 0), or None
    when there is none or it cannot be read."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _answer(response: httpx.Response) -> Any:
    """The JSON of a successful answer; an error answer is raised as :class:`ToolsiftAPIError`."""
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    if response.is_success:
        if body is None:
            raise ToolsiftAPIError(response.status_code, f"the answer is not JSON: {response.text[:200]!r}",
                                   "bad_response")
        return body
    retry_after = retry_after_seconds(response.headers.get("retry-after"))
    if isinstance(body, Mapping) and isinstance(body.get("error"), str):
        code = body.get("code")
        where = body.get("field")
        raise ToolsiftAPIError(response.status_code, body["error"],
                               code if isinstance(code, str) else f"http_{response.status_code}",
                               where if isinstance(where, str) else None, retry_after)
    raise ToolsiftAPIError(response.status_code, response.text[:500] or response.reason_phrase,
                           f"http_{response.status_code}", None, retry_after)


def _transport_error(exc: httpx.TransportError, method: str, url: str) -> ToolsiftConnectionError:
    not_sent = isinstance(exc, _NOT_SENT)
    what = "could not connect" if not_sent else "got no answer"
    return ToolsiftConnectionError(f"{method} {url}: {what} ({type(exc).__name__}: {exc})", not_sent=not_sent)


def _retryable(exc: BaseException, *, idempotent: bool) -> bool:
    if isinstance(exc, ToolsiftConnectionError):
        return exc.not_sent
    if isinstance(exc, ToolsiftAPIError):
        return exc.status in (RETRIED_STATUSES if idempotent else RETRIED_STATUSES_ONCE_ONLY)
    return False


class _Base:
    """What both clients share: the URL, the key, the timeout and the retry policy."""

    def __init__(self, base_url: str, api_key: str | None, timeout: float | httpx.Timeout, retries: int,
                 backoff: float, max_backoff: float, max_retry_after: float, jitter: float) -> None:
        if retries < 0:
            raise ConfigError(f"retries must be 0 or more, got {retries}")
        if min(backoff, max_backoff, max_retry_after, jitter) < 0:
            raise ConfigError("backoff, max_backoff, max_retry_after and jitter must be 0 or more")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self.max_retry_after = max_retry_after
        self._headers = {"Accept": "application/json", "User-Agent": f"toolsift-client/{__version__}"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._backoff = wait_exponential(multiplier=backoff, max=max_backoff) + wait_random(0, jitter)

    def _url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    def _wait(self, state: RetryCallState) -> float:
        """Seconds before the next attempt: the answer's Retry-After (capped), else the backoff."""
        failed = state.outcome.exception() if state.outcome is not None else None
        if isinstance(failed, ToolsiftAPIError) and failed.retry_after is not None:
            return min(failed.retry_after, self.max_retry_after)
        return float(self._backoff(state))

    def _policy(self, idempotent: bool) -> dict[str, Any]:
        return {"stop": stop_after_attempt(self.retries + 1), "wait": self._wait, "reraise": True,
                "retry": retry_if_exception(partial(_retryable, idempotent=idempotent))}


class ToolsiftClient(_Base):
    """The search API, synchronously (see the module docstring for errors and retries).

    Args:
        base_url: the API's URL (``http://127.0.0.1:8500``, `toolsift serve api`'s default).
        api_key: sent as ``Authorization: Bearer <key>``; None for an API without keys.
        timeout: seconds (or an ``httpx.Timeout``) for each attempt.
        retries: attempts after the first, at most (0: none).
        backoff: the first wait between attempts, in seconds; each next one doubles.
        max_backoff: the longest backoff wait.
        max_retry_after: the longest wait a ``Retry-After`` may ask for (a longer one is cut to it).
        jitter: up to this many seconds added at random to each backoff wait.
        http_client: the ``httpx.Client`` to send with (not closed by :meth:`close`); default: one of its own.
        sleep: how to wait between attempts (default ``time.sleep``).
    """

    def __init__(self, base_url: str, api_key: str | None = None, *, timeout: float | httpx.Timeout = 30.0,
                 retries: int = 3, backoff: float = 0.5, max_backoff: float = 8.0, max_retry_after: float = 30.0,
                 jitter: float = 0.25, http_client: httpx.Client | None = None,
                 sleep: Callable[[float], None] | None = None) -> None:
        super().__init__(base_url, api_key, timeout, retries, backoff, max_backoff, max_retry_after, jitter)
        self._owned = http_client is None
        self._http = http_client if http_client is not None else httpx.Client()
        self._sleep = sleep or time.sleep

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP client, when it is this client's own."""
        if self._owned:
            self._http.close()

    def _send(self, method: str, path: str, json: Any = None, params: Mapping[str, str] | None = None) -> Any:
        url = self._url(path)
        try:
            response = self._http.request(method, url, json=json, params=params, headers=self._headers,
                                          timeout=self.timeout)
        except httpx.TransportError as exc:
            raise _transport_error(exc, method, url) from exc
        return _answer(response)

    def _call(self, method: str, path: str, *, json: Any = None, params: Mapping[str, str] | None = None,
              idempotent: bool = True) -> Any:
        retrying = Retrying(sleep=self._sleep, **self._policy(idempotent))
        return retrying(self._send, method, path, json, params)

    def search(self, query: str = "", *, top_k: int = 10, level: Level = "tool", format: Format = "toolsift",
               brief: bool = False, pinned: Sequence[str] = (), servers: Sequence[str] = (),
               tags: Sequence[str] = (), steps: Sequence[str] = (), max_results: int | None = None,
               token_budget: int | None = None, instruction: str | None = None, explain: bool = False,
               retriever: Retriever | None = None, multi_need: MultiNeed | None = None,
               risky: Risky | None = None, copies: Copies | None = None) -> SearchResult:
        """``POST /v1/search``: tools for ``query`` (the API's fields; ``servers`` and ``tags`` are its
        ``filters``; None leaves an option at the server's default)."""
        body = _search_body(query, top_k=top_k, level=level, format=format, brief=brief, pinned=pinned,
                            servers=servers, tags=tags, steps=steps, max_results=max_results,
                            token_budget=token_budget, instruction=instruction, explain=explain,
                            retriever=retriever, multi_need=multi_need, risky=risky, copies=copies)
        return SearchResult.from_json(self._call("POST", "/v1/search", json=body))

    def toolset(self, query: str, *, format: Format = "toolsift", max_results: int | None = None,
                token_budget: int | None = None, instruction: str | None = None) -> ToolsetResult:
        """``POST /v1/toolset``: PTR's precise tool set for ``query``."""
        body = _toolset_body(query, format=format, max_results=max_results, token_budget=token_budget,
                             instruction=instruction)
        return ToolsetResult.from_json(self._call("POST", "/v1/toolset", json=body))

    def get_tool(self, tool_id: str, *, format: Format = "toolsift") -> ToolHit:
        """``GET /v1/tools/{id}``: one tool, ready to call (404 for another tenant's, as for none)."""
        return ToolHit.from_json(self._call("GET", _tool_path(tool_id), params={"format": format}))

    def feedback(self, request_id: str, calls: Iterable[ToolCall | Mapping[str, Any]]) -> FeedbackResult:
        """``POST /v1/feedback``: which tools of the answer ``request_id`` were called, and how it went
        (not resent after a 5xx: see the module docstring)."""
        data = self._call("POST", "/v1/feedback", json=_feedback_body(request_id, calls), idempotent=False)
        return _feedback(data, request_id)

    def health(self) -> Health:
        """``GET /health``: whether the API and OpenSearch answer (a 503 when OpenSearch does not)."""
        return _health(self._call("GET", "/health"))


class AsyncToolsiftClient(_Base):
    """The search API for asyncio: :class:`ToolsiftClient`'s calls, awaited (``http_client`` an
    ``httpx.AsyncClient``, ``sleep`` a coroutine function, default ``asyncio.sleep``)."""

    def __init__(self, base_url: str, api_key: str | None = None, *, timeout: float | httpx.Timeout = 30.0,
                 retries: int = 3, backoff: float = 0.5, max_backoff: float = 8.0, max_retry_after: float = 30.0,
                 jitter: float = 0.25, http_client: httpx.AsyncClient | None = None,
                 sleep: Callable[[float], Awaitable[None]] | None = None) -> None:
        super().__init__(base_url, api_key, timeout, retries, backoff, max_backoff, max_retry_after, jitter)
        self._owned = http_client is None
        self._http = http_client if http_client is not None else httpx.AsyncClient()
        self._sleep = sleep or asyncio.sleep

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP client, when it is this client's own."""
        if self._owned:
            await self._http.aclose()

    async def _send(self, method: str, path: str, json: Any = None, params: Mapping[str, str] | None = None) -> Any:
        url = self._url(path)
        try:
            response = await self._http.request(method, url, json=json, params=params, headers=self._headers,
                                                timeout=self.timeout)
        except httpx.TransportError as exc:
            raise _transport_error(exc, method, url) from exc
        return _answer(response)

    async def _call(self, method: str, path: str, *, json: Any = None, params: Mapping[str, str] | None = None,
                    idempotent: bool = True) -> Any:
        retrying = AsyncRetrying(sleep=self._sleep, **self._policy(idempotent))
        return await retrying(self._send, method, path, json, params)

    async def search(self, query: str = "", *, top_k: int = 10, level: Level = "tool",
                     format: Format = "toolsift", brief: bool = False, pinned: Sequence[str] = (),
                     servers: Sequence[str] = (), tags: Sequence[str] = (), steps: Sequence[str] = (),
                     max_results: int | None = None, token_budget: int | None = None,
                     instruction: str | None = None, explain: bool = False, retriever: Retriever | None = None,
                     multi_need: MultiNeed | None = None, risky: Risky | None = None,
                     copies: Copies | None = None) -> SearchResult:
        """As :meth:`ToolsiftClient.search`."""
        body = _search_body(query, top_k=top_k, level=level, format=format, brief=brief, pinned=pinned,
                            servers=servers, tags=tags, steps=steps, max_results=max_results,
                            token_budget=token_budget, instruction=instruction, explain=explain,
                            retriever=retriever, multi_need=multi_need, risky=risky, copies=copies)
        return SearchResult.from_json(await self._call("POST", "/v1/search", json=body))

    async def toolset(self, query: str, *, format: Format = "toolsift", max_results: int | None = None,
                      token_budget: int | None = None, instruction: str | None = None) -> ToolsetResult:
        """As :meth:`ToolsiftClient.toolset`."""
        body = _toolset_body(query, format=format, max_results=max_results, token_budget=token_budget,
                             instruction=instruction)
        return ToolsetResult.from_json(await self._call("POST", "/v1/toolset", json=body))

    async def get_tool(self, tool_id: str, *, format: Format = "toolsift") -> ToolHit:
        """As :meth:`ToolsiftClient.get_tool`."""
        return ToolHit.from_json(await self._call("GET", _tool_path(tool_id), params={"format": format}))

    async def feedback(self, request_id: str, calls: Iterable[ToolCall | Mapping[str, Any]]) -> FeedbackResult:
        """As :meth:`ToolsiftClient.feedback`."""
        data = await self._call("POST", "/v1/feedback", json=_feedback_body(request_id, calls), idempotent=False)
        return _feedback(data, request_id)

    async def health(self) -> Health:
        """As :meth:`ToolsiftClient.health`."""
        return _health(await self._call("GET", "/health"))
