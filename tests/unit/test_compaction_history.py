"""When OpenSearch no longer needs a shard's history (:func:`toolsift.compaction.released`), read from
shard-level ``_stats`` as the node writes them: only then does a merge drop ``_recovery_source``."""

from __future__ import annotations

from typing import Any

from toolsift.compaction import released


def _copy(max_seq_no: int, *, committed: int, leases: tuple[int, ...], global_checkpoint: int | None = None,
          primary: bool = True) -> dict[str, Any]:
    return {
        "routing": {"primary": primary},
        "seq_no": {"max_seq_no": max_seq_no, "local_checkpoint": max_seq_no,
                   "global_checkpoint": max_seq_no if global_checkpoint is None else global_checkpoint},
        "commit": {"user_data": {"local_checkpoint": str(committed)}},
        "retention_leases": {"leases": [{"retaining_seq_no": n} for n in leases]},
    }


def test_a_committed_shard_whose_leases_moved_past_its_writes_is_released() -> None:
    assert released({"0": [_copy(596, committed=596, leases=(597,))]})


def test_writes_not_yet_in_a_commit_are_still_needed() -> None:
    assert not released({"0": [_copy(596, committed=-1, leases=(597,))]})  # loaded, never flushed


def test_a_lease_not_yet_renewed_keeps_the_history() -> None:
    assert not released({"0": [_copy(596, committed=596, leases=(0,))]})  # OpenSearch renews every 30 s


def test_a_copy_behind_holds_back_every_copy() -> None:
    primary = _copy(596, committed=596, leases=(597, 412))  # the replica's lease: it lacks 412..596
    replica = _copy(596, committed=596, leases=(597, 412), primary=False)

    assert not released({"0": [primary, replica]})


def test_a_global_checkpoint_behind_the_writes_keeps_the_history() -> None:
    assert not released({"0": [_copy(596, committed=596, leases=(597,), global_checkpoint=590)]})


def test_every_shard_must_be_released() -> None:
    done, pending = _copy(300, committed=300, leases=(301,)), _copy(296, committed=296, leases=(0,))

    assert released({"0": [done], "1": [done]})
    assert not released({"0": [done], "1": [pending]})


def test_an_index_with_no_copies_reported_is_not_released() -> None:
    assert not released({})
