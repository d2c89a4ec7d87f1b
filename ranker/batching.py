"""The ranker service's micro-batcher: the reranker pairs of concurrent requests, scored in shared
model calls.

Each request of ``toolsift serve ranker`` (:mod:`toolsift.ranker.ranker_service`) hands its (query,
document) pairs to the app's :class:`MicroBatcher` and awaits its :class:`BatchScores`. One asyncio
task collects the pairs of queued requests until ``max_pairs`` (:data:`DEFAULT_MAX_BATCH_PAIRS`) or
``wait_s`` after the first arrival, scores them with one ``reranker.score_pairs`` call on a single
model thread (one model call at a time), and resolves each request's future with its slice. A failed
model call fails that batch's requests with :class:`RerankerFailure` (the service answers 503
``reranker_failed``; the next batch is tried afresh); stopping fails whatever is queued or in flight
with :class:`ServiceClosing` (503 ``shutting_down``).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from toolsift.errors import ConfigError, RerankerFailedError, ShuttingDownError

__all__ = [
    "DEFAULT_MAX_BATCH_PAIRS",
    "Pair",
    "BatchScores",
    "MicroBatcher",
    "RerankerFailure",
    "ServiceClosing",
]

logger = logging.getLogger(__name__)

#: Most pairs one shared reranker call takes (a single larger request still goes alone).
DEFAULT_MAX_BATCH_PAIRS = 256
#: One (query, document) pair the reranker scores.
Pair = tuple[str, str]


class RerankerFailure(RerankerFailedError):
    """The reranker's model call failed; every request of that batch answers 503 ``reranker_failed``."""


class ServiceClosing(ShuttingDownError):
    """The service is stopping; queued requests answer 503 ``shutting_down``."""


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
