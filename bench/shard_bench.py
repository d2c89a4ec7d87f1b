"""``toolsift bench shards``: shards, replicas, routing and the nested k-NN tenant filter, measured.

One generated catalog (:func:`~toolsift.bench.scale_catalog.generate_catalog`, a benchmark's
needles inside) is split in two files by whole servers: one tenant (``small``) holds a share of the tools
(1% by default), the other (``rest``) all the others, so a tenant filter leaves 1% of the index. Each
file is ingested with the product's own :func:`~toolsift.ingest.pipeline.ingest_catalog` (vectors from
the vector cache at ``settings.vector_cache_path``, shared with later runs) into one index per shard
count (``<index>-shards-<S>``, replicas as asked), on a local cluster of the bench's own (or the
configured one). All indices stand side by side, so latencies can be taken interleaved. Then, per index:

1. **Quality** of the needle queries through the product's :class:`~toolsift.search.SearchBackend`,
   in process (no HTTP): the default request (hybrid retriever, min-max fusion) with
   ``preference=_primary`` (so every query reads the same copies); the same with ``fusion=rrf`` (RRF
   ranks each shard's sub-query lists; min-max normalises over the global top); and with
   ``search_type=dfs_query_then_fetch`` (BM25 statistics of all shards instead of each shard's own).
2. **Routing**: tools are routed by their agent's id (:func:`~toolsift.mappings.model.tool_routing`:
   the join field keeps a server's tools on its shard; a tool without an agent routes by its own id).
   Per shard, tools and Lucene documents (``_cat/shards``, nested parameters included) and max/mean;
   the balance the same catalog would have if each tool were routed by its own id, from OpenSearch's own
   routing function (:func:`routing_shard`: Murmur3 of the key, modulo the index's routing shards,
   checked against the shards the agents' tools were found on). A search of one server (the request's
   ``agents`` filter) with ``routing=<agent id>`` (one shard) against the same without it (every shard).
3. **Nested k-NN with a tenant filter** (k-NN issue 2347): the product's nested parameter k-NN query
   (:class:`~toolsift.query.QueryBuilder`'s ``parameters`` sub-query, the tenant boundary as the k-NN
   clause's own ``filter``) for the ``small`` tenant at each k: hits returned against min(k, the tools
   the tenant sees that have parameter vectors), and recall@k against the exact filtered search (the
   ``knn_score`` script over every allowed parameter, best per tool). Beside it, the alternatives: the
   filter outside the k-NN clause (post-filter), the k-NN ``k`` ten times the hits asked for, and the
   exact search itself (what its latency costs).
4. **Primary vs replica**: the needle queries with ``preference=_primary`` and ``_replica``: queries
   whose top 10 differ (ids or order), the mean overlap, NDCG@10 of each.
5. **Latency**: sequential single-client searches through the backend, a warm-up first, every (index,
   variant) pair per query round-robin so machine noise hits all alike: the default request (adaptive
   replica selection), with a fixed custom ``preference`` string (one session sees one set of copies),
   with ``dfs_query_then_fetch``, and one server's search unrouted and routed. p50/p95 of the wall clock
   in ms through opensearch-py and of the first-stage ``took``.

Every index is deleted at the end (the cluster too, when it is the bench's own).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from opensearchpy import OpenSearch, helpers
from opensearchpy.exceptions import TransportError

from toolsift.config import Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import CatalogError, ConfigError, IndexingError
from toolsift.evaluation.metrics import evaluate
from toolsift.evaluation.runner import ranked_run
from toolsift.bench.scale_bench import bench_catalog, drop_index, settle_index, wait_green
from toolsift.bench.scale_catalog import ScaleCatalog
from toolsift.ingest.pipeline import ingest_catalog
from toolsift.mappings import F, vector_field
from toolsift.opensearch import connect
from toolsift.plugin_scripts.cluster import scratch_cluster
from toolsift.plugin_scripts.pipelines import HYBRID_LAYOUT
from toolsift.query import QueryBuilder, Scope, StructuredQuery
from toolsift.query.builder import knn_score_query
from toolsift.search import SearchBackend, SearchRequest

__all__ = [
    "SMALL_TENANT",
    "REST_TENANT",
    "TenantSplit",
    "split_by_tenant",
    "murmur3_32",
    "routing_shard",
    "balance",
    "percentiles",
    "top_overlap",
    "hit_recall",
    "KNN_VARIANTS",
    "nested_knn_body",
    "run_shard_bench",
    "summary_rows",
    "markdown_tables",
]

#: The tenant holding a small share of the tools, and the one holding the rest.
SMALL_TENANT = "small"
REST_TENANT = "rest"
#: The bench cluster's ports: the first free run in each (apart from the default cluster's 9201-9209, the
#: scale bench's 9240-9249, the node-loss drill's 9260-9269, the cluster suite's 9270-9279 and the outage
#: drill's 9280-9289).
_HTTP_PORTS = range(9250, 9260)
_TRANSPORT_PORTS = range(19390, 19400)
#: The nested k-NN variants: the product's query, the filter outside the k-NN clause, k ten times the hits
#: asked for (the product's filter), and the exact filtered search (the reference).
KNN_VARIANTS = ("product", "post_filter", "k_x10", "exact")
#: The custom preference of the latency variant (any string: the same copies for the same string).
_SESSION = "tenant-session-1"


# ---------------------------------------------------------------------------------------------
# Pure helpers


@dataclass(frozen=True)
class TenantSplit:
    """A catalog split by whole servers: ``small`` holds ``small_tools`` of ``tools``, ``rest`` the others."""

    small_path: Path
    rest_path: Path
    tools: int
    small_tools: int
    small_servers: int


def _server_tools(server: Mapping[str, Any]) -> int:
    tools = server.get("tools")
    return len(tools) if isinstance(tools, list) else 0


def split_by_tenant(catalog: Path, folder: Path, share: float, seed: int = 0) -> TenantSplit:
    """Split an MCP catalog (a JSON list of servers) in two files by whole servers: a seeded shuffle of the
    servers fills ``small`` until it holds ``share`` of the tools (at least one server, never all), the
    rest go to ``rest``; the servers keep their order in each file.

    Raises:
        CatalogError: not a JSON list of servers, fewer than two servers, or ``share`` not in (0, 1).
    """
    if not 0.0 < share < 1.0:
        raise CatalogError(f"the small tenant's share of the tools must be between 0 and 1, got {share}")
    try:
        servers = json.loads(Path(catalog).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CatalogError(f"{catalog}: not a readable MCP catalog ({exc})") from None
    if not isinstance(servers, list) or not all(isinstance(s, dict) for s in servers):
        raise CatalogError(f"{catalog}: an MCP catalog is a JSON list of server objects")
    if len(servers) < 2:
        raise CatalogError(f"{catalog}: a tenant split needs two servers or more, found {len(servers)}")
    total = sum(_server_tools(s) for s in servers)
    order = list(range(len(servers)))
    random.Random(seed).shuffle(order)
    chosen: set[int] = set()
    held = 0
    for i in order[:-1]:
        if held >= share * total and chosen:
            break
        chosen.add(i)
        held += _server_tools(servers[i])
    folder.mkdir(parents=True, exist_ok=True)
    small, rest = folder / "tenant-small.json", folder / "tenant-rest.json"
    small.write_text(json.dumps([s for i, s in enumerate(servers) if i in chosen], ensure_ascii=False),
                     encoding="utf-8")
    rest.write_text(json.dumps([s for i, s in enumerate(servers) if i not in chosen], ensure_ascii=False),
                    encoding="utf-8")
    return TenantSplit(small, rest, total, held, len(chosen))


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & 0xFFFFFFFF


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86 32-bit of ``data`` as a signed 32-bit integer (Lucene's ``murmurhash3_x86_32``)."""
    c1, c2 = 0xCC9E2D51, 0x1B873593
    h = seed & 0xFFFFFFFF
    body = len(data) - len(data) % 4
    for i in range(0, body, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (_rotl((k * c1) & 0xFFFFFFFF, 15) * c2) & 0xFFFFFFFF
        h = (_rotl(h ^ k, 13) * 5 + 0xE6546B64) & 0xFFFFFFFF
    tail = data[body:]
    if tail:
        k = int.from_bytes(tail, "little")
        h ^= (_rotl((k * c1) & 0xFFFFFFFF, 15) * c2) & 0xFFFFFFFF
    h ^= len(data)
    h = ((h ^ (h >> 16)) * 0x85EBCA6B) & 0xFFFFFFFF
    h = ((h ^ (h >> 13)) * 0xC2B2AE35) & 0xFFFFFFFF
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def routing_shard(routing: str, shards: int, routing_shards: int) -> int:
    """The shard OpenSearch puts a document routed by ``routing`` on (``OperationRouting``): Murmur3 of the
    key's UTF-16 code units, modulo the index's ``routing_num_shards``, divided by the routing factor.

    Raises:
        ConfigError: ``routing_shards`` is not a multiple of ``shards``.
    """
    if shards < 1 or routing_shards < shards or routing_shards % shards:
        raise ConfigError(f"routing shards {routing_shards} must be a multiple of the shards {shards}")
    return murmur3_32(routing.encode("utf-16-le")) % routing_shards // (routing_shards // shards)


def balance(counts: Sequence[int]) -> dict[str, Any]:
    """Per-shard counts with their min, max, mean and max/mean (1.0: even)."""
    mean = sum(counts) / len(counts) if counts else 0.0
    return {"per_shard": list(counts), "min": min(counts, default=0), "max": max(counts, default=0),
            "mean": round(mean, 1), "max_over_mean": round(max(counts) / mean, 3) if mean else None}


def percentiles(values: Sequence[float]) -> dict[str, float | None]:
    """p50 and p95 (inclusive method) of ``values``, rounded to 0.1; None when empty."""
    if not values:
        return {"p50": None, "p95": None, "n": 0}
    if len(values) == 1:
        return {"p50": round(values[0], 1), "p95": round(values[0], 1), "n": 1}
    cuts = statistics.quantiles(values, n=20, method="inclusive")
    return {"p50": round(statistics.median(values), 1), "p95": round(cuts[18], 1), "n": len(values)}


def top_overlap(a: Sequence[str], b: Sequence[str]) -> tuple[bool, float]:
    """(whether the two rankings differ in ids or order, the share of ``a``'s ids also in ``b``)."""
    if not a and not b:
        return False, 1.0
    return list(a) != list(b), len(set(a) & set(b)) / max(len(a), len(b))


def hit_recall(returned: Sequence[str], exact: Sequence[str], k: int) -> tuple[int, float]:
    """(hits returned, recall@k: the share of the exact top k — at most k — among the first k returned)."""
    truth = list(exact)[:k]
    if not truth:
        return len(returned), 1.0
    return len(returned), len(set(returned[:k]) & set(truth)) / len(truth)


# ---------------------------------------------------------------------------------------------
# The nested parameter k-NN query (the product's) and its alternatives


def nested_knn_body(variant: str, vector: Sequence[float], k: int, tenant: str,
                    field_weights: Mapping[str, float]) -> dict[str, Any]:
    """The request of one nested k-NN variant (:data:`KNN_VARIANTS`) for ``k`` tools of ``tenant``.

    ``product`` is :class:`QueryBuilder`'s own ``parameters`` sub-query (the minilm retriever's hybrid
    layout) with ``k`` candidates and the tenant's scope.

    Raises:
        ConfigError: an unknown variant.
    """
    scope = Scope(tenant=tenant)
    path = vector_field(F.parameters)
    if variant in ("product", "k_x10"):
        sq = StructuredQuery.from_text("q", as_argument=True)
        vectors = {text: list(vector) for text in sq.all_texts()}
        builder = QueryBuilder(field_weights=field_weights, candidates=k * (10 if variant == "k_x10" else 1),
                               scope=scope)
        query = builder.candidates_body(sq, vectors, "minilm")["query"]["hybrid"]["queries"][
            HYBRID_LAYOUT["minilm"].index("parameters")]
    elif variant == "post_filter":
        query = {"nested": {"path": F.parameters, "score_mode": "max", "query": {"bool": {
            "must": [{"knn": {path: {"vector": list(vector), "k": k}}}],
            "filter": scope.nested_clauses(F.parameters)}}}}
    elif variant == "exact":
        query = {"nested": {"path": F.parameters, "score_mode": "max", "query": {"bool": {
            "must": [knn_score_query(path, vector)], "filter": scope.nested_clauses(F.parameters)}}}}
    else:
        raise ConfigError(f"unknown nested k-NN variant {variant!r}; known: {', '.join(KNN_VARIANTS)}")
    return {"size": k, "_source": False, "query": query}


# ---------------------------------------------------------------------------------------------
# A client that adds search parameters to every search


class _Tuned:
    """``client`` with ``params`` (preference, routing, search_type) added to every ``search`` call; any
    other call is the client's own. The parameters can change between calls."""

    def __init__(self, client: OpenSearch) -> None:
        self._client = client
        self.params: dict[str, str] = {}

    def search(self, *args: Any, **kwargs: Any) -> Any:
        params = {**(kwargs.pop("params", None) or {}), **self.params}
        return self._client.search(*args, params=params, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


# ---------------------------------------------------------------------------------------------
# The run


@contextmanager
def _target(settings: Settings, nodes: int, existing: bool, folder: Path,
            say: Callable[[str], None]) -> Iterator[tuple[Settings, int]]:
    if existing:
        yield settings, len(connect(settings).nodes.info(metric="process")["nodes"])
        return
    if nodes < 2:
        raise ConfigError(f"the bench's own cluster has two members or more, not {nodes}; measure one node with "
                          "--existing")
    with scratch_cluster(settings, name="toolsift-shards", nodes=nodes, http_ports=_HTTP_PORTS,
                         transport_ports=_TRANSPORT_PORTS, folder=folder, progress=say) as cluster:
        yield settings.with_overrides(opensearch_url=",".join(cluster.urls)), nodes


def _ingest(client: OpenSearch, settings: Settings, embedder: Embedder, split: TenantSplit) -> dict[str, Any]:
    seconds, tools = 0.0, 0
    for path, tenant in ((split.rest_path, REST_TENANT), (split.small_path, SMALL_TENANT)):
        report = ingest_catalog(client, settings, embedder, path, fmt="mcp", approvals=False, tenants=(tenant,))
        if not report.ok:
            first = report.rejected[0].to_dict() if report.rejected else report.failed[0]
            raise IndexingError(f"the ingest of {path} into {settings.index} rejected {len(report.rejected)} record(s) "
                                f"and failed {len(report.failed)} write(s); the first: {first}", report.failed)
        seconds += report.seconds
        tools += report.tools
    return {"seconds": round(seconds, 1), "tools": tools, "tools_per_s": round(tools / seconds, 1) if seconds else None}


def _shard_figures(client: OpenSearch, index: str, shards: int) -> dict[str, Any]:
    """Tools and Lucene documents per primary shard; the shard balance agent routing gives and the one
    routing each tool by its own id would give (OpenSearch's routing function)."""
    concrete = next(iter(client.indices.get_alias(index=index)))
    tools = [int(client.count(index=index, body={"query": {"term": {F.entity: "tool"}}},
                              preference=f"_shards:{i}|_primary")["count"]) for i in range(shards)]
    rows = client.cat.shards(index=concrete, format="json", h="shard,prirep,docs")
    lucene = [0] * shards
    for row in rows:
        if row.get("prirep") == "p":
            lucene[int(row["shard"])] = int(row.get("docs") or 0)
    meta = client.cluster.state(metric="metadata", index=concrete)["metadata"]["indices"][concrete]
    routing_shards = int(meta.get("routing_num_shards", shards))
    by_agent, by_tool = [0] * shards, [0] * shards
    agentless, mismatched = 0, 0
    hits = helpers.scan(client, index=index, query={"query": {"term": {F.entity: "tool"}}, "_source": [F.agent_id]},
                        preference="_primary", size=2000)
    for hit in hits:
        tool_id, agent = hit["_id"], (hit.get("_source") or {}).get(F.agent_id)
        agentless += not agent
        shard = routing_shard(str(agent or tool_id), shards, routing_shards)
        by_agent[shard] += 1
        by_tool[routing_shard(tool_id, shards, routing_shards)] += 1
        mismatched += hit.get("_routing", agent or tool_id) != (agent or tool_id)
    return {"tools": balance(tools), "lucene_docs": balance(lucene), "routing_num_shards": routing_shards,
            "agent_routing_predicted": balance(by_agent), "predicted_matches_found": by_agent == tools,
            "tool_id_routing_predicted": balance(by_tool), "tools_without_agent": agentless,
            "routing_not_agent": mismatched}


def _needles(client: OpenSearch, index: str, scale: ScaleCatalog) -> list[tuple[str, str, str]]:
    """(query id, text, the agent id of its first relevant tool) of every judged needle query."""
    queries, qrels = scale.queries(), scale.qrels()
    firsts = {qid: next(iter(sorted(rel, key=lambda t: -rel[t]))) for qid, rel in qrels.items() if rel and qid in queries}
    ids = sorted(set(firsts.values()))
    agents: dict[str, str] = {}
    for i in range(0, len(ids), 500):
        found = client.search(index=index, body={"size": 500, "_source": [F.agent_id],
                                                 "query": {"ids": {"values": ids[i:i + 500]}}})["hits"]["hits"]
        agents.update({h["_id"]: str((h.get("_source") or {}).get(F.agent_id) or h["_id"]) for h in found})
    return [(qid, queries[qid], agents[tool]) for qid, tool in firsts.items() if tool in agents]


def _rankings(backend: SearchBackend, tuned: _Tuned, needles: Sequence[tuple[str, str, str]],
              params: Mapping[str, str]) -> dict[str, list[str]] | str:
    """query id → its top 10 through the backend with ``params`` on every search; the error's text when
    OpenSearch refuses them."""
    tuned.params = dict(params)
    out: dict[str, list[str]] = {}
    try:
        for qid, text, _ in needles:
            response = backend.search(SearchRequest(query=text, top_k=10, explain=False))
            out[qid] = [t.doc_id for t in response.result.tools] if response.result is not None else []
    except TransportError as exc:
        return f"{exc.status_code} {str(exc.error)[:80]}: {str(exc.info)[:300]}"
    finally:
        tuned.params = {}
    return out


def _quality(rankings: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]]) -> dict[str, float]:
    run = {qid: ranked_run(ids, 10) for qid, ids in rankings.items()}
    metrics = evaluate({q: dict(qrels[q]) for q in run}, run, ["ndcg@10", "recall@5"])
    return {k: round(v, 4) for k, v in metrics.items()}


def _copies(primary: Mapping[str, Sequence[str]], replica: Mapping[str, Sequence[str]],
            qrels: Mapping[str, Mapping[str, int]]) -> dict[str, Any]:
    differ, overlaps, ndcg_moves = 0, [], 0
    per_query_p = {q: _quality({q: primary[q]}, qrels)["ndcg@10"] for q in primary}
    for qid, ids in primary.items():
        changed, overlap = top_overlap(ids, replica.get(qid, []))
        differ += changed
        overlaps.append(overlap)
        if changed and _quality({qid: replica.get(qid, [])}, qrels)["ndcg@10"] != per_query_p[qid]:
            ndcg_moves += 1
    return {"queries": len(primary), "top10_differ": differ, "ndcg_differs": ndcg_moves,
            "mean_overlap": round(sum(overlaps) / len(overlaps), 4) if overlaps else None,
            "primary": _quality(primary, qrels), "replica": _quality(replica, qrels)}


def _knn(client: OpenSearch, index: str, embedder: Embedder, texts: Sequence[str], ks: Sequence[int],
         field_weights: Mapping[str, float]) -> dict[str, Any]:
    eligible = int(client.count(index=index, body={"query": {"bool": {"filter": [
        {"term": {F.entity: "tool"}}, Scope(tenant=SMALL_TENANT).clauses()[0],
        {"nested": {"path": F.parameters, "query": {"exists": {"field": vector_field(F.parameters)}}}}]}}})["count"])
    vectors = embedder.encode_query(list(texts))
    out: dict[str, Any] = {"tenant": SMALL_TENANT, "tenant_tools_with_parameters": eligible, "queries": len(texts),
                           "queries_from": "the needle queries, each whole as one argument text", "k": {}}
    for k in ks:
        expected = min(k, eligible)
        figures: dict[str, dict[str, list[float]]] = {v: {"hits": [], "recall": [], "took": []} for v in KNN_VARIANTS}
        for vector in vectors:
            answers = {v: client.search(index=index, body=nested_knn_body(v, vector, k, SMALL_TENANT, field_weights),
                                        preference="_primary") for v in KNN_VARIANTS}
            exact = [h["_id"] for h in answers["exact"]["hits"]["hits"]]
            for variant, answer in answers.items():
                hits, recall = hit_recall([h["_id"] for h in answer["hits"]["hits"]], exact, k)
                figures[variant]["hits"].append(hits)
                figures[variant]["recall"].append(recall)
                figures[variant]["took"].append(float(answer["took"]))
        out["k"][str(k)] = {"expected_hits": expected, **{variant: {
            "mean_hits": round(sum(f["hits"]) / len(f["hits"]), 2),
            "queries_short": sum(h < expected for h in f["hits"]),
            "min_hits": int(min(f["hits"])),
            "recall": round(sum(f["recall"]) / len(f["recall"]), 4),
            "took_ms": percentiles(f["took"])} for variant, f in figures.items()}}
    return out


def _latency(runs: Sequence[tuple[str, SearchBackend, _Tuned]], needles: Sequence[tuple[str, str, str]],
             rounds: int, variants: Sequence[str], say: Callable[[str], None]) -> dict[str, Any]:
    """Wall ms and first-stage took per (index, variant), every pair per query in turn."""
    walls: dict[str, dict[str, list[float]]] = {name: {v: [] for v in variants} for name, _, _ in runs}
    failed: dict[str, str] = {}

    def one(backend: SearchBackend, tuned: _Tuned, variant: str, text: str, agent: str) -> tuple[float, list[str]]:
        params: dict[str, str] = {"session": {"preference": _SESSION}, "dfs": {"search_type": "dfs_query_then_fetch"},
                                  "server_routed": {"routing": agent}}.get(variant, {})
        agents = (agent,) if variant.startswith("server") else ()
        tuned.params = params
        try:
            started = time.perf_counter()
            response = backend.search(SearchRequest(query=text, top_k=10, explain=False, agents=agents))
            ms = (time.perf_counter() - started) * 1000
            return ms, [t.doc_id for t in response.result.tools] if response.result is not None else []
        finally:
            tuned.params = {}

    for name, backend, tuned in runs:  # warm-up, and what OpenSearch refuses
        for variant in variants:
            for _, text, agent in needles[:3]:
                try:
                    one(backend, tuned, variant, text, agent)
                except TransportError as exc:
                    failed[f"{name} {variant}"] = f"{exc.status_code} {str(exc.info)[:200]}"
    server: dict[str, dict[str, list[list[str]]]] = {name: {"server_unrouted": [], "server_routed": []}
                                                     for name, _, _ in runs}
    for r in range(rounds):
        say(f"latency round {r + 1}/{rounds}: {len(needles)} queries x {len(runs)} indices x {len(variants)} variants")
        for _, text, agent in needles:
            for name, backend, tuned in runs:
                for variant in variants:
                    if f"{name} {variant}" not in failed:
                        ms, ids = one(backend, tuned, variant, text, agent)
                        walls[name][variant].append(ms)
                        if r == 0 and variant in server[name]:
                            server[name][variant].append(ids)
    same = {name: sum(a == b for a, b in zip(by["server_unrouted"], by["server_routed"])) for name, by in server.items()}
    return {"rounds": rounds, "queries": len(needles), "refused": failed, "server_routed_same_top10": same,
            "wall_ms": {name: {v: percentiles(w) for v, w in by.items()} for name, by in walls.items()},
            "measured": "sequential single-client SearchBackend.search calls in process (no HTTP), wall clock"}


def run_shard_bench(
    settings: Settings,
    embedder: Embedder,
    out_dir: Path,
    *,
    tools: int = 10_000,
    shard_counts: Sequence[int] = (1, 3, 6),
    replicas: int = 1,
    nodes: int = 3,
    existing: bool = False,
    needles: str = "toolink",
    seed: int = 0,
    queries: int | None = None,
    tenant_share: float = 0.01,
    ks: Sequence[int] = (10, 100),
    quality_queries: int | None = None,
    knn_queries: int = 100,
    latency_queries: int = 60,
    rounds: int = 2,
    datasets: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    # Long: one benchmark's steps in order (a catalog, then per shard count: build, route, search, measure),
    # the figures gathered as they come.
    """Measure each shard count of ``shard_counts`` on one catalog of ``tools`` tools (the module's steps).

    Args:
        settings: toolsift's settings; ``settings.index`` + ``-shards-<S>`` names each index, and with
            ``existing`` the cluster they point at is measured.
        embedder: the embedding model (ingest, the backend's queries, the k-NN queries).
        out_dir: the catalog and its tenant split go under it.
        tools, needles, seed, queries, datasets: the catalog's (:func:`generate_catalog`).
        shard_counts, replicas: the layouts measured (replicas the same for all).
        nodes: members of the bench's own local cluster (2-9); ignored with ``existing``.
        tenant_share: the small tenant's share of the tools.
        ks: the nested k-NN's k values.
        quality_queries: needle queries scored per layout and variant (a seeded sample; default all).
        knn_queries, latency_queries: needle queries (of those) used for the nested k-NN and for latency.
        rounds: latency rounds over those queries.
        progress: called with one line per step.

    Returns:
        The figures (JSON-ready): ``config``, ``environment``, ``catalog``, ``layouts`` (per shard count:
        ingest, shards, quality, copies, knn) and ``latency``.

    Raises:
        ConfigError: no shard counts, a count below 1, replicas below 0, a k below 1, no free ports.
        CatalogError: ``tools`` too small for the needles, or a catalog of one server.
        NodeError / ClusterError: the cluster cannot be started or reached, or an index stays short of green.
        IndexingError: an ingest rejected a record or failed a write.
    """
    say = progress or (lambda _m: None)
    counts = sorted(set(shard_counts))
    if not counts or counts[0] < 1 or replicas < 0 or not ks or min(ks) < 1 or rounds < 1:
        raise ConfigError(f"bench shards needs shard counts of at least 1, replicas of at least 0, k of at least 1 and "
                          f"a round; got {list(shard_counts)}, {replicas}, {list(ks)}, {rounds}")
    out_dir = Path(out_dir)
    scale = bench_catalog(out_dir, tools, needles, seed, queries, datasets)
    split = split_by_tenant(scale.catalog_path, out_dir / "catalogs" / f"{tools}-tenants", tenant_share, seed)
    qrels = scale.qrels()
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    results: dict[str, Any] = {
        "config": {"tools": tools, "needles": needles, "seed": seed, "shard_counts": counts, "replicas": replicas,
                   "tenant_share": tenant_share, "ks": list(ks), "quality_queries": quality_queries,
                   "knn_queries": knn_queries, "latency_queries": latency_queries, "rounds": rounds, "retriever": settings.retriever,
                   "fusion": settings.fusion, "embedding_model": embedder.name,
                   "embedding_backend": str(getattr(embedder, "backend", "torch"))},
        "catalog": {"path": str(scale.catalog_path), "tools": scale.tools, "servers": scale.servers,
                    "queries": scale.query_count, "small_tenant_tools": split.small_tools,
                    "small_tenant_servers": split.small_servers},
        "layouts": {},
    }
    with _target(settings, nodes, existing, out_dir / "cluster", say) as (target, node_count):
        client = connect(target)
        results["environment"] = {"cpu_count": os.cpu_count(), "cluster_nodes": node_count, "device": embedder.device,
                                  "cluster": "existing" if existing else "local",
                                  "cluster_heap": None if existing else target.cluster_heap}
        aliases = {s: f"{target.index}-shards-{s}" for s in counts}
        bench_settings = {s: target.with_overrides(index=aliases[s], shards=s, replicas=replicas, query_log=False,
                                                   eval_runs=False) for s in counts}
        try:
            for s in counts:
                drop_index(client, aliases[s])
                say(f"{s} shard(s): ingest of {split.tools:,} tools into {aliases[s]} ({replicas} replica(s))")
                ingest = _ingest(client, bench_settings[s], embedder, split)
                ingest["green_seconds"] = wait_green(client, aliases[s])
                ingest["settle_seconds"] = settle_index(client, aliases[s])
                say(f"{s} shard(s): {ingest['tools_per_s']} tools/s")
                results["layouts"][str(s)] = {"shards": s, "replicas": replicas, "index": aliases[s], "ingest": ingest}
            needle_list = _needles(client, aliases[counts[0]], scale)
            if quality_queries is not None and quality_queries < len(needle_list):
                needle_list = random.Random(seed).sample(needle_list, quality_queries)
            runs: list[tuple[str, SearchBackend, _Tuned]] = []
            for s in counts:
                record = results["layouts"][str(s)]
                say(f"{s} shard(s): shard balance")
                record["shards_figures"] = _shard_figures(client, aliases[s], s)
                tuned = _Tuned(client)
                backend = SearchBackend(cast(OpenSearch, tuned), bench_settings[s], embedder=embedder, source="bench")
                rrf = SearchBackend(cast(OpenSearch, tuned), bench_settings[s].with_overrides(fusion="rrf"),
                                    embedder=embedder, source="bench")
                runs.append((str(s), backend, tuned))
                say(f"{s} shard(s): {len(needle_list)} needle queries (primary, replica, rrf, dfs)")
                primary = _rankings(backend, tuned, needle_list, {"preference": "_primary"})
                if isinstance(primary, str):
                    raise IndexingError(f"the needle queries failed on {aliases[s]}: {primary}")
                quality: dict[str, Any] = {"queries": len(primary), "minmax": _quality(primary, qrels)}
                found_rrf = _rankings(rrf, tuned, needle_list, {"preference": "_primary"})
                quality["rrf"] = found_rrf if isinstance(found_rrf, str) else _quality(found_rrf, qrels)
                dfs = _rankings(backend, tuned, needle_list, {"preference": "_primary",
                                                              "search_type": "dfs_query_then_fetch"})
                quality["dfs_query_then_fetch"] = dfs if isinstance(dfs, str) else _quality(dfs, qrels)
                record["quality"] = quality
                if replicas:
                    replica = _rankings(backend, tuned, needle_list, {"preference": "_replica"})
                    record["copies"] = replica if isinstance(replica, str) else _copies(primary, replica, qrels)
                say(f"{s} shard(s): nested k-NN with the tenant filter, k = {', '.join(map(str, ks))}")
                record["knn"] = _knn(client, aliases[s], embedder, [t for _, t, _ in needle_list[:knn_queries]], ks,
                                     target.field_weights)
            variants = ["default", "session", "dfs", "server_unrouted", "server_routed"]
            results["latency"] = _latency(runs, needle_list[:latency_queries], rounds, variants, say)
        finally:
            for s in counts:
                drop_index(client, aliases[s])
    results["load_average"] = {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)}
    results["wall_seconds"] = round(time.perf_counter() - started, 1)
    results["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return results


# ---------------------------------------------------------------------------------------------
# Tables


def _f(value: Any, digits: int = 3) -> str:
    return "-" if not isinstance(value, (int, float)) or isinstance(value, bool) else f"{value:.{digits}f}"


def summary_rows(results: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """One row per shard count: quality (min-max, RRF, DFS), primary vs replica, balance, nested k-NN
    (hits returned / expected and recall, product's query), latency p50/p95.

    Returns:
        (headers, rows) of strings.
    """
    ks = [str(k) for k in results.get("config", {}).get("ks", [])]
    headers = ["layout", "NDCG@10 / R@5", "NDCG@10 rrf", "NDCG@10 dfs", "pri vs rep: top10 differ (NDCG pri/rep)",
               "tools/shard max/mean (by tool id)", *(f"nested k-NN k={k}: hits/exp, recall (post-filter, k x10)"
                                                      for k in ks),
               "p50/p95 ms default", "session pref", "dfs", "server unrouted / routed p50"]
    rows = []
    latency = results.get("latency", {}).get("wall_ms", {})
    for key, record in sorted(results.get("layouts", {}).items(), key=lambda kv: int(kv[0])):
        quality = record.get("quality", {})

        def q(name: str, quality: Mapping[str, Any] = quality) -> str:
            found = quality.get(name)
            return _f(found.get("ndcg@10")) if isinstance(found, Mapping) else "refused"

        copies = record.get("copies")
        if isinstance(copies, Mapping):
            pri_rep = (f"{copies['top10_differ']}/{copies['queries']} ({_f(copies['primary'].get('ndcg@10'))}/"
                       f"{_f(copies['replica'].get('ndcg@10'))})")
        else:
            pri_rep = "-" if copies is None else "refused"
        shards = record.get("shards_figures", {})
        bal = (f"{_f(shards.get('tools', {}).get('max_over_mean'), 2)} "
               f"({_f(shards.get('tool_id_routing_predicted', {}).get('max_over_mean'), 2)})") if shards else "-"
        knn_cells = []
        for k in ks:
            found = record.get("knn", {}).get("k", {}).get(k, {})
            if not found:
                knn_cells.append("-")
                continue
            p, post, wide = found["product"], found["post_filter"], found["k_x10"]
            knn_cells.append(f"{_f(p['mean_hits'], 1)}/{found['expected_hits']}, {_f(p['recall'])} "
                             f"({_f(post['mean_hits'], 1)}, {_f(post['recall'])}; {_f(wide['mean_hits'], 1)}, "
                             f"{_f(wide['recall'])})")
        lat = latency.get(key, {})

        def ms(variant: str, lat: Mapping[str, Any] = lat) -> str:
            found = lat.get(variant, {})
            return f"{_f(found.get('p50'), 0)}/{_f(found.get('p95'), 0)}" if found.get("n") else "-"

        rows.append([f"{record['shards']}p x {1 + int(record['replicas'])}",
                     f"{q('minmax')} / {_f(quality.get('minmax', {}).get('recall@5'))}", q("rrf"),
                     q("dfs_query_then_fetch"), pri_rep, bal, *knn_cells, ms("default"), ms("session"), ms("dfs"),
                     f"{_f(lat.get('server_unrouted', {}).get('p50'), 0)} / "
                     f"{_f(lat.get('server_routed', {}).get('p50'), 0)}"])
    return headers, rows


def markdown_tables(results: Mapping[str, Any]) -> str:
    """The table as markdown, with what produced it."""
    config, env, catalog = results.get("config", {}), results.get("environment", {}), results.get("catalog", {})
    head = (f"`toolsift bench shards`: {catalog.get('tools')} tools ({catalog.get('servers')} servers, "
            f"{config.get('needles')} needles, {catalog.get('queries')} queries), small tenant "
            f"{catalog.get('small_tenant_tools')} tools; {env.get('cluster_nodes')} node(s) ({env.get('cluster')}), "
            f"{env.get('cpu_count')} CPU cores, embeddings {config.get('embedding_backend')}; load average "
            f"{results.get('load_average', {}).get('before')} → {results.get('load_average', {}).get('after')}.")
    headers, rows = summary_rows(results)
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return head + "\n\n" + "\n".join(lines) + "\n"
