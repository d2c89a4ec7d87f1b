"""How many primaries and replicas a tool index gets: the layout rule, by catalog size and cluster.

The rule (docs/evaluation.md, "Index layout"): one primary per :data:`SHARD_TOOLS` tools (rounded
up), never more than the cluster has data nodes; one replica wherever a second node can hold it. A
shard of 25,000 tools is about 1 GB at the ~39 KB per tool the index takes, far below the 10–50 GB
OpenSearch advises. Measured at 10k tools on three nodes (`toolsift bench shards`): one primary
answered fastest (p50 71 ms against 105 and 124 ms with 3 and 6 on a 2-core machine); more primaries
did not lower quality (needle NDCG@10 0.430 → 0.451 / 0.447: each shard's k-NN returns its own k, so
more shards gather more candidates — what ``knn_ef_search`` buys on one), and neither RRF nor
``dfs_query_then_fetch`` moved it (per-shard statistics hardly matter once every candidate gets its
exact field scores). The replica cost no quality (top 10 equal on 143 of 150 queries, NDCG@10 equal
to three decimals) and is written as ``auto_expand_replicas: 0-1``: none on one node, one as soon as a
second node joins, so a node lost loses no tool and a single-node install stays green. The 25,000 is
a size bound, not a measured optimum: no catalog that large was measured on several shards.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from toolsift.errors import ConfigError

__all__ = ["SHARD_TOOLS", "AUTO_REPLICAS", "Layout", "index_layout"]

#: The layout rule's tools per primary shard.
SHARD_TOOLS = 25_000
#: The replicas of a tool index when none are given: one wherever a second node can hold it.
AUTO_REPLICAS = "0-1"


@dataclass(frozen=True)
class Layout:
    """An index's primaries and replicas (None: :data:`AUTO_REPLICAS`), and the rule that chose them."""

    shards: int
    replicas: int | None
    rule: str


def index_layout(tools: int, data_nodes: int, *, shards: int | None = None, replicas: int | None = None,
                 given_as: tuple[str, str] = ("shards", "replicas")) -> Layout:
    """The layout of an index of ``tools`` tools on a cluster of ``data_nodes`` data nodes.

    ``shards`` / ``replicas`` override the rule (the ``shards`` / ``replicas`` settings); the rule
    names an override as the caller's user gives it (``given_as``: a setting's name, a CLI option).

    Raises:
        ConfigError: fewer than one tool or node, fewer than one shard, or replicas below 0.
    """
    if tools < 1 or data_nodes < 1:
        raise ConfigError(f"a layout needs at least one tool and one node, got {tools} tools and {data_nodes} nodes")
    if shards is not None and shards < 1 or replicas is not None and replicas < 0:
        raise ConfigError(f"shards must be at least 1 and replicas at least 0, got {shards} and {replicas}")
    rule = (f"one primary per {SHARD_TOOLS:,} tools (rounded up), at most one per data node; one replica "
            "wherever a second node can hold it")
    chosen = shards if shards is not None else min(data_nodes, max(1, math.ceil(tools / SHARD_TOOLS)))
    if shards is not None or replicas is not None:
        given = [f"{given_as[0]} {shards}" if shards is not None else "",
                 f"{given_as[1]} {replicas}" if replicas is not None else ""]
        rule = "given: " + ", ".join(p for p in given if p) + f" (else the rule: {rule})"
    return Layout(chosen, replicas, rule)
