"""`toolsift bench vectors` end to end on the real node, on a few hundred tools: every variant asked for is
built (the product's mapping, unmerged, ef_search at query time, Lucene's int7 quantisation, byte vectors),
searched and sized, then dropped. What holds whatever the machine's speed: recall and NDCG are shares, the
query-time variant shares the product's index, quantised vectors make the search's working set smaller and
byte vectors the vector files (timings are figures, never asserted)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolsift.cli.main import cli
from toolsift.bench.vector_bench import INDEX_PREFIX

pytestmark = pytest.mark.integration

VARIANTS = ("product", "unmerged", "ef_search=512", "sq-int7", "byte-scaled")


def test_bench_vectors_measures_each_variant_against_exact_search_and_drops_its_indices(
    client: Any, base_settings: Any, datasets: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLSIFT_VECTOR_CACHE_DIR", str(base_settings.vector_cache_dir))  # the session's cache
    out = tmp_path / "vectors.json"

    result = CliRunner().invoke(cli, [
        "--opensearch-url", base_settings.opensearch_url, "bench", "vectors", "--tools", "300", "--queries", "10",
        "--min-queries", "30", "--variants", ",".join(VARIANTS), "--rounds", "1", "--datasets", str(datasets),
        "--out", str(tmp_path / "bench"), "--json", str(out)], catch_exceptions=False)

    assert result.exit_code == 0, result.output
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["catalog"]["tools"] == 300 and figures["field"] == "description_vector"
    described = figures["catalog"]["tools_with_description"]
    assert 0 < described <= 300
    embedding = figures["embedding"]
    assert embedding["texts_encoded"] + embedding["texts_cached"] == embedding["texts"] <= described  # distinct
    assert figures["queries"]["needle"] == 10 and figures["queries"]["total"] == 30
    by_name = {v["name"]: v for v in figures["variants"]}
    assert list(by_name) == list(VARIANTS)
    for v in by_name.values():
        assert 0 <= v["recall@10"] <= 1 and 0 <= v["recall@100"] <= 1 and 0 <= v["ndcg@10"] <= 1
        assert v["build"]["documents"] == described and v["hits_short"] == 0
        assert v["latency"]["searches"] == 30 and v["disk"]["vector_bytes"] > 0
    assert 0 < figures["exact"]["ndcg@10"] <= 1
    product, unmerged = by_name["product"], by_name["unmerged"]
    assert product["disk"]["segments"] == 1 and unmerged["build"]["merge_seconds"] == 0
    assert by_name["ef_search=512"]["build"]["index"] == product["build"]["index"]  # a query-time choice
    assert by_name["ef_search=512"]["query"]["method_parameters"] == {"ef_search": 512}
    assert by_name["sq-int7"]["mapping"]["method"]["parameters"]["encoder"]["name"] == "sq"
    assert by_name["sq-int7"]["disk"]["ram_bytes"] < product["disk"]["ram_bytes"]  # int7, not fp32, is read
    assert "veq" in by_name["sq-int7"]["disk"]["file_sizes"]
    assert by_name["byte-scaled"]["disk"]["vector_bytes"] < product["disk"]["vector_bytes"] / 2  # 1 byte, not 4
    assert "faiss-16-bit-quantization" in figures["notes"]["faiss"]
    assert "| product |" in result.output and "exact (brute force, numpy)" in result.output
    built = {v["build"]["index"] for v in figures["variants"]}
    assert len(built) == 4 and all(name.startswith(INDEX_PREFIX) for name in built)
    assert not any(client.indices.exists(index=name) for name in built)  # dropped
