"""Tenant-scoped document ids: a name two tenants share is two documents.

A catalog ingested for tenants (``toolsift ingest --tenant``, the ``source_tenants`` setting, an MCP
source's ``tenants``) gets ids of its own: ``@<scope>/`` before each tool id and after an agent id's
``agent:``, the scope being its tenants sorted and joined with ``+``
(``@beta/zorblax-payroll-2/run_payroll``, ``agent:@beta/zorblax-payroll-2``, ``@acme+beta/…``). A public
catalog's ids stay as the catalog gives them. Every store keyed by a document id — the catalog
index, the approvals (pins and pending changes), the versions of live sources, judgments, feedback —
is therefore keyed by tenant too: two tenants that ingest a server of the same name hold two
documents with two pins, and neither ingest ever meets, holds or overwrites the other's. Within one
scope nothing changes: a second catalog of the same tenants naming the same server is the same
document, and its change waits for approval as before.

An id a catalog gives may not start with ``@`` (an agent id: ``agent:@``): that prefix is toolsift's,
so no catalog can name another scope's document.

Documents written before ids were scoped (a tenant catalog's plain ids in an existing index) are read
as the tenants they list (the ``tenants`` field every query filters on) and keep serving until their
catalog is ingested again, which writes the scoped ids and deletes them; their approval records move
to the scoped ids with their pins (:meth:`toolsift.ingest.approvals.ApprovalStore.plan`). Ingest scopes the ids
(:func:`toolsift.ingest.pipeline.normalised_records`); the query layer reads them (a server filter by
name, :class:`toolsift.query.scope.Scope`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from toolsift.mappings.model import AgentDoc, ToolDoc

__all__ = [
    "AGENT_ID_PREFIX",
    "SCOPE_MARK",
    "scope_label",
    "scoped_id",
    "plain_id",
    "id_scope",
    "is_scoped",
    "reserved",
    "scoped_doc",
    "scoped_source",
    "same_scope",
]

#: What starts an agent's id (:data:`toolsift.ingest.raw_records.AGENT_ID_PREFIX`, which ingest defines for loaders).
AGENT_ID_PREFIX = "agent:"
#: What starts a scoped id (after ``agent:`` for an agent); a catalog's own ids may not start with it.
SCOPE_MARK = "@"



def scope_label(tenants: Iterable[str]) -> str:
    """The scope of ``tenants``: sorted, joined with ``+`` (empty: public)."""
    return "+".join(sorted(set(tenants)))


def _split(doc_id: str) -> tuple[str, str]:
    """(``agent:`` or ``""``, the rest)."""
    if doc_id.startswith(AGENT_ID_PREFIX):
        return AGENT_ID_PREFIX, doc_id[len(AGENT_ID_PREFIX):]
    return "", doc_id


def reserved(doc_id: str) -> bool:
    """Whether a catalog's id uses the scope mark (``@…``, ``agent:@…``), which only toolsift may write."""
    return _split(doc_id)[1].startswith(SCOPE_MARK)


def is_scoped(doc_id: str) -> bool:
    """Whether ``doc_id`` is a scoped id (``@scope/…`` or ``agent:@scope/…``)."""
    rest = _split(doc_id)[1]
    return rest.startswith(SCOPE_MARK) and "/" in rest


def id_scope(doc_id: str) -> tuple[str, ...]:
    """The tenants a scoped id belongs to (empty: a plain id)."""
    if not is_scoped(doc_id):
        return ()
    label = _split(doc_id)[1][len(SCOPE_MARK):].split("/", 1)[0]
    return tuple(t for t in label.split("+") if t)


def plain_id(doc_id: str) -> str:
    """The id as the catalog gave it (a plain id unchanged)."""
    if not is_scoped(doc_id):
        return doc_id
    prefix, rest = _split(doc_id)
    return prefix + rest.split("/", 1)[1]


def scoped_id(doc_id: str, tenants: Iterable[str]) -> str:
    """``doc_id`` as the document of ``tenants`` (public: unchanged); an id scoped already is read plain first."""
    label = scope_label(tenants)
    plain = plain_id(doc_id)
    if not label:
        return plain
    prefix, rest = _split(plain)
    return f"{prefix}{SCOPE_MARK}{label}/{rest}"


def same_scope(tenants: Iterable[str] | None, scope: Iterable[str]) -> bool:
    """Whether a document listing ``tenants`` belongs to ``scope`` (the same set; None and empty: public)."""
    return set(tenants or ()) == set(scope)


def scoped_doc(doc: ToolDoc | AgentDoc, tenants: Iterable[str]) -> ToolDoc | AgentDoc:
    """``doc`` as the document of ``tenants``: its ids (its own, its owner's, its prerequisites') scoped
    and its ``tenants`` set (public: the ids as given, no tenants)."""
    scope = tuple(dict.fromkeys(tenants))
    if isinstance(doc, AgentDoc):
        return replace(doc, agent_id=scoped_id(doc.agent_id, scope), tenants=scope)
    return replace(doc, tool_id=scoped_id(doc.tool_id, scope),
                   agent_id=scoped_id(doc.agent_id, scope) if doc.agent_id else doc.agent_id,
                   prerequisites=tuple(scoped_id(p, scope) for p in doc.prerequisites), tenants=scope)


def scoped_source(source: Mapping[str, Any], tenants: Iterable[str]) -> dict[str, Any]:
    """A stored document (``asdict`` of a :class:`ToolDoc` or :class:`AgentDoc`) with its ids scoped to
    ``tenants`` (an approval record's pinned document, moved to its scoped id)."""
    out = dict(source)
    for key in ("tool_id", "agent_id"):
        if isinstance(out.get(key), str):
            out[key] = scoped_id(out[key], tenants)
    if isinstance(out.get("prerequisites"), (list, tuple)):
        out["prerequisites"] = [scoped_id(str(p), tenants) for p in out["prerequisites"]]
    return out
