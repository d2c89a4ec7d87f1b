"""The ranker service's Prometheus metrics (``GET /metrics`` of ``toolsift serve ranker``).

:class:`ServiceMetrics` keeps them in a registry of its own per app (never the process-global one):
rank requests by HTTP status and their latency, the reranker's batch sizes (pairs and requests) and
model call time, pairs scored, failed model calls, the queue depth of the app's
:class:`~toolsift.ranker.batching.MicroBatcher`, what the service ranks with, and on CUDA the GPU
memory in use and (where ``torch.cuda.utilization()`` works) its utilisation.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from toolsift.ranker.batching import MicroBatcher
from toolsift.ranker.ranking_pipeline import RankingPipeline

__all__ = ["ServiceMetrics"]

logger = logging.getLogger(__name__)


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

