"""An index's documents embedded again with another model, into a new version beside the current one.

A trained embedder (``toolsift train embedder``) serves only an index whose vectors it wrote. The
documents need not be ingested again: every stored document is read back from the version the alias
points at (:func:`doc_from_source`: the record the ingest wrote, its vectors and bookkeeping left
out), its texts are embedded by the new model exactly as ingest embeds them
(:func:`~toolsift.ingest.embed.index_sources`), and it is written, with its id and routing, into a
new version laid out for that model. The new version carries the old one's ``_meta.toolsift`` (its
catalogs, pushed weights, tenant experiments) beside its own model and dimension.

Nothing here swaps the alias: :func:`~toolsift.learning.learner.reembed_guarded` guards the new
version first. A version that fails half-way is deleted, never left to be mistaken for a whole one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from opensearchpy import OpenSearch, helpers

from toolsift.encoders.embedding import Embedder
from toolsift.errors import IndexingError
from toolsift.ingest.approvals import Doc, doc_from_dict
from toolsift.ingest.embed import index_sources
from toolsift.mappings import F
from toolsift.mappings.index import IndexManager
from toolsift.mappings.model import NESTED_VECTOR_FIELDS, VECTOR_FIELDS, vector_field
from toolsift.opensearch import BulkRetry, bulk_loading

__all__ = ["Reembedded", "doc_from_source", "reembed_version"]

#: Bookkeeping fields ingest adds to a record's fields (:func:`~toolsift.ingest.embed._body`).
_BOOKKEEPING = (F.content_hash, F.entity, F.relation)
#: The top-level ``knn_vector`` fields ingest adds beside their texts.
_VECTORS = frozenset(vector_field(n) for n in VECTOR_FIELDS)
#: Documents embedded and written per bulk request.
_CHUNK = 256


@dataclass(frozen=True)
class Reembedded:
    """The new version and what went into it."""

    alias: str
    source_index: str
    index: str
    embedding_model: str
    documents: int
    seconds: float


def doc_from_source(source: Mapping[str, Any]) -> Doc:
    """The :class:`ToolDoc` or :class:`AgentDoc` a stored ``_source`` was built from (vectors, the
    sub-documents' copied tenants and ingest's bookkeeping left out)."""
    values = {k: v for k, v in source.items()
              if k not in _BOOKKEEPING and k not in _VECTORS}
    for name in NESTED_VECTOR_FIELDS:
        if name in values:
            subs = values[name] or []
            values[name] = ([s["text"] for s in subs] if name == "examples"
                            else [{k: v for k, v in s.items() if k not in ("vector", "tenants")} for s in subs])
    return doc_from_dict(values)


def _stored(client: OpenSearch, index: str) -> Iterator[tuple[str, str | None, Doc]]:
    for hit in helpers.scan(client, index=index, query={"query": {"match_all": {}}}, preserve_order=False, size=500):
        yield hit["_id"], hit.get("_routing"), doc_from_source(hit["_source"])


def reembed_version(
    client: OpenSearch,
    alias: str,
    embedder: Embedder,
    *,
    progress: Callable[[str, int, int], None] | None = None,
    compact: bool = False,
) -> Reembedded:
    """Write every document of ``alias``'s current version, embedded by ``embedder``, into a new version
    (compacted once loaded with ``compact``: :mod:`toolsift.compaction`).

    Raises:
        IndexMismatchError: the alias does not exist.
        IndexingError: a document failed to index (the new version is deleted).
    """
    started = time.perf_counter()
    manager = IndexManager(client, alias)
    current = manager.require()
    total = int(client.count(index=current.index, body={"query": {"match_all": {}}})["count"])
    tools = int(client.count(index=current.index, body={"query": {"term": {F.entity: "tool"}}})["count"])
    target = manager.create_version(embedder.name, embedder.dimension, max(1, tools))
    written = 0
    try:
        with bulk_loading(client, target, compact=compact):
            batch: list[tuple[str, str | None, Doc]] = []

            def flush() -> None:
                nonlocal written
                sources = index_sources(embedder, [doc for _, _, doc in batch])
                actions = [{"_op_type": "index", "_index": target, "_id": doc_id, "_source": source,
                            **({"_routing": routing} if routing else {})}
                           for (doc_id, routing, _), source in zip(batch, sources, strict=True)]
                _, errors = helpers.bulk(client, actions, raise_on_error=False, request_timeout=120,
                                        **BulkRetry().kwargs())
                if errors:
                    raise IndexingError(f"{len(errors)} document(s) failed to index into {target}; "
                                        "the new version was discarded", list(errors)[:10])
                written += len(batch)
                batch.clear()
                if progress:
                    progress("re-embedded", written, total)

            for item in _stored(client, current.index):
                batch.append(item)
                if len(batch) >= _CHUNK:
                    flush()
            if batch:
                flush()
        carried = {k: v for k, v in current.meta.items() if k not in manager.info(target).meta}
        manager.update_meta(target, **carried)
        client.indices.refresh(index=target)
    except BaseException:
        client.indices.delete(index=target, ignore_unavailable=True)
        raise
    return Reembedded(alias, current.index, target, embedder.name, written, round(time.perf_counter() - started, 1))
