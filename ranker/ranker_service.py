"""The ranker as an HTTP service: ``toolsift serve ranker``.

One :class:`~toolsift.ranker.ranking_pipeline.RankingPipeline` behind these routes:

* ``POST /v1/rank`` — a :class:`~toolsift.ranker.protocol.RankRequest` in, a
  :class:`~toolsift.ranker.protocol.RankResponse` out, with server-side ``timings_ms``: ``base``
  (the base ranker), ``queue`` (waiting for a reranker batch), ``rerank`` (the model call of that
  batch) and ``total``.
* ``POST /v1/opensearch/query`` and ``POST /v1/opensearch/rank`` — toolsift's first stage and ranking as
  OpenSearch's own search pipeline calls them through ml-commons remote models
  (:mod:`toolsift.search.native_stages`, installed by ``toolsift deploy opensearch``), when the service is built
  with ``stages``; the same auth as ``/v1/rank``.
* ``GET /health`` — ``{"status": "ok", "ranker", "reranker", "device", "weights_version"}``; never
  needs the token (503 with ``"status": "shutting_down"`` while the service stops).
* ``GET /metrics`` — Prometheus text (:class:`~toolsift.ranker.service_metrics.ServiceMetrics`):
  requests by status, request latency, reranker batch sizes (pairs and requests), pairs scored,
  reranker failures, the queue depth, and on CUDA the GPU memory in use and its utilisation. These
  count every tenant's traffic together: the ranker token, an all-tenant key (or no auth) reads them,
  a tenant's key gets none of them (an empty answer, :mod:`toolsift.metrics_view`).

**Batching across requests.** Each request runs the base pass in a worker thread, then hands its
(query, document) pairs to the app's :class:`~toolsift.ranker.batching.MicroBatcher`, which scores
the pairs of concurrent requests in shared model calls (one at a time) and gives each request its
slice; the request then fuses. The answer is the in-process ``pipeline.rank(request)``'s (padding in
a shared batch can move the model's floats by ~1e-6).

**Errors** are the one body of every toolsift HTTP service, ``{"error": message, "code": code, "field":
field or null}`` (:func:`toolsift.webguard.error_response`, statuses and codes from
:data:`toolsift.errors.ERROR_TABLE`), never a stack trace: 400 ``bad_request`` (a body that is not JSON,
or outside the schema — its limits or its types, which are strict: ``"10"`` is no count — ``field``
names the first bad field, e.g. ``candidates.0.document``), 400 ``bad_query`` (a malformed structured
query; field ``query``), 404 ``not_found`` (also the pipeline routes of a service built without
``stages``), 405 ``method_not_allowed``, 503 ``reranker_failed`` (the batch's model call failed; the
next batch is tried afresh) and ``shutting_down``, 503 ``opensearch_unavailable`` (the pipeline routes'
cluster), 500 ``internal_error``. Before any route (:class:`toolsift.webguard.RequestGuard`): 403
``forbidden`` (a foreign ``Host``; a write from another site's page), 401 ``unauthorized`` (with
``WWW-Authenticate: Bearer``, before the body is read), 415 ``unsupported_media_type`` (a body declared
as anything but JSON), 413 ``request_too_large`` (``ranker_max_request_bytes``: on ``Content-Length`` or
as soon as the streamed body passes it) and 408 ``request_timeout`` (a body not whole within
``request_read_timeout_s``; headers that slow close the connection, :func:`toolsift.webguard.serve`).

**Auth.** With API keys configured (``[[api_keys]]``, :class:`toolsift.access.KeyRing`: the same
keys the workbench and the search API take, any role; :func:`toolsift.webguard.key_check`) or a token
(``ranker_token`` / ``--token``, kept for existing deployments, compared in constant time),
``/v1/rank``, ``/v1/opensearch/*`` and ``/metrics`` need one of them as ``Authorization: Bearer <key>``
(or ``X-API-Key``); 401 ``unauthorized`` otherwise. ``/health`` never does. ``toolsift serve ranker``
refuses to listen beyond loopback with neither keys nor a token unless ``--insecure-no-auth``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import BaseModel, ValidationError

from toolsift.access import KeyRing, bearer_token, is_loopback
from toolsift.errors import AuthError, BadQueryError, NotFoundError, ToolsiftError
from toolsift.metrics_view import exposition
from toolsift.ranker.batching import (
    DEFAULT_MAX_BATCH_PAIRS,
    BatchScores,
    MicroBatcher,
    Pair,
    RerankerFailure,
    ServiceClosing,
)
from toolsift.ranker.ranking_pipeline import RankingPipeline
from toolsift.ranker.protocol import (
    PipelineQueryRequest,
    PipelineRankRequest,
    PipelineStages,
    RankRequest,
    RankResponse,
)
from toolsift.ranker.service_metrics import ServiceMetrics
from toolsift.webguard import (
    RequestGuard,
    allowed_hosts_for,
    answer_errors,
    answer_validation_errors,
    error_response,
    key_check,
)
from toolsift.webguard import serve as serve_http

if TYPE_CHECKING:
    from toolsift.config import Settings

__all__ = ["LOOPBACK_HOSTS", "create_app", "build_pipeline", "serve"]

logger = logging.getLogger(__name__)

#: The ``Host`` names a service built without ``allowed_hosts`` answers to (loopback's).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
_Body = TypeVar("_Body", bound=BaseModel)


def create_app(
    pipeline: RankingPipeline,
    *,
    token: str | None,
    max_request_bytes: int,
    batch_wait_ms: float,
    max_batch_pairs: int = DEFAULT_MAX_BATCH_PAIRS,
    keys: KeyRing | None = None,
    allowed_hosts: Iterable[str] | None = None,
    stages: PipelineStages | None = None,
    cluster_url: str | None = None,
    read_timeout_s: float | None = None,
) -> FastAPI:
    # Long: FastAPI's factory pattern: the routes are closures over the pipeline, batcher, guard and metrics
    # built here.
    """The ranker service over ``pipeline`` (see the module docstring).

    Args:
        pipeline: the ranker, already loaded (the model loads before the port opens).
        token: a bearer token ``/v1/rank`` and ``/metrics`` accept; None: none.
        max_request_bytes: the largest body accepted (413 above).
        batch_wait_ms: how long a reranker batch waits for more requests after the first.
        max_batch_pairs: most pairs per shared reranker call.
        keys: API keys ``/v1/rank`` and ``/metrics`` accept (any role). With neither keys nor a token,
            no auth.
        allowed_hosts: the ``Host`` header values answered (default: :data:`LOOPBACK_HOSTS`; ``*``: any).
        stages: toolsift's stages for OpenSearch's search pipeline (``/v1/opensearch/query`` and
            ``/v1/opensearch/rank``); None: those routes answer 404.
        cluster_url: the OpenSearch URL the stages use, named when it is unreachable.
        read_timeout_s: how long a request's body may take to arrive (408 after; None: no limit).
    """
    expected = token.encode("utf-8") if token else None
    keyring = keys if keys is not None else KeyRing(())
    with_key = key_check(keyring)  # None: no keys configured
    reranker = pipeline.reranker
    batcher = MicroBatcher(reranker.score_pairs if reranker is not None else _no_reranker,
                           max_pairs=max_batch_pairs, wait_s=batch_wait_ms / 1000,
                           on_batch=lambda pairs, requests, seconds: metrics.batch(pairs, requests, seconds))
    metrics = ServiceMetrics(pipeline, batcher)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await batcher.start()
        logger.info("ranker service: %s on %s", pipeline.name, reranker.device if reranker else "cpu")
        try:
            yield
        finally:
            await batcher.stop()

    needed = ("a valid bearer token is required (Authorization: Bearer <token>)" if with_key is None else
              f"a valid API key{' or the ranker token' if expected else ''} is required as a bearer token "
              "(Authorization: Bearer <key>)")

    def check_key(headers: Mapping[str, str]) -> None:
        """The ranker token (constant time) or any configured API key; else :class:`AuthError`."""
        credentials = bearer_token(headers)
        if expected is not None and credentials is not None and secrets.compare_digest(
                credentials.encode("utf-8"), expected):
            return
        if with_key is not None:
            try:
                with_key(headers)  # any role may rank
                return
            except AuthError:
                pass
        raise AuthError(needed)

    guarded = expected is not None or with_key is not None
    app = FastAPI(title="toolsift ranker", lifespan=lifespan, openapi_url=None, docs_url=None, redoc_url=None)
    app.add_middleware(RequestGuard, allowed_hosts=list(LOOPBACK_HOSTS if allowed_hosts is None else allowed_hosts),
                       max_body_bytes=max_request_bytes, authenticate=check_key if guarded else None,
                       protected=("/v1/", "/metrics"), limit_setting="ranker_max_request_bytes",
                       read_timeout_s=read_timeout_s)
    app.state.pipeline = pipeline
    app.state.batcher = batcher
    app.state.metrics = metrics

    answer_errors(app, cluster_url or "the configured URL", log=__name__)

    answer_validation_errors(app, count_others=True)

    def authorize(request: Request) -> None:  # the guard checked already; a route never runs unguarded
        if guarded:
            check_key(request.headers)

    async def measured(request: Request, work: Callable[[], Awaitable[Response]], what: str) -> Response:
        """``work``'s answer, or the app's own answer to what it raised (the handlers above), counted
        in the metrics either way."""
        started = time.perf_counter()
        try:
            response = await work()
        except Exception as exc:  # noqa: BLE001 - answered by the app's handlers: the one error body
            response = await _answer_to(app, request, exc)
            if isinstance(exc, AuthError) or (isinstance(exc, ToolsiftError) and response.status_code >= 500):
                logger.warning("%s %s: %s: %s", what, "refused" if isinstance(exc, AuthError) else "failed",
                               type(exc).__name__, exc)
        metrics.request(response.status_code, time.perf_counter() - started)
        return response

    async def answer(request: Request) -> Response:
        started = time.perf_counter()
        authorize(request)
        rank_request = _parse(RankRequest, await request.body())
        try:
            rank_request.structured_query()
        except BadQueryError as exc:
            return error_response(exc, f"query: {exc}", "query")
        if batcher.closing:
            raise ServiceClosing("the ranker service is shutting down")
        t0 = time.perf_counter()
        ranked, pairs = await asyncio.to_thread(pipeline.base_pass, rank_request)
        base_ms = (time.perf_counter() - t0) * 1000
        scored: BatchScores | None = None
        if pairs:
            try:
                scored = await batcher.score(pairs)
            except RerankerFailure as exc:
                metrics.failures.inc()
                raise RerankerFailure(f"the reranker failed: {exc}") from exc
        response: RankResponse = pipeline.fuse(rank_request, ranked, scored.scores if scored else [])
        response.timings_ms = {
            "base": round(base_ms, 3),
            "queue": round(scored.queue_ms, 3) if scored else 0.0,
            "rerank": round(scored.rerank_ms, 3) if scored else 0.0,
            "total": round((time.perf_counter() - started) * 1000, 3),
        }
        return Response(content=response.model_dump_json(), media_type="application/json")

    @app.post("/v1/rank")
    async def rank(request: Request) -> Response:
        return await measured(request, lambda: answer(request), "rank request")

    async def pipeline_answer(request: Request, route: str) -> Response:
        authorize(request)
        if stages is None:
            raise NotFoundError("this ranker service does not serve OpenSearch's search pipeline")
        body = await request.body()
        if route == "query":
            query = _parse(PipelineQueryRequest, body)
            result = await asyncio.to_thread(stages.first_stage, query.index, query.request)
        else:
            hits = _parse(PipelineRankRequest, body)
            result = await asyncio.to_thread(stages.rank_hits, hits.index, hits.ids, hits.request)
        return JSONResponse(result)

    for route in ("query", "rank"):

        async def pipeline_route(request: Request, route: str = route) -> Response:
            return await measured(request, lambda: pipeline_answer(request, route), f"opensearch {route} request")

        app.add_api_route(f"/v1/opensearch/{route}", pipeline_route, methods=["POST"])

    @app.get("/health")
    async def health() -> JSONResponse:
        body = {
            "status": "shutting_down" if batcher.closing else "ok",
            "ranker": pipeline.base.name,
            "reranker": reranker.name if reranker is not None else None,
            "device": str(reranker.device) if reranker is not None else "cpu",
            "weights_version": pipeline.weights_version,
            "rerank_top": pipeline.rerank_top if reranker is not None else None,
            "fusion_weight": pipeline.fusion_weight if reranker is not None else None,
        }
        return JSONResponse(body, status_code=503 if batcher.closing else 200)

    def tenant_of(headers: Mapping[str, str]) -> str | None:
        """The caller's tenant (None: every tenant — the token, an all-tenant key, or no auth)."""
        credentials = bearer_token(headers)
        if not guarded or (expected is not None and credentials is not None
                           and secrets.compare_digest(credentials.encode("utf-8"), expected)):
            return None
        return keyring.authenticate(credentials).tenant

    @app.get("/metrics")
    async def prometheus(request: Request) -> Response:
        authorize(request)  # AuthError: 401 in the one error body (answer_errors)
        # every tenant's traffic counted together: a tenant's key reads none of it
        return Response(exposition(metrics.registry, tenant_of(request.headers)), media_type=CONTENT_TYPE_LATEST)

    return app


def _parse(model: type[_Body], body: bytes) -> _Body:
    """``body`` as ``model``; a body that is not JSON or is outside the schema raises FastAPI's
    :class:`RequestValidationError`, located in the ``body`` as FastAPI locates its own."""
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors(include_url=False)]
        raise RequestValidationError(errors) from None


async def _answer_to(app: FastAPI, request: Request, exc: Exception) -> Response:
    """The answer of ``app``'s exception handler for ``exc`` (its nearest class; ``Exception``'s, from
    :func:`~toolsift.webguard.answer_errors`, logs it and answers 500 ``internal_error``)."""
    for cls in type(exc).__mro__:
        handler = app.exception_handlers.get(cls)
        if handler is not None:
            response = handler(request, exc)
            return await response if inspect.isawaitable(response) else response
    raise exc  # not reached: answer_errors installs a handler for Exception


def _no_reranker(pairs: Sequence[Pair]) -> list[float]:
    raise RerankerFailure("no reranker is loaded")  # never called: a pipeline without one makes no pairs


# --- running it ---------------------------------------------------------------------------------------


def build_pipeline(settings: Settings) -> RankingPipeline:
    """The pipeline the settings describe, built as the search backend builds its in-process one
    (:func:`~toolsift.ranker.ranking_pipeline.ranking_pipeline`): MFTR over the ``weights`` artifact (else the
    fixed ``field_weights``) plus the ``reranker`` setting's model."""
    from toolsift.ranker.artifact import load_artifact
    from toolsift.ranker.ranking_pipeline import ranking_pipeline

    return ranking_pipeline(settings, load_artifact(settings.weights) if settings.weights is not None else None)


def serve(
    settings: Settings,
    *,
    host: str = "127.0.0.1",
    port: int = 8300,
    max_batch_pairs: int = DEFAULT_MAX_BATCH_PAIRS,
    on_ready: Callable[[RankingPipeline], None] | None = None,
    keys: KeyRing | None = None,
    stages: PipelineStages | None = None,
) -> None:
    """Load the pipeline (before the port opens), then serve it with uvicorn until interrupted.

    ``stages`` serves OpenSearch's search pipeline too (:func:`create_app`).

    ``keys`` default to ``settings.api_keys``; the allowed hosts are ``settings.allowed_hosts`` plus
    ``host`` (:func:`~toolsift.webguard.allowed_hosts_for`). The caller checks the bind address
    (:func:`~toolsift.access.check_bind`; ``toolsift serve ranker`` does).
    """
    keys = KeyRing(settings.api_keys) if keys is None else keys
    pipeline = build_pipeline(settings)
    token = settings.ranker_token.get_secret_value() if settings.ranker_token else None
    if token is None and not keys.enabled and not is_loopback(host):
        logger.warning("serving on %s with no API keys or token: anyone who reaches the port can rank", host)
    app = create_app(pipeline, token=token, max_request_bytes=settings.ranker_max_request_bytes,
                     batch_wait_ms=settings.ranker_batch_wait_ms, max_batch_pairs=max_batch_pairs, keys=keys,
                     allowed_hosts=allowed_hosts_for(settings.allowed_hosts, host), stages=stages,
                     cluster_url=settings.effective_url, read_timeout_s=settings.request_read_timeout_s)
    if on_ready is not None:
        on_ready(pipeline)
    serve_http(app, host=host, port=port, read_timeout_s=settings.request_read_timeout_s, log_level="warning",
               access_log=False, timeout_graceful_shutdown=5)
