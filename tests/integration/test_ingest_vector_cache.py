"""Ingest with the vector cache and the embedding worker, on a real node with the real model.

A re-ingest into a new index version reads every vector from the cache and writes the same documents
and the same vectors as the cold ingest that filled it; a damaged cache file is a warning, not a
failure; an error while the worker embeds (or while the caller writes) stops the worker and leaves
the served index as it was. Catalogs are small LiveMCPBench slices, embedded in chunks of a few
dozen texts so that every run has several chunks in flight. The model is the module's memoising
MiniLM (each text embedded once per module); what the reports and the wrappers count is what the
ingest asked to encode.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from toolsift.ingest.pipeline import ingest_catalog
from toolsift.mappings import F, vector_field
from toolsift.mappings.index import IndexManager
from toolsift.query.builder import knn_score_query

pytestmark = pytest.mark.integration

#: Servers of LiveMCPBench's tools.json (by position): 36 tools with parameters, two languages.
SERVERS = (1, 3, 5, 6, 8)
CHUNK_TEXTS = 40
PROBES = ("find the stock price of a company", "convert a pdf into text")
TOP_LEVEL_VECTORS = (F.description, F.overview, F.full_doc, F.response)


@pytest.fixture()
def catalog(datasets: Path, tmp_path: Path) -> Path:
    servers = json.loads((datasets / "livemcpbench" / "tools.json").read_text(encoding="utf-8"))
    path = tmp_path / "livemcpbench" / "tools.json"
    path.parent.mkdir()
    path.write_text(json.dumps([servers[i] for i in SERVERS], ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture()
def cached(settings: Any, tmp_path: Path) -> Any:
    """The test's settings with a vector cache of its own and small embedding chunks."""
    return settings.with_overrides(vector_cache_dir=tmp_path / "vectors", ingest_chunk_texts=CHUNK_TEXTS)


class Failing:
    """The model, whose ``encode_document`` raises ``error`` from its ``calls + 1``-th call on."""

    def __init__(self, inner: Any, calls: int, error: BaseException) -> None:
        self._inner, self._left, self._error = inner, calls, error
        self.name, self.dimension = inner.name, inner.dimension
        self.encoded = 0

    def encode_query(self, texts: Any) -> Any:
        return self._inner.encode_query(texts)

    def encode_document(self, texts: Any) -> Any:
        if self._left == 0:
            raise self._error
        self._left -= 1
        self.encoded += len(texts)
        return self._inner.encode_document(texts)


def snapshot(client: Any, index: str, embedder: Any) -> dict[str, Any]:
    """Every document's stored source, and the exact cosine of probe queries with each of its vectors
    (top-level fields, and every parameter's): equal snapshots, equal documents and vectors."""
    client.indices.refresh(index=index)
    found = client.search(index=index, body={"size": 1000, "query": {"match_all": {}}})["hits"]["hits"]
    out: dict[str, Any] = {"sources": {h["_id"]: h["_source"] for h in found}}
    for p, vector in enumerate(embedder.encode_query(list(PROBES))):
        for name in TOP_LEVEL_VECTORS:
            hits = client.search(index=index, body={"size": 1000, "query": knn_score_query(vector_field(name), vector)})
            out[f"{p}|{name}"] = {h["_id"]: h["_score"] for h in hits["hits"]["hits"]}
        nested = {"nested": {"path": F.parameters, "score_mode": "max", "inner_hits": {"size": 100, "_source": False},
                             "query": knn_score_query(vector_field(F.parameters), vector)}}
        hits = client.search(index=index, body={"size": 1000, "query": nested})["hits"]["hits"]
        out[f"{p}|parameters"] = {
            h["_id"]: sorted((i["_nested"]["offset"], i["_score"]) for i in h["inner_hits"][F.parameters]["hits"]["hits"])
            for h in hits
        }
    return out


def embedding_workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "toolsift-ingest-embed"]


def test_a_new_version_of_an_embedded_catalog_encodes_nothing_and_holds_the_same_documents_and_vectors(
    client: Any, cached: Any, model: Any, catalog: Path
) -> None:
    cold = ingest_catalog(client, cached, model, catalog, approvals=False)
    before = snapshot(client, cold.index, model)

    warm = ingest_catalog(client, cached, model, catalog, rebuild=True, approvals=False)

    assert cold.ok and warm.ok and warm.index != cold.index
    assert cold.texts_embedded > CHUNK_TEXTS and cold.texts_encoded > 0  # several chunks
    assert (warm.texts_encoded, warm.texts_embedded) == (0, cold.texts_embedded)
    assert warm.texts_cached >= warm.texts_embedded
    after = snapshot(client, warm.index, model)
    assert len(after["sources"]) == cold.tools + cold.agents
    assert all(after[key] for key in after if key.endswith(("|full_doc", "|parameters")))
    assert after == before


def test_a_damaged_vector_cache_is_a_warning_and_the_catalog_is_ingested_in_full(
    client: Any, cached: Any, model: Any, catalog: Path, caplog: pytest.LogCaptureFixture
) -> None:
    damaged = cached.vector_cache_path / "vectors.sqlite3"
    damaged.parent.mkdir(parents=True)
    damaged.write_bytes(b"\x00\x01 not a database \xff" * 512)

    with caplog.at_level(logging.WARNING, logger="toolsift.encoders.vectorcache"):
        report = ingest_catalog(client, cached, model, catalog, approvals=False)

    assert report.ok and report.tools == int(client.count(index=report.index, body={
        "query": {"term": {F.entity: "tool"}}})["count"])
    assert report.texts_cached == 0 and report.texts_encoded >= report.texts_embedded > 0
    assert f"vector cache {damaged} is not used" in caplog.text
    assert damaged.read_bytes() == b"\x00\x01 not a database \xff" * 512


def test_an_error_while_embedding_a_rebuild_stops_it_and_leaves_the_served_version_as_it_was(
    client: Any, cached: Any, model: Any, catalog: Path
) -> None:
    served = ingest_catalog(client, cached, model, catalog, approvals=False)
    before = snapshot(client, served.index, model)
    uncached = cached.with_overrides(vector_cache=False)  # so the rebuild has to encode

    with pytest.raises(RuntimeError, match="the embedding service went away"):
        ingest_catalog(client, uncached, Failing(model, 2, RuntimeError("the embedding service went away")),
                       catalog, rebuild=True, approvals=False)

    manager = IndexManager(client, cached.index)
    current = manager.current()
    assert current is not None and current.index == served.index
    assert manager.versions() == [served.index]  # the half-filled new version is gone
    assert snapshot(client, served.index, model) == before
    assert not embedding_workers()


def test_an_ingest_stopped_by_its_caller_stops_embedding_too(
    client: Any, cached: Any, model: Any, catalog: Path
) -> None:
    counting = Failing(model, 10_000, RuntimeError("never reached"))
    uncached = cached.with_overrides(vector_cache=False)

    def stop_at_the_first_chunk(stage: str, done: int, total: int) -> None:
        if stage == "index":
            raise KeyboardInterrupt("stopped by the user")

    with pytest.raises(KeyboardInterrupt):
        ingest_catalog(client, uncached, counting, catalog, progress=stop_at_the_first_chunk, approvals=False)

    assert not embedding_workers()
    stopped_at = counting.encoded
    whole = Failing(model, 10_000, RuntimeError("never reached"))
    ingest_catalog(client, uncached.with_overrides(index=f"{cached.index}-whole"), whole, catalog, approvals=False)
    # the worker stopped a chunk or two past where its caller stopped, not at the catalog's end
    assert stopped_at < whole.encoded
