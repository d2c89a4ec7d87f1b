"""``toolsift serve api``: the search API (FastAPI), for agents and for search teams' services.

Routes (JSON; OpenAPI at ``/docs`` and ``/openapi.json``):

- ``POST /v1/search`` — tools or agents for a request, each tool a ready-to-call definition in the
  asked ``format`` (``toolsift`` / ``openai`` / ``mcp``), capped by ``max_results`` and ``token_budget``;
  with ``"brief": true`` each tool is only ``{"id", "name", "description"}`` (the name the format's client
  calls, a one-line description: deferred loading, the full definition from ``GET /v1/tools/{id}``),
  the budget counting those; ``"pinned": [ids]`` (at most 50) are returned first, in that order, whatever
  the search finds, never cut by the caps they count against (``"pinned_over_budget": true`` when they
  alone exceed one), and each must be a tool of the caller's tenant (else 400, field ``pinned.N``);
- ``POST /v1/toolset`` — PTR's precise tool set (from the index's history when it has one);
- ``GET /v1/tools/{id}`` — one tool's definition;
- ``POST /v1/feedback`` — which returned tools the agent called, and whether the calls succeeded;
- ``GET /health`` (open) and ``GET /metrics`` (Prometheus; a key when keys are configured: requests
  and latency by route and caller's ``tenant``, a tenant's key reading its tenant's series only,
  :mod:`toolsift.metrics_view`).

Every ``/v1`` route needs a key when keys are configured (``Authorization: Bearer <key>``) and runs
in that key's tenant. Before any route reads a request, :class:`toolsift.webguard.RequestGuard`
refuses a foreign ``Host`` (403), a write from another site's page (403: a foreign ``Origin`` or
``Sec-Fetch-Site: cross-site``), a missing or wrong key (401, before the body is read), a write
not sent as JSON (415), a body over ``max_body_bytes`` (413, on ``Content-Length`` or while it
streams) and a body not whole ``request_read_timeout_s`` after its headers (408; headers that slow
close the connection: :func:`toolsift.webguard.serve`). Errors are one JSON body, ``{"error", "code",
"field"}``: 400 naming the bad field (types are strict: ``"10"`` is no count, ``"yes"`` no boolean),
401, 403 (also a role that may not), 404 (no such tool, or another tenant's), 408, 413, 415, 503 with
the reason when OpenSearch is down; never a stack trace.

The client, the embedding model and the searcher (index checks, search pipelines) are loaded once, in
the lifespan, before the port answers; searches run in the threadpool, off the event loop.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolsift.access import KeyRing, Principal
from toolsift.api.search_service import MAX_PINNED, MAX_TOP_K, Delivery, ToolSearchService, agent_filter
from toolsift.config import Settings
from toolsift.errors import ClusterError
from toolsift.metrics_view import TENANT_LABEL, caller_tenant, exposition
from toolsift.query.structured import MAX_QUERY_CHARS
from toolsift.search.definitions import Format
from toolsift.search.request import SearchRequest
from toolsift.learning.feedback import MAX_OUTCOMES, ToolOutcome
from toolsift.webguard import (
    RequestGuard,
    answer_errors,
    answer_validation_errors,
    caller,
    error_response,
    key_check,
)

__all__ = ["create_app", "app_from_environment", "default_service", "SearchBody", "ToolsetBody", "FeedbackBody"]

#: Request bodies: no field the schema lacks, no value of another type ("10" is no number, true no count,
#: "yes" no boolean; a JSON integer still fills a float).
_STRICT = ConfigDict(extra="forbid", strict=True)
_MAX_TEXT = MAX_QUERY_CHARS  # the backend's own limit: agents send whole requests, pasted data and all


class FiltersBody(BaseModel):
    model_config = _STRICT
    servers: list[Annotated[str, Field(min_length=1, max_length=512)]] = Field(
        default_factory=list, max_length=100, description="MCP servers / agents: ids `agent:<slug>` or bare slugs.")
    agents: list[Annotated[str, Field(min_length=1, max_length=512)]] = Field(
        default_factory=list, max_length=100, description="The same as servers (either name works).")
    tags: list[Annotated[str, Field(min_length=1, max_length=256)]] = Field(
        default_factory=list, max_length=100, description="Tools with at least one of these tags.")


class _Answering(BaseModel):
    model_config = _STRICT
    format: Format = Field("toolsift", description="How each tool is returned: toolsift, openai (Chat Completions "
                           "`tools` entries) or mcp (MCP `Tool` objects).")
    max_results: int | None = Field(None, ge=1, le=MAX_TOP_K, description="At most this many tools in the answer.")
    token_budget: int | None = Field(None, ge=1, le=1_000_000,
                                     description="At most this many tokens of tool definitions (cl100k_base).")


class SearchBody(_Answering):
    query: str = Field("", max_length=_MAX_TEXT, description="What the agent needs, in words.")
    steps: list[Annotated[str, Field(min_length=1, max_length=_MAX_TEXT)]] = Field(
        default_factory=list, max_length=20, description="The needs one by one, instead of the query's own split.")
    level: Literal["tool", "agent", "auto"] = "tool"
    top_k: int = Field(10, ge=1, le=MAX_TOP_K)
    filters: FiltersBody = Field(default_factory=FiltersBody)
    explain: bool = Field(False, description="Add each tool's field contributions and scores.")
    retriever: Literal["bm25", "minilm", "hybrid"] | None = None
    instruction: str | None = Field(None, max_length=_MAX_TEXT, description="The agent's task instruction.")
    multi_need: Literal["auto", "on", "off"] | None = Field(
        None, description="Search the request whole and need by need (on), as one query (off), or on when the "
                          "index holds servers and no filter narrows the search (auto); default: the server's setting.")
    risky: Literal["flag", "exclude"] | None = Field(
        None, description="Tools the ingest screen flagged as hostile text: returned with their `risk` reasons and a "
                          "flagged description (flag), or left out (exclude); default: the server's setting.")
    copies: Literal["once", "all"] | None = Field(
        None, description="A tool found on several servers (forks, copies, renamed variants): answered once, the "
                          "best-ranked copy naming the others in `also_on` (`[{id, server}]`) (once), or every copy "
                          "ranked on its own (all); default: the server's setting.")
    brief: bool = Field(
        False, description="Each tool only as `{id, name, description}`: the name the `format`'s client calls it by "
                           "and a one-line description (its first sentence, at most 160 characters, invisible "
                           "characters dropped; a flagged tool's starts with a short flag, counted in the 160, and "
                           "keeps `risk`), for deferred loading: fetch the full definition "
                           "with `GET /v1/tools/{id}`. `max_results` and `token_budget` count the brief entries.")
    pinned: list[Annotated[str, Field(min_length=1, max_length=512)]] = Field(
        default_factory=list, max_length=MAX_PINNED,
        description="Tool ids always returned: first, in this order (a repeat counted once), whatever the search, "
                    "its filters and `risky` say; `top_k` is the search's alone. They count against `max_results` "
                    "and `token_budget` but are never cut: when they alone exceed one they are all returned, nothing "
                    "else is, and the answer says `pinned_over_budget: true`. A tool the search finds too is "
                    "returned once. Each must be a tool of the caller's tenant: else 400 naming `pinned.N`.")


class ToolsetBody(_Answering):
    query: str = Field(min_length=1, max_length=_MAX_TEXT)
    instruction: str | None = Field(None, max_length=_MAX_TEXT)


class CallBody(BaseModel):
    model_config = _STRICT
    tool_id: str = Field(min_length=1, max_length=512)
    called: bool
    success: bool | None = None
    note: str = Field("", max_length=2000)


class FeedbackBody(BaseModel):
    model_config = _STRICT
    request_id: str = Field(min_length=32, max_length=32, description="The `request_id` of the search answered.")
    calls: list[CallBody] = Field(min_length=1, max_length=MAX_OUTCOMES)


def _service(request: Request) -> ToolSearchService:
    return request.app.state.services["service"]  # type: ignore[no-any-return]


def _principal(request: Request) -> Principal:
    return caller(request, request.app.state.keys)


Who = Annotated[Principal, Depends(_principal)]
Service = Annotated[ToolSearchService, Depends(_service)]


class _Metrics:
    """The API's Prometheus metrics, in a registry of their own (one per app), per caller's tenant."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("toolsift_api_requests_total", "API requests by route, status and caller's tenant.",
                                ["route", "status", TENANT_LABEL], registry=self.registry)
        self.latency = Histogram("toolsift_api_request_seconds", "API request latency by route and caller's tenant.",
                                 ["route", TENANT_LABEL], registry=self.registry,
                                 buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 1.0, 2.5, 5.0, 10.0))


class _Measured:
    """ASGI middleware: each answered request counted and timed by route, status and caller's tenant.

    A request that got no answer — its client hung up before its body was whole — is not counted and
    raises nothing (Starlette's ``BaseHTTPMiddleware``, here before, raised "No response returned",
    logged with a traceback at every hang-up). A request whose route raised counts as a 500.
    """

    def __init__(self, app: ASGIApp, *, metrics: _Metrics, keys: KeyRing) -> None:
        self.app = app
        self.metrics = metrics
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status: int | None = None

        async def answering(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, answering)
        except Exception:
            status = status or 500
            raise
        finally:
            if status is not None:
                path = getattr(scope.get("route"), "path", "unmatched")
                tenant = caller_tenant(self.keys, Headers(scope=scope))
                self.metrics.requests.labels(path, str(status), tenant).inc()
                self.metrics.latency.labels(path, tenant).observe(time.perf_counter() - started)


def create_app(
    settings: Settings,
    *,
    service_factory: Callable[[Settings], ToolSearchService] | None = None,
    allowed_hosts: list[str] | None = None,
) -> FastAPI:
    """The search API over one :class:`ToolSearchService`, built in the app's lifespan.

    Args:
        settings: index, keys (``api_keys``), allowed hosts, defaults.
        service_factory: builds the service (default: connect, load the embedding model, open the
            searcher); called once at startup.
        allowed_hosts: ``Host`` header values answered (default: the ``allowed_hosts`` setting).
    """
    keys = KeyRing(settings.api_keys)
    metrics = _Metrics()
    state: dict[str, ToolSearchService] = {}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        factory = service_factory or default_service
        state["service"] = await run_in_threadpool(factory, settings)
        yield
        state.clear()

    app = FastAPI(title="toolsift search API", version="1", lifespan=lifespan, docs_url="/docs", redoc_url=None,
                  description=__doc__)
    app.add_middleware(RequestGuard, allowed_hosts=allowed_hosts or settings.allowed_hosts,
                       max_body_bytes=settings.max_body_bytes, authenticate=key_check(keys),
                       protected=("/v1/", "/metrics"), read_timeout_s=settings.request_read_timeout_s)

    app.state.keys = keys
    app.state.services = state

    app.add_middleware(_Measured, metrics=metrics, keys=keys)  # outermost: the guard's refusals are counted too

    answer_validation_errors(app)
    answer_errors(app, settings.effective_url, log="toolsift.api")

    @app.post("/v1/search", summary="Find tools (or agents) for a request")
    def search(body: SearchBody, who: Who, svc: Service) -> dict[str, Any]:
        request = SearchRequest(
            query=body.query, steps=tuple(body.steps), level=body.level, top_k=body.top_k, retriever=body.retriever,
            agents=agent_filter([*body.filters.servers, *body.filters.agents]), tags=tuple(body.filters.tags),
            explain=body.explain, instruction=body.instruction, multi_need=body.multi_need, risky=body.risky,
            copies=body.copies)
        delivery = Delivery(format=body.format, max_results=body.max_results, token_budget=body.token_budget,
                            brief=body.brief, pinned=tuple(body.pinned))
        return svc.search(who, request, delivery)

    @app.post("/v1/toolset", summary="A precise tool set for a request (PTR)")
    def toolset(body: ToolsetBody, who: Who, svc: Service) -> dict[str, Any]:
        request = SearchRequest(query=body.query, level="set", instruction=body.instruction)
        return svc.toolset(who, request, Delivery(format=body.format, max_results=body.max_results,
                                                  token_budget=body.token_budget))

    @app.get("/v1/tools/{tool_id:path}", summary="One tool, ready to call")
    def get_tool(tool_id: Annotated[str, Path(min_length=1, max_length=512)], who: Who, svc: Service,
                 fmt: Annotated[Format, Query(alias="format")] = "toolsift") -> dict[str, Any]:
        return svc.get_tool(who, tool_id, fmt)

    @app.post("/v1/feedback", summary="Which returned tools the agent called, and how the calls went")
    def feedback(body: FeedbackBody, who: Who, svc: Service) -> dict[str, Any]:
        outcomes = [ToolOutcome(c.tool_id, c.called, c.success, c.note) for c in body.calls]
        return svc.feedback(who, body.request_id, outcomes)

    @app.get("/health", summary="Whether the API and OpenSearch answer")
    def health(svc: Service) -> JSONResponse:
        try:
            count = svc.backend.client.count(index=settings.index)["count"]
        except OpenSearchConnectionError as exc:
            return error_response(ClusterError(str(exc)), f"OpenSearch is unreachable at {settings.effective_url}")
        return JSONResponse({"status": "ok", "index": settings.index, "documents": int(count)})

    @app.get("/metrics", summary="Prometheus metrics")
    def prometheus(request: Request) -> Response:
        who = caller(request, keys)  # a tenant's key: its tenant's series only
        return Response(exposition(metrics.registry, who.tenant), media_type=CONTENT_TYPE_LATEST)

    return app


def default_service(settings: Settings) -> ToolSearchService:
    """Connect, load the embedding model when the retriever needs one, and open the searcher."""
    from toolsift.encoders.embedding import load_embedder
    from toolsift.opensearch import connect

    client = connect(settings)
    embedder = load_embedder(settings)
    embedder.encode_query(["warm up"], cache=False)  # the first encode allocates; pay it before the port opens
    service = ToolSearchService(client, settings, embedder)
    service.warm()
    return service


def app_from_environment() -> FastAPI:
    """The app of one worker process of ``toolsift serve api --workers N`` (settings from the environment)."""
    from toolsift.config import get_settings

    return create_app(get_settings())
