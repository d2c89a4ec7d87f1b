"""The metrics page's data: eval runs over time, and search latency from the query log.

Eval runs are the rows ``toolsift eval`` records (:mod:`toolsift.evaluation.evalruns`, read with
``EvalRunLog.history``), one series per query set and row; latency is aggregated in OpenSearch (``date_histogram`` + ``percentiles`` on
``latency_ms``) over the query log: for a tenant, over the searches answered to its keys (the log's
``tenant``); for every tenant, over every logged search.
"""

from __future__ import annotations

from typing import Any

import re
from collections.abc import Mapping, Sequence

from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError

from toolsift.errors import BadQueryError

__all__ = ["eval_run_series", "latency_series", "EVAL_MEASURES"]

#: The flat measure fields of an eval-run row the page plots.
EVAL_MEASURES = ("ndcg_10", "recall_10", "tracc")


def eval_run_series(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Eval-run rows (oldest first, :meth:`toolsift.evaluation.evalruns.EvalRunLog.history`) grouped as
    ``{query_set: {row: [points]}}``.

    A point is ``{recorded_at, run_id, ndcg_10, recall_10, tracc, source, ...}``; the main row of each
    run is flagged.
    """
    series: dict[str, dict[str, list[dict[str, Any]]]] = {}
    runs = set()
    for doc in rows:
        runs.add(doc.get("run_id"))
        point = {k: doc.get(k) for k in ("recorded_at", "run_id", "method", "retriever", "kind", "main", "source",
                                         "queries", "weights_version", *EVAL_MEASURES)}
        series.setdefault(str(doc.get("query_set")), {}).setdefault(str(doc.get("row")), []).append(point)
    return {"runs": len(runs), "series": series}


def latency_series(client: OpenSearch, index: str, *, interval: str = "1h", since: str = "now-7d",
                   source: str | None = None, tenant: str | None = None) -> dict[str, Any]:
    """p50 / p95 / p99 search latency per ``interval`` bucket and overall, from the query log.

    ``interval`` is a fixed interval (``30m``, ``1h``, ``1d``); ``since`` date math (``now-7d``);
    ``tenant``: only the searches answered to that tenant's keys (None: every search).
    """
    if not re.fullmatch(r"[1-9]\d{0,3}[smhd]", interval):
        raise BadQueryError(f"interval {interval!r}: give a fixed interval such as 5m, 1h or 1d")
    if not re.fullmatch(r"now(-[1-9]\d{0,4}[smhdwMy])?", since):
        raise BadQueryError(f"since {since!r}: give date math such as now-1h or now-7d")
    filters: list[dict[str, Any]] = [{"range": {"timestamp": {"gte": since}}}]
    if source:
        filters.append({"term": {"source": source}})
    if tenant is not None:
        filters.append({"term": {"tenant": tenant}})
    percents = [50, 95, 99]
    body = {
        "size": 0,
        "track_total_hits": True,
        "query": {"bool": {"filter": filters}},
        "aggs": {
            "overall": {"percentiles": {"field": "latency_ms", "percents": percents}},
            "by_source": {"terms": {"field": "source", "size": 20}},
            "over_time": {
                "date_histogram": {"field": "timestamp", "fixed_interval": interval, "min_doc_count": 1},
                "aggs": {"latency": {"percentiles": {"field": "latency_ms", "percents": percents}}},
            },
        },
    }
    try:
        answer = client.search(index=index, body=body)
    except NotFoundError:
        return {"index": index, "searches": 0, "overall": {}, "buckets": [], "by_source": {}}

    def pct(values: dict[str, Any]) -> dict[str, float | None]:
        return {f"p{p}": values.get(f"{float(p)}") for p in percents}

    aggs = answer["aggregations"]
    return {
        "index": index,
        "searches": int(answer["hits"]["total"]["value"]),
        "overall": pct(aggs["overall"]["values"]),
        "by_source": {b["key"]: b["doc_count"] for b in aggs["by_source"]["buckets"]},
        "buckets": [{"t": b["key_as_string"], "searches": b["doc_count"], **pct(b["latency"]["values"])}
                    for b in aggs["over_time"]["buckets"]],
    }
