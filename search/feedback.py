"""Agents' feedback on returned tools: which ones they called and whether the calls succeeded.

:class:`FeedbackStore` writes :class:`~toolsift.mappings.feedback.FeedbackDoc` records to
``feedback_index``, one per reported tool, keyed by the search's ``request_id``. Learning from them
comes later; here they are only kept, with who sent them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from opensearchpy import OpenSearch
from opensearchpy.helpers import bulk

from toolsift.access import Principal
from toolsift.config import Settings
from toolsift.errors import BadQueryError, IndexingError
from toolsift.mappings.feedback import FeedbackDoc, feedback_index_body
from toolsift.opensearch import ensure_index

__all__ = ["ToolOutcome", "FeedbackStore", "MAX_OUTCOMES"]

#: Most tools one feedback may report on.
MAX_OUTCOMES = 1000


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


class FeedbackStore:
    """Writes feedback to the ``feedback_index`` setting's index (created on first use)."""

    def __init__(self, client: OpenSearch, settings: Settings) -> None:
        self.client = client
        self.index = settings.feedback_index
        self._ready = False

    def record(self, request_id: str, outcomes: Sequence[ToolOutcome], who: Principal) -> int:
        """Store one search's outcomes; returns how many were written.

        Raises:
            BadQueryError: no outcome, too many, or a tool reported twice.
            IndexingError: OpenSearch refused some of them (none is half-written: each is one document).
        """
        if not outcomes:
            raise BadQueryError("calls: report at least one tool")
        if len(outcomes) > MAX_OUTCOMES:
            raise BadQueryError(f"calls: at most {MAX_OUTCOMES} tools, got {len(outcomes)}")
        ids = [o.tool_id for o in outcomes]
        if len(set(ids)) != len(ids):
            raise BadQueryError("calls: a tool is reported twice")
        if not self._ready:
            ensure_index(self.client, self.index, feedback_index_body())
            self._ready = True
        now = dt.datetime.now(dt.timezone.utc).isoformat()
        docs = [FeedbackDoc(timestamp=now, request_id=request_id, tool_id=o.tool_id, called=o.called,
                            success=o.success, tenant=who.tenant or "", key=who.name, note=o.note[:2000])
                for o in outcomes]
        written, errors = bulk(self.client, ({"_index": self.index, "_source": asdict(d)} for d in docs),
                               raise_on_error=False, refresh="wait_for")
        if errors:
            raise IndexingError(f"feedback: {len(errors)} of {len(docs)} record(s) were not stored", list(errors))
        return int(written)
