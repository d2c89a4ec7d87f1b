"""Offline evaluation: benchmark readers and metrics in the BEIR / ir_measures shapes.

Qrels are ``{qid: {tool_id: grade}}`` and runs ``{qid: {tool_id: score}}``.
"""

from __future__ import annotations

from toolsift.evaluation.datasets import (
    BENCHMARK_FORMATS,
    Benchmark,
    ToolIdFor,
    detect_benchmark_format,
    load_beir_benchmark,
    load_benchmark,
    load_folds,
    load_livemcpbench_benchmark,
    load_toolret_benchmark,
)
from toolsift.evaluation.metrics import (
    DEFAULT_MEASURES,
    KNOWN_MEASURES,
    evaluate,
    evaluate_per_query,
    normalise_measures,
)

__all__ = [
    "BENCHMARK_FORMATS",
    "Benchmark",
    "ToolIdFor",
    "detect_benchmark_format",
    "load_benchmark",
    "load_toolret_benchmark",
    "load_beir_benchmark",
    "load_livemcpbench_benchmark",
    "load_folds",
    "DEFAULT_MEASURES",
    "KNOWN_MEASURES",
    "evaluate",
    "evaluate_per_query",
    "normalise_measures",
]
