"""The feedback index: what an agent did with the tools a search returned (``POST /v1/feedback``).

One document per reported tool: the search's ``request_id``, the tool, whether the agent called it
and whether the call succeeded, with the caller's tenant and key name. Stored for learning from
usage later; nothing reads it at search time. The mapping is derived from :class:`FeedbackDoc`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolsift.mappings.fields import doc_field
from toolsift.mappings.template import side_index_body

__all__ = ["FEEDBACK_SCHEMA_VERSION", "FeedbackDoc", "feedback_index_body"]

FEEDBACK_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class FeedbackDoc:
    """One tool's outcome in one search's answer.

    Args:
        timestamp: when the feedback arrived (ISO 8601, UTC).
        request_id: the search answer's ``request_id``.
        tool_id: the tool reported on.
        called: whether the agent called it.
        success: whether the call succeeded (None: not called, or not known).
        tenant, key: who reported it (``tenant`` empty: an all-tenant caller).
        note: free text from the agent, stored, not indexed.
    """

    timestamp: str = doc_field("date", default="")
    request_id: str = doc_field("keyword", default="")
    tool_id: str = doc_field("keyword", default="")
    called: bool = doc_field("boolean", default=False)
    success: bool | None = doc_field("boolean")
    tenant: str = doc_field("keyword", default="")
    key: str = doc_field("keyword", default="")
    note: str = doc_field("stored", default="")


def feedback_index_body() -> dict[str, Any]:
    """Settings and mappings of the feedback index."""
    return side_index_body(FeedbackDoc, schema="feedback", schema_version=FEEDBACK_SCHEMA_VERSION)
