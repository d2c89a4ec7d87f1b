"""The guards every toolsift HTTP service puts in front of its routes (search API, MCP over HTTP,
workbench, ranker service): one request guard, the caller's key, and the one JSON error body.

* :class:`RequestGuard` — an ASGI middleware that refuses, before any route reads a request: a
  ``Host`` the service does not answer to (403; a DNS-rebinding page in a browser reaches loopback
  with a foreign name), a write from another site's page (403, whether or not keys are configured),
  a protected path without a valid key (401, before a byte of the body is read), a write whose body
  is declared as anything but JSON (415), a body over the cap (413, on ``Content-Length`` or as
  soon as a streamed body passes it, reading no further), and a body that does not arrive within the
  read timeout (408); a client that hangs up mid-body is let go without a word (nobody to answer);
* :func:`serve` — uvicorn with :class:`ReadDeadlineProtocol`, which closes a connection whose request
  headers do not arrive within the read timeout (slowloris): what every ``toolsift serve …`` runs;
* :func:`key_check` — the guard's key check over a :class:`~toolsift.access.KeyRing`;
* :func:`caller` — the :class:`~toolsift.access.Principal` of a request, from its key;
* :func:`error_body` / :func:`error_response` — ``{"error": message, "code": code, "field": field}``
  with the status of :data:`toolsift.errors.ERROR_TABLE`, never a stack trace;
* :func:`answer_errors` — the handlers a FastAPI app installs so that toolsift's errors, OpenSearch's
  and unexpected ones all answer with that body;
* :func:`validation_problem`, :func:`invalid_field`, :func:`unreadable_body` — what a request that
  fails validation, or whose body cannot be read as JSON, says, in the same words on every service.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast
from urllib.parse import urlsplit

import anyio
import h11
from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError
from opensearchpy.exceptions import TransportError
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from toolsift.access import KeyRing, Principal, bearer_token, host_allowed, is_loopback
from toolsift.errors import (
    AuthError,
    ForbiddenError,
    RequestTimeoutError,
    RequestTooLargeError,
    ToolsiftError,
    UnsupportedMediaTypeError,
    error_kind,
)

__all__ = [
    "RequestGuard",
    "ReadDeadlineProtocol",
    "serve",
    "answer_validation_errors",
    "WRITE_METHODS",
    "KeyCheck",
    "key_check",
    "allowed_hosts_for",
    "caller",
    "error_body",
    "error_response",
    "answer_errors",
    "validation_problem",
    "invalid_field",
    "unreadable_body",
]

#: The methods that change state: the cross-site and media-type checks apply to them.
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: A request's headers → its caller, or :class:`~toolsift.errors.AuthError`.
KeyCheck = Callable[[Mapping[str, str]], object]
_DEFAULT_PORTS = {"http": 80, "https": 443}


def allowed_hosts_for(configured: Iterable[str], bound: str) -> list[str]:
    """The hosts a service answers to: the configured ones plus the address it is bound to
    (unless that is a wildcard address, which names no host)."""
    hosts = list(dict.fromkeys(configured))
    if bound not in ("0.0.0.0", "::", "") and bound not in hosts:
        hosts.append(bound)
    return hosts


def key_check(keys: KeyRing) -> KeyCheck | None:
    """:class:`RequestGuard`'s key check over ``keys``: a bearer key (or ``X-API-Key``) they know;
    None when no keys are configured (an open service)."""
    if not keys.enabled:
        return None
    return lambda headers: keys.authenticate(bearer_token(headers))


class RequestGuard:
    """ASGI middleware: what every toolsift HTTP service checks before any route reads a request.

    In this order, each refusal being the one JSON error body (:func:`error_response`):

    1. a ``Host`` that is not an allowed host → 403 ``forbidden`` (field ``Host``);
    2. a write (:data:`WRITE_METHODS`) from another site's page → 403 ``forbidden``, keys or not: an
       ``Origin`` that is not the service's own (field ``Origin``: its own is the origin the request
       was sent to, ``Host`` and port alike; or, behind a proxy that rewrites ``Host``, a name in the
       allowed hosts that is not a loopback one, as loopback names are every local server's), or
       ``Sec-Fetch-Site: cross-site`` (or ``same-site`` without such an Origin; field ``Sec-Fetch-Site``).
       Programs send neither header and pass;
    3. a path under ``protected`` (and not in ``open_paths``) without a key ``authenticate`` takes
       → 401 ``unauthorized``, before a byte of the body is read;
    4. a write whose body is declared as anything but JSON (``application/json``, ``*/*+json``)
       → 415 ``unsupported_media_type`` (field ``Content-Type``; a form or ``text/plain`` is what a
       page may send another site without asking);
    5. a body over ``max_body_bytes`` → 413 ``request_too_large``: at once when ``Content-Length``
       says so (field ``Content-Length``), else as soon as the streamed body passes the cap, reading
       no further (the connection is then closed);
    6. a body that has not arrived whole ``read_timeout_s`` after the headers → 408
       ``request_timeout`` (the connection is then closed): a client sending a byte now and then
       (slowloris) holds the connection no longer than that.

    A body within the cap is read before the route runs and handed to it whole, so a route never
    holds more than the cap of one request. A client that hangs up before its body is whole is let
    go: the route never runs and nothing is answered or logged (there is nobody to tell).

    Args:
        app: the service.
        allowed_hosts: the ``Host`` names answered (no ports; ``*``: any).
        max_body_bytes: the largest body taken.
        authenticate: the key check of protected paths (:func:`key_check`); None: none (open).
        protected: path prefixes that need a key.
        open_paths: paths under those prefixes that do not.
        limit_setting: the setting named in the 413 message.
        read_timeout_s: how long the body may take to arrive, from the end of the headers
            (``request_read_timeout_s``); None: no deadline.
    """

    def __init__(self, app: ASGIApp, *, allowed_hosts: Iterable[str], max_body_bytes: int,
                 authenticate: KeyCheck | None = None, protected: Iterable[str] = (),
                 open_paths: Iterable[str] = (), limit_setting: str = "max_body_bytes",
                 read_timeout_s: float | None = None) -> None:
        self.app = app
        self.allowed = list(allowed_hosts)
        self.max_body_bytes = max_body_bytes
        self.authenticate = authenticate
        self.protected = tuple(protected)
        self.open_paths = frozenset(open_paths)
        self.limit_setting = limit_setting
        self.read_timeout_s = read_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        has_body = headers.get("content-length", "0").strip() not in ("", "0") or "transfer-encoding" in headers
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            if has_body:  # the body stays unread: the connection cannot carry another request
                refusal.headers["connection"] = "close"
            await refusal(scope, receive, send)
            return
        if not has_body:
            await self.app(scope, receive, send)
            return
        body = bytearray()
        refusal = None
        with anyio.move_on_after(self.read_timeout_s) as deadline:  # None: no deadline
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    return  # the client hung up mid-body: nobody to answer, nothing to log
                body += message.get("body", b"")
                if len(body) > self.max_body_bytes:
                    refusal = error_response(RequestTooLargeError(), f"the body is larger than the "
                                             f"{self.max_body_bytes:,} bytes this service accepts (setting "
                                             f"{self.limit_setting})")
                    break
                if not message.get("more_body", False):
                    break
        if deadline.cancelled_caught:
            refusal = error_response(RequestTimeoutError(), f"the body did not arrive within {self.read_timeout_s:g} s "
                                     "of the headers (setting request_read_timeout_s): send it whole, without pauses")
        if refusal is not None:
            refusal.headers["connection"] = "close"
            await refusal(scope, receive, send)
            return
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if delivered:
                return await receive()  # after the body: the server's own (a disconnect)
            delivered = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)

    def _refusal(self, scope: Scope, headers: Headers) -> JSONResponse | None:
        """The answer to a request refused on its headers alone, else None."""
        host = headers.get("host")
        if not host_allowed(host, self.allowed):
            return error_response(ForbiddenError(), f"this service does not answer to host {host!r}", "Host")
        write = scope["method"] in WRITE_METHODS
        if write:
            origin, fetch_site = headers.get("origin"), headers.get("sec-fetch-site", "").lower()
            if origin is not None and not self._own_origin(origin, host or ""):
                return error_response(ForbiddenError(), f"a write from another site's page is refused: Origin "
                                      f"{origin!r} is not this service's own", "Origin")
            if fetch_site == "cross-site" or (fetch_site == "same-site" and origin is None):
                return error_response(ForbiddenError(), f"a write from another site's page is refused "
                                      f"(Sec-Fetch-Site: {fetch_site})", "Sec-Fetch-Site")
        path = scope.get("path", "")
        if (self.authenticate is not None and path.startswith(self.protected) and path not in self.open_paths):
            try:
                self.authenticate(headers)
            except AuthError as exc:
                return error_response(exc)
        content_type = headers.get("content-type")
        if write and content_type is not None and not _is_json(content_type):
            return error_response(UnsupportedMediaTypeError(), f"the body is declared as {content_type[:100]!r}: "
                                  "this service takes JSON (send Content-Type: application/json)", "Content-Type")
        declared = headers.get("content-length", "")
        if declared.isdigit():  # the server itself refuses a Content-Length that is not a number
            length = int(declared)
            if length > self.max_body_bytes:
                return error_response(RequestTooLargeError(), f"the body has {length:,} bytes; this service accepts at "
                                      f"most {self.max_body_bytes:,} (setting {self.limit_setting})", "Content-Length")
        return None

    def _own_origin(self, origin: str, host: str) -> bool:
        """Whether a write's ``Origin`` is the service's own (see the class docstring)."""
        try:
            sent_from, sent_to = urlsplit(origin), urlsplit(f"//{host}")
            if sent_from.scheme not in _DEFAULT_PORTS or not sent_from.hostname or sent_from.path:
                return False
            default = _DEFAULT_PORTS[sent_from.scheme]
            if (sent_from.hostname, sent_from.port or default) == (sent_to.hostname, sent_to.port or default):
                return True
        except ValueError:  # a port that is not a number
            return False
        name = sent_from.hostname
        return name in {a.lower().strip("[]") for a in self.allowed} and not is_loopback(name)


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


class ReadDeadlineProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol (h11) with a deadline on a request's headers: a connection whose
    next request's headers have not arrived whole ``read_timeout_s`` after it opened (or after the
    previous answer, on a kept-alive connection) is closed. uvicorn's own ``timeout_keep_alive``
    only closes a connection that sends nothing after an answer, so a client sending a header line
    now and then (slowloris) held it for ever; the body's deadline is :class:`RequestGuard`'s.
    """

    def __init__(self, *args: Any, read_timeout_s: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.read_timeout_s = read_timeout_s
        self._headers_due: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._watch_headers()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch_headers()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_watching()
        super().connection_lost(exc)

    def _watch_headers(self) -> None:
        """A deadline while the connection waits for a request's headers (h11's ``IDLE``), none otherwise."""
        if self.conn.their_state is not h11.IDLE or self.transport.is_closing():
            self._stop_watching()
        elif self._headers_due is None:
            self._headers_due = self.loop.call_later(self.read_timeout_s, self._headers_late)

    def _stop_watching(self) -> None:
        if self._headers_due is not None:
            self._headers_due.cancel()
            self._headers_due = None

    def _headers_late(self) -> None:
        self._headers_due = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.conn.send(h11.ConnectionClosed())
            self.transport.close()


def serve(app: ASGIApp | str, *, host: str, port: int, read_timeout_s: float, **options: Any) -> None:
    """Serve ``app`` (or ``module:factory`` with ``factory=True``) with uvicorn until interrupted, its
    connections under :class:`ReadDeadlineProtocol` with ``read_timeout_s`` (the
    ``request_read_timeout_s`` setting); ``options`` go to :func:`uvicorn.run` as they are."""
    import uvicorn

    protocol = functools.partial(ReadDeadlineProtocol, read_timeout_s=read_timeout_s)  # pickled to --workers
    uvicorn.run(app, host=host, port=port, http=cast("type[asyncio.Protocol]", protocol), **options)


def caller(request: Request, keys: KeyRing) -> Principal:
    """The request's caller (raises :class:`~toolsift.errors.AuthError` for a missing or wrong key)."""
    return keys.authenticate(bearer_token(request.headers))


def validation_problem(error: Mapping[str, Any]) -> str:
    """What one request-validation error says, in words a client can act on: a body that is not JSON
    says where parsing stopped and why, text that is not Unicode says so (a lone surrogate such as an
    escaped ``\\udc80``, the trace of undecodable bytes); anything else is pydantic's message."""
    kind, context = error.get("type"), error.get("ctx") or {}
    if kind == "json_invalid":
        where = next((p for p in error.get("loc", ()) if isinstance(p, int)), None)
        at = f" at character {where}" if where is not None else ""
        return f"the body is not valid JSON{at}: {context.get('error', 'invalid')} (send UTF-8 JSON)"
    if kind == "string_unicode":
        return "the text is not valid Unicode (a lone surrogate, e.g. an escaped \\udc80 from undecodable bytes): send UTF-8 text"
    if kind == "missing" and tuple(error.get("loc", ())) == ("body",):
        return "the request has no body: send a JSON object"
    return str(error.get("msg", "invalid"))


def invalid_field(error: Mapping[str, Any]) -> str | None:
    """The field one request-validation error names: its location less where it was (``body``,
    ``query`` string, ``path``, ``header``), so the body's own field ``query`` stays ``query``; None for
    a body that is not JSON at all (its location holds the parse position, not a field)."""
    if error.get("type") == "json_invalid":
        return None
    loc = [str(p) for p in error.get("loc", ())]
    if loc and loc[0] in ("body", "query", "path", "header", "cookie"):
        loc = loc[1:]
    return ".".join(loc) or None


def unreadable_body(exc: BaseException) -> str:
    """What a body the framework could not read as JSON says, from the cause it carries (FastAPI
    answers them all "There was an error parsing the body"): JSON nested deeper than the parser's
    depth limit, text that is not UTF-8, or else a body that cannot be read as JSON."""
    cause = exc.__cause__
    if isinstance(cause, RecursionError):
        return (f"the body's JSON is nested too deeply (past the parser's depth limit of about "
                f"{sys.getrecursionlimit():,} levels): send flatter JSON")
    if isinstance(cause, UnicodeError):
        return "the body cannot be read as JSON: it is not UTF-8 text (send UTF-8 JSON)"
    return "the body cannot be read as JSON (send UTF-8 JSON)"


def error_body(exc: BaseException, message: str | None = None, field: str | None = None) -> tuple[int, dict[str, Any]]:
    """(HTTP status, JSON body) of an error toolsift raises on purpose or OpenSearch's; other errors: 500."""
    kind = error_kind(exc)
    if kind is None:
        return 500, {"error": "internal error (see the service's log)", "code": "internal_error", "field": None}
    return kind.http_status, {"error": message or str(exc), "code": kind.code, "field": field}


def error_response(exc: BaseException, message: str | None = None, field: str | None = None) -> JSONResponse:
    status, body = error_body(exc, message, field)
    headers = {"WWW-Authenticate": 'Bearer realm="toolsift"'} if status == 401 else None
    return JSONResponse(body, status_code=status, headers=headers)


def answer_validation_errors(app: FastAPI, *, count_others: bool = False) -> None:
    """Install on ``app`` the answer to a request outside its schema: 400 ``bad_request`` in the one
    body, naming the first bad field (:func:`invalid_field`) and what is wrong with it
    (:func:`validation_problem`); ``count_others`` adds how many more errors there were."""

    @app.exception_handler(RequestValidationError)
    async def bad_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {}
        field = invalid_field(first)  # the body's own `query` stays `query`
        problem = validation_problem(first) if first else "invalid request"
        more = f" (and {len(errors) - 1} more)" if count_others and len(errors) > 1 else ""
        message = (f"{field}: {problem}" if field else problem) + more
        return JSONResponse({"error": message, "code": "bad_request", "field": field}, status_code=400)


#: The ``code`` of the framework's own refusals (an unknown route, a method a route does not take).
_HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}


def answer_errors(app: FastAPI, cluster_url: str, *, log: str) -> None:
    """Install on ``app`` the handlers that answer every error with the one body: toolsift's errors
    (naming their ``field`` when they have one), the framework's own refusals (a body it cannot read:
    400 ``bad_request``; an unknown route: 404 ``not_found``; a wrong method: 405
    ``method_not_allowed``), OpenSearch unreachable (503, naming ``cluster_url``) or answering with an
    error, and anything else (500 ``internal_error``, traced only in logger ``log``)."""

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, f"http_{exc.status_code}")
        detail = str(exc.detail)
        if exc.status_code == 400 and "parsing the body" in detail:  # FastAPI's words for a body it cannot read
            code, detail = "bad_request", unreadable_body(exc)
        return JSONResponse({"error": detail, "code": code, "field": None}, status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    @app.exception_handler(ToolsiftError)
    async def toolsift_error(_: Request, exc: ToolsiftError) -> JSONResponse:
        return error_response(exc, str(exc), getattr(exc, "field", None))

    @app.exception_handler(OpenSearchConnectionError)
    async def unreachable(_: Request, exc: OpenSearchConnectionError) -> JSONResponse:
        return error_response(exc, f"OpenSearch is unreachable at {cluster_url}")

    @app.exception_handler(TransportError)
    async def opensearch_error(_: Request, exc: TransportError) -> JSONResponse:
        if exc.status_code == 503:  # up, but its shards are not (yet) there: a node recovering
            return error_response(exc, f"OpenSearch at {cluster_url} cannot serve yet (503: {exc.error}); try again shortly")
        return error_response(exc, f"OpenSearch answered {exc.status_code}: {exc.error}")

    @app.exception_handler(Exception)
    async def anything_else(_: Request, exc: Exception) -> JSONResponse:
        logging.getLogger(log).exception("unexpected error")
        return error_response(exc)
