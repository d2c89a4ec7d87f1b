"""``toolsift bench``: ``bench [latency] DATASET_DIR``, ``bench load DATASET_DIR``, ``bench failover``, ``bench rerank``, ``bench screen``, ``bench prompts``, ``bench outage``, ``bench freshness``, ``bench opensearch``, ``bench catalog``, ``bench scale``, ``bench node-loss``, ``bench ingest``, ``bench encoder``, ``bench vectors``, ``bench shards``.

The group is here; its subcommands live in ``bench_speed``, ``bench_scale`` and ``bench_quality``.
"""

from __future__ import annotations

import click

from toolsift.cli._groups import DefaultSubcommandGroup
from toolsift.cli.bench_quality import embedder_bench, feedback, prompts, screen
from toolsift.cli.bench_scale import catalog, failover, freshness, node_loss, outage, scale, shards_bench
from toolsift.cli.bench_speed import encoder_bench, ingest_bench, latency, load, opensearch_bench, rerank, vectors_bench

__all__ = ["bench"]

_DEFAULT = "latency"


@click.group(cls=DefaultSubcommandGroup, default=_DEFAULT)
def bench() -> None:
    """Benchmarks: ingest throughput and search latency (`bench [latency] DATASET_DIR`), the ranker
    service's failover drill (`bench failover`), reranking cost (`bench rerank`) and the ingest screen's
    precision and recall on hostile tool text (`bench screen`), hostile tool text against toolsift's own LLM
    prompts (`bench prompts`), an OpenSearch crash (`bench outage`), live-catalog freshness
    (`bench freshness`) and toolsift's ranking inside OpenSearch's search pipeline (`bench opensearch`); and
    a large catalog with a benchmark's needles inside it to measure them on (`bench catalog`) and toolsift
    measured as that catalog grows (`bench scale`); one node of a three-node cluster lost under load
    (`bench node-loss`); a catalog's ingest held to plain sentence-transformers encoding its texts
    (`bench ingest`); the embedding backends' speed and their effect on exact dense retrieval
    (`bench encoder`); the k-NN encoding and HNSW parameters against exact search (`bench vectors`);
    shards, routing, the tenant-filtered nested k-NN and primary vs replica answers on a cluster
    (`bench shards`)."""


for _command in (latency, load, failover, rerank, screen, prompts, opensearch_bench, freshness, outage, catalog, scale,
                 shards_bench, ingest_bench, node_loss, encoder_bench, vectors_bench, embedder_bench, feedback):
    bench.add_command(_command)
