"""The ranker as an HTTP service: ``toolsift serve ranker``.

One :class:`~toolsift.ranker.pipeline.RankingPipeline` behind these routes:

* ``POST /v1/rank`` — a :class:`~toolsift.ranker.protocol.RankRequest` in, a
  :class:`~toolsift.ranker.protocol.RankResponse` out, with server-side ``timings_ms``: ``base``
  (the base ranker), ``queue`` (waiting for a reranker batch), ``rerank`` (the model call of that
  batch) and ``total``.
* ``POST /v1/opensearch/query`` and ``POST /v1/opensearch/rank`` — toolsift's first stage and ranking as
  OpenSearch's own search pipeline calls them through ml-commons remote models
  (:mod:`toolsift.search.native`, installed by ``toolsift deploy opensearch``), when the service is built
  with ``stages``; the same auth as ``/v1/rank``.
* ``GET /health`` — ``{"status": "ok", "ranker", "reranker", "device", "weights_version"}``; never
  needs the token (503 with ``"status": "shutting_down"`` while the service stops).
* ``GET /metrics`` — Prometheus text: requests by status, request latency, reranker batch sizes
  (pairs and requests), pairs scored, reranker failures, the queue depth, and on CUDA the GPU memory
  in use and (where ``torch.cuda.utilization()`` works) its utilisation.

**Batching across requests.** Each request runs the base pass in a worker thread, then hands its
(query, document) pairs to the app's :class:`MicroBatcher`. One worker task collects the pairs of
queued requests until ``max_batch_pairs`` or ``batch_wait_ms`` after the first arrival, scores them
with one ``reranker.score_pairs`` call on a single model thread (one model call at a time), and
gives each request its slice; the request then fuses. The answer is the in-process
``pipeline.rank(request)``'s (padding in a shared batch can move the model's floats by ~1e-6).

**Errors** of the routes are JSON ``{"error": {"code": "<short_code>", "message": "..."}}``: 400
(``invalid_json``, ``bad_query`` for a malformed structured query), 404/405, 422 (``invalid_request``:
the schema's limits; the message names the field), 503 (``reranker_failed``, ``shutting_down``), 500
(``internal_error``). What every toolsift service refuses before any route
(:class:`toolsift.webguard.RequestGuard`) answers in the services' one body ``{"error", "code",
"field"}``: 403 ``forbidden`` (a foreign ``Host``; a write from another site's page), 401
``unauthorized`` (with ``WWW-Authenticate: Bearer``, before the body is read), 415
``unsupported_media_type`` (a body declared as anything but JSON) and 413 ``request_too_large``
(``max_request_bytes``: on ``Content-Length`` or as soon as the streamed body passes it).

**Auth.** With API keys configured (``[[api_keys]]``, :class:`toolsift.access.KeyRing`: the same
keys the workbench and the search API take, any role) or a token (``ranker_token`` / ``--token``,
kept for existing deployments), ``/v1/rank`` and ``/metrics`` need one of them as
``Authorization: Bearer <key>`` (or ``X-API-Key``), compared in constant time; 401 ``unauthorized``
otherwise. ``/health`` never does. Requests whose ``Host`` header is not an allowed host get 403
``forbidden`` (:class:`toolsift.webguard.RequestGuard`, before any route). ``toolsift serve ranker``
refuses to listen beyond loopback with neither keys nor a token unless ``--insecure-no-auth``.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import math
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from toolsift.access import KeyRing, bearer_token, is_loopback
from toolsift.errors import AuthError, BadQueryError, ConfigError, ToolsiftError, error_kind
from toolsift.ranker.pipeline import RankingPipeline
from toolsift.ranker.protocol import (
    PipelineQueryRequest,
    PipelineRankRequest,
    PipelineStages,
    RankRequest,
    RankResponse,
)
from toolsift.webguard import RequestGuard, allowed_hosts_for

if TYPE_CHECKING:
    from toolsift.config import Settings

__all__ = [
    "DEFAULT_MAX_BATCH_PAIRS",
    "MicroBatcher",
    "BatchScores",
    "RerankerFailure",
    "ServiceClosing",
    "create_app",
    "build_pipeline",
    "serve",
]

logger = logging.getLogger(__name__)

#: Most pairs one shared reranker call takes (a single larger request still goes alone).
DEFAULT_MAX_BATCH_PAIRS = 256
#: The ``Host`` names a service built without ``allowed_hosts`` answers to (loopback's).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
Pair = tuple[str, str]


# --- errors -------------------------------------------------------------------------------------------


class RerankerFailure(RuntimeError):
    """The reranker's model call failed; every request of that batch answers 503."""


class ServiceClosing(RuntimeError):
    """The service is stopping; queued requests answer 503."""


class _ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers

    def response(self) -> JSONResponse:
        return error_response(self.status, self.code, self.message, self.headers)


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The service's one error shape."""
    return JSONResponse(status_code=status, content={"error": {"code": code, "message": message}}, headers=headers)


_HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}


# --- the micro-batcher --------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchScores:
    """One request's reranker scores and how its batch went.

    Args:
        scores: the scores of the request's pairs, in order.
        queue_ms: from submission until its batch went to the model.
        rerank_ms: the batch's model call.
        batch_pairs: pairs in the batch (this request's and the others').
        batch_requests: requests sharing the batch.
    """

    scores: list[float]
    queue_ms: float
    rerank_ms: float
    batch_pairs: int
    batch_requests: int


@dataclass
class _Job:
    pairs: Sequence[Pair]
    future: asyncio.Future[BatchScores]
    submitted: float = field(default_factory=time.perf_counter)


class MicroBatcher:
    """Collects the reranker pairs of concurrent requests into shared model calls.

    Args:
        score: the model call (``reranker.score_pairs``); runs on one dedicated thread.
        max_pairs: most pairs per call (a larger single request is scored alone).
        wait_s: how long after the first queued request the batch waits for more.
        on_batch: called after each successful call with (pairs, requests, seconds).
    """

    def __init__(
        self,
        score: Callable[[Sequence[Pair]], list[float]],
        *,
        max_pairs: int = DEFAULT_MAX_BATCH_PAIRS,
        wait_s: float = 0.005,
        on_batch: Callable[[int, int, float], None] | None = None,
    ) -> None:
        if max_pairs < 1:
            raise ConfigError(f"max_pairs must be at least 1, got {max_pairs}")
        self._score = score
        self.max_pairs = max_pairs
        self.wait_s = max(0.0, wait_s)
        self._on_batch = on_batch
        self._pending: collections.deque[_Job] = collections.deque()
        self._in_flight: list[_Job] = []
        self._arrived: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._executor: ThreadPoolExecutor | None = None
        self.closing = False
        #: Requests per batch, newest last (the last 1000 batches).
        self.batches: collections.deque[int] = collections.deque(maxlen=1000)

    @property
    def depth(self) -> int:
        """Requests waiting for a batch."""
        return len(self._pending)

    async def start(self) -> None:
        self.closing = False
        self._arrived = asyncio.Event()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="reranker")
        self._task = asyncio.create_task(self._run(), name="toolsift-reranker-batcher")

    async def stop(self) -> None:
        """Refuse new work, fail what is queued or in flight with :class:`ServiceClosing`."""
        self.closing = True
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
        for job in [*self._pending, *self._in_flight]:
            if not job.future.done():
                job.future.set_exception(ServiceClosing("the ranker service is shutting down"))
        self._pending.clear()
        self._in_flight = []
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    async def score(self, pairs: Sequence[Pair]) -> BatchScores:
        """Queue ``pairs`` for the next batch and wait for their scores.

        Raises:
            ServiceClosing: the batcher is stopping (or was never started).
            RerankerFailure: the model call of the batch failed.
        """
        if self.closing or self._task is None or self._arrived is None:
            raise ServiceClosing("the ranker service is shutting down")
        job = _Job(pairs, asyncio.get_running_loop().create_future())
        self._pending.append(job)
        self._arrived.set()
        return await job.future

    def _pending_pairs(self) -> int:
        return sum(len(j.pairs) for j in self._pending)

    def _take(self) -> list[_Job]:
        """The next batch: queued jobs in order while they fit in ``max_pairs`` (at least one)."""
        batch = [self._pending.popleft()]
        size = len(batch[0].pairs)
        while self._pending and size + len(self._pending[0].pairs) <= self.max_pairs:
            job = self._pending.popleft()
            batch.append(job)
            size += len(job.pairs)
        return [j for j in batch if not j.future.done()]  # a request whose client left is dropped

    async def _run(self) -> None:
        assert self._arrived is not None
        loop = asyncio.get_running_loop()
        while True:
            while not self._pending:
                self._arrived.clear()
                await self._arrived.wait()
            deadline = loop.time() + self.wait_s
            while self._pending_pairs() < self.max_pairs:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                self._arrived.clear()
                try:
                    await asyncio.wait_for(self._arrived.wait(), remaining)
                except asyncio.TimeoutError:
                    break
            batch = self._take()
            if batch:
                await self._score_batch(loop, batch)

    async def _score_batch(self, loop: asyncio.AbstractEventLoop, batch: list[_Job]) -> None:
        pairs = [p for job in batch for p in job.pairs]
        self._in_flight = batch
        started = time.perf_counter()
        try:
            scores = await loop.run_in_executor(self._executor, self._score, pairs)
            if len(scores) != len(pairs):
                raise RerankerFailure(f"the reranker returned {len(scores)} scores for {len(pairs)} pairs")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the model's own errors (CUDA OOM, tokenizer, ...): 503 for this batch
            logger.exception("reranker batch of %d pairs failed", len(pairs))
            failure = exc if isinstance(exc, RerankerFailure) else RerankerFailure(f"{type(exc).__name__}: {exc}")
            for job in batch:
                if not job.future.done():
                    job.future.set_exception(failure)
            return
        finally:
            self._in_flight = []
        seconds = time.perf_counter() - started
        self.batches.append(len(batch))
        if self._on_batch is not None:
            self._on_batch(len(pairs), len(batch), seconds)
        offset = 0
        for job in batch:
            part = [float(s) for s in scores[offset : offset + len(job.pairs)]]
            offset += len(job.pairs)
            if not job.future.done():
                job.future.set_result(BatchScores(
                    scores=part,
                    queue_ms=(started - job.submitted) * 1000,
                    rerank_ms=seconds * 1000,
                    batch_pairs=len(pairs),
                    batch_requests=len(batch),
                ))


# --- metrics ------------------------------------------------------------------------------------------


class ServiceMetrics:
    """The service's Prometheus metrics, in a registry of its own (never the process-global one)."""

    def __init__(self, pipeline: RankingPipeline, batcher: MicroBatcher) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter("toolsift_ranker_requests", "Rank requests answered, by HTTP status.", ["status"],
                                registry=r)
        self.latency = Histogram(
            "toolsift_ranker_request_duration_seconds", "Rank request latency, server side.", registry=r,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
        )
        self.batch_pairs = Histogram(
            "toolsift_ranker_batch_pairs", "Pairs per reranker model call.", registry=r,
            buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
        )
        self.batch_requests = Histogram(
            "toolsift_ranker_batch_requests", "Requests sharing one reranker model call.", registry=r,
            buckets=(1, 2, 3, 4, 6, 8, 12, 16, 32, 64),
        )
        self.batch_seconds = Histogram("toolsift_ranker_batch_duration_seconds", "Reranker model call time.",
                                       registry=r)
        self.pairs = Counter("toolsift_ranker_pairs_scored", "(query, document) pairs scored by the reranker.",
                             registry=r)
        self.failures = Counter("toolsift_ranker_reranker_failures", "Reranker model calls that failed.", registry=r)
        queue = Gauge("toolsift_ranker_queue_depth", "Rank requests waiting for a reranker batch.", registry=r)
        queue.set_function(lambda: float(batcher.depth))
        reranker = pipeline.reranker
        info = Gauge("toolsift_ranker_info", "What this service ranks with (always 1).",
                     ["ranker", "reranker", "device", "weights_version"], registry=r)
        info.labels(pipeline.base.name, reranker.name if reranker else "", str(reranker.device) if reranker else "cpu",
                    pipeline.weights_version or "").set(1)
        if reranker is not None and reranker.device.type == "cuda":
            self._gpu_gauges(reranker.device)

    def _gpu_gauges(self, device: Any) -> None:
        import torch

        memory = Gauge("toolsift_ranker_gpu_memory_allocated_bytes", "GPU memory held by tensors (torch).",
                       registry=self.registry)
        memory.set_function(lambda: float(torch.cuda.memory_allocated(device)))
        reserved = Gauge("toolsift_ranker_gpu_memory_reserved_bytes", "GPU memory reserved by torch's allocator.",
                         registry=self.registry)
        reserved.set_function(lambda: float(torch.cuda.memory_reserved(device)))
        try:
            torch.cuda.utilization(device)  # needs NVML (pynvml); without it the gauge is left out
        except Exception:  # noqa: BLE001 - ModuleNotFoundError, NVML errors: no utilisation metric
            logger.info("GPU utilisation metric unavailable (torch.cuda.utilization() needs NVML)")
            return

        def utilisation() -> float:
            try:
                return float(torch.cuda.utilization(device))
            except Exception:  # noqa: BLE001 - a scrape must not fail on NVML
                return math.nan

        gauge = Gauge("toolsift_ranker_gpu_utilization_percent", "GPU utilisation over the last sample period.",
                      registry=self.registry)
        gauge.set_function(utilisation)

    def batch(self, pairs: int, requests: int, seconds: float) -> None:
        self.batch_pairs.observe(pairs)
        self.batch_requests.observe(requests)
        self.batch_seconds.observe(seconds)
        self.pairs.inc(pairs)

    def request(self, status: int, seconds: float) -> None:
        self.requests.labels(str(status)).inc()
        self.latency.observe(seconds)


# --- the app ------------------------------------------------------------------------------------------


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
) -> FastAPI:
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
    """
    expected = token.encode("utf-8") if token else None
    keyring = keys if keys is not None else KeyRing(())
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

    needed = ("a valid bearer token is required (Authorization: Bearer <token>)" if not keyring.enabled else
              f"a valid API key{' or the ranker token' if expected else ''} is required as a bearer token "
              "(Authorization: Bearer <key>)")

    def check_key(headers: Mapping[str, str]) -> None:
        credentials = bearer_token(headers)
        if credentials is not None:
            if expected is not None and secrets.compare_digest(credentials.encode("utf-8"), expected):
                return
            if keyring.enabled:
                try:
                    keyring.authenticate(credentials)  # any role may rank
                    return
                except AuthError:
                    pass
        raise AuthError(needed)

    guarded = expected is not None or keyring.enabled
    app = FastAPI(title="toolsift ranker", lifespan=lifespan, openapi_url=None, docs_url=None, redoc_url=None)
    app.add_middleware(RequestGuard, allowed_hosts=list(LOOPBACK_HOSTS if allowed_hosts is None else allowed_hosts),
                       max_body_bytes=max_request_bytes, authenticate=check_key if guarded else None,
                       protected=("/v1/", "/metrics"), limit_setting="ranker_max_request_bytes")
    app.state.pipeline = pipeline
    app.state.batcher = batcher
    app.state.metrics = metrics

    def authorize(request: Request) -> None:  # the guard checked already; a route never runs unguarded
        if not guarded:
            return
        try:
            check_key(request.headers)
        except AuthError:
            raise _ApiError(401, "unauthorized", needed, {"WWW-Authenticate": "Bearer"}) from None

    async def read_body(request: Request) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None:
            try:
                length = int(declared)
            except ValueError:
                raise _ApiError(400, "bad_content_length", f"Content-Length is not a number: {declared[:40]!r}")
            if length > max_request_bytes:
                raise _ApiError(413, "request_too_large",
                                f"the body has {length} bytes; this service accepts at most {max_request_bytes}")
        chunks: list[bytes] = []
        received = 0
        async for chunk in request.stream():
            received += len(chunk)
            if received > max_request_bytes:
                raise _ApiError(413, "request_too_large",
                                f"the body exceeds {max_request_bytes} bytes, the most this service accepts")
            chunks.append(chunk)
        return b"".join(chunks)

    async def answer(request: Request, started: float) -> Response:
        authorize(request)
        body = await read_body(request)
        try:
            rank_request = RankRequest.model_validate_json(body)
        except ValidationError as exc:
            raise _validation_error(exc) from None
        try:
            rank_request.structured_query()
        except BadQueryError as exc:
            raise _ApiError(400, "bad_query", f"query: {exc}") from None
        if batcher.closing:
            raise _ApiError(503, "shutting_down", "the ranker service is shutting down")
        t0 = time.perf_counter()
        try:
            ranked, pairs = await asyncio.to_thread(pipeline.base_pass, rank_request)
        except BadQueryError as exc:
            raise _ApiError(400, "bad_query", str(exc)) from None
        base_ms = (time.perf_counter() - t0) * 1000
        scored: BatchScores | None = None
        if pairs:
            try:
                scored = await batcher.score(pairs)
            except ServiceClosing as exc:
                raise _ApiError(503, "shutting_down", str(exc)) from None
            except RerankerFailure as exc:
                metrics.failures.inc()
                raise _ApiError(503, "reranker_failed", f"the reranker failed: {exc}") from None
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
        started = time.perf_counter()
        response = await _guarded(answer(request, started), "rank request")
        metrics.request(response.status_code, time.perf_counter() - started)
        return response

    async def pipeline_answer(request: Request, route: str) -> Response:
        authorize(request)
        if stages is None:
            raise _ApiError(404, "not_found", "this ranker service does not serve OpenSearch's search pipeline")
        body = await read_body(request)
        try:
            if route == "query":
                query = PipelineQueryRequest.model_validate_json(body)
                result = await asyncio.to_thread(stages.first_stage, query.index, query.request)
            else:
                hits = PipelineRankRequest.model_validate_json(body)
                result = await asyncio.to_thread(stages.rank_hits, hits.index, hits.ids, hits.request)
        except ValidationError as exc:
            raise _validation_error(exc) from None
        return JSONResponse(result)

    for route in ("query", "rank"):

        async def pipeline_route(request: Request, route: str = route) -> Response:
            started = time.perf_counter()
            response = await _guarded(pipeline_answer(request, route), f"opensearch {route} request")
            metrics.request(response.status_code, time.perf_counter() - started)
            return response

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

    @app.get("/metrics")
    async def prometheus(request: Request) -> Response:
        try:
            authorize(request)
        except _ApiError as exc:
            return exc.response()
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, f"http_{exc.status_code}")
        return error_response(exc.status_code, code, str(exc.detail), getattr(exc, "headers", None))

    return app


async def _guarded(work: Awaitable[Response], what: str) -> Response:
    """``work``'s answer, or the service's one error shape for whatever it raised."""
    try:
        return await work
    except _ApiError as exc:
        if exc.status == 401:
            logger.warning("%s refused: %s", what, exc.message)
        return exc.response()
    except ToolsiftError as exc:  # toolsift.errors.ERROR_TABLE: the status and code every edge uses
        logger.exception("%s failed", what)
        kind = error_kind(exc)
        assert kind is not None
        return error_response(kind.http_status, kind.code, f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # noqa: BLE001 - the error model holds for the unexpected too
        logger.exception("%s failed", what)
        return error_response(500, "internal_error", f"unexpected {type(exc).__name__}; see the service log")


def _no_reranker(pairs: Sequence[Pair]) -> list[float]:
    raise RerankerFailure("no reranker is loaded")  # never called: a pipeline without one makes no pairs


def _validation_error(exc: ValidationError) -> _ApiError:
    errors = exc.errors(include_url=False)
    if any(e["type"] == "json_invalid" for e in errors):
        return _ApiError(400, "invalid_json", f"the body is not valid JSON: {errors[0]['msg']}")
    problems = []
    for e in errors[:10]:
        where = ".".join(str(p) for p in e["loc"]) or "body"
        problems.append(f"{where}: {e['msg']}")
    more = f" (and {len(errors) - 10} more)" if len(errors) > 10 else ""
    return _ApiError(422, "invalid_request", "invalid rank request: " + "; ".join(problems) + more)


# --- running it ---------------------------------------------------------------------------------------


def build_pipeline(settings: Settings) -> RankingPipeline:
    """The pipeline the settings describe, built as the search backend builds its in-process one
    (:func:`~toolsift.ranker.pipeline.ranking_pipeline`): MFTR over the ``weights`` artifact (else the
    fixed ``field_weights``) plus the ``reranker`` setting's model."""
    from toolsift.ranker.artifact import load_artifact
    from toolsift.ranker.pipeline import ranking_pipeline

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
    import uvicorn

    keys = KeyRing(settings.api_keys) if keys is None else keys
    pipeline = build_pipeline(settings)
    token = settings.ranker_token.get_secret_value() if settings.ranker_token else None
    if token is None and not keys.enabled and not is_loopback(host):
        logger.warning("serving on %s with no API keys or token: anyone who reaches the port can rank", host)
    app = create_app(pipeline, token=token, max_request_bytes=settings.ranker_max_request_bytes,
                     batch_wait_ms=settings.ranker_batch_wait_ms, max_batch_pairs=max_batch_pairs, keys=keys,
                     allowed_hosts=allowed_hosts_for(settings.allowed_hosts, host), stages=stages)
    if on_ready is not None:
        on_ready(pipeline)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False, timeout_graceful_shutdown=5)
