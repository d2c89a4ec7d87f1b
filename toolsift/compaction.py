"""Dropping the second copy OpenSearch keeps of every document once no copy of the index needs it.

A tool index excludes its vectors from ``_source`` (a search never parses them), so OpenSearch also keeps
each document's whole original JSON, vectors included, as ``_recovery_source``: the history a replica
replays when it missed writes. That copy is two thirds of a tool's bytes (22.6 of 33.3 KB a tool on
LiveMCPBench's catalog). OpenSearch drops it itself when a merge rewrites documents that every copy of the
shard has: its retention leases have moved past them and a commit holds them. A freshly loaded index is
one segment that no merge touches again, so without help it keeps that copy for good.

:func:`compact` gives it that merge:

1. a flush: a commit holds every write;
2. a wait until each shard copy's retention leases retain nothing its copies lack. OpenSearch renews
   them on its own schedule (every 30 s); a copy that is down holds its lease back because it still
   needs the history, and then the wait ends without compacting: nothing is lost, a later call does it;
3. one empty document written and deleted in every shard (no field, no vector, never searchable), so
   that each shard has a second segment to merge with;
4. a force merge to one segment a shard. The loaded segment has no deletions, so Lucene builds the
   merged HNSW graph from its graph: the same graph, and the same answers, as before compaction.

OpenSearch's own guarantees are untouched: a replica that misses writes after compaction still replays
them from history kept for it (``tests/cluster/test_vectors_survive_replica_recovery.py``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from opensearchpy import OpenSearch

from toolsift.errors import ClusterError

__all__ = ["Compaction", "compact", "history_released", "released", "HISTORY_WAIT_S", "FORCE_MERGE_TIMEOUT_S"]

#: How long :func:`compact` waits for the retention leases: three of OpenSearch's 30-s renewals.
HISTORY_WAIT_S = 90.0

#: A force merge rebuilds the HNSW graph where it cannot reuse one: minutes on a large catalog.
FORCE_MERGE_TIMEOUT_S = 900

_SHARD_STATS = ("indices.*.shards.*.seq_no,"
                "indices.*.shards.*.commit.user_data.local_checkpoint,"
                "indices.*.shards.*.retention_leases.leases.retaining_seq_no")


@dataclass(frozen=True)
class Compaction:
    """What :func:`compact` did: ``compacted`` False when the history was still needed after ``waited_s``
    (a copy down or recovering), and then nothing was merged; ``merge_task`` the force merge left running
    when it was started in the background (None: waited for, or none started)."""

    compacted: bool
    waited_s: float
    merge_task: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"compacted": self.compacted, "waited_s": round(self.waited_s, 1), "merge_task": self.merge_task}


def history_released(client: OpenSearch, index: str) -> bool:
    """Whether every copy of every shard of ``index`` has a commit holding all its writes and retention
    leases that retain none of them: a merge then drops their ``_recovery_source``."""
    stats = client.indices.stats(index=index, params={"level": "shards", "filter_path": _SHARD_STATS})
    return released(((stats.get("indices") or {}).get(index) or {}).get("shards") or {})


def released(shards: Mapping[str, Sequence[Mapping[str, Any]]]) -> bool:
    """:func:`history_released` on the ``shards`` of an index's shard-level ``_stats``: each copy's
    ``seq_no``, ``commit.user_data.local_checkpoint`` and ``retention_leases``."""
    copies = [copy for rows in shards.values() for copy in rows]
    if not copies:
        return False
    for copy in copies:
        seq_no = copy.get("seq_no") or {}
        last = int(seq_no.get("max_seq_no", -1))
        committed = int(((copy.get("commit") or {}).get("user_data") or {}).get("local_checkpoint", -1))
        leases = ((copy.get("retention_leases") or {}).get("leases")) or []
        if committed < last or int(seq_no.get("global_checkpoint", -1)) < last:
            return False
        if any(int(lease.get("retaining_seq_no", 0)) <= last for lease in leases):
            return False
    return True


def _routing_per_shard(client: OpenSearch, index: str, shards: int) -> dict[int, str]:
    """A routing value that lands in each shard of ``index`` (asked of the cluster, not recomputed)."""
    found: dict[int, str] = {}
    for n in range(64 * shards):
        routing = f"toolsift-compaction-{n}"
        groups = client.search_shards(index=index, params={"routing": routing})["shards"]
        found.setdefault(int(groups[0][0]["shard"]), routing)
        if len(found) == shards:
            return found
    raise ClusterError(f"no routing value reached every one of the {shards} shards of {index}")


def compact(client: OpenSearch, index: str, *, wait_s: float = HISTORY_WAIT_S, background: bool = False,
            poll_s: float = 1.0) -> Compaction:
    """Merge ``index`` to one segment a shard once OpenSearch no longer needs its documents' history, so
    the merge drops their ``_recovery_source`` (the module docstring says how).

    Args:
        wait_s: how long to wait for the retention leases; past it nothing is merged (``compacted`` False).
        background: start the force merge and return its task (a large index merges for minutes).

    Raises:
        ClusterError: no routing value reached some shard (the cluster answers ``_search_shards`` oddly).
    """
    started = time.perf_counter()
    client.indices.flush(index=index, params={"wait_if_ongoing": "true"})
    while not history_released(client, index):
        if time.perf_counter() - started > wait_s:
            return Compaction(False, time.perf_counter() - started)
        time.sleep(poll_s)
        client.indices.flush(index=index, params={"wait_if_ongoing": "true"})
    waited = time.perf_counter() - started
    shards = int(client.indices.get_settings(index=index)[index]["settings"]["index"]["number_of_shards"])
    for routing in _routing_per_shard(client, index, shards).values():
        doc_id = f"_{routing}"
        client.index(index=index, id=doc_id, body={}, params={"routing": routing})
        client.delete(index=index, id=doc_id, params={"routing": routing, "refresh": "true"})
    if background:
        answer = client.indices.forcemerge(index=index, params={"max_num_segments": 1,
                                                                "wait_for_completion": "false"})
        return Compaction(True, waited, merge_task=str(answer["task"]))
    client.indices.forcemerge(index=index, params={"max_num_segments": 1}, request_timeout=FORCE_MERGE_TIMEOUT_S)
    client.indices.refresh(index=index)  # searchers move to the merged segment; the old files go
    return Compaction(True, waited)
