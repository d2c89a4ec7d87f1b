"""The guards every toolsift HTTP service puts in front of its routes (search API, MCP over HTTP,
workbench, ranker service): the ``Host`` allow-list, the caller's key, and the one JSON error body.

* :class:`HostGuard` — an ASGI middleware answering 403 to a request whose ``Host`` header is not one
  the service answers to (a DNS-rebinding page in a browser reaches loopback with a foreign name);
* :func:`caller` — the :class:`~toolsift.access.Principal` of a request, from its key;
* :func:`error_body` / :func:`error_response` — ``{"error": message, "code": code, "field": field}``
  with the status of :data:`toolsift.errors.ERROR_TABLE`, never a stack trace;
* :func:`answer_errors` — the handlers a FastAPI app installs so that toolsift's errors, OpenSearch's
  and unexpected ones all answer with that body.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from fastapi import FastAPI
from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError
from opensearchpy.exceptions import TransportError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from toolsift.access import KeyRing, Principal, bearer_token, host_allowed
from toolsift.errors import ToolsiftError, error_kind

__all__ = [
    "HostGuard",
    "allowed_hosts_for",
    "caller",
    "error_body",
    "error_response",
    "answer_errors",
    "validation_problem",
]


def allowed_hosts_for(configured: Iterable[str], bound: str) -> list[str]:
    """The hosts a service answers to: the configured ones plus the address it is bound to
    (unless that is a wildcard address, which names no host)."""
    hosts = list(dict.fromkeys(configured))
    if bound not in ("0.0.0.0", "::", "") and bound not in hosts:
        hosts.append(bound)
    return hosts


class HostGuard:
    """ASGI middleware: HTTP requests whose ``Host`` is not in ``allowed`` get 403 ``forbidden``."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str]) -> None:
        self.app = app
        self.allowed = list(allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"host"), None)
            if not host_allowed(host, self.allowed):
                body = json.dumps({"error": f"this service does not answer to host {host!r}", "code": "forbidden",
                                   "field": "Host"}).encode()
                await send({"type": "http.response.start", "status": 403,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


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
    return str(error.get("msg", "invalid"))


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


def answer_errors(app: FastAPI, cluster_url: str, *, log: str) -> None:
    """Install on ``app`` the handlers that answer every error with the one body: toolsift's errors
    (naming their ``field`` when they have one), OpenSearch unreachable (503, naming ``cluster_url``) or
    answering with an error, and anything else (500 ``internal_error``, traced only in logger ``log``)."""

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
