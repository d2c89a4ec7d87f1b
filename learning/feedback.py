"""Agents' feedback on returned tools: which ones they called and whether the calls succeeded.

:class:`FeedbackStore` writes :class:`~toolsift.learning.feedback_doc.FeedbackDoc` records to
``feedback_index``, one per reported tool, keyed by the search's ``request_id``. Learning from them
comes later; here they are only kept, with who sent them.

Feedback is about to become training data, so it is accepted only about an answer toolsift really
gave, to the key that reports on it, and only on the tools that answer held: the query log records
each answer under its request id (:func:`toolsift.learning.querylog.issuing`) and :meth:`FeedbackStore.check`
reads it back. An unknown request id and another key's (another tenant's too) get the same answer
(:class:`UnknownRequestError`, 404), so request ids of others are not confirmed; a tool the answer
did not hold is a :class:`NotAnsweredError` (400) naming ``calls.N.tool_id``. With the query log off
(the ``query_log`` setting) no answer is recorded and none can be checked: feedback is refused
(:class:`FeedbackOffError`, 403) rather than stored unchecked; an answer older than the log's
retention (``query_log_retention_days``) is pruned, and feedback on it is refused like an unknown one.

**Once.** A report is stored under an id derived from who sent it and what it says (tenant, key,
request id, tool, called, success: :func:`feedback_id`), created only when absent: the same report sent
again is answered as ``already_recorded`` and not stored a second time, so a key repeating itself adds
nothing. A different outcome for the same tool is a report of its own (the latest one counts when
learning: :func:`load_feedback` returns events in arrival order).

A report is stored (in the translog) when the answer leaves, but not refreshed into search: waiting for
a refresh would hold every agent's feedback call up to the index's refresh interval (1 s). Readers that
must see every accepted report (:func:`load_feedback`, the A/B report) call :func:`refresh_feedback`
first.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError as OpenSearchNotFoundError
from opensearchpy.helpers import bulk, scan

from toolsift.access import ALL_TENANTS, Principal
from toolsift.config import Settings
from toolsift.errors import BadQueryError, ForbiddenError, IndexingError, NotFoundError
from toolsift.learning.feedback_doc import FeedbackDoc, feedback_index_body
from toolsift.learning.feedback_pairs import FeedbackEvent, LoggedAnswer
from toolsift.opensearch import ensure_index
from toolsift.learning.querylog import issued_answer

__all__ = ["ToolOutcome", "FeedbackStore", "Recorded", "refresh_feedback", "MAX_OUTCOMES", "UnknownRequestError",
           "NotAnsweredError", "FeedbackOffError", "load_feedback", "feedback_id"]

#: Most tools one feedback may report on.
MAX_OUTCOMES = 1000


class UnknownRequestError(NotFoundError):
    """A request id this service never answered this key under (never issued, or issued to another
    key or tenant: the same answer)."""

    field = "request_id"


class NotAnsweredError(BadQueryError):
    """Feedback on a tool the answer did not hold (``field``: ``calls.N.tool_id``), or a request id
    that is not one at all (``field``: ``request_id``)."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


class FeedbackOffError(ForbiddenError):
    """Feedback sent to a service that keeps no query log, so it cannot check the request id."""

    field = "request_id"


@dataclass(frozen=True)
class ToolOutcome:
    """What the agent did with one returned tool."""

    tool_id: str
    called: bool
    success: bool | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if not self.tool_id.strip():
            raise BadQueryError("calls[].tool_id is empty")
        if not self.called and self.success is not None:
            raise BadQueryError(f"calls[].success: tool {self.tool_id!r} was not called, so it cannot have succeeded or failed")


def feedback_id(who: Principal, request_id: str, outcome: ToolOutcome) -> str:
    """The document id of one report: the same for the same key, request, tool and outcome (the note aside)."""
    parts = (who.tenant or "", who.name, request_id, outcome.tool_id, str(outcome.called), str(outcome.success))
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


@dataclass(frozen=True)
class Recorded:
    """What :meth:`FeedbackStore.record` did with a report's outcomes."""

    stored: int
    already_recorded: int


class FeedbackStore:
    """Checks feedback against the query log and writes it to the ``feedback_index`` setting's index
    (created on first use), each report once."""

    def __init__(self, client: OpenSearch, settings: Settings) -> None:
        self.client = client
        self.index = settings.feedback_index
        self.query_log = settings.query_log_index if settings.query_log else None
        self._ready = False

    @property
    def checks(self) -> bool:
        """Whether feedback can be checked, and so accepted: the query log is on."""
        return self.query_log is not None

    def check(self, request_id: str, outcomes: Sequence[ToolOutcome], who: Principal) -> None:
        """Whether ``who`` may report ``outcomes`` on the answer ``request_id``.

        Raises:
            BadQueryError: no outcome, too many, or a tool reported twice.
            FeedbackOffError: the query log is off, so no answer can be checked.
            UnknownRequestError: no answer was given to ``who``'s key under ``request_id``.
            NotAnsweredError: a reported tool was not in that answer, or a malformed request id.
        """
        if not outcomes:
            raise BadQueryError("calls: report at least one tool")
        if len(outcomes) > MAX_OUTCOMES:
            raise BadQueryError(f"calls: at most {MAX_OUTCOMES} tools, got {len(outcomes)}")
        ids = [o.tool_id for o in outcomes]
        if len(set(ids)) != len(ids):
            raise BadQueryError("calls: a tool is reported twice")
        try:
            uuid.UUID(hex=request_id)
        except ValueError:
            raise NotAnsweredError("request_id: not a request id this service returns (32 hex digits)",
                                   "request_id") from None
        if self.query_log is None:
            raise FeedbackOffError(
                "request_id: feedback is not accepted here: this service keeps no query log (query_log = false), "
                "so it cannot check that the request id names an answer it gave you; set query_log = true")
        answer = issued_answer(self.client, self.query_log, request_id)
        if answer is None or answer.tenant != who.tenant or answer.key != who.name:
            raise UnknownRequestError("request_id: unknown request_id (not an answer this service gave to this key)")
        for n, outcome in enumerate(outcomes):
            if outcome.tool_id not in answer.tool_ids:
                raise NotAnsweredError(f"calls.{n}.tool_id: tool {outcome.tool_id!r} was not in the answer of this "
                                       "request_id", f"calls.{n}.tool_id")

    def record(self, request_id: str, outcomes: Sequence[ToolOutcome], who: Principal) -> Recorded:
        """Check (:meth:`check`) and store one answer's outcomes, each only if the same report is not
        stored already; says how many were written and how many were there before.

        Raises:
            BadQueryError, FeedbackOffError, UnknownRequestError, NotAnsweredError: see :meth:`check`.
            IndexingError: OpenSearch refused some of them (none is half-written: each is one document).
        """
        self.check(request_id, outcomes, who)
        if not self._ready:
            ensure_index(self.client, self.index, feedback_index_body())
            self._ready = True
        now = dt.datetime.now(dt.timezone.utc).isoformat()
        docs = [FeedbackDoc(timestamp=now, request_id=request_id, tool_id=o.tool_id, called=o.called,
                            success=o.success, tenant=who.tenant or "", key=who.name, note=o.note[:2000])
                for o in outcomes]
        actions = ({"_op_type": "create", "_index": self.index, "_id": feedback_id(who, request_id, o),
                    "_source": asdict(d)} for o, d in zip(outcomes, docs, strict=True))
        written, errors = bulk(self.client, actions, raise_on_error=False)
        failed = [e for e in errors if (e.get("create") or {}).get("status") != 409]  # 409: stored before
        if failed:
            raise IndexingError(f"feedback: {len(failed)} of {len(docs)} record(s) were not stored", list(failed))
        return Recorded(int(written), len(errors))


def refresh_feedback(client: OpenSearch, index: str) -> None:
    """Make every report stored so far searchable (a missing index is nothing to refresh)."""
    client.indices.refresh(index=index, ignore_unavailable=True)


def _tenant(value: object) -> str | None:
    return None if value in (None, "", ALL_TENANTS) else str(value)


def load_feedback(client: OpenSearch, settings: Settings, *, tenant: str | None = None
                  ) -> tuple[dict[str, LoggedAnswer], list[FeedbackEvent]]:
    """Every feedback event (of ``tenant``'s keys when given) and the logged answers they are about.

    Reads ``feedback_index`` and, for the request ids it names, ``query_log_index`` (answers only: a
    tool set's further searches have no request id). Missing indices read as empty.
    """
    query: dict[str, object] = {"match_all": {}}
    if tenant is not None:
        query = {"term": {"tenant": tenant}}
    arrived: list[tuple[str, FeedbackEvent]] = []
    try:
        refresh_feedback(client, settings.feedback_index)
        for hit in scan(client, index=settings.feedback_index, query={"query": query}, size=1000):
            doc = hit.get("_source") or {}
            arrived.append((str(doc.get("timestamp") or ""), FeedbackEvent(
                str(doc.get("request_id", "")), str(doc.get("tool_id", "")), bool(doc.get("called")),
                doc.get("success"), _tenant(doc.get("tenant")), str(doc.get("key", "")))))
    except OpenSearchNotFoundError:
        return {}, []
    events = [event for _, event in sorted(arrived, key=lambda te: te[0])]  # arrival order: the latest report wins
    wanted = sorted({e.request_id for e in events})
    answers: dict[str, LoggedAnswer] = {}
    for start in range(0, len(wanted), 1000):
        try:
            found = client.mget(index=settings.query_log_index, body={"ids": wanted[start:start + 1000]},
                                params={"_source_includes": "request_id,request,tenant,key,answered_ids"})
        except OpenSearchNotFoundError:
            break
        for doc in found.get("docs", []):
            source = doc.get("_source") or {}
            if not doc.get("found") or source.get("request_id") != doc.get("_id"):
                continue
            answers[doc["_id"]] = LoggedAnswer(doc["_id"], str(source.get("request") or ""),
                                               _tenant(source.get("tenant")), str(source.get("key") or ""),
                                               tuple(str(t) for t in source.get("answered_ids") or ()))
    return answers, events
