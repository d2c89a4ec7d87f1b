"""Ingest a catalog: load → normalise → embed → bulk index, idempotently and safely.

Two passes. The first reads the catalog and normalises every record without writing anything, so bad
records (malformed, missing names, wrong types, oversized, nested too deep, duplicate ids, unknown owners) are all
known before the index is touched, and each server's tools are linked to their prerequisites
(:mod:`toolsift.ingest.prerequisites`; the accepted tool documents are held until then): with
``strict=True`` any of them stops the ingest with nothing written; otherwise every valid record is indexed and the report lists the rejects
(and when none is valid, nothing is written: no index or alias is created). The second pass
takes the accepted documents in catalog order (held from the first pass: the catalog is not read
again), skips those whose content hash the index already holds, embeds the rest
a chunk at a time in a worker thread (texts sorted by length; those the vector cache holds are not
encoded again, :mod:`toolsift.encoders.vectorcache`) while the previous chunk is written with
opensearch-py's ``streaming_bulk`` (429s retried with backoff; every per-item failure reported). ``prune`` deletes documents of the same source that the catalog
no longer has; ``rebuild`` fills a new index version and swaps the alias only when it succeeded.
"""

from __future__ import annotations

import fnmatch
import hashlib
import queue
import threading
import time
from contextlib import closing, nullcontext
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from opensearchpy import OpenSearch
from opensearchpy.exceptions import TransportError
from opensearchpy.helpers import streaming_bulk

from toolsift.access import valid_tenant
from toolsift.compaction import Compaction
from toolsift.config import Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import CatalogRecordError, CatalogRejectedError, IndexingError
from toolsift.ingest.approvals import ApprovalStore, Held, Plan, policy_for
from toolsift.ingest.embed import document_texts, index_sources
from toolsift.ingest.loaders import detect_format, load_catalog
from toolsift.ingest.nesting import DEFAULT_MAX_NESTING_DEPTH
from toolsift.ingest.normalise import MAX_ID_BYTES, normalise_agent, normalise_tool
from toolsift.ingest.prerequisites import link_prerequisites, with_prerequisites
from toolsift.ingest.raw_records import (
    FlaggedRecord,
    LoadedRecord,
    RawAgent,
    RawTool,
    RejectedRecord,
    RiskFlaggedRecord,
)
from toolsift.mappings.scoped import plain_id, scoped_doc, scoped_id
from toolsift.screen.screening import screen_catalog, screened, with_risk
from toolsift.screen.meaning import MeaningScreen, meaning_screen
from toolsift.standardise.catalog import standardised_records
from toolsift.encoders.vectorcache import CACHE_FILE, CachedEncoder, VectorCache
from toolsift.ingest.version import document_builder_version
from toolsift.mappings import AgentDoc, F, ToolDoc, tool_routing
from toolsift.mappings.index import IndexManager
from toolsift.opensearch import BulkRetry, bulk_loading, node_refused_error, refusal

__all__ = [
    "tenants_for",
    "IngestReport",
    "ingest_catalog",
    "validate_catalog",
    "catalog_fingerprint",
    "catalog_current",
    "normalised_records",
    "ProgressCallback",
]

#: ``(stage, done, total)``; stages are "validate" and "index".
ProgressCallback = Callable[[str, int, int], None]
#: Gives a raw tool its standardised document (MFTR ``augmented``), or None for the rule-based one.
Standardiser = Callable[[RawTool], Mapping[str, Any] | None]

@dataclass
class IngestReport:
    """What an ingest did. ``ok`` is False when any record was rejected or any write failed.

    ``flagged`` lists the tools kept whose documentation had to be read loosely (parameters inferred
    from default values or kept as text, a missing name taken from the id, ...): schema notes, not a
    risk; ``risk_flagged`` the tools indexed with ``risk: flagged`` (the screen of hostile tool text
    found something, :mod:`toolsift.screen.screening`). Both are indexed and do not make the report fail.
    ``held`` lists the documents whose new definition waits for approval (what ``toolsift approvals
    list`` shows; :mod:`toolsift.ingest.approvals`), ``refused`` those whose definition someone
    rejected before (not queued again); search keeps serving the pinned version of both.
    ``approved`` counts the definitions this ingest pinned. ``index`` is empty when no record was
    accepted: then no index or alias is created, and an existing one is left as it was.

    ``texts_embedded`` counts the written documents' texts that got a vector (distinct per chunk);
    ``texts_encoded`` the texts the embedding model encoded in this ingest, ``texts_cached`` those whose vectors the vector cache held
    (:mod:`toolsift.encoders.vectorcache`); ``embed_seconds`` is the time spent embedding and building the
    documents, which overlaps the bulk writes. ``merge_task`` is the force merge a new version's bulk load
    left running in the background (``ingest_merge = "background"``, a catalog larger than one in-memory
    segment); ``segments`` the primaries' segments the load wrote before any merge; ``compaction`` what
    compacting the new version did (``ingest_compact``; None: not a bulk load, or not asked).
    """

    catalog: str
    format: str
    index: str = ""
    agents: int = 0
    tools: int = 0
    tenants: tuple[str, ...] = ()
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    rejected: list[CatalogRecordError] = field(default_factory=list)
    flagged: list[FlaggedRecord] = field(default_factory=list)
    risk_flagged: list[RiskFlaggedRecord] = field(default_factory=list)
    held: list[Held] = field(default_factory=list)
    refused: list[Held] = field(default_factory=list)
    approved: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)
    catalog_unchanged: bool = False
    seconds: float = 0.0
    embed_seconds: float = 0.0
    texts_embedded: int = 0
    texts_encoded: int = 0
    texts_cached: int = 0
    segments: int = 0
    merge_task: str | None = None
    compaction: Compaction | None = None

    @property
    def ok(self) -> bool:
        return not self.rejected and not self.failed

    def to_dict(self) -> dict[str, Any]:
        return {
            "catalog": self.catalog,
            "format": self.format,
            "index": self.index,
            "agents": self.agents,
            "tools": self.tools,
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "deleted": self.deleted,
            "rejected": [e.to_dict() for e in self.rejected],
            "flagged": [f.to_dict() for f in self.flagged],
            "risk_flagged": [r.to_dict() for r in self.risk_flagged],
            "held": [h.to_dict() for h in self.held],
            "refused": [h.to_dict() for h in self.refused],
            "approved": self.approved,
            "failed": self.failed,
            "catalog_unchanged": self.catalog_unchanged,
            "seconds": round(self.seconds, 3),
            "embed_seconds": round(self.embed_seconds, 3),
            "texts_embedded": self.texts_embedded,
            "texts_encoded": self.texts_encoded,
            "texts_cached": self.texts_cached,
            "segments": self.segments,
            "merge_task": self.merge_task,
            "compaction": self.compaction.to_dict() if self.compaction else None,
            "ok": self.ok,
        }


def catalog_fingerprint(path: Path) -> str:
    """SHA-256 of the catalog file's bytes (a folder: of its files' names and bytes)."""
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        digest.update(str(file.relative_to(path) if path.is_dir() else file.name).encode())
        with file.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def catalog_current(recorded: Mapping[str, Any]) -> bool:
    """True when an index's record of a catalog was written by this document-building code."""
    return recorded.get("document_builder") == document_builder_version()


Doc = ToolDoc | AgentDoc


def tenants_for(path: Path, settings: Settings, tenants: Sequence[str] = ()) -> tuple[str, ...]:
    """The tenants a catalog's tools are ingested for: ``tenants`` when given, else those of the first
    ``source_tenants`` pattern matching the file's path or name, else none (public).

    Raises:
        ConfigError: a tenant name that is not one.
    """
    if tenants:
        return tuple(dict.fromkeys(valid_tenant(t, where="--tenant") for t in tenants))
    for pattern, names in settings.source_tenants.items():
        if fnmatch.fnmatch(str(path), pattern) or fnmatch.fnmatch(path.name, pattern):
            return tuple(dict.fromkeys(names))
    return ()


def normalised_records(
    records: Iterable[RawTool | RawAgent | RejectedRecord], max_chars: int, tenants: tuple[str, ...] = (),
    max_depth: int = DEFAULT_MAX_NESTING_DEPTH,
) -> Iterator[tuple[str, Doc | CatalogRecordError]]:
    """(position, document or the error that rejects it) for every record; documents carry ``tenants``
    and, with tenants, ids scoped to them (:mod:`toolsift.mappings.scoped`: a name two tenants share is
    two documents).

    ``max_chars`` and ``max_depth`` are the ``max_field_chars`` and ``max_nesting_depth`` settings."""
    for rec in records:
        if isinstance(rec, RejectedRecord):
            yield rec.position, rec.to_error()
            continue
        try:
            doc: Doc = (
                normalise_agent(rec, max_field_chars=max_chars, max_depth=max_depth)
                if isinstance(rec, RawAgent)
                else normalise_tool(rec, max_field_chars=max_chars, max_depth=max_depth)
            )
        except CatalogRecordError as exc:
            yield rec.position, exc
            continue
        if not tenants:
            yield rec.position, doc
            continue
        doc = scoped_doc(doc, tenants)
        size = len(_doc_id(doc).encode("utf-8"))
        if size > MAX_ID_BYTES:
            yield rec.position, CatalogRecordError(
                doc.source, rec.position, f"the id scoped to its tenants ({_doc_id(doc)!r}) is {size} bytes long; "
                f"at most {MAX_ID_BYTES} are allowed", record_id=_doc_id(doc), field="id")
            continue
        yield rec.position, doc


def _doc_id(doc: Doc) -> str:
    return doc.agent_id if isinstance(doc, AgentDoc) else doc.tool_id


@dataclass
class _Validation:
    hashes: dict[str, str] = field(default_factory=dict)
    accepted_positions: set[str] = field(default_factory=set)
    sources: set[str] = field(default_factory=set)
    rejected: list[CatalogRecordError] = field(default_factory=list)
    flagged: list[FlaggedRecord] = field(default_factory=list)
    risk_flagged: list[RiskFlaggedRecord] = field(default_factory=list)
    agents: int = 0
    tools: int = 0
    tenants: tuple[str, ...] = ()
    #: Tool id → its prerequisites among the accepted tools (:mod:`toolsift.ingest.prerequisites`).
    prerequisites: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Tool id → the screen's reasons, for the tools it flagged (:mod:`toolsift.screen.screening`).
    risks: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Every accepted document as it would be written (tools finished): the approvals' and the write pass's.
    documents: list[ToolDoc | AgentDoc] = field(default_factory=list)
    #: The accepted documents' ids in catalog order (the order the write pass writes them in).
    order: list[str] = field(default_factory=list)
    #: Documents whose new version waits for approval (:mod:`toolsift.ingest.approvals`).
    held: dict[str, Held] = field(default_factory=dict)
    #: The tenants the index recorded for this file's last ingest (None: not ingested into it before).
    previous: tuple[str, ...] | None = None

    def finished(self, tool: ToolDoc) -> ToolDoc:
        """A tool as indexed: with what reading the whole catalog found (prerequisites, risk)."""
        return with_risk(with_prerequisites(tool, self.prerequisites), self.risks)


def _load(
    path: Path, fmt: str, standardiser: Standardiser | None, max_depth: int = DEFAULT_MAX_NESTING_DEPTH
) -> Iterator[LoadedRecord]:
    # Records nested too deep come out rejected here, before a standardiser or normalisation walks them.
    records = load_catalog(path, fmt, max_depth=max_depth)
    return records if standardiser is None else standardised_records(records, standardiser)


def _validate(
    path: Path, fmt: str, max_chars: int, progress: ProgressCallback | None, standardiser: Standardiser | None,
    tenants: tuple[str, ...] = (), meaning: MeaningScreen | None = None, max_depth: int = DEFAULT_MAX_NESTING_DEPTH,
) -> _Validation:
    result = _Validation(tenants=tenants)
    first_seen: dict[str, str] = {}
    agent_ids: set[str] = set()
    # Prerequisites link a server's tools to each other, so tool hashes wait for the whole catalog.
    tools: list[ToolDoc] = []
    label = str(path)
    records = _load(path, fmt, standardiser, max_depth)
    for count, (position, item) in enumerate(normalised_records(records, max_chars, tenants, max_depth), start=1):
        if progress:
            progress("validate", count, 0)
        if isinstance(item, CatalogRecordError):
            result.rejected.append(item)
            continue
        doc_id = _doc_id(item)
        if doc_id in first_seen:
            result.rejected.append(
                CatalogRecordError(
                    item.source or label,
                    position,
                    f"duplicate id {doc_id!r} (first seen at {first_seen[doc_id]})",
                    record_id=doc_id,
                )
            )
            continue
        if isinstance(item, ToolDoc) and item.agent_id and item.agent_id not in agent_ids:
            result.rejected.append(
                CatalogRecordError(
                    item.source or label,
                    position,
                    f"owner {item.agent_id!r} is not an agent of this catalog (agents come before their tools)",
                    record_id=doc_id,
                    field="agent_id",
                )
            )
            continue
        first_seen[doc_id] = position
        if isinstance(item, AgentDoc):
            agent_ids.add(doc_id)
            result.agents += 1
            result.hashes[doc_id] = item.content_hash
            result.documents.append(item)
        else:
            result.tools += 1
            tools.append(item)
            if item.schema_notes:
                result.flagged.append(
                    FlaggedRecord(item.source, position, item.tool_id, item.schema_quality, item.schema_notes)
                )
        result.accepted_positions.add(position)
        result.sources.add(item.source)
    result.order = list(first_seen)
    result.prerequisites = link_prerequisites(tools)
    result.risks = screen_catalog([screened(tool) for tool in tools], meaning)
    for tool in tools:
        finished = result.finished(tool)
        result.hashes[tool.tool_id] = finished.content_hash
        result.documents.append(finished)
        if finished.risk == "flagged":
            result.risk_flagged.append(
                RiskFlaggedRecord(finished.source, first_seen[tool.tool_id], tool.tool_id, finished.risk_reasons)
            )
    return result


def _reported(report: IngestReport, validation: _Validation) -> None:
    """What the first pass found, into the report."""
    report.rejected = validation.rejected
    report.flagged = validation.flagged
    report.risk_flagged = validation.risk_flagged
    report.agents, report.tools = validation.agents, validation.tools


def validate_catalog(
    path: Path,
    settings: Settings,
    *,
    fmt: str | None = None,
    standardiser: Standardiser | None = None,
    tenants: Sequence[str] = (),
    progress: ProgressCallback | None = None,
    meaning: MeaningScreen | None = None,
) -> IngestReport:
    """The ingest's first pass alone: every record read, normalised, linked and screened; nothing written.

    What :func:`ingest_catalog` does before it touches the index (and all ``strict`` does when a
    record is bad): the report's counts, rejects and flags are the ones an ingest of the file would
    report when ``meaning`` is the meaning screen (without it the screen reads its patterns only);
    ``index`` is empty.

    Raises:
        CatalogError: the file cannot be read or parsed as a catalog.
        ConfigError: a tenant name that is not one.
    """
    started = time.perf_counter()
    path = Path(path)
    fmt = fmt or detect_format(path)
    scope = tenants_for(path, settings, tenants)
    report = IngestReport(catalog=str(path), format=fmt, tenants=scope)
    _reported(report, _validate(path, fmt, settings.max_field_chars, progress, standardiser, scope, meaning,
                                max_depth=settings.max_nesting_depth))
    report.seconds = time.perf_counter() - started
    return report


def _existing_hashes(client: OpenSearch, index: str, ids: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for start in range(0, len(ids), 1000):  # ids queries search every shard: no routing needed
        chunk = ids[start : start + 1000]
        answer = client.search(
            index=index,
            body={"size": len(chunk), "_source": [F.content_hash], "query": {"ids": {"values": chunk}}},
        )
        for hit in answer["hits"]["hits"]:
            out[hit["_id"]] = hit["_source"].get(F.content_hash, "")
    return out


def ingest_catalog(
    client: OpenSearch,
    settings: Settings,
    embedder: Embedder,
    path: Path,
    *,
    fmt: str | None = None,
    strict: bool = False,
    prune: bool = False,
    rebuild: bool = False,
    skip_if_unchanged: bool = False,
    progress: ProgressCallback | None = None,
    standardiser: Standardiser | None = None,
    tenants: Sequence[str] = (),
    approvals: bool = True,
    approve: bool = False,
    approved_by: str = "ingest",
) -> IngestReport:
    # Long: one all-or-nothing write (validate, new version or in place, embed, bulk, prune, swap, compact)
    # whose steps share the index version and its cleanup on failure.
    """Ingest the catalog at ``path`` into the index behind ``settings.index``.

    Args:
        client: connected client.
        settings: index alias, shards, limits.
        embedder: the embedding model (its name and dimension must match the index's).
        path: the catalog file.
        fmt: loader name; detected from the file when None.
        strict: write nothing when any record is bad (raises :class:`CatalogRejectedError`).
        prune: delete documents of this catalog's source(s) that the catalog no longer has.
        rebuild: build a new index version beside the current one and swap the alias to it.
        skip_if_unchanged: return at once when the index recorded this exact catalog file already,
            built by this version of the document-building code (:func:`document_builder_version`).
        progress: called as records are validated and indexed.
        standardiser: sets each tool's standardised document before normalisation (e.g.
            :meth:`LLMStandardiser.require <toolsift.standardise.standardiser.LLMStandardiser.require>`);
            None: rule-based standardisation only. It runs in both passes, so it must be
            deterministic (the LLM cache makes the second pass free); an error it raises in the
            first pass (an unreachable LLM) stops the ingest before anything is written.
        tenants: the tenants allowed to see this catalog's tools and agents; empty: the
            ``source_tenants`` setting's for this file (:func:`tenants_for`), else public.
        approvals: pin definitions and hold changes by the file's approval policy
            (:mod:`toolsift.ingest.approvals`); False for toolsift's own benchmark indices.
        approve: approve every change and first sight of this ingest (the catalog's author editing it).
        approved_by: who approves in this run, as recorded.

    Returns:
        The :class:`IngestReport`; ``report.ok`` is False when records were rejected or writes failed.
        When no record was accepted nothing is written (``report.index`` is empty): no index or
        alias is created, and an existing one (even with ``rebuild``) is left as it was.

    Raises:
        CatalogError: the file cannot be read or parsed as a catalog.
        CatalogRejectedError: ``strict`` and at least one record is bad (nothing was written).
        IndexMismatchError: the index was built for another embedding model or schema.
        IndexingError: the bulk writes failed entirely (e.g. the node went away).
        ClusterError: the node still refused with 429 after the ``bulk_max_retries`` retries (a tripped
            circuit breaker, full queues): one line naming the cause and the remedy; the index version this
            ingest created (a rebuild's, or the first one) is removed.
    """
    started = time.perf_counter()
    path = Path(path)
    fmt = fmt or detect_format(path)
    report = IngestReport(catalog=str(path), format=fmt)
    fingerprint = catalog_fingerprint(path)
    scope = tenants_for(path, settings, tenants)
    manager = IndexManager(client, settings.index, shards=settings.shards, replicas=settings.replicas)

    if skip_if_unchanged and not rebuild:
        info = manager.current()
        if info is not None:
            recorded = info.catalogs.get(fingerprint)
            if (recorded and catalog_current(recorded) and manager.is_current_schema(info)
                    and tuple(recorded.get("tenants", ())) == scope and str(path) not in info.unfinished):
                manager.check_model(info, embedder.name, embedder.dimension)
                report.index = info.index
                report.catalog_unchanged = True
                report.agents = int(recorded.get("agents", 0))
                report.tools = int(recorded.get("tools", 0))
                report.unchanged = report.agents + report.tools
                report.seconds = time.perf_counter() - started
                return report

    # Texts embedded before (any ingest, any index, this model) are read from the vector cache.
    cache = _vector_cache(settings)
    encoder = CachedEncoder(embedder, cache)
    created: str | None = None  # the index version this run created: removed when the node refuses the ingest
    try:
        # the meaning screen's scores share the vector cache
        meaning = meaning_screen(cache, settings.embedding_device) if settings.screen_meaning else None
        validation = _validate(path, fmt, settings.max_field_chars, progress, standardiser, scope, meaning,
                               max_depth=settings.max_nesting_depth)
        _reported(report, validation)
        if strict and validation.rejected:
            raise CatalogRejectedError(str(path), validation.rejected)
        if not validation.documents:  # every record rejected (or none at all): no empty index, no alias
            report.seconds = time.perf_counter() - started
            return report
        store = ApprovalStore(client, settings.index)
        plan = (store.plan(validation.documents, policy=policy_for(path, settings), approve=approve, by=approved_by)
                if approvals else Plan([], {}))
        validation.held = plan.withheld
        report.held = list(plan.held.values())
        report.refused = list(plan.refused.values())

        tools = sum(1 for d in validation.documents if isinstance(d, ToolDoc))
        if rebuild:
            target = created = manager.create_version(embedder.name, embedder.dimension, tools)
        else:
            first = manager.current() is None
            target = manager.ensure(embedder.name, embedder.dimension, tools).index
            created = target if first else None
        report.index = target
        recorded = [c for c in manager.info(target).catalogs.values() if c.get("path") == str(path)]
        validation.previous = tuple(recorded[0].get("tenants") or ()) if recorded else None

        # A new version, or an index still empty, is bulk loaded (no refresh until the end): one segment,
        # so a rebuilt index answers k-NN queries exactly as the one it replaces.
        # What an interrupted write pass left (refreshes off, not yet visible) counts as already written.
        client.indices.refresh(index=target)
        bulk_load = rebuild or int(client.count(index=target)["count"]) == 0
        # Marked unfinished until the write pass returns: an ingest killed half-way leaves a partial index
        # that `toolsift index status` names as such, and a rerun does not take it for current.
        manager.mark_unfinished(target, str(path), True)
        try:
            with (bulk_loading(client, target, merge=settings.ingest_merge, compact=settings.ingest_compact)
                  if bulk_load else nullcontext()) as load:
                existing = _write(client, settings, encoder, validation, target, report, progress, prune)
            if load is not None:
                report.segments, report.merge_task, report.compaction = load.segments, load.merge_task, load.compaction
        except Exception:
            if rebuild:  # a half-filled new version is never swapped in
                client.indices.delete(index=target, ignore_unavailable=True)
            raise
        manager.mark_unfinished(target, str(path), False)
        report.created -= sum(1 for f in report.failed if f["id"] not in existing)
        report.updated -= sum(1 for f in report.failed if f["id"] in existing)
        failed_ids = {f["id"] for f in report.failed}
        store.write([r for r in plan.records if r.doc_id not in failed_ids],
                    retired=[old for new, old in plan.moved.items() if new not in failed_ids])
        report.approved = plan.approved

        if report.failed and rebuild:
            client.indices.delete(index=target, ignore_unavailable=True)
            raise IndexingError(
                f"{len(report.failed)} document(s) failed to index; the new version was discarded",
                report.failed,
            )
        if not report.rejected and not report.failed:
            info = manager.info(target)
            # One entry per catalog path: a changed file replaces its old fingerprint.
            catalogs = {k: v for k, v in info.catalogs.items() if v.get("path") != str(path)}
            catalogs[fingerprint] = {
                "path": str(path),
                "format": fmt,
                "document_builder": document_builder_version(),
                "agents": report.agents,
                "tools": report.tools,
                "tenants": list(scope),
                "ingested_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
            manager.update_meta(target, catalogs=catalogs)
        if rebuild:
            manager.swap(target, delete_old=True)
        report.seconds = time.perf_counter() - started
        return report
    except (TransportError, _Refused) as exc:
        # The node itself is the limit (a circuit breaker still tripped after the retries, full queues): one
        # line with the cause and the remedy, and no half-built version left behind.
        cause = exc.cause if isinstance(exc, _Refused) else refusal(exc)
        if cause is None:
            raise
        retry = BulkRetry.from_settings(settings)
        removed = _remove_version(client, created, retry) if created else False
        writes = isinstance(exc, _Refused)  # the bulk writes, retried; else another request of the ingest
        raise node_refused_error(settings, cause, what="the writes" if writes else "a request of the ingest",
                                 retry=retry if writes else None, removed=created if removed else None,
                                 left=None if removed else created) from exc
    finally:
        report.texts_encoded, report.texts_cached = encoder.encoded, encoder.cached
        if cache is not None:
            cache.trim()
            cache.close()


class _Refused(Exception):
    """Documents of the write pass that the node still refused with 429 after the retries (``cause``: what
    it said, :func:`~toolsift.opensearch.refusal`)."""

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


def _remove_version(client: OpenSearch, index: str, retry: BulkRetry) -> bool:
    """Delete the half-built index version ``index`` (its alias goes with it), backing off while the node
    refuses with 429 as the bulk writes do; whether it is gone."""
    for attempt in range(retry.max_retries + 1):
        if attempt:
            time.sleep(min(retry.max_backoff, retry.initial_backoff * 2 ** (attempt - 1)))
        try:
            client.indices.delete(index=index, ignore_unavailable=True)
            return True
        except TransportError as exc:
            if refusal(exc) is None:
                return False
    return False


def _vector_cache(settings: Settings) -> VectorCache | None:
    """The vector cache of ``settings`` (None when switched off)."""
    if not settings.vector_cache:
        return None
    return VectorCache(settings.vector_cache_path / CACHE_FILE, max_bytes=settings.vector_cache_max_mb << 20)


def _write(
    client: OpenSearch,
    settings: Settings,
    encoder: CachedEncoder,
    validation: _Validation,
    target: str,
    report: IngestReport,
    progress: ProgressCallback | None,
    prune: bool,
) -> dict[str, str]:
    """The write pass: bulk index what changed, prune, refresh; returns the hashes the index held.

    A worker thread embeds the next chunk of the validated documents while this thread's bulk
    requests write the previous one (the model releases the GIL in its forward passes). Whatever the
    worker raises is raised here, after the writes of the chunks before it; when the writes fail, the
    worker is stopped before this returns.
    """
    existing = _existing_hashes(client, target, list(validation.hashes))
    chunks = _chunks(settings.ingest_chunk_texts, encoder, validation, existing, target, report)
    with closing(_ahead(chunks, on_stop=encoder.stop)) as ready:
        try:
            for ok, item in streaming_bulk(
                client,
                _actions(ready, len(validation.hashes), progress),
                chunk_size=200,
                **BulkRetry.from_settings(settings).kwargs(),
                raise_on_error=False,
                raise_on_exception=True,
            ):
                if not ok:
                    op, detail = next(iter(item.items()))
                    report.failed.append({"id": detail.get("_id"), "op": op, "status": detail.get("status"),
                                          "error": detail.get("error")})
        except TransportError as exc:  # the whole request still refused after the retries
            cause = refusal(exc)
            if cause is None:
                raise
            raise _Refused(cause) from exc
    refused = next((cause for f in report.failed if (cause := refusal(f)) is not None), None)
    if refused is not None:  # documents the node still refused with 429 after the retries
        raise _Refused(refused)
    if prune:
        report.deleted = _prune(client, target, validation)
    report.deleted += _retire_replaced(client, target, validation)
    client.indices.refresh(index=target)
    return existing


@dataclass
class _Chunk:
    """Bulk actions of embedded documents, and how many accepted documents the chunk went past."""

    actions: list[dict[str, Any]]
    seen: int


def _actions(chunks: Iterator[_Chunk], total: int, progress: ProgressCallback | None) -> Iterator[dict[str, Any]]:
    done = 0
    for chunk in chunks:
        yield from chunk.actions
        done += chunk.seen
        if progress:
            progress("index", done, total)


_T = TypeVar("_T")
_END = object()


def _ahead(items: Iterator[_T], *, on_stop: Callable[[], None]) -> Generator[_T, None, None]:
    """``items``, produced by a worker thread one item ahead of the consumer.

    An exception of the worker (``KeyboardInterrupt`` too) is raised to the consumer when it reaches
    that point. Closing this generator before the end (the consumer failed) calls ``on_stop`` (the
    encoder stops after its current batch) and waits for the worker, so nothing embeds on behind an
    ingest that returned.
    """
    handoff: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def hand(ok: bool, value: object) -> bool:
        while not stop.is_set():
            try:
                handoff.put((ok, value), timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in items:
                if not hand(True, item):
                    return
            hand(True, _END)
        except BaseException as exc:  # handed over, raised in the consumer's thread
            hand(False, exc)
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    worker = threading.Thread(target=work, name="toolsift-ingest-embed", daemon=True)
    worker.start()
    try:
        while True:
            ok, value = handoff.get()
            if not ok:
                raise value
            if value is _END:
                return
            yield value
    finally:
        stop.set()
        if worker.is_alive():
            on_stop()
        worker.join()


def _chunks(
    chunk_texts: int,
    encoder: CachedEncoder,
    validation: _Validation,
    existing: dict[str, str],
    index: str,
    report: IngestReport,
) -> Iterator[_Chunk]:
    """The write pass's documents (in the worker), in catalog order, embedded a chunk at a time.

    The documents are those the validation pass accepted and finished (the catalog is not read
    again). A chunk closes once its documents hold ``chunk_texts`` distinct texts: the encoder sorts
    those by length, so each forward pass pads little, and the cache spares the texts it holds.
    """
    batch: list[Doc] = []
    texts: set[str] = set()
    seen = 0

    def embedded() -> _Chunk:
        t0 = time.perf_counter()
        sources = index_sources(encoder, batch)
        report.embed_seconds += time.perf_counter() - t0
        report.texts_embedded += len(texts)
        actions = []
        for doc, source in zip(batch, sources, strict=True):
            action: dict[str, Any] = {"_op_type": "index", "_index": index, "_id": _doc_id(doc), "_source": source}
            if isinstance(doc, ToolDoc) and doc.agent_id:
                action["_routing"] = tool_routing(doc)
            actions.append(action)
        return _Chunk(actions, seen)

    accepted = {_doc_id(doc): doc for doc in validation.documents}
    for doc_id in validation.order:
        item = accepted[doc_id]
        seen += 1
        expected = validation.hashes[doc_id]
        held = validation.held.get(doc_id)
        if held is not None:  # the change waits for approval: the pinned version is served, or nothing
            if held.served is None:
                continue
            item, expected = held.served, held.served.content_hash
        if existing.get(doc_id) == expected:
            report.unchanged += 1
            continue
        if doc_id in existing:
            report.updated += 1
        else:
            report.created += 1
        batch.append(item)
        texts.update(document_texts(item))
        if len(texts) >= chunk_texts:
            yield embedded()
            batch, texts, seen = [], set(), 0
    if batch or seen:
        yield embedded()


def _exactly(tenants: Sequence[str]) -> list[dict[str, Any]]:
    """Filters of the documents whose tenants are exactly ``tenants`` (none: the public ones): another
    scope's documents are other documents, whatever their source is called."""
    if not tenants:
        return [{"bool": {"must_not": {"exists": {"field": F.tenants}}}}]
    every = {"terms_set": {F.tenants: {"terms": sorted(set(tenants)),
                                       "minimum_should_match_script": {"source": f"doc['{F.tenants}'].size()"}}}}
    return [*({"term": {F.tenants: t}} for t in sorted(set(tenants))), every]


def _retire_replaced(client: OpenSearch, index: str, validation: _Validation) -> int:
    """Delete this catalog's documents that its ids now replace (:mod:`toolsift.mappings.scoped`): those an
    ingest before ids were scoped wrote for its tenants under plain ids, and, when the file was ingested
    for other tenants last time, those of its former tenants (their ids, their ``tenants`` exactly)."""
    plain = {plain_id(doc_id) for doc_id in validation.hashes}
    scopes = {tuple(sorted(set(validation.tenants)))}
    if validation.previous is not None:
        scopes.add(tuple(sorted(set(validation.previous))))
    deleted = 0
    for scope in sorted(scopes):
        ids = sorted((plain | {scoped_id(p, scope) for p in plain}) - set(validation.hashes))
        for start in range(0, len(ids), 1000):
            answer = client.delete_by_query(index=index, body={"query": {"bool": {"filter": [
                {"ids": {"values": ids[start:start + 1000]}}, {"terms": {F.source: sorted(validation.sources)}},
                *_exactly(scope)]}}}, params={"refresh": "true", "conflicts": "proceed"})
            deleted += int(answer.get("deleted", 0))
    return deleted


def _prune(client: OpenSearch, index: str, validation: _Validation) -> int:
    """Delete the documents of this catalog's sources and tenants that it no longer has."""
    if not validation.sources:
        return 0
    answer = client.delete_by_query(
        index=index,
        body={
            "query": {
                "bool": {
                    "filter": [{"terms": {F.source: sorted(validation.sources)}}, *_exactly(validation.tenants)],
                    "must_not": [{"ids": {"values": list(validation.hashes)}}],
                }
            }
        },
        params={"refresh": "true", "conflicts": "proceed"},
    )
    return int(answer.get("deleted", 0))
