"""``toolsift bench vectors``: the k-NN encoding and HNSW parameters of a tool vector, chosen by measurement.

The managed node has the Lucene engine only (the Maven Central k-NN zip carries no native libraries), so
the choices measured are those the Lucene engine offers, each on a bench index of its own holding one
``knn_vector`` field — the tools' **description** vector (``description_vector``, what multi-field
search and Tool-to-Agent query; a tool has no name vector) — beside a keyword id and a keyword server:

- **the product's mapping** (:func:`~toolsift.mappings.template.knn_mapping`: HNSW, cosine similarity,
  fp32, its ``m`` and ``ef_construction``), the baseline; the same **unmerged** (bulk with periodic
  refreshes, no force merge: the segments a live index has, each its own graph);
- ``m`` and ``ef_construction`` varied one at a time around the baseline (:data:`DEFAULT_VARIANTS`);
- ``ef_search`` at query time through the k-NN query's ``method_parameters`` (accepted by the Lucene
  engine on OpenSearch 2.19; the k-NN plugin hands Lucene ``max(k, ef_search)`` candidates, so a value
  below ``k`` is expected to change nothing: the figures say whether it does);
- **Lucene scalar quantisation** (``encoder: sq``: int7, the quantiles Lucene's default confidence
  interval gives; the raw fp32 vectors stay on disk too, for merges);
- **byte vectors** (``data_type: byte``): the unit-length vectors multiplied by a scale, rounded and
  clipped to [-128, 127] — ``x127`` (the plain scale) or ``scaled`` (127 over the largest
  ``|component|`` of the catalog's vectors, so the bytes use their whole range); queries are scaled
  the same way.

Each index is filled the same way (``streaming_bulk``, refreshes off, one refresh, a force merge to one
segment: the product's bulk load), timed (bulk, refresh and merge seconds). Then every query is sent to
every variant — round-robin, the order rotated per query so machine noise hits all alike, after a
warm-up — as one sequential client: a k-NN query with ``k`` = 100 candidates and ``size`` 100. Figures
per variant:

- **recall@10 / recall@100 against exact search**: the share of the top 10 / 100 whose exact cosine
  is at least the exact k-th best's (ties count: the catalog holds duplicate descriptions), the
  exact ranking being brute-force cosine in numpy over the same fp32 vectors;
- **needle NDCG@10** of the approximate top 10 against the catalog's needle qrels, beside exact
  search's (the ceiling);
- **latency**: p50 / p95 of the response's ``took`` and of the wall clock through opensearch-py;
- **bytes per tool**: the index's files by extension (``_stats`` ``include_segment_file_sizes``; one
  vector field per index, so nothing is lost by extension): vector files (``.vec`` raw vectors,
  ``.vex`` graph, ``.veq`` quantised vectors and their metadata), doc values (``.dvd``: the k-NN field
  keeps its vector a second time there, besides the keywords), the whole store;
- **RAM per tool**: what the Lucene engine reads while searching, through the OS page cache (no
  native memory: the k-NN plugin's ``graph_memory_usage`` is 0 for Lucene): the graph (``.vex``)
  plus the vectors the search scores — the quantised ones (``.veq``) under ``sq``, else ``.vec``.

The queries are the catalog's needle queries, topped up to ``min_queries`` with the descriptions of
a seeded random sample of the catalog's tools used as queries (their own tool is their exact top 1).
The vectors come through the vector cache (``settings.vector_cache_path``): a catalog's descriptions
are encoded once, whoever asks first. The bench indices are named ``toolsift-bench-vectors-<pid>-<token>-<n>``
(runs side by side never touch each other's) and always deleted at the end.
"""

from __future__ import annotations

import os
import random
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from opensearchpy import OpenSearch
from opensearchpy.helpers import streaming_bulk

from toolsift.config import Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import CatalogRecordError, ConfigError, IndexingError
from toolsift.evaluation.metrics import evaluate
from toolsift.evaluation.runner import latency_summary, ranked_run
from toolsift.bench.scale_catalog import ScaleCatalog, generate_catalog, load_scale_catalog
from toolsift.ingest.loaders import load_catalog
from toolsift.ingest.pipeline import normalised_records
from toolsift.encoders.vectorcache import CACHE_FILE, CachedEncoder, VectorCache
from toolsift.mappings import ToolDoc, vector_field
from toolsift.mappings.template import knn_mapping
from toolsift.compaction import FORCE_MERGE_TIMEOUT_S

__all__ = [
    "Variant",
    "DEFAULT_VARIANTS",
    "INDEX_PREFIX",
    "FIELD",
    "K",
    "VECTOR_EXTENSIONS",
    "FAISS_NOTE",
    "baseline_parameters",
    "to_bytes",
    "byte_scale",
    "exact_top",
    "recall_at",
    "vector_bytes",
    "hot_bytes",
    "table_rows",
    "markdown_table",
    "run_vector_bench",
]

#: The bench indices' prefix (a run adds its own token; its indices are deleted at the end).
INDEX_PREFIX = "toolsift-bench-vectors-"
#: The vector field measured: the tools' description vector, named as in the product's mapping.
FIELD = vector_field("description")
#: Candidates of every k-NN query (the product's first stage asks for 100).
K = 100
#: Lucene's vector files: raw vectors, graph, quantised vectors, their metadata.
VECTOR_EXTENSIONS = ("vec", "vex", "vem", "vemf", "veq", "vemq", "veb", "vemb")
#: Documents per bulk request.
_CHUNK = 500
#: Queries sent to each variant before the timed ones (not counted).
_WARMUP = 20
#: Two similarities closer than this are a tie (float32 cosine).
_TIE = 1e-5
ENCODINGS = ("fp32", "sq", "byte")
BYTE_SCALES = ("x127", "scaled")

#: What Faiss would change on a cluster that has the native libraries (the official image), from the
#: OpenSearch 2.19 documentation; not measured here.
FAISS_NOTE = (
    "Not measured (the managed node has no native libraries); from the OpenSearch 2.19 docs. Faiss keeps "
    "its HNSW graph and vectors in native memory (the k-NN circuit breaker), about 1.1 * (4 * d + 8 * m) "
    "bytes per vector for fp32 (d = 384, m = 16: ~1,830 B/tool). fp16 (Faiss SQfp16, encoder sq, type fp16): "
    "1.1 * (2 * d + 8 * m), ~986 B/tool, half the vector memory with a minimal recall loss for vectors whose "
    "values differ by more than fp16's rounding (unit-length MiniLM vectors do), and faster with SIMD "
    "(https://docs.opensearch.org/2.19/vector-search/optimizing-storage/faiss-16-bit-quantization/). Binary "
    "quantisation (Faiss, 1, 2 or 4 bits per dimension: 32x, 16x, 8x compression, trained while indexing): "
    "1.1 * (d / 8 + 8 * m), ~194 B/tool at 1 bit — the graph then dominates — with recall recovered by "
    "oversampling and rescoring against the full-precision vectors "
    "(https://docs.opensearch.org/2.19/vector-search/optimizing-storage/binary-quantization/). mode on_disk "
    "(2.17+): Faiss HNSW with 32x binary quantisation by default, the full vectors read from disk only to "
    "rescore the oversampled candidates: memory /32, a slower search "
    "(https://docs.opensearch.org/2.19/vector-search/optimizing-storage/disk-based-vector-search/). The Lucene "
    "engine measured here needs none of that memory on the heap or natively: its graph and vectors are read "
    "through the page cache (the RAM column), and Lucene's own int7 quantisation (sq) is the Lucene-only way "
    "to shrink that working set "
    "(https://docs.opensearch.org/2.19/vector-search/optimizing-storage/lucene-scalar-quantization/)."
)


def baseline_parameters() -> tuple[int, int]:
    """The product mapping's HNSW ``m`` and ``ef_construction`` (:func:`knn_mapping`)."""
    parameters = knn_mapping(8)["method"]["parameters"]
    return int(parameters["m"]), int(parameters["ef_construction"])


@dataclass(frozen=True)
class Variant:
    """One k-NN choice measured: how the field is built and how it is queried.

    Args:
        name: its row in the table.
        encoding: ``fp32``, ``sq`` (Lucene's int7 scalar quantisation) or ``byte`` (``data_type: byte``).
        m, ef_construction: HNSW build parameters (None: the product's).
        ef_search: the k-NN query's ``method_parameters.ef_search`` (None: not sent, the engine's default).
        merged: force-merged to one segment after the bulk load (else periodic refreshes, no merge).
        scale: byte vectors only: ``x127`` or ``scaled`` (see the module docstring).
    """

    name: str
    encoding: str = "fp32"
    m: int | None = None
    ef_construction: int | None = None
    ef_search: int | None = None
    merged: bool = True
    scale: str = "scaled"

    def __post_init__(self) -> None:
        if self.encoding not in ENCODINGS:
            raise ConfigError(f"variant {self.name!r}: encoding {self.encoding!r} is not one of {', '.join(ENCODINGS)}")
        if self.scale not in BYTE_SCALES:
            raise ConfigError(f"variant {self.name!r}: byte scale {self.scale!r} is not one of "
                              f"{', '.join(BYTE_SCALES)}")
        for label, value in (("m", self.m), ("ef_construction", self.ef_construction), ("ef_search", self.ef_search)):
            if value is not None and value < 2:
                raise ConfigError(f"variant {self.name!r}: {label} must be at least 2, got {value}")

    @property
    def hnsw(self) -> tuple[int, int]:
        """(m, ef_construction), the product's where not given."""
        m, ef_construction = baseline_parameters()
        return self.m or m, self.ef_construction or ef_construction

    @property
    def build(self) -> tuple[str, int, int, bool, str]:
        """What the index is built from: variants with the same build share one index."""
        m, ef_construction = self.hnsw
        return self.encoding, m, ef_construction, self.merged, self.scale if self.encoding == "byte" else ""

    def field_mapping(self, dimension: int) -> dict[str, Any]:
        """The ``knn_vector`` mapping: the product's, with this variant's encoding and parameters."""
        mapping: dict[str, Any] = dict(knn_mapping(dimension))
        m, ef_construction = self.hnsw
        parameters: dict[str, Any] = {"m": m, "ef_construction": ef_construction}
        if self.encoding == "sq":
            parameters["encoder"] = {"name": "sq"}
        if self.encoding == "byte":
            mapping["data_type"] = "byte"
        mapping["method"] = {**mapping["method"], "parameters": parameters}
        return mapping

    def query(self, vector: Sequence[float] | Sequence[int], k: int = K, size: int = K) -> dict[str, Any]:
        """The search body: a k-NN query of ``k`` candidates, ``size`` hits, no ``_source``."""
        knn: dict[str, Any] = {"vector": list(vector), "k": k}
        if self.ef_search is not None:
            knn["method_parameters"] = {"ef_search": self.ef_search}
        return {"size": size, "_source": False, "query": {"knn": {FIELD: knn}}}


def _default_variants() -> tuple[Variant, ...]:
    return (
        Variant("product"),
        Variant("unmerged", merged=False),
        Variant("m=8", m=8),
        Variant("m=32", m=32),
        Variant("efc=64", ef_construction=64),
        Variant("efc=256", ef_construction=256),
        *(Variant(f"ef_search={n}", ef_search=n) for n in (50, 100, 200, 512)),
        Variant("sq-int7", encoding="sq"),
        Variant("byte-x127", encoding="byte", scale="x127"),
        Variant("byte-scaled", encoding="byte", scale="scaled"),
    )


#: Every variant measured by default: the product's mapping first (``product``: fp32, the product's ``m`` and
#: ``ef_construction``, merged), then one choice at a time around it.
DEFAULT_VARIANTS: tuple[Variant, ...] = _default_variants()


# ---------------------------------------------------------------------------------------------
# Pure parts: byte encoding, exact search, recall, bytes, the table


def byte_scale(vectors: np.ndarray, scale: str) -> float:
    """The factor unit-length ``vectors`` are multiplied by before rounding to bytes.

    ``x127``: 127. ``scaled``: 127 over the largest ``|component|`` of ``vectors`` made unit length (the
    whole byte range used).

    Raises:
        ConfigError: an unknown scale, or ``scaled`` over vectors that are all zero.
    """
    if scale == "x127":
        return 127.0
    if scale != "scaled":
        raise ConfigError(f"byte scale {scale!r} is not one of {', '.join(BYTE_SCALES)}")
    top = float(np.max(np.abs(_unit(vectors)))) if vectors.size else 0.0
    if top <= 0:
        raise ConfigError("byte vectors cannot be scaled: every component is 0")
    return 127.0 / top


def to_bytes(vectors: np.ndarray, factor: float) -> np.ndarray:
    """``vectors`` (made unit length) times ``factor``, rounded and clipped to [-128, 127], as int8."""
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    unit = vectors / np.where(norms > 0, norms, 1.0)
    return np.clip(np.rint(unit * factor), -128, 127).astype(np.int8)


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def exact_top(queries: np.ndarray, docs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Brute-force cosine: every query's top ``k`` document rows (best first) and every similarity.

    Returns:
        (top: ``(queries, min(k, docs))`` row indices, similarities: ``(queries, docs)``).
    """
    sims = _unit(queries) @ _unit(docs).T
    k = min(k, docs.shape[0])
    part = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(sims, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1), sims


def recall_at(found: Sequence[int], similarities: np.ndarray, k: int) -> float:
    """The share of ``found[:k]`` (document rows an approximate search returned) that exact search ranks
    in its top ``k``: a row counts when its exact similarity is at least the exact k-th best's (ties
    count, within float32 noise). Out of ``min(k, documents)``; rows found twice count once."""
    k_eff = min(k, int(similarities.shape[0]))
    if k_eff == 0:
        return 1.0
    kth = float(np.partition(-similarities, k_eff - 1)[k_eff - 1]) * -1.0
    hits = {row for row in list(found)[:k] if similarities[row] >= kth - _TIE}
    return len(hits) / k_eff


def vector_bytes(file_sizes: Mapping[str, int]) -> int:
    """Bytes of Lucene's vector files among ``file_sizes`` (extension → bytes)."""
    return sum(int(v) for ext, v in file_sizes.items() if ext in VECTOR_EXTENSIONS)


def hot_bytes(file_sizes: Mapping[str, int], encoding: str) -> int:
    """Bytes the Lucene engine reads while searching (its page-cache working set): the graph (``.vex``)
    and the vectors it scores: the quantised ones (``.veq``) under ``sq``, else the raw ones (``.vec``)."""
    scored = "veq" if encoding == "sq" else "vec"
    return int(file_sizes.get("vex", 0)) + int(file_sizes.get(scored, 0))


_HEADERS = ["variant", "encoding m/efc/ef_search", "build s (bulk+merge)", "segments", "R@10", "R@100", "NDCG@10",
            "took ms p50/p95", "wall ms p50/p95", "vector files B/tool", "doc values B/tool", "store B/tool",
            "RAM B/tool"]


def table_rows(figures: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The figures' table: one row per variant, then exact search (the ceiling).

    Returns:
        (headers, rows) of strings.
    """
    rows: list[list[str]] = []
    for v in figures.get("variants", []):
        build, disk, took, wall = v["build"], v["disk"], v["latency"]["took_ms"], v["latency"]["wall_ms"]
        spec = v["variant"]
        m, efc = v["mapping"]["method"]["parameters"]["m"], v["mapping"]["method"]["parameters"]["ef_construction"]
        rows.append([
            v["name"], f"{spec['encoding']} {m}/{efc}/{spec['ef_search'] or '-'}", f"{build['seconds']:.1f}",
            str(disk["segments"]), f"{v['recall@10']:.3f}", f"{v['recall@100']:.3f}",
            f"{v['ndcg@10']:.3f}", f"{took['p50']:.1f} / {took['p95']:.1f}", f"{wall['p50']:.1f} / {wall['p95']:.1f}",
            f"{disk['vector_bytes_per_tool']:.0f}", f"{disk['doc_values_bytes_per_tool']:.0f}",
            f"{disk['store_bytes_per_tool']:.0f}", f"{disk['ram_bytes_per_tool']:.0f}",
        ])
    exact = figures.get("exact")
    if exact:
        rows.append(["exact (brute force, numpy)", "fp32", "", "", "1.000", "1.000", f"{exact['ndcg@10']:.3f}", "", "",
                     "", "", "", ""])
    return list(_HEADERS), rows


def markdown_table(figures: Mapping[str, Any]) -> str:
    """The table as markdown."""
    headers, rows = table_rows(figures)
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# The catalog, its vectors, the queries


@dataclass(frozen=True)
class _Corpus:
    ids: list[str]
    servers: list[str]
    vectors: np.ndarray
    without_description: int
    embedding: dict[str, Any]


def _catalog(folder: Path, tools: int, needles: str, seed: int, queries: int | None,
             datasets: Path | None) -> ScaleCatalog:
    """The generated catalog under ``folder``, reused when written before with the same arguments."""
    if (folder / "manifest.json").is_file():
        found = load_scale_catalog(folder)
        if (found.tools, found.needles, found.seed, found.manifest().get("queries_asked")) == (tools, needles, seed,
                                                                                               queries):
            return found
    return generate_catalog(folder, tools=tools, needles=needles, seed=seed, queries=queries, datasets=datasets)


def _tools(settings: Settings, catalog: Path) -> Iterator[ToolDoc]:
    records = load_catalog(catalog, "mcp", max_depth=settings.max_nesting_depth)
    for _, item in normalised_records(records, settings.max_field_chars, max_depth=settings.max_nesting_depth):
        if isinstance(item, CatalogRecordError):
            raise item
        if isinstance(item, ToolDoc):
            yield item


def _corpus(settings: Settings, embedder: Embedder, catalog: Path) -> _Corpus:
    """The catalog's tools with a description and their description vectors (through the vector cache)."""
    docs = list(_tools(settings, catalog))
    kept = [d for d in docs if d.description]
    cache = (VectorCache(settings.vector_cache_path / CACHE_FILE, max_bytes=settings.vector_cache_max_mb << 20)
             if settings.vector_cache else None)
    encoder = CachedEncoder(embedder, cache)
    started = time.perf_counter()
    try:
        vectors = encoder.encode_document([d.description for d in kept]) if kept else np.zeros((0, embedder.dimension))
    finally:
        if cache is not None:
            cache.close()
    seconds = time.perf_counter() - started
    embedding = {"seconds": round(seconds, 3), "texts": len({d.description for d in kept}),
                 "texts_encoded": encoder.encoded, "texts_cached": encoder.cached,
                 "cache": str(settings.vector_cache_path) if cache is not None else None,
                 "model": embedder.name, "backend": str(getattr(embedder, "backend", "torch"))}
    return _Corpus([d.tool_id for d in kept], [d.agent_id or "" for d in kept], np.asarray(vectors, dtype=np.float32),
                   len(docs) - len(kept), embedding)


@dataclass(frozen=True)
class _Queries:
    ids: list[str]
    texts: list[str]
    kinds: list[str]
    qrels: dict[str, dict[str, int]]


def _queries(scale: ScaleCatalog, corpus: _Corpus, settings: Settings, min_queries: int, seed: int) -> _Queries:
    """The needle queries, topped up to ``min_queries`` with sampled tools' descriptions as queries."""
    benchmark = scale.benchmark()
    needle = [q for q in benchmark.qrels if q in benchmark.queries]
    ids, texts = list(needle), [benchmark.queries[q] for q in needle]
    extra = max(0, min(min_queries - len(needle), len(corpus.ids)))
    if extra:
        by_id = {d.tool_id: d.description for d in _tools(settings, scale.catalog_path) if d.description}
        for tool_id in random.Random(seed).sample(corpus.ids, extra):
            ids.append(f"description:{tool_id}")
            texts.append(by_id[tool_id])
    kinds = ["needle"] * len(needle) + ["description"] * extra
    return _Queries(ids, texts, kinds, {q: dict(benchmark.qrels[q]) for q in needle})


# ---------------------------------------------------------------------------------------------
# The bench indices


def _run_prefix() -> str:
    """This run's index prefix: ``INDEX_PREFIX`` + the process id + a random token (two runs never meet)."""
    return f"{INDEX_PREFIX}{os.getpid()}-{secrets.token_hex(3)}-"


def _drop_all(client: OpenSearch, prefix: str) -> None:
    client.indices.delete(index=f"{prefix}*", ignore_unavailable=True, expand_wildcards="all")


def _create(client: OpenSearch, index: str, variant: Variant, dimension: int) -> None:
    body = {
        "settings": {"index": {"knn": True, "number_of_shards": 1, "number_of_replicas": 0,
                               "refresh_interval": "-1" if variant.merged else "1s"}},
        "mappings": {
            "dynamic": "strict",
            "_source": {"excludes": [FIELD]},  # as the product's mapping: vectors are not kept in _source
            "properties": {"tool_id": {"type": "keyword"}, "server": {"type": "keyword"},
                           FIELD: variant.field_mapping(dimension)},
        },
    }
    client.indices.create(index=index, body=body)


def _actions(index: str, corpus: _Corpus, rows: np.ndarray) -> Iterable[dict[str, Any]]:
    as_ints = rows.dtype == np.int8
    for i, tool_id in enumerate(corpus.ids):
        vector = [int(x) for x in rows[i]] if as_ints else [float(x) for x in rows[i]]
        yield {"_index": index, "_id": tool_id,
               "_source": {"tool_id": tool_id, "server": corpus.servers[i], FIELD: vector}}


def _build(client: OpenSearch, index: str, variant: Variant, corpus: _Corpus, rows: np.ndarray) -> dict[str, Any]:
    """Create, bulk load, refresh and (merged builds) force-merge ``index``; the seconds of each step.

    Raises:
        IndexingError: a document was not written.
    """
    _create(client, index, variant, corpus.vectors.shape[1])
    started = time.perf_counter()
    failed = [info for ok, info in streaming_bulk(client, _actions(index, corpus, rows), chunk_size=_CHUNK,
                                                  raise_on_error=False, max_retries=3) if not ok]
    if failed:
        raise IndexingError(f"bench index {index} ({variant.name}) rejected {len(failed)} document(s); the first: "
                            f"{failed[0]}", failed)
    bulk_s = time.perf_counter() - started
    started = time.perf_counter()
    client.indices.refresh(index=index)
    refresh_s = time.perf_counter() - started
    merge_s = 0.0
    if variant.merged:
        started = time.perf_counter()
        client.indices.forcemerge(index=index, max_num_segments=1, request_timeout=FORCE_MERGE_TIMEOUT_S)
        client.indices.refresh(index=index)
        merge_s = time.perf_counter() - started
    count = int(client.count(index=index)["count"])
    if count != len(corpus.ids):
        raise IndexingError(f"bench index {index} ({variant.name}) holds {count} documents, not {len(corpus.ids)}")
    return {"index": index, "documents": count, "bulk_seconds": round(bulk_s, 3),
            "refresh_seconds": round(refresh_s, 3),
            "merge_seconds": round(merge_s, 3), "seconds": round(bulk_s + refresh_s + merge_s, 3),
            "refresh_interval": "-1 (one refresh at the end)" if variant.merged else "1s (periodic, as a live index)"}


def _disk(client: OpenSearch, index: str, encoding: str, tools: int) -> dict[str, Any]:
    stats = client.indices.stats(index=index, metric="store,segments", include_segment_file_sizes=True)
    primaries = stats["indices"][index]["primaries"]
    segments = primaries["segments"]
    sizes = {ext: int(v["size_in_bytes"]) for ext, v in segments.get("file_sizes", {}).items()}
    store = int(primaries["store"]["size_in_bytes"])
    vectors, hot = vector_bytes(sizes), hot_bytes(sizes, encoding)
    doc_values = sizes.get("dvd", 0) + sizes.get("dvm", 0)
    per = max(1, tools)
    return {"segments": int(segments["count"]), "store_bytes": store, "file_sizes": sizes,
            "vector_bytes": vectors, "vector_bytes_per_tool": round(vectors / per, 1),
            "doc_values_bytes": doc_values, "doc_values_bytes_per_tool": round(doc_values / per, 1),
            "store_bytes_per_tool": round(store / per, 1),
            "ram_bytes": hot, "ram_bytes_per_tool": round(hot / per, 1)}


# ---------------------------------------------------------------------------------------------
# The run


def _summary(samples: Sequence[float]) -> dict[str, float]:
    found = latency_summary(samples)
    return {k: round(found[k], 2) for k in ("p50", "p95", "mean")} if found else {"p50": 0.0, "p95": 0.0, "mean": 0.0}


def run_vector_bench(
    client: OpenSearch,
    settings: Settings,
    embedder: Embedder,
    out_dir: Path,
    *,
    tools: int = 10_000,
    needles: str = "toolink",
    seed: int = 0,
    queries: int | None = None,
    min_queries: int = 200,
    variants: Sequence[Variant] = DEFAULT_VARIANTS,
    rounds: int = 2,
    datasets: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    # Long: one benchmark's steps in order (generate, encode once, each variant built, searched and measured),
    # the figures gathered as they come.
    """Measure every variant on a generated catalog of ``tools`` tools (the module's steps).

    Args:
        client: the OpenSearch measured (one node is enough: every bench index has one shard, no replica).
        settings: toolsift's settings (the vector cache, the loaders' limits).
        embedder: the embedding model (description vectors; the queries with ``encode_query``).
        out_dir: where the catalog is written (``out_dir/catalogs/<tools>``; reused when the same).
        tools, needles, seed, queries, datasets: the catalog's (:func:`generate_catalog`; ``queries``: only
            that many needle queries, a seeded sample); ``seed`` also draws the description queries.
        min_queries: the needle queries are topped up to this many with sampled tools' descriptions.
        variants: what to measure (names unique).
        rounds: timed passes over the queries per variant (recall and NDCG come from the first).
        progress: called with one line per step.

    Returns:
        The figures (JSON-able): the catalog, the queries, exact search, one record per variant, notes.

    Raises:
        ConfigError: no variants, names repeated, fewer than one round, a catalog with fewer than one
            described tool.
        CatalogError / CatalogRecordError: the catalog cannot be generated or read.
        IndexingError: a bench index rejected a document.
    """
    say = progress or (lambda _m: None)
    if not variants:
        raise ConfigError("bench vectors needs at least one variant")
    names = [v.name for v in variants]
    if len(set(names)) != len(names):
        raise ConfigError(f"bench vectors: variant names repeat: {names}")
    if rounds < 1 or min_queries < 0:
        raise ConfigError(f"bench vectors needs at least one round and min_queries >= 0, got {rounds} and "
                          f"{min_queries}")
    run_started = time.perf_counter()
    load_before = os.getloadavg()[0]
    say(f"catalog: {tools:,} tools with {needles} needles")
    scale = _catalog(Path(out_dir) / "catalogs" / str(tools), tools, needles, seed, queries, datasets)
    say("embedding the tools' descriptions (the vector cache first)")
    corpus = _corpus(settings, embedder, scale.catalog_path)
    if not corpus.ids:
        raise ConfigError(f"{scale.catalog_path}: no tool has a description to measure")
    say(f"{len(corpus.ids):,} description vectors ({corpus.embedding['texts_encoded']} encoded, "
        f"{corpus.embedding['texts_cached']} from the cache) in {corpus.embedding['seconds']:.1f} s")
    asked = _queries(scale, corpus, settings, min_queries, seed)
    query_vectors = np.asarray(embedder.encode_query(asked.texts, cache=False), dtype=np.float32)
    top, sims = exact_top(query_vectors, corpus.vectors, K)
    needle_rows = [i for i, kind in enumerate(asked.kinds) if kind == "needle"]
    exact_run = {asked.ids[i]: ranked_run((corpus.ids[j] for j in top[i, :10]), 10) for i in needle_rows}
    exact_ndcg = evaluate(asked.qrels, exact_run, ["ndcg@10"])["ndcg@10"] if needle_rows else 0.0

    scales = {s: byte_scale(corpus.vectors, s) for s in BYTE_SCALES}
    builds: dict[tuple[str, int, int, bool, str], dict[str, Any]] = {}
    row_of = {tool_id: i for i, tool_id in enumerate(corpus.ids)}
    prefix = _run_prefix()
    try:
        for variant in variants:
            if variant.build in builds:
                continue
            index = f"{prefix}{len(builds)}"
            rows = to_bytes(corpus.vectors, scales[variant.scale]) if variant.encoding == "byte" else corpus.vectors
            say(f"building {index}: {variant.name}")
            build = _build(client, index, variant, corpus, rows)
            builds[variant.build] = {"build": build, "disk": _disk(client, index, variant.encoding, len(corpus.ids))}

        def vector_for(variant: Variant, i: int) -> list[float] | list[int]:
            if variant.encoding == "byte":
                return [int(x) for x in to_bytes(query_vectors[i:i + 1], scales[variant.scale])[0]]
            return [float(x) for x in query_vectors[i]]

        def search(variant: Variant, i: int) -> tuple[list[str], float, float]:
            index = builds[variant.build]["build"]["index"]
            body = variant.query(vector_for(variant, i))
            started = time.perf_counter()
            response = client.search(index=index, body=body)
            wall = (time.perf_counter() - started) * 1000.0
            return [h["_id"] for h in response["hits"]["hits"]], float(response["took"]), wall

        say(f"warm-up: {min(_WARMUP, len(asked.ids))} queries per variant")
        for i in range(min(_WARMUP, len(asked.ids))):
            for variant in variants:
                search(variant, i)
        found: dict[str, list[list[str]]] = {v.name: [[] for _ in asked.ids] for v in variants}
        took: dict[str, list[float]] = {v.name: [] for v in variants}
        wall: dict[str, list[float]] = {v.name: [] for v in variants}
        say(f"{len(asked.ids)} queries x {len(variants)} variants x {rounds} round(s), round-robin")
        for r in range(rounds):
            for i in range(len(asked.ids)):
                shift = (i + r) % len(variants)
                for variant in [*variants[shift:], *variants[:shift]]:
                    ids, took_ms, wall_ms = search(variant, i)
                    if r == 0:
                        found[variant.name][i] = ids
                    took[variant.name].append(took_ms)
                    wall[variant.name].append(wall_ms)
        records = []
        dimension = int(corpus.vectors.shape[1])
        for variant in variants:
            rows_found = [[row_of[t] for t in ids if t in row_of] for ids in found[variant.name]]
            run = {asked.ids[i]: ranked_run(found[variant.name][i][:10], 10) for i in needle_rows}
            built = builds[variant.build]
            records.append({
                "name": variant.name, "variant": asdict(variant),
                "mapping": variant.field_mapping(dimension),
                "query": variant.query([0.0])["query"]["knn"][FIELD] | {"vector": f"[{dimension} values]"},
                "recall@10": round(float(np.mean([recall_at(f, sims[i], 10) for i, f in enumerate(rows_found)])), 4),
                "recall@100": round(float(np.mean([recall_at(f, sims[i], K) for i, f in enumerate(rows_found)])), 4),
                "recall@10_needle": round(float(np.mean([recall_at(rows_found[i], sims[i], 10)
                                                         for i in needle_rows])), 4) if needle_rows else None,
                "hits_short": sum(1 for f in found[variant.name] if len(f) < min(K, len(corpus.ids))),
                "ndcg@10": round(evaluate(asked.qrels, run, ["ndcg@10"])["ndcg@10"], 4) if needle_rows else 0.0,
                "latency": {"took_ms": _summary(took[variant.name]), "wall_ms": _summary(wall[variant.name]),
                            "searches": len(took[variant.name])},
                "build": built["build"], "disk": built["disk"],
                **({"byte_scale": round(scales[variant.scale], 3)} if variant.encoding == "byte" else {}),
            })
    finally:
        _drop_all(client, prefix)
    info = client.info()
    needle_count = len(needle_rows)
    return {
        "catalog": {"path": str(scale.catalog_path), "tools": scale.tools, "servers": scale.servers,
                    "needles": needles, "seed": seed, "tools_with_description": len(corpus.ids),
                    "tools_without_description": corpus.without_description},
        "field": FIELD, "dimension": int(corpus.vectors.shape[1]), "k": K, "size": K,
        "queries": {"total": len(asked.ids), "needle": needle_count, "description": len(asked.ids) - needle_count,
                    "needle_queries_asked": queries,
                    "description_note": "a seeded random sample of the catalog's tools, each one's description "
                                        "encoded as a query (its own tool is its exact top 1)"},
        "embedding": corpus.embedding,
        "exact": {"ndcg@10": round(exact_ndcg, 4),
                  "method": "brute-force cosine in numpy over the same fp32 description vectors"},
        "variants": records,
        "environment": {"opensearch": info.get("version", {}).get("number"), "lucene": info.get("version", {}).get(
            "lucene_version"), "cpu_count": os.cpu_count(), "load_average_before": round(load_before, 2),
            "load_average_after": round(os.getloadavg()[0], 2), "rounds": rounds, "warmup_queries": _WARMUP},
        "notes": {
            "recall": "share of the approximate top k whose exact cosine is at least the exact k-th best's (ties "
                      "count), over every query; recall@10_needle: the needle queries only",
            "ndcg@10": "the approximate (or exact) top 10 against the catalog's needle qrels, needle queries only",
            "latency": "one sequential client; every query sent to every variant in turn, the order rotated per "
                       "query; took: the response's, wall: through opensearch-py (JSON both ways); "
                       f"k = {K}, size = {K}, no _source",
            "bytes": "the primaries' files by extension from _stats (include_segment_file_sizes); vector files: "
                     + ", ".join(f".{e}" for e in VECTOR_EXTENSIONS) + "; doc values: .dvd/.dvm (the k-NN field's "
                     "second copy of each vector, and the keywords')",
            "store": "the whole bench index per tool (its primaries' store): besides the vector files and doc "
                     "values, stored fields (.fdt) hold each vector's JSON a third time although _source excludes "
                     "it — OpenSearch keeps a _recovery_source for filtered sources until a merge after the "
                     "shard's retention lease moves past the documents",
            "ram": "the Lucene engine's search working set, read through the OS page cache (no native memory, "
                   "nothing on the heap): graph (.vex) + the vectors scored (.veq under sq, else .vec)",
            "byte_vectors": "unit-length vectors times the scale, rounded, clipped to [-128, 127]; x127: 127; "
                            "scaled: 127 / the largest |component| of the catalog's vectors; queries the same",
            "sq": "Lucene scalar quantisation (encoder sq, int7, Lucene's default confidence interval); the raw "
                  "fp32 vectors stay in .vec for merges",
            "ef_search": "method_parameters.ef_search in the k-NN query (accepted by the Lucene engine on "
                         "OpenSearch 2.19); the k-NN plugin asks Lucene for max(k, ef_search) candidates "
                         "(opensearch-project/k-NN, KNNQueryFactory: luceneK = max(k, ef_search)) and the "
                         "search keeps size of them: below k it changes nothing",
            "faiss": FAISS_NOTE,
            "machine": "a shared machine (other engineers' runs and JVMs): latencies and build seconds are noisy, "
                       "recall, NDCG and bytes are not",
        },
        "seconds": round(time.perf_counter() - run_started, 1),
    }
