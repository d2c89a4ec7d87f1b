"""``toolsift bench ingest`` on a small catalog: every row is measured, in one run, on the real node.

What holds whatever the machine's speed: the floor encodes the catalog's own names, descriptions and
parameters, and the embedder's own backend encodes the same texts beside it; the warm re-ingest encodes nothing and embeds what the cold one did; the bulk-only row
writes every document; the bench leaves no index and no vector cache behind. (Its times are figures,
not assertions.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolsift.cli.main import cli
from toolsift.bench.ingest_bench import BENCH_INDEX
from toolsift.mappings.index import IndexManager

pytestmark = pytest.mark.integration


def test_the_ingest_bench_measures_the_floor_a_cold_and_a_warm_ingest_and_the_bulk_alone(
    client: Any, base_settings: Any, datasets: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers = json.loads((datasets / "livemcpbench" / "tools.json").read_text(encoding="utf-8"))
    catalog = tmp_path / "livemcpbench" / "tools.json"
    catalog.parent.mkdir()
    catalog.write_text(json.dumps(servers[5:7], ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "figures.json"
    monkeypatch.setenv("TOOLSIFT_VECTOR_CACHE_DIR", str(tmp_path / "user-cache"))  # never touched by the bench
    monkeypatch.setenv("TOOLSIFT_EMBEDDING_BACKEND", "onnx")

    result = CliRunner().invoke(cli, ["--opensearch-url", base_settings.opensearch_url, "bench", "ingest", str(catalog),
                                      "--json", str(out)])

    assert result.exit_code == 0, result.output
    figures = json.loads(out.read_text(encoding="utf-8"))
    cold, warm, bulk = figures["cold_ingest"], figures["warm_reingest"], figures["bulk_only"]
    assert cold["ok"] and warm["ok"] and cold["tools"] == warm["tools"] > 0
    assert cold["texts_encoded"] >= cold["texts_embedded"] > 0
    assert (warm["texts_encoded"], warm["texts_embedded"]) == (0, cold["texts_embedded"])
    assert bulk["failed"] == 0 and figures["floor"]["texts"] > cold["tools"]
    assert len(figures["floor"]["runs_seconds"]) == 2 and figures["backend"] == "onnx"
    assert len(figures["encoder"]["runs_seconds"]) == 2 and figures["encoder_speedup"] > 0  # onnx vs torch, raw
    assert "cold ingest" in result.output and "warm re-ingest" in result.output and "bulk only" in result.output
    assert IndexManager(client, BENCH_INDEX).versions() == []
    assert not (tmp_path / "user-cache").exists()
