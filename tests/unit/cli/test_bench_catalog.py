"""``toolsift bench catalog``: writes the catalog and its needle set, prints what it made, and turns a bad
request into a one-line error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolsift.cli.main import cli
from toolsift.errors import ERROR_TABLE, CatalogError

pytestmark = pytest.mark.usefixtures("clean_env")


def test_bench_catalog_writes_the_catalog_and_the_needle_set(datasets: Path, tmp_path: Path) -> None:
    out = tmp_path / "scale"

    result = CliRunner().invoke(cli, ["bench", "catalog", "--tools", "250", "--needles", "livemcpbench", "--queries",
                                      "5", "--seed", "3", "--datasets", str(datasets), "--out", str(out)])

    assert result.exit_code == 0, result.output
    assert "250 / " in result.output and "livemcpbench: 5 queries" in result.output
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert (manifest["tools"], manifest["seed"], manifest["needles"]) == (250, 3, "livemcpbench")
    assert (out / "catalog.json").is_file() and (out / "queries.jsonl").is_file() and (out / "qrels" / "test.tsv").is_file()


def test_bench_catalog_with_too_few_tools_is_a_catalog_error(datasets: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["bench", "catalog", "--tools", "50", "--datasets", str(datasets),
                                      "--out", str(tmp_path / "scale")])

    assert result.exit_code == ERROR_TABLE[CatalogError].exit_code
    assert result.output.startswith("Error: CatalogError: a catalog of 50 tools cannot hold the toolink needle set")
    assert not (tmp_path / "scale" / "catalog.json").exists()
