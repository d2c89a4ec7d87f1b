"""Record searches in OpenSearch (the ``query_log`` setting) for relevance tuning and dashboards.

A record holds the request, the structured query, every returned tool (or agent) with its
per-field scores, weighted contributions and missing required parameters, the latency, the degraded
flag and reason, the ranker, reranker and weights version, and who searched (``source``). Settings
are never written, so no credential (OpenSearch password or API key, LLM key, ranker token) reaches
the log.

**Answers under a request id.** A front end that answers with a ``request_id`` (the search API and
the MCP server, :class:`~toolsift.api.search_service.ToolSearchService`) runs its search inside
:func:`issuing`: the search's record is stored under that id (``_id``), with the tenant and key it
was answered to and the tools the answer handed over (:meth:`Issuing.answered`), when the block ends
— before the answer leaves. :func:`issued_answer` reads it back with a real-time get (no refresh
needed), which is how feedback is checked (:class:`~toolsift.learning.feedback.FeedbackStore`).

Logging is best effort: a search never fails because its record could not be written (the failure
is logged once as a warning). Retention: records older than ``query_log_retention_days`` are deleted
(``delete_by_query`` on ``timestamp``) when a searcher opens the log; a prune that fails (the index
not readable yet, say) is logged as such and searches are still logged.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError as OpenSearchNotFoundError
from opensearchpy.exceptions import OpenSearchException

from toolsift.access import ALL_TENANTS
from toolsift.config import Settings
from toolsift.learning.querylog_doc import query_log_index_body
from toolsift.opensearch import ensure_index

if TYPE_CHECKING:
    from toolsift.search.request import SearchResult

__all__ = ["QueryLog", "log_record", "Issuing", "issuing", "IssuedAnswer", "issued_answer",
           "logged_requests"]

_log = logging.getLogger(__name__)

#: Fields an index made by an older toolsift lacks; added to its mapping when a log opens it.
_ADDED_FIELDS = ("request_id", "tenant", "key", "answered_ids")
#: How long (seconds) opening a log waits for a just-created index's shard before pruning it.
_READY_S = 30


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


@dataclass
class Issuing:
    """One answer being given under ``request_id`` to ``key`` of ``tenant`` (None: every tenant);
    made by :func:`issuing`."""

    request_id: str
    tenant: str | None
    key: str
    _answered: tuple[str, ...] = field(default=(), init=False)
    _held: list[tuple[QueryLog, dict[str, Any]]] = field(default_factory=list, init=False)

    def answered(self, tool_ids: Sequence[str]) -> None:
        """The tools the answer hands over (best first): the only ones feedback on it may name."""
        self._answered = tuple(tool_ids)

    def _write(self) -> None:
        for n, (log, doc) in enumerate(self._held):
            doc = {**doc, "request_id": self.request_id, "key": self.key,
                   "tenant": ALL_TENANTS if self.tenant is None else self.tenant}
            # the answer's record (its first search) under the request id; a tool set's further searches beside it
            if n == 0:
                log.write({**doc, "answered_ids": list(self._answered)}, doc_id=self.request_id)
            else:
                log.write(doc)
        self._held.clear()


_ISSUING: ContextVar[Issuing | None] = ContextVar("toolsift_query_log_issuing", default=None)


@contextmanager
def issuing(request_id: str, *, tenant: str | None, key: str) -> Iterator[Issuing]:
    """Searches logged inside the block belong to the answer given under ``request_id``.

    Their records are held and written when the block ends (the first under ``request_id``, with the
    tools the block declared through :meth:`Issuing.answered`); with the query log off nothing is
    written. Blocks do not nest.
    """
    issue = Issuing(request_id, tenant, key)
    token = _ISSUING.set(issue)
    try:
        yield issue
    finally:
        _ISSUING.reset(token)
        issue._write()



@dataclass(frozen=True)
class IssuedAnswer:
    """What the query log says about an answer given under a request id."""

    request_id: str
    tenant: str | None
    key: str
    tool_ids: frozenset[str]


def issued_answer(client: OpenSearch, index: str, request_id: str) -> IssuedAnswer | None:
    """The answer given under ``request_id`` as ``index`` recorded it (a real-time get: an answer
    just given is found before any refresh); None when it holds none."""
    try:
        found = client.get(index=index, id=request_id,
                           params={"_source_includes": "request_id,tenant,key,answered_ids"})
    except OpenSearchNotFoundError:  # no such record, or no log index at all
        return None
    doc = found.get("_source") or {}
    if doc.get("request_id") != request_id:  # not an answer's record
        return None
    tenant = doc.get("tenant")
    return IssuedAnswer(request_id, None if tenant == ALL_TENANTS else tenant, str(doc.get("key") or ""),
                        frozenset(str(t) for t in doc.get("answered_ids") or ()))


def logged_requests(client: OpenSearch, settings: Settings, *, tenant: str | None = None,
                    limit: int = 200) -> list[tuple[str, str | None]]:
    """Up to ``limit`` distinct requests answered under a request id (of ``tenant``'s keys when given),
    the latest first, each with the tenant it was answered in (None: every tenant). Empty when the
    log holds none (or there is no log)."""
    filters: list[dict[str, Any]] = [{"exists": {"field": "request_id"}}]
    if tenant is not None:
        filters.append({"term": {"tenant": tenant}})
    try:
        client.indices.refresh(index=settings.query_log_index)
        found = client.search(index=settings.query_log_index, body={
            "size": limit, "query": {"bool": {"filter": filters}}, "sort": [{"timestamp": "desc"}],
            "collapse": {"field": "request.raw"}, "_source": ["request", "tenant"]})
    except OpenSearchNotFoundError:
        return []
    out: list[tuple[str, str | None]] = []
    for hit in found["hits"]["hits"]:
        doc = hit.get("_source") or {}
        text = str(doc.get("request") or "").strip()
        logged = doc.get("tenant")
        if text:
            out.append((text, None if logged in (None, "", ALL_TENANTS) else str(logged)))
    return out


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
        """The log of ``settings``: its index created when missing, records past retention deleted.

        Several processes may open a new log at once (the API, the MCP server and the workbench
        starting together): one creates the index, and each waits for its shard before pruning, so
        none mistakes the index still starting for one that cannot be written.
        """
        log = cls(client, settings.query_log_index, source=source, retention_days=settings.query_log_retention_days)
        body = query_log_index_body()
        try:
            ensure_index(client, log.index, body)
        except OpenSearchException as exc:
            log._warn(exc)
            return log
        try:  # an index made by an older toolsift gets the fields of answers given under a request id
            properties = body["mappings"]["properties"]
            client.indices.put_mapping(index=log.index, body={"properties": {f: properties[f] for f in _ADDED_FIELDS}})
        except OpenSearchException as exc:
            _log.warning("query log %r: the fields of answers given under a request id could not be added to its "
                         "mapping (%s); API and MCP answers may go unlogged, and feedback on them is refused",
                         log.index, exc)
        try:
            # a new index reports yellow while its primary still initialises: wait for that too
            client.cluster.health(index=log.index, params={"wait_for_status": "yellow", "timeout": f"{_READY_S}s",
                                                           "wait_for_no_initializing_shards": "true"},
                                  request_timeout=_READY_S + 10)
            log.prune()
        except OpenSearchException as exc:
            _log.warning("query log %r: the retention prune was skipped (%s); searches are still logged, and "
                         "records older than %d days stay until a log opens it again", log.index, exc,
                         log.retention_days)
        return log

    def record(self, result: SearchResult, *, weights_version: str | None = None, tenant: str | None = None) -> None:
        """Write one search's record (best effort) with the tenant it ran in (None: every tenant, ``*``);
        inside :func:`issuing`, when its block ends, with the tenant of the answer's key."""
        doc = {**log_record(result, source=self.source, weights_version=weights_version),
               "tenant": ALL_TENANTS if tenant is None else tenant}
        issue = _ISSUING.get()
        if issue is not None:
            issue._held.append((self, doc))
            return
        self.write(doc)

    def write(self, doc: dict[str, Any], *, doc_id: str | None = None) -> None:
        """Write one record as it is (best effort: a failure is logged once)."""
        try:
            self.client.index(index=self.index, id=doc_id, body=doc)
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
