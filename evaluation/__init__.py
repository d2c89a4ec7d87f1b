"""Offline evaluation and the benchmarks: metrics in the BEIR / ir_measures shapes, the runs behind
docs/evaluation.md. It drives :mod:`toolsift.search` like any front end; benchmark readers are
:mod:`toolsift.ingest.benchmarks`.

Qrels are ``{qid: {tool_id: grade}}`` and runs ``{qid: {tool_id: score}}``.
"""

from __future__ import annotations

from toolsift.evaluation.metrics import (
    DEFAULT_MEASURES,
    KNOWN_MEASURES,
    evaluate,
    evaluate_per_query,
    normalise_measures,
)

__all__ = [
    "DEFAULT_MEASURES",
    "KNOWN_MEASURES",
    "evaluate",
    "evaluate_per_query",
    "normalise_measures",
]
