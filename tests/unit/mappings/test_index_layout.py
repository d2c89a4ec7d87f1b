"""The layout rule: how many primaries and replicas a new tool index gets."""

from __future__ import annotations

import pytest

from toolsift.errors import ConfigError
from toolsift.mappings import build_settings, index_body, mapping_fingerprint
from toolsift.mappings.layout import AUTO_REPLICAS, SHARD_TOOLS, index_layout


def test_one_primary_per_25k_tools_never_more_than_the_data_nodes() -> None:
    assert index_layout(1, 3).shards == 1
    assert index_layout(SHARD_TOOLS, 3).shards == 1
    assert index_layout(SHARD_TOOLS + 1, 3).shards == 2
    assert index_layout(1_000_000, 3).shards == 3
    assert index_layout(1_000_000, 1).shards == 1


def test_the_replica_is_left_to_the_cluster_one_wherever_a_second_node_can_hold_it() -> None:
    assert index_layout(10_000, 3).replicas is None
    assert build_settings(1, None)["index"]["auto_expand_replicas"] == AUTO_REPLICAS == "0-1"
    assert "number_of_replicas" not in build_settings(1, None)["index"]
    assert build_settings(2, 1)["index"] == {"knn": True, "number_of_shards": 2, "number_of_replicas": 1}


def test_given_shards_and_replicas_override_the_rule_and_the_rule_says_so() -> None:
    layout = index_layout(1_000_000, 3, shards=6, replicas=2)

    assert (layout.shards, layout.replicas) == (6, 2)
    assert layout.rule.startswith("given: shards 6, replicas 2")


@pytest.mark.parametrize(("tools", "nodes", "shards", "replicas"), [(0, 3, None, None), (10, 0, None, None),
                                                                      (10, 3, 0, None), (10, 3, None, -1)])
def test_an_impossible_layout_is_a_config_error(tools: int, nodes: int, shards: int | None, replicas: int | None) -> None:
    with pytest.raises(ConfigError):
        index_layout(tools, nodes, shards=shards, replicas=replicas)


def test_shards_and_replicas_are_not_schema_an_index_keeps_its_fingerprint() -> None:
    one = index_body(dimension=384, embedding_model="m", shards=1, replicas=0)
    three = index_body(dimension=384, embedding_model="m", shards=3, replicas=None)

    assert one["mappings"]["_meta"] == three["mappings"]["_meta"]
    assert one["mappings"]["_meta"]["toolsift"]["mapping_fingerprint"] == mapping_fingerprint(384)
