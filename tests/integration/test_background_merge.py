"""A bulk load that wrote several segments is merged to one, in the background or before returning
(real node). A catalog larger than the node's indexing buffer flushes part-way; here each batch is
flushed by hand, which writes a segment of its own the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from opensearchpy import helpers

from toolsift.cli.main import cli
from toolsift.opensearch import bulk_loading, merge_state, primary_segments, wait_for_merge

from tests.conftest import drop_indices

pytestmark = pytest.mark.integration

INDEX = "toolsift-test-background-merge"
BATCHES = 3


@pytest.fixture()
def empty_index(client: Any) -> Iterator[str]:
    drop_indices(client, INDEX)
    client.indices.create(index=INDEX, body={"settings": {"number_of_shards": 1, "number_of_replicas": 0},
                                             "mappings": {"properties": {"text": {"type": "text"}}}})
    yield INDEX
    drop_indices(client, INDEX)


def _load_in_batches(client: Any, index: str) -> None:
    for batch in range(BATCHES):
        helpers.bulk(client, ({"_index": index, "_id": f"{batch}-{i}", "text": f"tool {batch} {i}"} for i in range(50)))
        client.indices.flush(index=index)  # a segment of its own, as an indexing buffer that filled up


def test_a_load_in_several_segments_is_merged_in_the_background(client: Any, empty_index: str) -> None:
    with bulk_loading(client, empty_index, merge="background") as load:
        _load_in_batches(client, empty_index)

    assert load.segments == BATCHES
    assert load.merge_task is not None and ":" in load.merge_task  # node id : task number
    assert client.count(index=empty_index)["count"] == 50 * BATCHES  # searchable while it merges

    wait_for_merge(client, empty_index, load.merge_task)

    state = merge_state(client, empty_index)
    assert state.segments == 1 and not state.merging and state.merged
    assert client.count(index=empty_index)["count"] == 50 * BATCHES


def test_a_load_that_waits_returns_merged(client: Any, empty_index: str) -> None:
    with bulk_loading(client, empty_index, merge="wait") as load:
        _load_in_batches(client, empty_index)

    assert load.segments == BATCHES and load.merge_task is None
    assert primary_segments(client, empty_index) == 1


def test_a_load_in_one_segment_starts_no_merge(client: Any, empty_index: str) -> None:
    with bulk_loading(client, empty_index, merge="background") as load:
        helpers.bulk(client, ({"_index": empty_index, "_id": str(i), "text": "tool"} for i in range(50)))

    assert load.segments == 1 and load.merge_task is None
    assert merge_state(client, empty_index).merged


def test_ingest_and_index_status_report_the_segments(client: Any, base_settings: Any, datasets: Path,
                                                    tmp_path: Path) -> None:
    servers = json.loads((datasets / "livemcpbench" / "tools.json").read_text(encoding="utf-8"))[:2]
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps(servers, ensure_ascii=False), encoding="utf-8")
    alias = f"{INDEX}-ingest"
    drop_indices(client, alias)
    url = ["--opensearch-url", base_settings.opensearch_url]
    try:
        ingest = CliRunner().invoke(cli, [*url, "ingest", str(catalog), "--index", alias, "--format", "mcp",
                                          "--approve", "--json"])
        status = CliRunner().invoke(cli, [*url, "index", "status", "--index", alias, "--json"])
    finally:
        drop_indices(client, alias)

    assert ingest.exit_code == 0, ingest.output
    report = json.loads(ingest.output)
    assert report["segments"] == 1 and report["merge_task"] is None  # two servers fit one in-memory segment
    assert status.exit_code == 0, status.output
    state = json.loads(status.output)
    assert state["segments"] == 1 and state["merged"] and not state["merging"]
