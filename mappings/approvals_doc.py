"""The approvals index: the definition of every tool (and agent) an index serves, pinned by hash.

One index per catalog alias, ``<alias>-approvals``, one document per tool or agent id — ids a tenant
catalog's documents have scoped to its tenants (:mod:`toolsift.mappings.scoped`), so a server name two
tenants share is two records, each with the ``tenants`` of its documents. The approved
definition (its hash, source and the whole document as it was indexed) is what search serves; a later
change to it — an edited catalog, another catalog of the same tenants naming the same server — waits here as
``pending`` (with its own hash, source and document) until someone approves it
(:mod:`toolsift.ingest.approvals`). The mapping is derived from :class:`ApprovalDoc`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolsift.mappings.fields import doc_field
from toolsift.mappings.template import side_index_body

__all__ = ["APPROVALS_SCHEMA_VERSION", "ApprovalDoc", "approvals_index", "approvals_index_body"]

#: 2: ``tenants`` (added to an older index's mapping when it opens; older records are read by their documents').
APPROVALS_SCHEMA_VERSION = 2


@dataclass(frozen=True)
class ApprovalDoc:
    """The pinned and the pending definition of one document.

    Args:
        doc_id: the tool's (or agent's) id in the catalog index.
        entity: ``tool`` or ``agent``.
        status: ``approved`` (nothing waits) or ``pending`` (a change waits for approval).
        reason: why the pending definition waits: ``changed`` (its definition differs from the approved
            one), ``source`` (another catalog names the same id), ``new`` (a first sight under the
            ``manual`` policy: nothing is served until it is approved).
        approved_hash, approved_source, approved_at, approved_by: the pinned definition's hash, the
            catalog it came from, when and by whom (``first-sight``, ``ingest --approve``, a key's name).
        approved_doc: the document as indexed at approval (stored, not indexed): what a rebuild writes.
        approved_definition: the definition an agent receives, as pretty JSON (for diffs).
        pending_*: the same for the change that waits, and ``pending_risk`` the screen's reasons for it.
        rejected_hash: a pending definition someone rejected: not queued again when it comes back.
        tenants: the tenants of its documents (empty: public; a record written before it was recorded has
            none, and is read by the tenants of its stored documents).
    """

    doc_id: str = doc_field("keyword", default="")
    entity: str = doc_field("keyword", default="tool")
    agent_id: str | None = doc_field("keyword", default=None)
    status: str = doc_field("keyword", default="approved")
    reason: str = doc_field("keyword", default="")
    approved_hash: str = doc_field("keyword", default="")
    approved_source: str = doc_field("keyword", default="")
    approved_at: str | None = doc_field("date", default=None)
    approved_by: str = doc_field("keyword", default="")
    approved_doc: dict[str, Any] = doc_field("stored", factory=dict)
    approved_definition: str = doc_field("stored", default="")
    pending_hash: str = doc_field("keyword", default="")
    pending_source: str = doc_field("keyword", default="")
    pending_since: str | None = doc_field("date", default=None)
    pending_doc: dict[str, Any] = doc_field("stored", factory=dict)
    pending_definition: str = doc_field("stored", default="")
    pending_risk: tuple[str, ...] = doc_field("keyword", factory=tuple)
    rejected_hash: str = doc_field("keyword", default="")
    tenants: tuple[str, ...] = doc_field("keyword", factory=tuple)


def approvals_index(catalog_alias: str) -> str:
    """The approvals index that belongs to a catalog alias."""
    return f"{catalog_alias}-approvals"


def approvals_index_body() -> dict[str, Any]:
    """Settings and mappings of the approvals index."""
    return side_index_body(ApprovalDoc, schema="approvals", schema_version=APPROVALS_SCHEMA_VERSION)
