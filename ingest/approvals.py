"""Rug-pull defence: a tool's definition is pinned by hash when approved; a later change waits.

A tool an agent was given yesterday can be rewritten today (a "rug pull"): the catalog file is edited,
a live server changes its ``tools/list``, or a second catalog names the same server and replaces its
tools. Every document an ingest writes is checked against its pinned definition in the approvals
index (``<alias>-approvals``, :mod:`toolsift.mappings.approvals_doc`):

* **first sight** — the policy of its source decides: ``first-sight`` approves and pins it now;
  ``manual`` holds it (nothing is served until someone approves it).
* **unchanged** — the definition hash and the source equal the pinned ones: written as usual.
* **changed** — another definition, or another source (a collision: a second catalog of the same
  tenants naming the same server): the change waits as ``pending``, and search keeps serving the **pinned version** (the
  document as it was approved; a rebuild writes that one). Serving the pinned version rather than
  nothing keeps an agent's working tool working while a person reviews the change; the changed text
  reaches no agent until approved. ``toolsift ingest --approve`` approves every change of the run
  (the catalog's own author editing it).

The definition hash covers what an agent receives and what the search matches: the name, description,
parameters, response and the raw documentation (so the input schema), and the owning agent (as the
catalog names it); not what toolsift computes (tenants, scoped ids, risk, prerequisites).
``toolsift approvals list | show | approve | reject`` and the workbench's review queue act on the
pending changes; approving indexes the pending document and pins it.

**Tenants.** Records are keyed by document id, and a tenant catalog's ids are scoped to its tenants
(:mod:`toolsift.mappings.scoped`): a server name that two tenants share is two records, and one tenant's
ingest never meets another's pin. A record carries its documents' ``tenants``; the review queue a
caller sees (:meth:`ApprovalStore.pending` with its tenant) holds only records whose every stored
definition — the pinned one and the one waiting — it may see. A record written under a plain id before
ids were scoped moves to the scoped id, pin kept, when its catalog is ingested again (only when the
definition it pins is of that catalog's tenants; a change another tenant's catalog left waiting on it
is dropped, as that catalog's server is now a document of its own).
"""

from __future__ import annotations

import datetime as dt
import difflib
import fnmatch
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.helpers import bulk

from toolsift.config import ApprovalPolicy, Settings
from toolsift.errors import IndexingError, NotFoundError
from toolsift.mappings import AgentDoc, ParameterDoc, ToolDoc
from toolsift.mappings.scoped import is_scoped, plain_id, same_scope, scoped_source
from toolsift.mappings.approvals_doc import ApprovalDoc, approvals_index, approvals_index_body
from toolsift.opensearch import BulkRetry, ensure_index
from toolsift.query.scope import tenant_clause

__all__ = [
    "ApprovalPolicy",
    "Held",
    "Plan",
    "ApprovalStore",
    "policy_for",
    "definition_of",
    "definition_hash",
    "doc_from_dict",
    "definition_diff",
    "approve_pending",
    "visible_to",
]

Doc = ToolDoc | AgentDoc

_MAX_IDS = 1000


def policy_for(path: Path, settings: Settings) -> ApprovalPolicy:
    """The approval policy of a catalog file: the first ``approval_policy`` pattern matching its path
    or name, else ``default_approval``."""
    for pattern, policy in settings.approval_policy.items():
        if fnmatch.fnmatch(str(path), pattern) or fnmatch.fnmatch(path.name, pattern):
            return policy
    return settings.default_approval


def definition_of(doc: Doc) -> dict[str, Any]:
    """What an agent receives of a document, and what the search matches: the part a change to is a change."""
    if isinstance(doc, AgentDoc):
        return {"entity": "agent", "name": doc.name, "description": doc.description, "raw": doc.raw}
    return {  # the owner as the catalog names it: the same definition under any tenants
        "entity": "tool", "name": doc.name, "agent_id": plain_id(doc.agent_id) if doc.agent_id else None,
        "description": doc.description,
        "parameters": [asdict(p) for p in doc.parameters], "response": doc.response, "raw": doc.raw,
    }


def definition_hash(doc: Doc) -> str:
    """SHA-256 of :func:`definition_of`."""
    return hashlib.sha256(json.dumps(definition_of(doc), sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def _pretty(doc: Doc) -> str:
    return json.dumps(definition_of(doc), indent=2, ensure_ascii=True, default=str, sort_keys=True)


def definition_diff(record: ApprovalDoc) -> list[str]:
    """The unified diff from the pinned definition to the pending one (escaped JSON: hidden characters show)."""
    return list(difflib.unified_diff(record.approved_definition.splitlines(), record.pending_definition.splitlines(),
                                     "approved", "pending", lineterm="", n=2))


def doc_from_dict(data: Mapping[str, Any]) -> Doc:
    """A stored document (``asdict`` of a :class:`ToolDoc` or :class:`AgentDoc`) as the record again."""
    values = dict(data)
    if "tool_id" not in values:
        for key in ("tags", "tenants"):
            values[key] = tuple(values.get(key) or ())
        return AgentDoc(**values)
    values["parameters"] = tuple(ParameterDoc(**p) for p in values.get("parameters") or ())
    for key in ("examples", "tags", "tenants", "derived", "prerequisites", "schema_notes", "risk_reasons"):
        values[key] = tuple(values.get(key) or ())
    return ToolDoc(**values)


@dataclass(frozen=True)
class Held:
    """A document whose new version waits for approval; ``served`` is what search keeps serving."""

    doc_id: str
    reason: str
    source: str
    approved_source: str
    served: Doc | None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.doc_id, "reason": self.reason, "source": self.source,
                "approved_source": self.approved_source or None, "serving": "pinned" if self.served else "nothing"}


@dataclass
class Plan:
    """What an ingest does about approvals: records to write, documents held, and what those serve.

    ``held`` are the changes waiting for approval (what ``toolsift approvals list`` shows); ``refused``
    the versions someone rejected before, which are not queued again. Both keep serving the pinned
    version (or nothing).
    """

    records: list[ApprovalDoc]
    held: dict[str, Held]
    approved: int = 0
    refused: dict[str, Held] = field(default_factory=dict)
    #: scoped id → the plain id its record was stored under before ids were scoped (deleted once moved).
    moved: dict[str, str] = field(default_factory=dict)

    @property
    def withheld(self) -> dict[str, Held]:
        """Every document whose catalog version is not written: held and refused."""
        return {**self.held, **self.refused}


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat()


def _id(doc: Doc) -> str:
    return doc.agent_id if isinstance(doc, AgentDoc) else doc.tool_id


def _stored_tenants(record: ApprovalDoc) -> list[tuple[str, ...]]:
    """The tenants of each document a record stores (pinned, waiting); its ``tenants`` when it stores none."""
    stored = [tuple(d.get("tenants") or ()) for d in (record.approved_doc, record.pending_doc) if d]
    return stored or [record.tenants]


def visible_to(record: ApprovalDoc, tenant: str | None) -> bool:
    """Whether a caller of ``tenant`` (None: every tenant) may see ``record``: every definition it stores
    is public or of that tenant (a record from before ids were scoped may pin one tenant's definition and
    hold another's)."""
    if tenant is None:
        return True
    return all(not owners or tenant in owners for owners in [record.tenants, *_stored_tenants(record)])


def _moved(record: ApprovalDoc, doc_id: str, tenants: tuple[str, ...]) -> ApprovalDoc | None:
    """A record stored under a plain id before ids were scoped, as the record of the scoped ``doc_id`` of
    ``tenants``: when the definition it pins (or, pinning none, the one it holds) is of those tenants.
    A change it holds from other tenants is dropped (that catalog's server is a document of its own now)."""
    owner = record.approved_doc if record.approved_hash else record.pending_doc
    if not owner or not same_scope(owner.get("tenants"), tenants):
        return None
    moved = replace(record, doc_id=doc_id, tenants=tenants,
                    approved_doc=scoped_source(record.approved_doc, tenants) if record.approved_doc else {})
    if record.pending_doc and same_scope(record.pending_doc.get("tenants"), tenants):
        return replace(moved, pending_doc=scoped_source(record.pending_doc, tenants))
    return replace(moved, status="approved" if record.approved_hash else record.status, reason="", pending_hash="",
                   pending_source="", pending_since=None, pending_doc={}, pending_definition="", pending_risk=())


class ApprovalStore:
    """The approvals index of one catalog alias."""

    def __init__(self, client: OpenSearch, catalog_alias: str) -> None:
        self.client = client
        self.index = approvals_index(catalog_alias)

    def exists(self) -> bool:
        return bool(self.client.indices.exists(index=self.index))

    def get(self, ids: Sequence[str]) -> dict[str, ApprovalDoc]:
        """The records of ``ids`` that exist."""
        if not ids or not self.exists():
            return {}
        found: dict[str, ApprovalDoc] = {}
        for start in range(0, len(ids), _MAX_IDS):
            chunk = list(ids[start : start + _MAX_IDS])
            answer = self.client.mget(index=self.index, body={"ids": chunk})
            for hit in answer["docs"]:
                if hit.get("found"):
                    found[hit["_id"]] = _record(hit["_source"])
        return found

    def pending(self, tenant: str | None = None) -> list[ApprovalDoc]:
        """The changes waiting for approval that a caller of ``tenant`` may see (None: every one), oldest
        first: records of its tenant and public ones, in the query; then only those whose every stored
        definition it may see (:func:`visible_to`)."""
        if not self.exists():
            return []
        scope = [tenant_clause(tenant)] if tenant is not None else []
        answer = self.client.search(index=self.index, body={
            "size": 1000, "query": {"bool": {"filter": [{"term": {"status": "pending"}}, *scope]}},
            "sort": [{"pending_since": "asc"}, {"doc_id": "asc"}]})
        records = [_record(hit["_source"]) for hit in answer["hits"]["hits"]]
        return [r for r in records if visible_to(r, tenant)]

    def plan(self, docs: Iterable[Doc], *, policy: ApprovalPolicy, approve: bool, by: str) -> Plan:
        """Decide, for every document of an ingest, whether it is written, pinned or held.

        Args:
            docs: the documents as this ingest would write them.
            policy: the catalog's policy (``off``: nothing is pinned or held).
            approve: approve every change and first sight of this ingest (``ingest --approve``).
            by: who approves in this run (recorded).
        """
        docs = list(docs)
        if policy == "off":
            return Plan([], {})
        existing = self.get([_id(d) for d in docs])
        moved: dict[str, ApprovalDoc] = {}
        plain = {_id(d): plain_id(_id(d)) for d in docs if is_scoped(_id(d)) and _id(d) not in existing}
        before = self.get(sorted(set(plain.values())))
        for doc in docs:
            old = before.get(plain.get(_id(doc), ""))
            record = _moved(old, _id(doc), doc.tenants) if old is not None else None
            if record is not None:
                existing[_id(doc)] = moved[_id(doc)] = record
        now = _now()
        records: list[ApprovalDoc] = []
        held: dict[str, Held] = {}
        refused: dict[str, Held] = {}
        approved = 0
        for doc in docs:
            doc_id, digest, source = _id(doc), definition_hash(doc), doc.source
            entity = "agent" if isinstance(doc, AgentDoc) else "tool"
            risk = doc.risk_reasons if isinstance(doc, ToolDoc) else ()
            record = existing.get(doc_id)
            tenants = doc.tenants
            pinned = record is not None and bool(record.approved_hash)
            if pinned and record is not None and record.approved_hash == digest and record.approved_source == source:
                if record.status == "pending":  # the change was reverted: nothing waits any more
                    records.append(replace(record, status="approved", reason="", pending_hash="", pending_source="",
                                           pending_since=None, pending_doc={}, pending_definition="", pending_risk=()))
                continue
            approve_now = approve or (not pinned and policy == "first-sight")
            if approve_now:
                approved += 1
                records.append(ApprovalDoc(
                    doc_id=doc_id, entity=entity, agent_id=doc.agent_id, status="approved", approved_hash=digest,
                    approved_source=source, approved_at=now, approved_by=by, approved_doc=asdict(doc),
                    approved_definition=_pretty(doc), tenants=tenants))
                continue
            reason = "new" if not pinned else ("source" if record is not None and record.approved_source != source
                                               else "changed")
            served = doc_from_dict(record.approved_doc) if pinned and record is not None else None
            withheld = Held(doc_id, reason, source, record.approved_source if record else "", served)
            if record is not None and record.pending_source in ("", source):
                if digest == record.pending_hash:  # already waiting
                    held[doc_id] = withheld
                    continue
                if digest == record.rejected_hash:  # rejected before: not queued again, not listed
                    refused[doc_id] = withheld
                    continue
            held[doc_id] = withheld
            base = record or ApprovalDoc(doc_id=doc_id, entity=entity, agent_id=doc.agent_id)
            records.append(replace(base, status="pending", reason=reason, pending_hash=digest, pending_source=source,
                                   pending_since=now, pending_doc=asdict(doc), pending_definition=_pretty(doc),
                                   pending_risk=tuple(risk), tenants=tenants))
        written = {r.doc_id for r in records}
        records += [r for doc_id, r in moved.items() if doc_id not in written]  # moved as they were
        return Plan(records, held, approved, refused, {doc_id: plain[doc_id] for doc_id in moved})

    def write(self, records: Sequence[ApprovalDoc], *, retired: Sequence[str] = ()) -> None:
        """Store records (each one document, so none is half-written), then delete the records of
        ``retired`` ids (plain ids whose records moved to scoped ones, :attr:`Plan.moved`).

        Raises:
            IndexingError: OpenSearch refused some of them.
        """
        if not records:
            return
        ensure_index(self.client, self.index, approvals_index_body(), added_fields=("tenants",))
        _, errors = bulk(self.client, ({"_index": self.index, "_id": r.doc_id, "_source": asdict(r)} for r in records),
                         raise_on_error=False, refresh="wait_for", **BulkRetry().kwargs())
        if errors:
            raise IndexingError(f"approvals: {len(errors)} of {len(records)} record(s) were not stored", list(errors))
        stored = {r.doc_id for r in records}
        gone = [doc_id for doc_id in dict.fromkeys(retired) if doc_id not in stored]
        if gone:
            bulk(self.client, ({"_op_type": "delete", "_index": self.index, "_id": doc_id} for doc_id in gone),
                 raise_on_error=False, refresh="wait_for", **BulkRetry().kwargs())

    def one(self, doc_id: str) -> ApprovalDoc:
        """The record of ``doc_id``.

        Raises:
            NotFoundError: no record.
        """
        found = self.get([doc_id]).get(doc_id)
        if found is None:
            raise NotFoundError(f"no approval record for {doc_id!r} in {self.index}")
        return found

    def approve(self, doc_id: str, by: str) -> tuple[ApprovalDoc, Doc]:
        """Pin the pending definition of ``doc_id``; returns the new record and the document to index.

        Raises:
            NotFoundError: no record, or nothing pending for it.
        """
        record = self.one(doc_id)
        if record.status != "pending" or not record.pending_doc:
            raise NotFoundError(f"nothing is pending for {doc_id!r}")
        doc = doc_from_dict(record.pending_doc)
        approved = replace(record, status="approved", reason="", approved_hash=record.pending_hash,
                           approved_source=record.pending_source, approved_at=_now(), approved_by=by,
                           approved_doc=record.pending_doc, approved_definition=record.pending_definition,
                           pending_hash="", pending_source="", pending_since=None, pending_doc={},
                           pending_definition="", pending_risk=())
        return approved, doc

    def reject(self, doc_id: str, by: str) -> ApprovalDoc:
        """Drop the pending definition of ``doc_id`` (the pinned one stays); it is not queued again.

        Raises:
            NotFoundError: no record, or nothing pending for it.
        """
        record = self.one(doc_id)
        if record.status != "pending":
            raise NotFoundError(f"nothing is pending for {doc_id!r}")
        rejected = replace(record, status="approved" if record.approved_hash else "rejected", reason="",
                           rejected_hash=record.pending_hash, pending_hash="", pending_source="",
                           pending_since=None, pending_doc={}, pending_definition="", pending_risk=(),
                           approved_by=record.approved_by or by)
        return rejected


def _record(source: Mapping[str, Any]) -> ApprovalDoc:
    values = dict(source)
    values["pending_risk"] = tuple(values.get("pending_risk") or ())
    values["tenants"] = tuple(values.get("tenants") or ())
    known = set(ApprovalDoc.__dataclass_fields__)
    return ApprovalDoc(**{k: v for k, v in values.items() if k in known})


def approve_pending(client: OpenSearch, settings: Settings, embedder: Any, doc_id: str, by: str) -> ApprovalDoc:
    """Approve the change waiting for ``doc_id``: index its pending document (embedded now) and pin it.

    Raises:
        NotFoundError: no record, or nothing pending for it.
        IndexingError: OpenSearch refused the document or the record.
    """
    from toolsift.ingest.embed import to_index_documents
    from toolsift.mappings import tool_routing

    store = ApprovalStore(client, settings.index)
    record, doc = store.approve(doc_id, by)
    (body,) = to_index_documents(embedder, [doc])
    routing = tool_routing(doc) if isinstance(doc, ToolDoc) and doc.agent_id else None
    client.index(index=settings.index, id=doc_id, body=body, routing=routing, refresh="wait_for")
    store.write([record])
    return record
