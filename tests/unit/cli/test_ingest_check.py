"""``toolsift ingest --check``: a catalog read and screened as an ingest's first pass reads it, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from toolsift.cli.main import cli
from toolsift.errors import ERROR_TABLE, CatalogRecordError

GOOD = {"name": "weather", "description": "Forecasts.", "tools": [
    {"name": "forecast", "description": "The forecast for a city.",
     "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]}


def _catalog(tmp_path: Path, servers: list[dict[str, object]]) -> Path:
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(servers), encoding="utf-8")
    return path


def test_a_good_catalog_is_checked_without_a_node(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TOOLSIFT_OPENSEARCH_URL", "http://127.0.0.1:9")  # nothing listens there: no node is asked
    monkeypatch.setenv("TOOLSIFT_SCREEN_MEANING", "false")

    result = CliRunner().invoke(cli, ["ingest", str(_catalog(tmp_path, [GOOD])), "--check", "-q"])

    assert result.exit_code == 0, result.output
    assert "checked: 1 agents, 1 tools" in result.output and "nothing written" in result.output


def test_a_bad_record_is_named_and_fails_the_check(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TOOLSIFT_OPENSEARCH_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("TOOLSIFT_SCREEN_MEANING", "false")
    bad = {"name": "broken", "description": "", "tools": [{"name": "", "description": ""}]}

    result = CliRunner().invoke(cli, ["ingest", str(_catalog(tmp_path, [GOOD, bad])), "--check", "--json"])

    assert result.exit_code == ERROR_TABLE[CatalogRecordError].exit_code, result.output
    report = json.loads(result.stdout)
    assert report["rejected"] and report["tools"] == 1 and not report["index"]
    assert "Traceback" not in result.output
