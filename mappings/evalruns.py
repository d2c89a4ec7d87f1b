"""The eval runs index: one document per row of a ``toolsift eval`` run's table, for metrics over time.

Every row of one run shares its ``run_id`` and ``recorded_at``. Fields a dashboard filters, plots or
aggregates on are typed: what was evaluated (``query_set``, ``dataset_path``, ``index``, ``kind``,
``method``, ``retriever``, ``row``, ``main``, ``queries``), the flat metrics (``ndcg_10``,
``recall_10``, ``tracc``, ``ndcg_5``, ``recall_5``; each only when the run measured it), the cost
(``latency_p50_ms``, ``latency_p95_ms``, ``duration_s``) and the provenance (``weights_version``,
``source``, ``git_commit``). The row's full metric dict is kept in ``metrics``, stored but not
indexed.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EVAL_RUNS_SCHEMA_VERSION", "eval_runs_index_body"]

EVAL_RUNS_SCHEMA_VERSION = 1


def eval_runs_index_body() -> dict[str, Any]:
    """Settings and mappings of the eval runs index."""
    keyword = {"type": "keyword"}
    number = {"type": "float"}
    return {
        "settings": {"index": {"number_of_shards": 1, "number_of_replicas": 0}},
        "mappings": {
            "dynamic": "strict",
            "_meta": {"toolsift": {"schema": "evalruns", "schema_version": EVAL_RUNS_SCHEMA_VERSION}},
            "properties": {
                "run_id": keyword, "recorded_at": {"type": "date"},
                "query_set": keyword, "dataset_path": keyword, "index": keyword,
                "kind": keyword, "method": keyword, "retriever": keyword, "row": keyword,
                "main": {"type": "boolean"}, "queries": {"type": "integer"},
                "ndcg_10": number, "recall_10": number, "tracc": number, "ndcg_5": number, "recall_5": number,
                "latency_p50_ms": number, "latency_p95_ms": number, "duration_s": number,
                "weights_version": keyword, "source": keyword, "git_commit": keyword,
                "metrics": {"type": "object", "enabled": False},
            },
        },
    }
