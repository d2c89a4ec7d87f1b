"""``toolsift bench scale``: how toolsift behaves as the catalog grows, size after size, in one run.

Before the first size of a run, a warm-up: a small ingest (the first two servers of the smallest
catalog, without the bench's vector cache) and a few searches on a scratch index, dropped after, so the
first size is not charged with what the process and fresh cluster JVMs pay once (compiled code, loaded
models, pipelines). Then for each catalog size N (smallest first), on the same cluster:

1. **Catalog.** :func:`~toolsift.bench.scale_catalog.generate_catalog` writes N tools with a
   benchmark's needles inside (same seed at every size, so a larger catalog extends a smaller one),
   under ``OUT/catalogs/<N>``; a catalog written before with the same arguments is reused.
2. **Embedding, once.** Every text the index embeds (names, descriptions, parameters, full
   documents, …) goes through the bench's own vector cache (``OUT/vector-cache``): only the texts new
   at this size reach the model. Its seconds are the one-time cost of the tools this size adds (what
   the cache held before decides them); the catalog's cost is its texts over the encoder's texts/s
   (the rate of the largest size that encoded 1,000 texts or more), projected as the texts grow.
3. **Ingest** (``toolsift ingest``'s :func:`~toolsift.ingest.pipeline.ingest_catalog`, approvals off)
   into a fresh index ``<index>-scale-<N>`` whose shards and replicas follow :func:`scale_layout`
   (recorded), the vectors now known: tools/s is what validation, the screen, the document bodies and
   the cluster's bulk indexing (its HNSW graphs) take, the node's share growing with N. Then the
   seconds until every replica is assigned (green), and until the index is at rest as a searched one
   is: refreshed, no merge running, committed (a bulk load's force merge is seen only after a refresh,
   which a shard nobody searches skips: until then the segments before the merge stay on disk too).
4. **Size on disk** (``_stats``: store, primaries and all copies; Lucene documents; the primaries'
   bytes by file kind — stored fields (``_source``), doc values, terms and postings, norms, points,
   vectors and HNSW graphs — each also per tool) and **memory**: the index's heap (segment memory and
   the nested documents' bit sets, all copies), the JVM heap used on all nodes before the index and
   after the ingest (a difference blurred by garbage collection: a coarse figure), the k-NN plugin's
   native graph memory (``_plugins/_knn/stats`` ``graph_memory_usage``: what the Faiss and nmslib
   engines load; the Lucene engine toolsift's mapping uses keeps its graphs in the Lucene files, read
   through the page cache, so it reports 0 there, and the vector files' bytes are its off-heap
   working set).
5. **Needle quality**: NDCG@10 and R@5 of the needle queries on the N-tool catalog, each query sent to
   the search backend as the search API sends a plain ``{"query": ...}`` (top 10, the settings'
   defaults), scored by :func:`~toolsift.evaluation.metrics.evaluate`; beside it, on the same index and
   queries, the two floors (:data:`FLOORS`: BM25 over name and description, and the dense floor), and
   for each ranking the share of its top 10 that repeats a capability already above it
   (:func:`near_duplicate_share`: tools made from the same source tool, the catalog's ``copies.json``).
6. **Latency through the API**: ``toolsift serve api`` and the floor of ``toolsift bench load`` (one
   MiniLM encode and one plain k-NN query per request, same HTTP stack) as processes on loopback, one
   after the other, each driven by Locust at a fixed number of closed-loop clients for a fixed time
   (after a warm-up) with the needle queries: p50 / p95 / p99, requests/s, errors, and the API's p50
   over the floor's at this size. A service that answers nothing within its step (an overloaded
   machine) is recorded with the error and no figures; the size's other figures stand.
7. The index is deleted (the next size gets the cluster to itself).

Each figure's **growth** is its value at every size over its value at the smallest, and the exponent b
of a power law ``value ∝ N^b`` fitted by least squares on log-log over the sizes measured (b = 1: grows
with N; 0: flat). **Projections** to sizes not measured use the same power law; the quality
figures, which are bounded, use a straight line in log10(N) instead (their change per tenfold), cut to
[0, 1]. Both methods are written beside the projections.

Results go to ``OUT/scale.json`` (every size's record, the growth, the projections; written after each
size), ``OUT/scale.md`` (the tables) and ``OUT/scale.png`` (the plot). A size already in
``OUT/scale.json`` is not measured again: a run stopped part-way, or asked for more sizes, resumes
with the sizes missing (which must be larger than the largest measured: the vector cache already holds
a smaller catalog's texts). The settings that change a figure must match the recorded ones;
``redo`` starts over (results forgotten, vector cache emptied; catalogs are kept, they are the same).
The figures' growth and projections, the tables, the plot and the files are
:mod:`~toolsift.bench.scale_report`'s; this module measures.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError

from toolsift.config import Copies, Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import CatalogError, ClusterError, ConfigError, IndexingError, ToolsiftError
from toolsift.bench.load import SERVICE_PATHS, NoRequestCompletedError, free_port, load_environment, locust_step, serving, service_command
from toolsift.evaluation.metrics import evaluate
from toolsift.evaluation.runner import ranked_run
from toolsift.bench.scale_catalog import GENERATOR, ScaleCatalog, generate_catalog, load_scale_catalog
from toolsift.bench.scale_report import _DEEP, DEFAULT_PROJECTIONS, RESULTS_FILE, write_outputs
from toolsift.ingest.embed import document_vectors
from toolsift.ingest.loaders import load_catalog
from toolsift.ingest.pipeline import ingest_catalog, normalised_records
from toolsift.mappings.layout import SHARD_TOOLS, index_layout
from toolsift.encoders.vectorcache import CACHE_FILE, CachedEncoder, VectorCache
from toolsift.mappings import AgentDoc, F, ToolDoc, vector_field
from toolsift.mappings.index import IndexManager
from toolsift.opensearch import cap_terms, connect, wait_for_merge, wire_vector
from toolsift.plugin_scripts import LocalCluster
from toolsift.plugin_scripts.cluster import scratch_cluster
from toolsift.search import SearchBackend, SearchRequest

__all__ = [
    "Layout",
    "FLOORS",
    "near_duplicate_share",
    "first_copies",
    "capability_recall",
    "named_in_top",
    "SHARD_TOOLS",
    "floor_bodies",
    "scale_layout",
    "scale_cluster",
    "run_scale_bench",
    "compound_entries",
    "files_by_kind",
    "bench_catalog",
    "drop_index",
    "wait_green",
    "settle_index",
]

#: The local cluster's HTTP and transport ports: the first free run in each range (apart from the default
#: cluster's 9201-9209/9351-9359, the node-loss drill's 9260-9269/19360-19369, the cluster suite's
#: 9270-9279/19370-19379, the outage drill's 9280-9289 and the lifecycle tests' 9290-9298).
_HTTP_PORTS = range(9240, 9250)
_TRANSPORT_PORTS = range(19340, 19350)
#: Documents embedded per call in the embedding step (their distinct texts sorted by length together).
_EMBED_DOCS = 1000
#: Seconds of load before each measured step (not counted).
_WARMUP_S = 5.0
#: The bench's vector cache bound, MB: it must hold the largest catalog's texts (MiniLM: ~1.7 KB a text,
#: ~5 texts a tool: ~0.9 GB at 100k tools, ~9 GB at 1M), or an ingest's trim would drop a smaller size's.
_CACHE_MB = 65536
#: Settings recorded with the results that must match for a run to resume them.
_RESUME_KEYS = ("needles", "seed", "queries", "cluster", "nodes", "heap", "shards", "replicas", "clients", "seconds",
                "retriever", "embedding_model", "embedding_backend", "copies")
#: Index files by kind (Lucene file extensions).
_FILE_KINDS: dict[str, tuple[str, ...]] = {
    "stored_fields": ("fdt", "fdx", "fdm"),
    "doc_values": ("dvd", "dvm"),
    "postings": ("tim", "tip", "tmd", "doc", "pos", "pay", "psm"),
    "norms": ("nvd", "nvm"),
    "points": ("kdd", "kdi", "kdm"),
    "vectors": ("vec", "vex", "vem", "vemf", "veq", "vemq", "veb", "vemb"),
}


# ---------------------------------------------------------------------------------------------
# The layout rule


@dataclass(frozen=True)
class Layout:
    """An index's primaries and replicas, and the rule (or the override) that chose them."""

    shards: int
    replicas: int
    rule: str


def scale_layout(tools: int, nodes: int, *, shards: int | None = None, replicas: int | None = None) -> Layout:
    """The shards and replicas of an index of ``tools`` tools on a cluster of ``nodes`` nodes: the
    product's layout rule (:func:`toolsift.mappings.layout.index_layout`), its automatic replica
    counted as what it expands to here (one when a second node can hold it). ``shards`` /
    ``replicas`` override the rule.

    Raises:
        ConfigError: fewer than one tool or node, or fewer than one shard or replicas below 0.
    """
    chosen = index_layout(tools, nodes, shards=shards, replicas=replicas, given_as=("--shards", "--replicas"))
    return Layout(chosen.shards, chosen.replicas if chosen.replicas is not None else (1 if nodes > 1 else 0),
                  chosen.rule)


# ---------------------------------------------------------------------------------------------
# The cluster


@contextmanager
def scale_cluster(settings: Settings, nodes: int, folder: Path, *,
                  progress: Callable[[str], None] | None = None) -> Iterator[LocalCluster]:
    """A local cluster of ``nodes`` members of the bench's own, started, then stopped and its data deleted
    when the block ends: the first free HTTP ports from 9240 and transport ports from 19340, the cluster
    name ``toolsift-scale-cluster``, its data under ``folder``, no ml-commons; heap and k-NN memory limit
    per member are the ``cluster_heap`` and ``cluster_knn_memory_limit`` settings.

    Raises:
        ConfigError: fewer than two members, or no free ports in a row in those ranges.
        NodeError: the artifacts cannot be installed, or the cluster did not start.
    """
    if nodes < 2:
        raise ConfigError(f"a local cluster has two members or more, not {nodes}; measure one node with --existing")
    with scratch_cluster(settings, name="toolsift-scale", nodes=nodes, http_ports=_HTTP_PORTS,
                         transport_ports=_TRANSPORT_PORTS, folder=folder, progress=progress) as cluster:
        yield cluster


# ---------------------------------------------------------------------------------------------
# Measuring one size


def bench_catalog(out_dir: Path, size: int, needles: str, seed: int, queries: int | None,
             datasets: Path | None) -> ScaleCatalog:
    """The catalog of ``size`` tools, reused when one written before has the same arguments."""
    folder = out_dir / "catalogs" / str(size)
    if (folder / "manifest.json").is_file():
        try:
            found = load_scale_catalog(folder)
            manifest = found.manifest()
            asked, made_by = manifest.get("queries_asked"), manifest.get("generator")
        except CatalogError:  # not a catalog of this generator's (any more): written again
            found, asked, made_by = None, None, None
        if found is not None and (found.tools, found.needles, found.seed, asked, made_by) == (size, needles, seed, queries,
                                                                                            GENERATOR):
            return found
    return generate_catalog(folder, tools=size, needles=needles, seed=seed, queries=queries, datasets=datasets)


def _embed(embedder: Embedder, settings: Settings, catalog: Path, cache_dir: Path) -> dict[str, Any]:
    """Every text the index embeds, through the bench's vector cache: only the texts it lacks are encoded."""
    cache = VectorCache(cache_dir / CACHE_FILE, max_bytes=_CACHE_MB << 20)
    encoder = CachedEncoder(embedder, cache)
    started = time.perf_counter()
    try:
        chunk: list[ToolDoc | AgentDoc] = []
        records = load_catalog(catalog, "mcp", max_depth=settings.max_nesting_depth)
        for _, item in normalised_records(records, settings.max_field_chars, max_depth=settings.max_nesting_depth):
            if isinstance(item, (ToolDoc, AgentDoc)):
                chunk.append(item)
            if len(chunk) >= _EMBED_DOCS:
                document_vectors(encoder, chunk)
                chunk = []
        if chunk:
            document_vectors(encoder, chunk)
    finally:
        cache.close()
    seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 3), "texts_encoded": encoder.encoded, "texts_cached": encoder.cached,
            "texts_per_s": round(encoder.encoded / seconds, 1) if encoder.encoded and seconds else None,
            "includes": "load and normalise the catalog; look up every text in the cache; encode the texts it lacks"}


def drop_index(client: OpenSearch, alias: str) -> None:
    """Every version of ``alias``, its template, side indices and search pipelines."""
    IndexManager(client, alias).delete_all()
    client.indices.delete(index=f"{alias}-*", ignore_unavailable=True, expand_wildcards="all")
    try:
        pipelines = client.search_pipeline.get()
    except NotFoundError:
        pipelines = {}
    for pipeline in pipelines:
        if pipeline.startswith(f"{alias}-"):
            client.search_pipeline.delete(id=pipeline)


def _jvm_heap(client: OpenSearch) -> int:
    nodes = client.nodes.stats(metric="jvm")["nodes"]
    return sum(int(n["jvm"]["mem"]["heap_used_in_bytes"]) for n in nodes.values())


def _knn_native(client: OpenSearch) -> int:
    """The k-NN plugin's native graph memory on all nodes, bytes (its stats give kilobytes)."""
    stats = client.transport.perform_request("GET", "/_plugins/_knn/stats")
    return sum(int(n.get("graph_memory_usage", 0)) for n in stats.get("nodes", {}).values()) * 1024


def _vector_methods(client: OpenSearch, index: str) -> list[dict[str, Any]]:
    """The distinct ``method`` (engine, parameters) of the index's k-NN fields, with their counts."""
    found: dict[str, dict[str, Any]] = {}

    def walk(properties: Mapping[str, Any]) -> None:
        for spec in properties.values():
            if spec.get("type") == "knn_vector":
                method = spec.get("method", {})
                key = json.dumps(method, sort_keys=True)
                found.setdefault(key, {"method": method, "fields": 0})["fields"] += 1
            if isinstance(spec.get("properties"), Mapping):
                walk(spec["properties"])

    walk(client.indices.get_mapping(index=index)[index]["mappings"].get("properties", {}))
    return list(found.values())


def _vint(data: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def compound_entries(path: Path) -> list[tuple[str, int]]:
    """The files inside a Lucene compound file, from its entries file (``.cfe``): (name, bytes) each.

    The format of Lucene 9's ``Lucene90CompoundFormat``: an index header (magic, codec name, version,
    segment id, suffix), then the number of entries and, for each, its name (the file name after the
    segment's), offset and length (little-endian longs).

    Raises:
        ToolsiftError: not such a file.
    """
    data = path.read_bytes()
    try:
        if struct.unpack(">I", data[:4])[0] != 0x3FD76C17:
            raise ToolsiftError(f"{path}: not a Lucene file (no codec header)")
        length, pos = _vint(data, 4)
        if data[pos:pos + length] != b"Lucene90CompoundEntries":
            raise ToolsiftError(f"{path}: not a Lucene 9 compound entries file")
        pos += length + 4 + 16  # version, segment id
        pos += 1 + data[pos]  # suffix
        count, pos = _vint(data, pos)
        entries = []
        for _ in range(count):
            length, pos = _vint(data, pos)
            name = data[pos:pos + length].decode("utf-8")
            _, size = struct.unpack("<qq", data[pos + length:pos + length + 16])
            pos += length + 16
            entries.append((name, int(size)))
        return entries
    except (IndexError, struct.error, UnicodeDecodeError) as exc:
        raise ToolsiftError(f"{path}: a damaged compound entries file ({exc})") from None


def _kind(file_name: str) -> str:
    extension = file_name.rsplit(".", 1)[-1] if "." in file_name else ""
    return next((kind for kind, extensions in _FILE_KINDS.items() if extension in extensions), "other")


def files_by_kind(roots: Sequence[Path], uuid: str) -> dict[str, int] | None:
    """Bytes of the index ``uuid``'s files by kind (:data:`_FILE_KINDS`, else ``other``), all copies found
    under ``roots`` (nodes' data folders), compound files read entry by entry; None when none is found.

    ``_stats``' ``file_sizes`` cannot say this: it keeps one file per extension and segment, and the
    k-NN plugin writes one vector file of each extension per field.
    """
    kinds: dict[str, int] = dict.fromkeys((*_FILE_KINDS, "other"), 0)
    found = False
    for root in roots:
        for folder in root.glob(f"**/indices/{uuid}/*/index"):
            found = True
            for path in folder.iterdir():
                if not path.is_file() or path.suffix == ".cfs":  # a compound file's entries come from its .cfe
                    continue
                try:
                    entries = compound_entries(path) if path.suffix == ".cfe" else [(path.name, path.stat().st_size)]
                except ToolsiftError:  # unreadable entries: the compound file counts as one "other" file
                    compound = path.with_suffix(".cfs")
                    entries = [(path.name, path.stat().st_size)] + (
                        [(compound.name, compound.stat().st_size)] if compound.is_file() else [])
                except FileNotFoundError:  # merged away meanwhile
                    continue
                for name, size in entries:
                    kinds[_kind(name)] += size
    return kinds if found else None


def _disk(client: OpenSearch, index: str, tools: int, copies: int, roots: Sequence[Path]) -> dict[str, Any]:
    stats = client.indices.stats(index=index, metric="docs,store,segments")["indices"][index]
    primaries, total = stats["primaries"], stats["total"]
    pri_bytes, all_bytes = int(primaries["store"]["size_in_bytes"]), int(total["store"]["size_in_bytes"])
    uuid = client.indices.get_settings(index=index)[index]["settings"]["index"]["uuid"]
    kinds = files_by_kind(roots, str(uuid))
    return {
        "primaries_bytes": pri_bytes, "total_bytes": all_bytes,
        "primaries_bytes_per_tool": round(pri_bytes / tools, 1), "total_bytes_per_tool": round(all_bytes / tools, 1),
        "lucene_docs": int(primaries["docs"]["count"]),
        "lucene_docs_per_tool": round(int(primaries["docs"]["count"]) / tools, 2),
        "segments": int(primaries["segments"]["count"]),
        "kinds": kinds,
        "kinds_per_tool": {k: round(v / copies / tools, 1) for k, v in kinds.items()} if kinds is not None else None,
        "kinds_note": ("bytes of every copy's files by kind, read from the nodes' data folders; per tool: per copy. "
                       "doc_values are the keyword and numeric columns (indexes before schema 7 also held "
                       "each k-NN vector a second time there); vectors are the HNSW files (raw vectors and graphs)")
        if kinds is not None else "file kinds are read from the nodes' data folders: not on this machine",
    }


def _memory(client: OpenSearch, index: str, tools: int, heap_before: int) -> dict[str, Any]:
    segments = client.indices.stats(index=index, metric="segments")["indices"][index]["total"]["segments"]
    index_heap = int(segments.get("memory_in_bytes", 0)) + int(segments.get("fixed_bit_set_memory_in_bytes", 0))
    heap_after = _jvm_heap(client)
    native = _knn_native(client)
    return {
        "index_heap_bytes": index_heap, "index_heap_bytes_per_tool": round(index_heap / tools, 2),
        "jvm_heap_before_bytes": heap_before, "jvm_heap_after_bytes": heap_after,
        "jvm_heap_delta_bytes_per_tool": round((heap_after - heap_before) / tools, 1),
        "knn_native_bytes": native, "knn_native_bytes_per_tool": round(native / tools, 2),
        "vector_methods": _vector_methods(client, index),
        "notes": "index heap: segment memory + nested bit sets, all copies (Lucene 9 keeps terms and doc values off "
                 "heap); JVM heap: used on all nodes before the index, after the ingest and after the searches (the "
                 "delta per tool is blurred by garbage collection and by anything else the cluster serves); k-NN native: graphs the Faiss/nmslib engines "
                 "load (the Lucene engine reads its graphs from the vector files through the page cache: "
                 "disk.kinds.vectors is that working set)",
    }



#: The baselines ranked beside the default search at every size: same index, same needle queries.
FLOORS: dict[str, str] = {
    "bm25": "BM25 over the tool's name and description (multi_match, best fields), tool documents only",
    "dense": "the dense floor: the query encoded once by the index's model, one k-NN query on full_doc_vector "
             "(k 10), tool documents only",
}
_FLOOR_BATCH = 50


def near_duplicate_share(ranking: Sequence[str], groups: Mapping[str, int], k: int = 10) -> float:
    """The share of the top ``k`` that repeats a capability already above it: tools of one copy group
    (made from the same source tool, ``ScaleCatalog.copy_groups``) after its first."""
    top, seen, repeats = list(ranking)[:k], set(), 0
    for tool_id in top:
        group = groups.get(tool_id)
        if group is None:
            continue
        repeats += group in seen
        seen.add(group)
    return repeats / len(top) if top else 0.0


def floor_bodies(queries: Mapping[str, str], vectors: Mapping[str, np.ndarray]) -> dict[str, list[dict[str, Any]]]:
    """Each floor's search body per query (:data:`FLOORS`), in ``queries``' order: BM25 over name and
    description, its words capped as the product caps them (a whole request pasted as a query stays
    under the cluster's clause limit), and one k-NN query on ``full_doc_vector``; tools only."""
    tools_only = {"term": {F.entity: "tool"}}
    return {
        "bm25": [{"size": 10, "_source": False, "query": {"bool": {
            "must": {"multi_match": {"query": cap_terms(text, clauses=2), "fields": [F.name, F.description]}},
            "filter": tools_only}}} for text in queries.values()],
        "dense": [{"size": 10, "_source": False, "query": {"knn": {vector_field(F.full_doc): {
            "vector": wire_vector(vectors[qid]), "k": 10, "filter": tools_only}}}} for qid in queries],
    }


def first_copies(ranking: Sequence[str], groups: Mapping[str, int]) -> list[str]:
    """``ranking`` with every tool that repeats a copy group above it left out (one capability once)."""
    seen: set[int] = set()
    kept = []
    for tool_id in ranking:
        group = groups.get(tool_id)
        if group is not None:
            if group in seen:
                continue
            seen.add(group)
        kept.append(tool_id)
    return kept


def named_in_top(ranking: Sequence[str], k: int, also_on: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """The top ``k`` tool ids of ``ranking``, each followed by the copies it names in ``also_on`` (tool id → ids)."""
    return [named for t in list(ranking)[:k] for named in (t, *(also_on or {}).get(t, ()))]


def capability_recall(ranking: Sequence[str], gold: Iterable[str], groups: Mapping[str, int], k: int = 5,
                      also_on: Mapping[str, Sequence[str]] | None = None) -> float:
    """The share of ``gold`` whose capability is in the top ``k``: the gold tool itself or any tool of its
    copy group (an answer that names where else a capability lives hands the agent every copy), the
    copies a top-``k`` tool names in its ``also_on`` (tool id → ids) counted as in the answer."""
    wanted = list(gold)
    if not wanted:
        return 0.0
    top = named_in_top(ranking, k, also_on)
    found_groups = {groups[t] for t in top if t in groups}
    hits = sum(1 for g in wanted if g in top or (g in groups and groups[g] in found_groups))
    return hits / len(wanted)


def _floor_rankings(client: OpenSearch, settings: Settings, embedder: Embedder,
                    queries: Mapping[str, str]) -> dict[str, dict[str, list[str]]]:
    """Each floor's top 10 of each query (:func:`floor_bodies`), sent in ``_msearch`` batches."""
    qids = list(queries)
    encoded = embedder.encode_query([queries[q] for q in qids])
    bodies = floor_bodies(queries, dict(zip(qids, encoded, strict=True)))
    rankings: dict[str, dict[str, list[str]]] = {}
    for floor, requests in bodies.items():
        ranked: dict[str, list[str]] = {}
        for start in range(0, len(requests), _FLOOR_BATCH):
            lines: list[dict[str, Any]] = []
            for body in requests[start:start + _FLOOR_BATCH]:
                lines += [{"index": settings.index}, body]
            answers = client.msearch(body=lines)["responses"]
            for qid, answer in zip(qids[start:start + _FLOOR_BATCH], answers, strict=True):
                if "error" in answer:
                    raise IndexingError(f"the {floor} floor's query failed on {settings.index}: {answer['error']}")
                ranked[qid] = [hit["_id"] for hit in answer["hits"]["hits"]]
        rankings[floor] = ranked
    return rankings


def _ranking_figures(qrels: Mapping[str, Mapping[str, int]], rankings: Mapping[str, Sequence[str]],
                     groups: Mapping[str, int]) -> dict[str, float]:
    metrics = evaluate(qrels, {q: ranked_run(rankings.get(q, ()), 10) for q in qrels}, ["ndcg@10", "recall@5"])
    shares = [near_duplicate_share(rankings.get(q, ()), groups) for q in qrels]
    return {**{k: round(v, 4) for k, v in metrics.items()},
            "near_duplicate_share@10": round(sum(shares) / len(shares), 4) if shares else 0.0}


def _rankings(backend: SearchBackend, queries: Mapping[str, str], copies: Copies,
              ) -> tuple[dict[str, list[str]], dict[str, dict[str, list[str]]]]:
    """Each query's top :data:`_DEEP` tool ids as the search API ranks them with ``copies``, and each
    ranked tool's ``also_on`` (the copies it stands for), by query."""
    ranked: dict[str, list[str]] = {}
    also_on: dict[str, dict[str, list[str]]] = {}
    for qid, text in queries.items():
        # The ranking does not depend on top_k (the first stage is as deep either way): one request
        # gives the top 10 and enough beyond it to rank without the gold tools' own variants.
        response = backend.search(SearchRequest(query=text, top_k=_DEEP, explain=False, copies=copies))
        tools = response.result.tools if response.result is not None else ()
        ranked[qid] = [t.doc_id for t in tools]
        also_on[qid] = {t.doc_id: [c.doc_id for c in t.also_on] for t in tools if t.also_on}
    return ranked, also_on


def _quality(client: OpenSearch, settings: Settings, embedder: Embedder, scale: ScaleCatalog) -> dict[str, Any]:
    benchmark = scale.benchmark()
    variants = scale.manifest().get("near_duplicates") or {}
    assert isinstance(variants, dict)
    groups = scale.copy_groups()
    backend = SearchBackend(client, settings, embedder=embedder, source="bench")
    qids = [q for q in benchmark.qrels if q in benchmark.queries]
    queries = {q: benchmark.queries[q] for q in qids}
    every, _ = _rankings(backend, queries, "all")
    detected, also_on = _rankings(backend, queries, "once")
    ranked, ranked_also = (detected, also_on) if settings.copies == "once" else (every, {})
    without_copies: dict[str, dict[str, float]] = {}
    for qid in qids:
        copies = {v for gold in benchmark.qrels[qid] for v in variants.get(gold, ())}
        without_copies[qid] = ranked_run((i for i in ranked[qid] if i not in copies), 10)
    qrels = {q: benchmark.qrels[q] for q in qids}
    blind = evaluate(qrels, without_copies, ["ndcg@10", "recall@5"])
    deep = evaluate(qrels, {q: ranked_run(ranked[q], _DEEP) for q in qids}, [f"recall@{_DEEP}"])
    collapsed = {q: first_copies(every[q], groups) for q in qids}
    once = evaluate(qrels, {q: ranked_run(collapsed[q], 10) for q in qids}, ["ndcg@10", "recall@5"])
    relevant = {q: [t for t, grade in qrels[q].items() if grade > 0] for q in qids}

    def mean_capability_recall(rankings: Mapping[str, Sequence[str]],
                               named: Mapping[str, Mapping[str, Sequence[str]]] | None = None) -> float:
        return sum(capability_recall(rankings[q], relevant[q], groups, also_on=(named or {}).get(q))
                   for q in qids) / max(len(qids), 1)

    def mean_named_recall(rankings: Mapping[str, Sequence[str]],
                          named: Mapping[str, Mapping[str, Sequence[str]]]) -> float:
        """By tool id, the copies a top-5 tool names in ``also_on`` counted as in the answer."""
        found = [len(set(relevant[q]) & set(named_in_top(rankings[q], 5, named[q]))) / len(relevant[q])
                 for q in qids if relevant[q]]
        return sum(found) / max(len(found), 1)

    by_capability = {"default": mean_capability_recall(ranked, ranked_also), "every_copy": mean_capability_recall(every),
                     "detected_once": mean_capability_recall(detected, also_on),
                     "one_capability_once": mean_capability_recall(collapsed)}
    floors = _floor_rankings(client, settings, embedder, queries)
    return {"queries": len(qids), **_ranking_figures(qrels, ranked, groups),
            **{k: round(v, 4) for k, v in deep.items()},
            "copies_setting": settings.copies,
            "copies": {"all": _ranking_figures(qrels, every, groups),
                       "once": {**_ranking_figures(qrels, detected, groups),
                                "recall@5_named": round(mean_named_recall(detected, also_on), 4)}},
            "without_near_duplicates": {k: round(v, 4) for k, v in blind.items()},
            "one_capability_once": {k: round(v, 4) for k, v in once.items()},
            "capability_recall@5": {k: round(v, 4) for k, v in by_capability.items()},
            "floors": {name: _ranking_figures(qrels, floors[name], groups) for name in FLOORS},
            "request": "each needle query as the search API sends {\"query\": ...}: the settings' defaults "
                       "(copies_setting: the copies setting; copies.all / copies.once: the same queries with "
                       "every copy ranked, and with each capability once by the product's detector, "
                       "toolsift.ranker.copies); "
                       "without_near_duplicates: the same ranking with the query's gold tools' own variants "
                       "(manifest near_duplicates: renamed/reworded copies, never relevant) left out; "
                       f"recall@{_DEEP}: the gold tools in the default ranking's top {_DEEP} (what a second "
                       "stage could bring up); one_capability_once: the same ranking with each copy group's "
                       "first tool only (copies.json: a perfect duplicate detector keeping the best-ranked copy, "
                       "scored by tool id); capability_recall@5: the share of gold tools whose capability (the "
                       "tool or any copy of it) is in the top 5, of the default ranking and of the one-per-group "
                       "one, every_copy: of the ranking with every copy, detected_once: of the detector's ranking, "
                       "the copies a top-5 tool names in also_on counted as in the answer; copies.once.recall@5_named: "
                       "by tool id, the same copies counted (never below copies.all's R@5: a gold tool left out "
                       "is named by the copy kept above it); "
                       "near_duplicate_share@10: the share of the top 10 that repeats a capability above it "
                       "(copies.json: tools made from one source tool)",
            "floors_are": FLOORS}


def _latency(settings: Settings, queries: Sequence[str], clients: int, seconds: float) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="toolsift-scale-load-"))
    try:
        base, key = load_environment(settings, queries, folder)
        figures: dict[str, Any] = {"clients": clients, "seconds": seconds, "warmup_seconds": min(_WARMUP_S, seconds)}
        for name, path in SERVICE_PATHS.items():
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            env = {**base, "TOOLSIFT_LOAD_KEY": key if name == "api" else ""}
            with serving(service_command(name, port), env, url):
                with suppress(NoRequestCompletedError):  # a cold service: the warm-up is what warms it
                    locust_step(name, url, path, clients, min(_WARMUP_S, seconds), env, folder)
                try:
                    step = locust_step(name, url, path, clients, seconds, env, folder)
                except NoRequestCompletedError as exc:
                    # An overloaded machine must not cost the size's other figures (quality took most of it).
                    figures[name] = {"error": str(exc)}
                    continue
            figures[name] = {k: v for k, v in asdict(step).items() if k not in ("service", "clients", "seconds")}
        api, floor = figures["api"].get("p50"), figures["floor"].get("p50")
        figures["api_over_floor_p50"] = round(api / floor, 2) if api and floor else None
        return figures
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def wait_green(client: OpenSearch, index: str, timeout_s: float = 600.0) -> float:
    """Seconds until every copy of ``index`` is assigned.

    Raises:
        ClusterError: not green within ``timeout_s``.
    """
    started = time.perf_counter()
    health = client.cluster.health(index=index, wait_for_status="green", timeout=f"{int(timeout_s)}s",
                                   request_timeout=timeout_s + 30)
    if health.get("status") != "green":
        raise ClusterError(f"index {index} was not green within {timeout_s:g} s (status {health.get('status')}): "
                           "are there enough nodes for its replicas?")
    return round(time.perf_counter() - started, 3)


def settle_index(client: OpenSearch, index: str, timeout_s: float = 900.0) -> float:
    """Seconds until ``index`` is at rest, as a searched index is: refreshed (a bulk load's force merge is
    only seen by a refresh, and a shard nobody searched for 30 s skips the periodic one: until then it
    keeps the segments before the merge and the merged one on disk, twice the bytes), no merge running,
    and committed (files no reader holds are deleted).

    Raises:
        ClusterError: merges still running after ``timeout_s``.
    """
    started = time.perf_counter()
    client.indices.refresh(index=index)
    while client.indices.stats(index=index, metric="merge")["_all"]["total"]["merges"]["current"]:
        if time.perf_counter() - started > timeout_s:
            raise ClusterError(f"index {index} was still merging after {timeout_s:g} s")
        time.sleep(1.0)
    client.indices.refresh(index=index)
    client.indices.flush(index=index, force=True, wait_if_ongoing=True)
    return round(time.perf_counter() - started, 3)


def _first_servers(path: Path, count: int) -> list[Any]:
    """The first ``count`` servers of a catalog file (a JSON list), read without reading the whole file."""
    decoder = json.JSONDecoder()
    servers: list[Any] = []
    buffer, pos = "", 0
    with path.open(encoding="utf-8") as handle:
        while len(servers) < count:
            while pos < len(buffer) and buffer[pos] in " \t\r\n[,":
                pos += 1
            try:
                server, pos = decoder.raw_decode(buffer, pos)
                servers.append(server)
                continue
            except json.JSONDecodeError:
                chunk = handle.read(1 << 16)
                if not chunk:
                    break
                buffer, pos = buffer[pos:] + chunk, 0
    return servers


def _warm_up(client: OpenSearch, settings: Settings, embedder: Embedder, scale: ScaleCatalog, layout: Layout,
             folder: Path) -> float:
    """Seconds of one small ingest (the first servers of ``scale``'s catalog, no vector cache: nothing reaches
    the bench's) and a few searches on a scratch index, dropped after: what the process and the cluster's
    JVMs pay the first time (code compiled, models and pipelines loaded) is not charged to the first size."""
    started = time.perf_counter()
    catalog = folder / "warmup.json"
    catalog.write_text(json.dumps(_first_servers(scale.catalog_path, 2), ensure_ascii=False), encoding="utf-8")
    alias = f"{settings.index}-scale-warmup"
    target = settings.with_overrides(index=alias, shards=layout.shards, replicas=layout.replicas, vector_cache=False,
                                     query_log=False, eval_runs=False)
    drop_index(client, alias)
    try:
        ingest_catalog(client, target, embedder, catalog, fmt="mcp", approvals=False)
        wait_green(client, alias)
        backend = SearchBackend(client, target, embedder=embedder, source="bench")
        for query in list(scale.queries().values())[:5]:
            backend.search(SearchRequest(query=query, top_k=10, explain=False))
    finally:
        drop_index(client, alias)
    return round(time.perf_counter() - started, 1)


def _measure(client: OpenSearch, settings: Settings, embedder: Embedder, scale: ScaleCatalog, layout: Layout,
             cache_dir: Path, roots: Sequence[Path], clients: int, seconds: float,
             say: Callable[[str], None]) -> dict[str, Any]:
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    size = scale.tools
    say(f"{size:,} tools: embedding the texts the cache lacks")
    embedding = _embed(embedder, settings, scale.catalog_path, cache_dir)
    say(f"{size:,} tools: {embedding['texts_encoded']} texts encoded in {embedding['seconds']:.1f} s "
        f"({embedding['texts_cached']} cached)")
    alias = f"{settings.index}-scale-{size}"
    target = settings.with_overrides(index=alias, shards=layout.shards, replicas=layout.replicas, vector_cache=True,
                                     vector_cache_dir=cache_dir, vector_cache_max_mb=_CACHE_MB, query_log=False,
                                     eval_runs=False)
    drop_index(client, alias)
    heap_before = _jvm_heap(client)
    try:
        say(f"{size:,} tools: ingest into {alias} ({layout.shards} primaries, {layout.replicas} replica(s))")
        report = ingest_catalog(client, target, embedder, scale.catalog_path, fmt="mcp", approvals=False)
        if not report.ok:
            first = (report.rejected[0].to_dict() if report.rejected else report.failed[0])
            raise IndexingError(f"the ingest of {scale.catalog_path} into {alias} rejected {len(report.rejected)} "
                                f"record(s) and failed {len(report.failed)} write(s); the first: {first}", report.failed)
        merge_s = wait_for_merge(client, report.index, report.merge_task) if report.merge_task else 0.0
        green_s = wait_green(client, alias)
        settle_s = settle_index(client, alias)
        documents = report.tools + report.agents
        ingest = {"seconds": round(report.seconds, 3), "tools": report.tools, "agents": report.agents,
                  "tools_per_s": round(report.tools / report.seconds, 1),
                  "documents_per_s": round(documents / report.seconds, 1),
                  "texts_encoded": report.texts_encoded, "texts_cached": report.texts_cached,
                  "embed_seconds": round(report.embed_seconds, 3), "green_seconds": green_s,
                  "settle_seconds": settle_s, "index": report.index,
                  "segments": report.segments, "merge_seconds": round(merge_s, 3),
                  "includes": "validation and screen, document bodies (vectors from the cache), bulk indexing "
                              "(the cluster's HNSW graphs), the final refresh; a force merge to one segment a "
                              "primary (where the load wrote more) runs in the background after it: merge_seconds "
                              "is the wait for it, before anything is measured"}
        say(f"{size:,} tools: ingested in {report.seconds:.1f} s ({ingest['tools_per_s']} tools/s), green after "
            f"{green_s:.1f} s")
        disk = _disk(client, report.index, report.tools, 1 + layout.replicas, roots)
        memory = _memory(client, report.index, report.tools, heap_before)
        say(f"{size:,} tools: needle queries")
        quality = _quality(client, target, embedder, scale)
        say(f"{size:,} tools: NDCG@10 {quality['ndcg@10']:.3f}, R@5 {quality['recall@5']:.3f}; "
            f"API and floor under {clients} client(s) for {seconds:g} s each")
        latency = _latency(target, list(scale.queries().values()), clients, seconds)
        memory["jvm_heap_after_search_bytes"] = _jvm_heap(client)
    finally:
        drop_index(client, alias)
    return {
        "tools": size, "servers": scale.servers, "needle_tools": scale.needle_tools,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "catalog": {"path": str(scale.catalog_path), "bytes": scale.catalog_path.stat().st_size,
                    "queries": scale.query_count},
        "layout": {**asdict(layout), "index": alias},
        "embedding": embedding, "ingest": ingest, "disk": disk, "memory": memory, "quality": quality,
        "latency": latency,
        "load_average": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
        "wall_seconds": round(time.perf_counter() - started, 1),
    }


# ---------------------------------------------------------------------------------------------
# The run


def _previous(out_dir: Path, config: Mapping[str, Any], redo: bool) -> dict[str, Any]:
    """The results recorded in ``out_dir`` when they were measured with ``config`` (none with ``redo``).

    Raises:
        ConfigError: they were measured with other settings (which, and how to start over).
    """
    path = out_dir / RESULTS_FILE
    if redo or not path.is_file():
        return {}
    try:
        previous = json.loads(path.read_text(encoding="utf-8"))
        recorded = previous["config"]
        sizes = previous["sizes"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path} is not a bench scale result ({exc}); use another --out or --redo") from None
    if not isinstance(recorded, dict) or not isinstance(sizes, dict):
        raise ConfigError(f"{path} is not a bench scale result; use another --out or --redo")
    differ = [f"{k}: {recorded.get(k)!r} there, {config.get(k)!r} now" for k in _RESUME_KEYS
              if recorded.get(k) != config.get(k)]
    if differ:
        raise ConfigError(f"{path} was measured with other settings ({'; '.join(differ)}); use another --out, the "
                          "same settings, or --redo to start over")
    return dict(previous)


def run_scale_bench(
    settings: Settings,
    embedder: Embedder,
    out_dir: Path,
    sizes: Sequence[int],
    *,
    nodes: int = 3,
    existing: bool = False,
    needles: str = "toolink",
    seed: int = 0,
    queries: int | None = None,
    shards: int | None = None,
    replicas: int | None = None,
    clients: int = 2,
    seconds: float = 30.0,
    project: Sequence[int] = DEFAULT_PROJECTIONS,
    datasets: Path | None = None,
    redo: bool = False,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Measure toolsift at each catalog size of ``sizes`` (the module's steps) and write the results.

    Args:
        settings: toolsift's settings; with ``existing`` the cluster they point at is measured, and
            ``settings.index`` + ``-scale-<N>`` names each size's index either way.
        embedder: the embedding model (ingest and the needle queries; the served API loads its own).
        out_dir: where the results, the catalogs and the bench's vector cache go.
        sizes: catalog sizes in tools (measured smallest first).
        nodes: members of the bench's own local cluster (2-9); ignored with ``existing``.
        existing: measure the cluster ``settings`` point at instead of a local cluster of the bench's own.
        needles, seed, queries, datasets: the catalogs' (:func:`generate_catalog`).
        shards, replicas: override :func:`scale_layout`'s rule.
        clients, seconds: Locust clients and seconds of load per service and size.
        project: sizes each figure is projected to (those not measured).
        redo: forget the sizes recorded in ``out_dir`` and empty the vector cache.
        progress: called with one line per step.

    Returns:
        The results, as written to ``out_dir/scale.json``; ``outputs`` names the files written and
        ``skipped`` the sizes already measured.

    Raises:
        ConfigError: no sizes, a size at or below 0, results in ``out_dir`` measured with other settings,
            a size smaller than the largest measured, no free ports, Locust or matplotlib missing.
        CatalogError: a size too small for the needle set.
        NodeError / ClusterError: the cluster cannot be started or reached, or an index stays short of
            green.
        IndexingError: an ingest rejected a record or failed a write.
    """
    say = progress or (lambda _m: None)
    asked = sorted(set(sizes))
    if not asked or asked[0] < 1:
        raise ConfigError(f"bench scale needs catalog sizes of at least one tool, got {list(sizes)}")
    if clients < 1 or seconds < 1:
        raise ConfigError(f"bench scale needs at least one client and one second of load, got {clients} and {seconds}")
    out_dir = Path(out_dir)
    cache_dir = out_dir / "vector-cache"
    config = {"needles": needles, "seed": seed, "queries": queries, "cluster": "existing" if existing else "local",
              "nodes": None if existing else nodes, "heap": None if existing else settings.cluster_heap,
              "shards": shards, "replicas": replicas, "clients": clients, "seconds": seconds,
              "retriever": settings.retriever, "embedding_model": embedder.name,
              "embedding_backend": str(getattr(embedder, "backend", "torch")), "copies": settings.copies}
    previous = _previous(out_dir, config, redo)
    if redo:
        shutil.rmtree(cache_dir, ignore_errors=True)
    measured = {int(s) for s in previous.get("sizes", {})}
    todo = [n for n in asked if n not in measured]
    if measured and todo and todo[0] < max(measured):
        raise ConfigError(f"size {todo[0]:,} is below the largest size measured in {out_dir} ({max(measured):,}): the "
                          "vector cache already holds its texts, so its embedding would not be measured; use --redo "
                          "to measure every size from the smallest")
    results: dict[str, Any] = previous or {"config": config, "sizes": {}, "runs": []}
    # every catalog first: a size the needles do not fit fails before a cluster starts
    catalogs = {n: bench_catalog(out_dir, n, needles, seed, queries, datasets) for n in todo}
    run_started = time.perf_counter()
    if todo:
        with _target(settings, nodes, existing, out_dir, say) as (target, node_count, roots):
            client = connect(target)
            results["environment"] = {
                "cpu_count": os.cpu_count(), "cluster_nodes": node_count, "device": embedder.device,
                "cluster_heap": None if existing else settings.cluster_heap,
                "knn_memory_limit": None if existing else settings.cluster_knn_memory_limit,
            }
            say("warming up: a small ingest and a few searches on a scratch index")
            results["environment"]["warmup_seconds"] = _warm_up(
                client, target, embedder, catalogs[todo[0]], scale_layout(todo[0], node_count, shards=shards,
                                                                          replicas=replicas), out_dir / "catalogs")
            for size in todo:
                layout = scale_layout(size, node_count, shards=shards, replicas=replicas)
                record = _measure(client, target, embedder, catalogs[size], layout, cache_dir, roots, clients, seconds,
                                  say)
                before = [results["sizes"][str(n)]["embedding"]["seconds"] for n in sorted(measured) if n < size]
                record["embedding"]["cumulative_seconds"] = round(sum(before) + record["embedding"]["seconds"], 3)
                results["sizes"][str(size)] = record
                measured.add(size)
                write_outputs(results, out_dir, project)
                say(f"{size:,} tools: done in {record['wall_seconds']:.0f} s")
    results["runs"] = [*results.get("runs", []), {
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "measured": todo,
        "skipped": [n for n in asked if n not in todo], "seconds": round(time.perf_counter() - run_started, 1)}]
    paths = write_outputs(results, out_dir, project)
    return {**results, "outputs": {k: str(v) for k, v in paths.items()}, "skipped": [n for n in asked if n not in todo]}


@contextmanager
def _target(settings: Settings, nodes: int, existing: bool, out_dir: Path,
            say: Callable[[str], None]) -> Iterator[tuple[Settings, int, list[Path]]]:
    """The settings pointing at the cluster measured, its node count, and where its nodes' data may be (an
    existing cluster's: the data folder of toolsift's managed node, if it is on this machine)."""
    if existing:
        client = connect(settings)
        yield settings, len(client.nodes.info(metric="process")["nodes"]), [settings.data_dir]
        return
    folder = out_dir / "cluster"
    with scale_cluster(settings, nodes, folder, progress=say) as cluster:
        yield settings.with_overrides(opensearch_url=",".join(cluster.urls)), nodes, [folder]
