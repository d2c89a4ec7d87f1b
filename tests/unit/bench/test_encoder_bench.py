"""``toolsift bench encoder``: the ONNX backend is a drop-in replacement for torch, shown on a real benchmark.

APIBank (101 tools, 101 queries) through the command: exact dense retrieval on torch reproduces the
published Full-Doc MiniLM NDCG@10 (brute-force cosine has no approximate-search noise), and the ONNX
backend's rows equal torch's. Speeds are figures in the JSON, not assertions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolsift.cli.main import cli


@pytest.mark.slow  # a benchmark command's full drill: `make test-slow` (CI time, docs/contributing.md)
def test_onnx_backend_moves_no_exact_dense_ndcg_and_torch_reproduces_the_published_full_doc_row(
    datasets: Path, tmp_path: Path
) -> None:
    out = tmp_path / "encoder.json"

    result = CliRunner().invoke(cli, ["bench", "encoder", str(datasets / "toolret" / "apibank"),
                                      "--backends", "torch,onnx", "--rounds", "1", "--json", str(out)])

    assert result.exit_code == 0, result.output
    (apibank,) = json.loads(out.read_text(encoding="utf-8"))["datasets"]
    torch, onnx = apibank["backends"]["torch"], apibank["backends"]["onnx"]
    assert apibank["tools"] == 101 and apibank["queries"] == 101
    assert round(torch["exact"]["full_doc"]["ndcg_10"], 3) == 0.603  # docs/evaluation.md: full-doc minilm 0.6026
    assert onnx["drop_in"] and all(abs(d) < 0.001 for d in onnx["ndcg_10_delta"].values())
    assert torch["speedup_median"] == 1.0 and onnx["texts_per_s_median"] > 0
    assert "drop-in" in result.output and "onnx" in result.output


def test_the_reference_backend_must_come_first(datasets: Path) -> None:
    result = CliRunner().invoke(cli, ["bench", "encoder", str(datasets / "toolret" / "apibank"), "--backends", "onnx"])

    assert result.exit_code == 3
    assert "torch first" in result.output
