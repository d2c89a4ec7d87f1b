"""Benchmarks of speed, scale and faults (``toolsift bench ...``), apart from quality evaluation.

Each module is one benchmark or drill, measured next to a floor in the same run: search latency and
ingest throughput (``search_bench``, ``ingest_bench``), concurrent load (``load``, its clients in
``locustfile``, its floor in ``load_floor``), the encoder backends (``encoder_bench``), ranking stages
(``rerank_bench``), ranking inside OpenSearch (``native_bench``), vectors (``vector_bench``), shards
(``shard_bench``), growing catalogs (``scale_catalog`` with ``scale_text``, ``scale_bench`` with ``scale_report``), freshness of live sources
(``freshness``, against ``changing_server``) and faults: a dying ranker (``failover``), a crashing node
(``outage``) and a lost cluster member (``nodeloss``).

A layer above evaluation: it may import every layer below the front ends (it drives the backend and
the served APIs like any client); nothing but the CLI imports it.
"""

from __future__ import annotations

from toolsift.lazy import lazy_exports

#: Public name → the module that defines it, imported on first use (:mod:`toolsift.lazy`).
_EXPORTS: dict[str, str] = {
    "run_bench": "toolsift.bench.search_bench",
    "run_ingest_bench": "toolsift.bench.ingest_bench",
    "run_load": "toolsift.bench.load",
    "run_encoder_bench": "toolsift.bench.encoder_bench",
    "run_rerank_bench": "toolsift.bench.rerank_bench",
    "run_native_bench": "toolsift.bench.native_bench",
    "run_vector_bench": "toolsift.bench.vector_bench",
    "run_shard_bench": "toolsift.bench.shard_bench",
    "generate_catalog": "toolsift.bench.scale_catalog",
    "run_scale_bench": "toolsift.bench.scale_bench",
    "run_freshness_bench": "toolsift.bench.freshness",
    "run_failover": "toolsift.bench.failover",
    "run_outage_drill": "toolsift.bench.outage",
    "run_node_loss_drill": "toolsift.bench.nodeloss",
}

__all__ = list(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
