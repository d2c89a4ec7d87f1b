"""The eval runs index: one document per row of a ``toolsift eval`` run's table, for metrics over time.

Every row of one run shares its ``run_id`` and ``recorded_at``. Fields a dashboard filters, plots or
aggregates on are typed: what was evaluated (``query_set``, ``dataset_path``, ``index``, ``kind``,
``method``, ``retriever``, ``row``, ``main``, ``queries``), the flat metrics (``ndcg_10``,
``recall_10``, ``tracc``, ``ndcg_5``, ``recall_5``; each only when the run measured it), the cost
(``latency_p50_ms``, ``latency_p95_ms``, ``duration_s``) and the provenance (``weights_version``,
``source``, ``git_commit``). The row's full metric dict is kept in ``metrics``, stored but not
indexed. The mapping is derived from :class:`EvalRunDoc`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolsift.mappings.fields import doc_field
from toolsift.mappings.template import side_index_body

__all__ = ["EVAL_RUNS_SCHEMA_VERSION", "EvalRunDoc", "eval_runs_index_body"]

EVAL_RUNS_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class EvalRunDoc:
    """One row of an evaluation run's table (see :class:`toolsift.evaluation.evalruns.EvalRunRow`)."""

    run_id: str = doc_field("keyword", default="")
    recorded_at: str = doc_field("date", default="")
    query_set: str = doc_field("keyword", default="")
    dataset_path: str = doc_field("keyword", default="")
    index: str = doc_field("keyword", default="")
    kind: str = doc_field("keyword", default="")
    method: str = doc_field("keyword", default="")
    retriever: str | None = doc_field("keyword")
    row: str = doc_field("keyword", default="")
    main: bool = doc_field("boolean", default=False)
    queries: int = doc_field("integer", default=0)
    ndcg_10: float | None = doc_field("float")
    recall_10: float | None = doc_field("float")
    tracc: float | None = doc_field("float")
    ndcg_5: float | None = doc_field("float")
    recall_5: float | None = doc_field("float")
    latency_p50_ms: float | None = doc_field("float")
    latency_p95_ms: float | None = doc_field("float")
    duration_s: float | None = doc_field("float")
    weights_version: str | None = doc_field("keyword")
    source: str | None = doc_field("keyword")
    git_commit: str | None = doc_field("keyword")
    metrics: dict[str, Any] = doc_field("stored", factory=dict)


def eval_runs_index_body() -> dict[str, Any]:
    """Settings and mappings of the eval runs index."""
    return side_index_body(EvalRunDoc, schema="evalruns", schema_version=EVAL_RUNS_SCHEMA_VERSION)
