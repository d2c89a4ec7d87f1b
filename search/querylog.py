"""Record searches in OpenSearch (the ``query_log`` setting) for relevance tuning and dashboards.

A record holds the request, the structured query, every returned tool (or agent) with its
per-field scores, weighted contributions and missing required parameters, the latency, the degraded
flag and reason, the ranker, reranker and weights version, and who searched (``source``). Settings
are never written, so no credential (OpenSearch password or API key, LLM key, ranker token) reaches
the log.

Logging is best effort: a search never fails because its record could not be written (the failure
is logged once as a warning). Retention: records older than ``query_log_retention_days`` are deleted
(``delete_by_query`` on ``timestamp``) when a searcher opens the log.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import TYPE_CHECKING, Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import OpenSearchException

from toolsift.config import Settings
from toolsift.mappings.querylog import query_log_index_body
from toolsift.opensearch import ensure_index

if TYPE_CHECKING:
    from toolsift.search.records import SearchResult

__all__ = ["QueryLog", "log_record"]

_log = logging.getLogger(__name__)


def log_record(result: SearchResult, *, source: str, weights_version: str | None,
               now: dt.datetime | None = None) -> dict[str, Any]:
    """The query log document of one search."""
    answer = result.to_dict()
    return {
        "timestamp": (now or dt.datetime.now(dt.timezone.utc)).isoformat(),
        "request": result.query.text or (result.query.tool_needs[0].user_intent if result.query.tool_needs else ""),
        "level": result.level, "method": result.method, "retriever": result.retriever, "index": result.index,
        "ranker": result.ranker, "reranker": result.reranker, "weights_version": weights_version, "source": source,
        "degraded": result.degraded, "degraded_reason": result.degraded_reason,
        "latency_ms": round(float(result.timings.get("total", 0.0)), 3),
        "tool_ids": [t.doc_id for t in result.tools],
        "top_tool": result.tools[0].doc_id if result.tools else None,
        "agent_ids": [a.agent_id for a in result.agents],
        "answer": answer,
    }


class QueryLog:
    """Writes search records to ``query_log_index``; use :meth:`open`."""

    def __init__(self, client: OpenSearch, index: str, *, source: str, retention_days: int) -> None:
        self.client = client
        self.index = index
        self.source = source
        self.retention_days = retention_days
        self._warned = False

    @classmethod
    def open(cls, client: OpenSearch, settings: Settings, *, source: str) -> QueryLog:
        """The log of ``settings``: its index created when missing, records past retention deleted."""
        log = cls(client, settings.query_log_index, source=source, retention_days=settings.query_log_retention_days)
        try:
            ensure_index(client, log.index, query_log_index_body())
            log.prune()
        except OpenSearchException as exc:
            log._warn(exc)
        return log

    def record(self, result: SearchResult, *, weights_version: str | None = None) -> None:
        """Write one search's record (best effort)."""
        try:
            self.client.index(index=self.index, body=log_record(result, source=self.source,
                                                                weights_version=weights_version))
        except OpenSearchException as exc:
            self._warn(exc)

    def prune(self, now: dt.datetime | None = None) -> int:
        """Delete records older than the retention; returns how many were deleted."""
        cutoff = (now or dt.datetime.now(dt.timezone.utc)) - dt.timedelta(days=self.retention_days)
        answer = self.client.delete_by_query(index=self.index, body={
            "query": {"range": {"timestamp": {"lt": cutoff.isoformat()}}}}, params={"conflicts": "proceed"})
        return int(answer.get("deleted", 0))

    def _warn(self, exc: Exception) -> None:
        if not self._warned:
            _log.warning("query log %r cannot be written (%s); searches go on unlogged", self.index, exc)
            self._warned = True
