"""`toolsift bench scale` end to end on the real node, at one tiny size: a generated catalog embedded, ingested,
sized, searched for its needles and served under load by the real API and floor processes; then resumed
(timings are figures, never asserted)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolsift.cli.main import cli

pytestmark = pytest.mark.integration


def test_bench_scale_measures_a_size_writes_json_table_and_plot_and_resumes_without_measuring_it_again(
    client: Any, settings: Any, datasets: Path, tmp_path: Path
) -> None:
    args = ["--opensearch-url", settings.effective_url, "--index", "toolsift-test-bench", "bench", "scale", "--existing",
            "--sizes", "60", "--queries", "3", "--clients", "1", "--seconds", "3", "--project", "600",
            "--datasets", str(datasets), "--out", str(tmp_path / "out")]

    first = CliRunner().invoke(cli, args, catch_exceptions=False)

    assert first.exit_code == 0, first.output
    results = json.loads((tmp_path / "out" / "scale.json").read_text(encoding="utf-8"))
    record = results["sizes"]["60"]
    assert record["layout"]["shards"] == 1 and record["layout"]["replicas"] == 0  # one node: no replica
    assert record["embedding"]["texts_encoded"] > 0 and record["ingest"]["texts_encoded"] == 0  # embedded once
    assert record["ingest"]["tools"] == 60 and record["ingest"]["tools_per_s"] > 0
    disk = record["disk"]
    assert 0 < disk["primaries_bytes"] <= disk["total_bytes"] and disk["lucene_docs"] > 60
    if disk["kinds"] is not None:  # the node's data folder is on this machine
        assert sum(disk["kinds"].values()) >= disk["primaries_bytes"] * 0.9
        assert disk["kinds"]["vectors"] > 0 and disk["kinds"]["stored_fields"] > 0
    assert record["memory"]["vector_methods"][0]["method"]["engine"] == "lucene"
    assert record["quality"]["queries"] == 3 and 0 <= record["quality"]["ndcg@10"] <= 1
    # the floors, ranked in the same run on the same index and queries, and the top 10's repeats
    floors = record["quality"]["floors"]
    assert set(floors) == {"bm25", "dense"}
    assert all(0 <= f[m] <= 1 for f in floors.values() for m in ("ndcg@10", "recall@5", "near_duplicate_share@10"))
    assert 0 <= record["quality"]["near_duplicate_share@10"] < 1
    # how deep the gold sits, and what one tool per copy group would give by id and by capability
    quality = record["quality"]
    assert quality["recall@5"] <= quality["recall@50"] <= 1
    assert set(quality["one_capability_once"]) == {"ndcg@10", "recall@5"}
    by_capability = quality["capability_recall@5"]
    assert quality["recall@5"] <= by_capability["default"] <= 1  # a copy can only add to the gold itself
    assert 0 <= by_capability["one_capability_once"] <= 1
    for service in ("api", "floor"):
        assert record["latency"][service]["requests"] > 0 and record["latency"][service]["errors"] == 0
    assert "60" in first.output and "NDCG@10" in first.output
    assert (tmp_path / "out" / "scale.png").read_bytes()[:4] == b"\x89PNG"
    assert "| tools | layout |" in (tmp_path / "out" / "scale.md").read_text(encoding="utf-8")
    assert not client.indices.exists(index="toolsift-test-bench-scale-60*", allow_no_indices=False)  # dropped

    again = CliRunner().invoke(cli, args, catch_exceptions=False)

    assert again.exit_code == 0, again.output
    assert "already measured" in again.output
    resumed = json.loads((tmp_path / "out" / "scale.json").read_text(encoding="utf-8"))
    assert resumed["sizes"]["60"] == record and resumed["runs"][-1]["measured"] == []
