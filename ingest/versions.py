"""Versions and deprecation of live sources' tools (``<alias>-versions``, :mod:`toolsift.mappings.versions_doc`).

Every listing ``toolsift sync`` indexes is also observed here: each tool's definition (name,
description, schemas as its server listed them) is hashed, and

* a definition not seen before is recorded ``current`` with its ``first_seen``;
* the definition it replaces becomes ``superseded``, with its ``last_seen``;
* a tool the server no longer lists becomes ``deprecated``: the catalog index drops it at once (search
  no longer returns it), and its record stays for the grace period (``deprecation_grace_days``) so
  ``toolsift sync versions`` can say what it was and when it went; after that it is pruned. A tool that
  comes back within the grace period is current again, its first sighting kept.

Changed definitions reach search through the ordinary ingest, so the screen and the approvals of
:mod:`toolsift.ingest.approvals` hold them like any change.

Records are keyed by the tool's id in the catalog index, which a source with ``tenants`` has scoped to
them (:mod:`toolsift.mappings.scoped`): the versions of two tenants' servers of the same name are two
histories. Records a source's listings left under plain ids before ids were scoped move to the scoped
ids, first sightings kept, at its next listing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.helpers import bulk, scan

from toolsift.errors import IndexingError
from toolsift.mappings.scoped import is_scoped, scoped_id
from toolsift.mappings.versions_doc import VersionDoc, versions_index, versions_index_body
from toolsift.opensearch import BulkRetry, ensure_index

__all__ = ["VersionChanges", "VersionStore", "definition_hash"]


def definition_hash(definition: Mapping[str, Any]) -> str:
    """The content hash of a tool definition (key order does not matter)."""
    return hashlib.sha256(json.dumps(definition, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:32]


@dataclass(frozen=True)
class VersionChanges:
    """What one observation recorded: new tools, changed definitions, deprecated tools, pruned records."""

    new: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    deprecated: tuple[str, ...] = ()
    pruned: int = 0


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds")


def _record(source: Mapping[str, Any]) -> VersionDoc:
    known = set(VersionDoc.__dataclass_fields__)
    return VersionDoc(**{k: v for k, v in source.items() if k in known})


class VersionStore:
    """The versions index of one catalog alias."""

    def __init__(self, client: OpenSearch, catalog_alias: str) -> None:
        self.client = client
        self.index = versions_index(catalog_alias)

    def _search(self, query: dict[str, Any]) -> list[VersionDoc]:
        if not self.client.indices.exists(index=self.index):
            return []
        return [_record(hit["_source"]) for hit in scan(self.client, index=self.index, query={"query": query})]

    def history(self, doc_id: str) -> list[VersionDoc]:
        """Every recorded definition of ``doc_id``, oldest first."""
        return sorted(self._search({"term": {"doc_id": doc_id}}), key=lambda v: v.first_seen or "")

    def of_source(self, source: str) -> list[VersionDoc]:
        """Every record of one source."""
        return self._search({"term": {"source": source}})

    def observe(self, source: str, definitions: Mapping[str, Mapping[str, Any]], *, grace_days: float,
                now: datetime | None = None, tenants: Sequence[str] = ()) -> VersionChanges:
        """Record one listing of ``source`` (tool id → definition as listed; the ids scoped to the
        source's ``tenants``) and prune what the grace period is over for.

        Raises:
            IndexingError: OpenSearch refused some records.
        """
        now = now or datetime.now(timezone.utc)
        records = self._moved(self.of_source(source), tenants)
        current = {v.doc_id: v for v in records if v.status == "current"}
        known = {(v.doc_id, v.hash): v for v in records}
        writes: list[VersionDoc] = []
        new: list[str] = []
        changed: list[str] = []
        for doc_id, definition in definitions.items():
            digest = definition_hash(definition)
            old = current.pop(doc_id, None)
            if old is not None and old.hash == digest:
                continue
            if old is not None:
                writes.append(replace(old, status="superseded", last_seen=_iso(now)))
                changed.append(doc_id)
            else:
                new.append(doc_id)
            seen = known.get((doc_id, digest))
            writes.append(VersionDoc(doc_id=doc_id, source=source, hash=digest, status="current",
                                     first_seen=seen.first_seen if seen else _iso(now), last_seen=None,
                                     definition=dict(definition)))
        deprecated = sorted(current)
        writes += [replace(current[doc_id], status="deprecated", last_seen=_iso(now)) for doc_id in deprecated]
        self._write(writes)
        pruned = self._prune(source, now - timedelta(days=grace_days))
        return VersionChanges(tuple(new), tuple(changed), tuple(deprecated), pruned)

    def _moved(self, records: list[VersionDoc], tenants: Sequence[str]) -> list[VersionDoc]:
        """``records``, those under plain ids moved to the ids scoped to ``tenants`` (written there, deleted
        here); unchanged for a public source."""
        if not tenants:
            return records
        plain = [r for r in records if not is_scoped(r.doc_id)]
        if not plain:
            return records
        moved = [replace(r, doc_id=scoped_id(r.doc_id, tenants)) for r in plain]
        self._write(moved)
        bulk(self.client, ({"_op_type": "delete", "_index": self.index, "_id": f"{r.doc_id}@{r.hash}"} for r in plain),
             raise_on_error=False, refresh="wait_for", **BulkRetry().kwargs())
        return [r for r in records if is_scoped(r.doc_id)] + moved

    def _write(self, records: Sequence[VersionDoc]) -> None:
        if not records:
            return
        ensure_index(self.client, self.index, versions_index_body())
        _, errors = bulk(self.client, ({"_index": self.index, "_id": f"{r.doc_id}@{r.hash}", "_source": asdict(r)}
                                       for r in records), raise_on_error=False, refresh="wait_for",
                         **BulkRetry().kwargs())
        if errors:
            raise IndexingError(f"versions: {len(errors)} of {len(records)} record(s) were not stored", list(errors))

    def _prune(self, source: str, before: datetime) -> int:
        """Delete the deprecated and superseded records of ``source`` last seen before ``before``."""
        if not self.client.indices.exists(index=self.index):
            return 0
        answer = self.client.delete_by_query(index=self.index, body={"query": {"bool": {"filter": [
            {"term": {"source": source}}, {"terms": {"status": ["deprecated", "superseded"]}},
            {"range": {"last_seen": {"lt": _iso(before)}}}]}}}, params={"refresh": "true", "conflicts": "proceed"})
        return int(answer.get("deleted", 0))
