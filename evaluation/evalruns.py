"""Record every ``toolsift eval`` run in OpenSearch (the ``eval_runs`` setting), for metrics over time.

A run is one document per row of its table (:class:`EvalRunRow`), all sharing one ``run_id`` and
``recorded_at``: what was evaluated (the query set, the dataset folder, the eval index, the kind of
evaluation, method, retriever, the row's label and whether it is the row the command is about), the
flat metrics a dashboard plots (``ndcg_10``, ``recall_10``, ``tracc``, ``ndcg_5``, ``recall_5``, each only
when the run measured it), the latency, the duration, the weights version, who ran it (``source``:
``cli`` or ``ui``) and the checkout's commit. The row's full metric dict is kept in ``metrics``.

The ``*_eval_rows`` functions map each evaluation's result onto its rows. Recording is best effort:
an evaluation never fails because its run could not be written (the failure is logged once as a
warning, and :meth:`EvalRunLog.record` returns None).
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import math
import subprocess
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from opensearchpy import OpenSearch, helpers
from opensearchpy.exceptions import NotFoundError, OpenSearchException

from toolsift.config import Settings
from toolsift.ingest.benchmarks import benchmark_slug
from toolsift.mappings.evalruns_doc import eval_runs_index_body
from toolsift.opensearch import BulkRetry, ensure_index

if TYPE_CHECKING:
    from toolsift.agents.agent_eval import AgentEvalResult
    from toolsift.evaluation.mftr.results import MFTREvalResult
    from toolsift.evaluation.request_eval import RequestEvalResult
    from toolsift.evaluation.runner import EvalResult
    from toolsift.sets.set_eval import SetEvalResult

__all__ = [
    "EvalKind",
    "EvalRunRow",
    "EvalRunLog",
    "FLAT_METRICS",
    "query_set_name",
    "flat_metrics",
    "eval_run_document",
    "tool_eval_rows",
    "mftr_eval_rows",
    "agent_eval_rows",
    "request_eval_rows",
    "set_eval_rows",
]

_log = logging.getLogger(__name__)

EvalKind = Literal["tool", "mftr", "agent", "set", "request"]

#: Metric names as the evaluations report them (case-insensitive) → the flat field a dashboard plots.
FLAT_METRICS: Mapping[str, str] = {
    "ndcg@10": "ndcg_10", "recall@10": "recall_10", "tracc": "tracc", "ndcg@5": "ndcg_5", "recall@5": "recall_5",
}


@dataclass(frozen=True)
class EvalRunRow:
    """One row of an evaluation's table, as recorded.

    Args:
        query_set: the benchmark's name as its eval index spells it (``apibank``); several folders
            (MFTR's mixed benchmark) joined with ``+`` (:func:`query_set_name`).
        dataset_path: the folder evaluated (several: joined with ``+``).
        index: the eval index the row was measured on.
        kind: ``tool`` (multi-field / full-doc), ``mftr``, ``agent`` or ``set``.
        row: the row's label as printed.
        main: the row the command is about (the only row of a tool-level run, MFTR's main row, the
            agent-level main row, PTR calibrated — or cold start without history).
        metrics: every metric of the row, as the evaluation names them.
    """

    query_set: str
    dataset_path: str
    index: str
    kind: EvalKind
    method: str
    retriever: str
    row: str
    main: bool
    queries: int
    metrics: Mapping[str, float] = field(default_factory=dict)
    latency_p50_ms: float | None = None
    latency_p95_ms: float | None = None
    duration_s: float | None = None
    weights_version: str | None = None


def query_set_name(dataset_dirs: Sequence[Path]) -> str:
    """The query set of an evaluation of these folders: each benchmark's slug, joined with ``+``."""
    return "+".join(benchmark_slug(Path(d).resolve().name) for d in dataset_dirs)


def _dataset_path(dataset_dirs: Sequence[Path]) -> str:
    return "+".join(str(Path(d).resolve()) for d in dataset_dirs)


def _finite(metrics: Mapping[str, float]) -> dict[str, float]:
    return {name: float(value) for name, value in metrics.items() if math.isfinite(value)}


def flat_metrics(metrics: Mapping[str, float]) -> dict[str, float]:
    """The flat fields (``ndcg_10``, ``recall_10``, ``tracc``, ``ndcg_5``, ``recall_5``) of a metric dict;
    metrics it does not hold are left out."""
    return {FLAT_METRICS[name.lower()]: value for name, value in _finite(metrics).items() if name.lower() in FLAT_METRICS}


def eval_run_document(row: EvalRunRow, *, run_id: str, recorded_at: dt.datetime, source: str,
                      git_commit: str | None) -> dict[str, Any]:
    """The eval runs document of one row."""
    document: dict[str, Any] = {
        "run_id": run_id, "recorded_at": recorded_at.isoformat(),
        "query_set": row.query_set, "dataset_path": row.dataset_path, "index": row.index, "kind": row.kind,
        "method": row.method, "retriever": row.retriever, "row": row.row, "main": row.main, "queries": row.queries,
        **flat_metrics(row.metrics),
        "weights_version": row.weights_version, "source": source, "git_commit": git_commit,
        "metrics": _finite(row.metrics),
    }
    for name in ("latency_p50_ms", "latency_p95_ms", "duration_s"):
        value = getattr(row, name)
        if value is not None and math.isfinite(value):
            document[name] = round(float(value), 3)
    return document


@functools.lru_cache(maxsize=1)
def git_commit() -> str | None:
    """``git rev-parse --short HEAD`` of the checkout toolsift runs from; None when it is not one."""
    package_root = Path(__file__).resolve().parent.parent
    try:
        answer = subprocess.run(["git", "-C", str(package_root), "rev-parse", "--show-toplevel", "--short", "HEAD"],
                                capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = answer.stdout.split()
    if answer.returncode != 0 or len(lines) != 2 or Path(lines[0]).resolve() != package_root:
        return None  # not a checkout, or toolsift installed inside some other repository
    return lines[1]


# --- the rows of each evaluation ---------------------------------------------------------------------
def tool_eval_rows(result: EvalResult, dataset_dirs: Sequence[Path], *,
                   duration_s: float | None = None) -> list[EvalRunRow]:
    """``toolsift eval`` (multi-field or full-doc): one row, ``<method> · <retriever>``."""
    return [EvalRunRow(
        query_set=query_set_name(dataset_dirs), dataset_path=_dataset_path(dataset_dirs), index=result.index,
        kind="tool", method=result.method, retriever=result.retriever, row=f"{result.method} · {result.retriever}",
        main=True, queries=result.n_queries, metrics=result.metrics,
        latency_p50_ms=result.latency_ms.get("p50"), latency_p95_ms=result.latency_ms.get("p95"),
        duration_s=duration_s, weights_version=result.protocol.get("weights_version"),
    )]


def mftr_eval_rows(result: MFTREvalResult, dataset_dirs: Sequence[Path], *,
                   duration_s: float | None = None) -> list[EvalRunRow]:
    """``toolsift eval --method mftr``: one row per ablation row (rows beyond the paper as ``+ <row>``);
    the search latency is the Full-Doc row's, the only one timed per search."""
    main_row = result.protocol.get("main_row")
    index = result.indices.get("std") or result.indices.get("raw", "")
    return [EvalRunRow(
        query_set=query_set_name(dataset_dirs), dataset_path=_dataset_path(dataset_dirs), index=index,
        kind="mftr", method="mftr", retriever=result.retriever,
        row=f"+ {row.name}" if row.beyond_paper else row.name, main=row.name == main_row,
        queries=result.n_queries, metrics=row.metrics,
        latency_p50_ms=result.latency_ms.get("p50") if row.name == "Full-Doc" else None,
        latency_p95_ms=result.latency_ms.get("p95") if row.name == "Full-Doc" else None,
        duration_s=duration_s,
    ) for row in result.ablations]


def agent_eval_rows(result: AgentEvalResult, dataset_dirs: Sequence[Path], *,
                    duration_s: float | None = None) -> list[EvalRunRow]:
    """``toolsift eval --level agent``: one row per method, each with its own first-stage retriever and index."""
    return [EvalRunRow(
        query_set=query_set_name(dataset_dirs), dataset_path=_dataset_path(dataset_dirs),
        index=result.agent_only_index if row.index == "agent-only" else result.index,
        kind="agent", method="tool-to-agent", retriever=row.retriever, row=row.name, main=row.main,
        queries=result.n_queries, metrics=row.metrics, duration_s=duration_s,
    ) for row in result.rows]


def request_eval_rows(result: RequestEvalResult, dataset_dirs: Sequence[Path], *,
                      duration_s: float | None = None) -> list[EvalRunRow]:
    """``toolsift eval --level request``: one row per system (the peer's too), with its latency."""
    return [EvalRunRow(
        query_set=query_set_name(dataset_dirs), dataset_path=_dataset_path(dataset_dirs), index=result.index,
        kind="request", method="whole-request", retriever="peer" if row.peer else "hybrid", row=row.name,
        main=row.main, queries=result.n_tasks, metrics=row.metrics, duration_s=duration_s,
        latency_p50_ms=row.latency_ms.get("p50"), latency_p95_ms=row.latency_ms.get("p95"),
    ) for row in result.rows]


def set_eval_rows(result: SetEvalResult, dataset_dirs: Sequence[Path], *,
                  duration_s: float | None = None) -> list[EvalRunRow]:
    """``toolsift eval --set``: one row per set method (``tracc`` flat; recall@gt and ndcg@gt in ``metrics``)."""
    return [EvalRunRow(
        query_set=query_set_name(dataset_dirs), dataset_path=_dataset_path(dataset_dirs), index=result.index,
        kind="set", method="set", retriever=result.retriever, row=row.name, main=row.main,
        queries=result.n_queries, metrics=row.metrics, duration_s=duration_s,
    ) for row in result.rows]


# --- the index -----------------------------------------------------------------------------------------
class EvalRunLog:
    """Writes and reads eval runs in ``eval_runs_index``; use :meth:`open`."""

    def __init__(self, client: OpenSearch, index: str) -> None:
        self.client = client
        self.index = index
        self._warned = False

    @classmethod
    def open(cls, client: OpenSearch, settings: Settings) -> EvalRunLog:
        """The eval runs of ``settings``, their index created when missing."""
        log = cls(client, settings.eval_runs_index)
        try:
            ensure_index(client, log.index, eval_runs_index_body())
        except OpenSearchException as exc:
            log._warn(exc)
        return log

    def record(self, rows: Sequence[EvalRunRow], *, source: str = "cli",
               now: dt.datetime | None = None) -> str | None:
        """Write the rows of one run (best effort); returns the run's id, None when it was not written."""
        if not rows:
            return None
        run_id = uuid.uuid4().hex
        recorded_at = now or dt.datetime.now(dt.timezone.utc)
        commit = git_commit()
        actions = [{"_index": self.index, "_id": f"{run_id}-{i:04d}",
                    "_source": eval_run_document(row, run_id=run_id, recorded_at=recorded_at, source=source,
                                                 git_commit=commit)}
                   for i, row in enumerate(rows)]
        try:
            helpers.bulk(self.client, actions, refresh="wait_for", **BulkRetry().kwargs())
        except OpenSearchException as exc:  # BulkIndexError too: a closed index, a foreign mapping
            self._warn(exc)
            return None
        return run_id

    def history(self, query_set: str | None = None, size: int = 1000) -> list[dict[str, Any]]:
        """The latest ``size`` rows (of ``query_set``, else of every set), oldest first, a run's rows in
        their table order; no index yet: no rows."""
        query: dict[str, Any] = {"term": {"query_set": query_set}} if query_set else {"match_all": {}}
        try:
            answer = self.client.search(index=self.index, body={
                "size": size, "query": query, "sort": [{"recorded_at": "desc"}, {"run_id": "desc"}]})
        except NotFoundError:
            return []
        hits = sorted(answer["hits"]["hits"], key=lambda h: (h["_source"]["recorded_at"], h["_id"]))
        return [h["_source"] for h in hits]

    def query_sets(self, size: int = 1000) -> list[str]:
        """Every query set with a recorded run, sorted; no index yet: none."""
        try:
            answer = self.client.search(index=self.index, body={
                "size": 0, "aggs": {"sets": {"terms": {"field": "query_set", "size": size}}}})
        except NotFoundError:
            return []
        return sorted(str(b["key"]) for b in answer["aggregations"]["sets"]["buckets"])

    def _warn(self, exc: Exception) -> None:
        if not self._warned:
            _log.warning("eval runs index %r cannot be written (%s); the run is not recorded", self.index, exc)
            self._warned = True
