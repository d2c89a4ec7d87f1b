"""Read PTR's history (tool bundles + past queries) from a benchmark folder, and write it to OpenSearch.

Where bundles come from, in order:

* ToolLens-style scene files: ``scene_tool.txt`` (bundle id → tool id, one pair per line) and
  ``query_scene_<split>.txt`` (query id → bundle id), query texts from ``queries.jsonl``;
* otherwise ``qrels/<split>.tsv`` of a BEIR folder: each distinct set of relevant tools is a bundle,
  and the queries judged with exactly that set are its past queries.

:func:`index_history` builds a new index version beside the live one, checks its document count,
and only then moves the ``<catalog alias>-history`` alias onto it, so a failed load leaves the
previous history untouched.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from opensearchpy import OpenSearch
from opensearchpy.helpers import streaming_bulk

from toolsift.encoders.embedding import Embedder
from toolsift.errors import CatalogError, IndexingError
from toolsift.ingest.benchmarks import load_benchmark
from toolsift.sets.history_doc import history_alias, history_index_body
from toolsift.mappings.index import IndexManager
from toolsift.opensearch import BulkRetry, bulk_loading
from toolsift.records import Bundle, History, PastQuery

__all__ = ["load_history", "index_history", "bundle_tenants", "NO_TENANT"]

#: The tenants of a bundle no tenant may see whole (not a valid tenant name, so it matches no key).
NO_TENANT = "-"


def bundle_tenants(tools: Sequence[str], tool_tenants: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """Who may see a bundle of ``tools``: the tenants that may see each of them (public tools, those
    with no tenants, limit nothing); empty: public; :data:`NO_TENANT`: nobody but an all-tenant key."""
    allowed: set[str] | None = None
    for tool in tools:
        tenants = tool_tenants.get(tool, ())
        if tenants:
            allowed = set(tenants) if allowed is None else allowed & set(tenants)
    if allowed is None:
        return ()
    return tuple(sorted(allowed)) or (NO_TENANT,)


def _catalog_tenants(client: OpenSearch, catalog_alias: str, tools: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """tool id → its tenants in the catalog index (tools without tenants are left out)."""
    out: dict[str, tuple[str, ...]] = {}
    for start in range(0, len(tools), 1000):
        chunk = list(tools[start : start + 1000])
        answer = client.search(index=catalog_alias, body={
            "size": len(chunk), "_source": ["tenants"],
            "query": {"bool": {"filter": [{"ids": {"values": chunk}}, {"exists": {"field": "tenants"}}]}}})
        for hit in answer["hits"]["hits"]:
            out[hit["_id"]] = tuple(hit["_source"].get("tenants") or ())
    return out


def _pairs(path: Path) -> Iterator[tuple[int, str, str]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CatalogError(f"{path}: cannot be read ({exc.strerror})") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise CatalogError(f"{path}: line {number}: expected two whitespace-separated ids, got {line!r}")
        yield number, parts[0], parts[1]


def load_history(path: Path, split: str = "train") -> History:
    """The bundles and past queries of ``split`` in a BEIR folder (scene files first, else qrels).

    Raises:
        CatalogError: a file is missing or malformed; the message names the file and line.
    """
    benchmark = load_benchmark(path, split=split)
    scene_tools, query_scenes = path / "scene_tool.txt", path / f"query_scene_{split}.txt"
    if scene_tools.is_file() and query_scenes.is_file():
        tools: dict[str, list[str]] = {}
        for _, bundle, tool in _pairs(scene_tools):
            tools.setdefault(bundle, []).append(tool)
        bundles = {b: Bundle(b, tuple(dict.fromkeys(t))) for b, t in tools.items()}
        queries = []
        for number, qid, bundle in _pairs(query_scenes):
            if bundle not in bundles:
                raise CatalogError(f"{query_scenes}: line {number}: bundle {bundle!r} is not in {scene_tools.name}")
            if qid not in benchmark.queries:
                raise CatalogError(f"{query_scenes}: line {number}: query {qid!r} is not in queries.jsonl")
            queries.append(PastQuery(qid, benchmark.queries[qid], bundle))
        return History(bundles, tuple(queries), source=f"{scene_tools.name} + {query_scenes.name}")
    if split not in benchmark.splits:
        raise CatalogError(f"{path}: no qrels/{split}.tsv and no scene files: nothing to build a history from")
    by_set: dict[tuple[str, ...], str] = {}
    queries = []
    for qid, rel in benchmark.qrels.items():
        tool_set = tuple(sorted(t for t, grade in rel.items() if grade > 0))
        if not tool_set or qid not in benchmark.queries:
            continue
        bundle_id = by_set.setdefault(tool_set, f"b{len(by_set)}")
        queries.append(PastQuery(qid, benchmark.queries[qid], bundle_id))
    bundles = {b: Bundle(b, tools_) for tools_, b in by_set.items()}
    return History(bundles, tuple(queries), source=f"qrels/{split}.tsv (one bundle per distinct relevant set)")


def _actions(
    history: History, index: str, vectors: Callable[[Sequence[PastQuery]], Sequence[Any]], tool_names: dict[str, str],
    batch: int, tool_tenants: Mapping[str, Sequence[str]],
) -> Iterator[dict[str, Any]]:
    texts = history.queries_of()
    visible = {b: bundle_tenants(bundle.tools, tool_tenants) for b, bundle in history.bundles.items()}
    for bundle in history.bundles.values():
        names = " ".join(tool_names.get(t, "") for t in bundle.tools)
        yield {"_index": index, "_id": f"bundle:{bundle.bundle_id}", "_source": {
            "kind": "bundle", "bundle_id": bundle.bundle_id, "tools": list(bundle.tools),
            "text": " ".join([*texts.get(bundle.bundle_id, []), names]).strip(),
            "n_queries": len(texts.get(bundle.bundle_id, [])), "tenants": list(visible[bundle.bundle_id]),
        }}
    for start in range(0, len(history.queries), batch):
        chunk = history.queries[start : start + batch]
        for q, vector in zip(chunk, vectors(chunk)):
            yield {"_index": index, "_id": f"query:{q.query_id}", "_source": {
                "kind": "query", "bundle_id": q.bundle_id, "tools": list(history.bundles[q.bundle_id].tools),
                "text": q.text, "vector": [float(x) for x in vector], "tenants": list(visible[q.bundle_id]),
            }}


def index_history(
    client: OpenSearch,
    catalog_alias: str,
    history: History,
    embedder: Embedder,
    *,
    tool_names: dict[str, str] | None = None,
    meta: dict[str, Any] | None = None,
    alias: str | None = None,
    query_vectors: Mapping[str, np.ndarray | Sequence[float]] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> str:
    """Write ``history`` to a new index version and point the history alias at it; returns the index.

    Args:
        tool_names: tool id → name, added to each bundle's BM25 text.
        meta: extra ``_meta.toolsift`` entries (e.g. the calibrated PTR parameters under ``"ptr"``).
        alias: the alias to move (default ``<catalog_alias>-history``; calibration uses its own).
        query_vectors: past query id → vector, when already encoded (else the embedder encodes them).

    Each bundle and past query records who may see it (:func:`bundle_tenants` of its tools' tenants
    in the catalog), so a tenant's set recommendations never draw on another tenant's bundles.

    Raises:
        IndexingError: some documents failed; the new version is deleted and the alias not moved.
    """
    alias = alias or history_alias(catalog_alias)
    index = f"{alias}-{time.strftime('%Y%m%d%H%M%S')}-{time.time_ns() % 1_000_000:06d}"
    body = history_index_body(embedder.dimension, {
        "embedding_model": embedder.name, "catalog": catalog_alias, "source": history.source,
        "bundles": len(history.bundles), "queries": len(history.queries), **(meta or {}),
    })
    client.indices.create(index=index, body=body)
    expected = len(history.bundles) + len(history.queries)
    failed: list[dict[str, Any]] = []

    def vectors(chunk: Sequence[PastQuery]) -> Sequence[Any]:
        if query_vectors is not None and all(q.query_id in query_vectors for q in chunk):
            return [query_vectors[q.query_id] for q in chunk]
        return list(embedder.encode_query([q.text for q in chunk]))

    try:
        done = 0
        with bulk_loading(client, index):
            tool_tenants = _catalog_tenants(client, catalog_alias, sorted({t for b in history.bundles.values()
                                                                           for t in b.tools}))
            for ok, item in streaming_bulk(client, _actions(history, index, vectors, tool_names or {}, 256,
                                                            tool_tenants),
                                           chunk_size=500, raise_on_error=False, **BulkRetry().kwargs()):
                done += 1
                if not ok:
                    failed.append(item)
                if progress and done % 500 == 0:
                    progress(done, expected)
            client.indices.refresh(index=index)
        count = int(client.count(index=index)["count"])
        if failed or count != expected:
            raise IndexingError(f"history index {index!r}: {len(failed)} document(s) failed, {count} of {expected} "
                                "written; the new version was discarded", failed)
    except BaseException:
        client.indices.delete(index=index, ignore_unavailable=True)
        raise
    IndexManager(client, alias).swap(index)
    if progress:
        progress(expected, expected)
    return index

