"""Rug-pull defence: a tool's definition is pinned by hash when approved; a later change waits.

A tool an agent was given yesterday can be rewritten today (a "rug pull"): the catalog file is edited,
a live server changes its ``tools/list``, or a second catalog names the same server and replaces its
tools. Every document an ingest writes is checked against its pinned definition in the approvals
index (``<alias>-approvals``, :mod:`toolsift.mappings.approvals`):

* **first sight** — the policy of its source decides: ``first-sight`` approves and pins it now;
  ``manual`` holds it (nothing is served until someone approves it).
* **unchanged** — the definition hash and the source equal the pinned ones: written as usual.
* **changed** — another definition, or another source (a collision: a second catalog naming the same
  server): the change waits as ``pending``, and search keeps serving the **pinned version** (the
  document as it was approved; a rebuild writes that one). Serving the pinned version rather than
  nothing keeps an agent's working tool working while a person reviews the change; the changed text
  reaches no agent until approved. ``toolsift ingest --approve`` approves every change of the run
  (the catalog's own author editing it).

The definition hash covers what an agent receives and what the search matches: the name, description,
parameters, response and the raw documentation (so the input schema), and the owning agent; not what
toolsift computes (tenants, risk, prerequisites). ``toolsift approvals list | show | approve | reject``
and the workbench's review queue act on the pending changes; approving indexes the pending document
and pins it.
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
from toolsift.mappings.approvals import ApprovalDoc, approvals_index, approvals_index_body
from toolsift.opensearch import ensure_index

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
    return {
        "entity": "tool", "name": doc.name, "agent_id": doc.agent_id, "description": doc.description,
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

    @property
    def withheld(self) -> dict[str, Held]:
        """Every document whose catalog version is not written: held and refused."""
        return {**self.held, **self.refused}


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat()


def _id(doc: Doc) -> str:
    return doc.agent_id if isinstance(doc, AgentDoc) else doc.tool_id


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

    def pending(self) -> list[ApprovalDoc]:
        """Every change waiting for approval, oldest first."""
        if not self.exists():
            return []
        answer = self.client.search(index=self.index, body={
            "size": 1000, "query": {"term": {"status": "pending"}}, "sort": [{"pending_since": "asc"}, {"doc_id": "asc"}]})
        return [_record(hit["_source"]) for hit in answer["hits"]["hits"]]

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
                    approved_definition=_pretty(doc)))
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
                                   pending_risk=tuple(risk)))
        return Plan(records, held, approved, refused)

    def write(self, records: Sequence[ApprovalDoc]) -> None:
        """Store records (each one document, so none is half-written).

        Raises:
            IndexingError: OpenSearch refused some of them.
        """
        if not records:
            return
        ensure_index(self.client, self.index, approvals_index_body())
        _, errors = bulk(self.client, ({"_index": self.index, "_id": r.doc_id, "_source": asdict(r)} for r in records),
                         raise_on_error=False, refresh="wait_for")
        if errors:
            raise IndexingError(f"approvals: {len(errors)} of {len(records)} record(s) were not stored", list(errors))

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
