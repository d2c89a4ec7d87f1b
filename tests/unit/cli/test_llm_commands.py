"""``toolsift standardize``, ``ingest --standardize`` and ``search --rewrite``: options and the no-LLM path."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolsift.cli.main import cli
from toolsift.errors import ERROR_TABLE, LLMUnavailableError

pytestmark = pytest.mark.usefixtures("clean_env")

DOC = {"name": "Clock", "description": "Current time.", "parameters": []}
AUGMENTED = {
    "description": "Tells the current time.",
    "parameters": {},
    "response": "The time.",
    "examples": [{"user_intent": "What time is it?"}],
}


@pytest.fixture()
def catalog(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"id": "clock", "documentation": DOC, "type": "web"}]))
    return path


@pytest.fixture()
def no_llm(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TOOLSIFT_LLM_BASE_URL", raising=False)
    monkeypatch.setenv("TOOLSIFT_LLM_CACHE_DIR", str(tmp_path / "llm-cache"))


@pytest.mark.parametrize(
    ("command", "options"),
    [
        ("standardize", ["--out", "--format", "--limit", "--json"]),
        ("ingest", ["--standardize [rules|llm]"]),
        ("search", ["--rewrite / --no-rewrite", "--weights PATH", "--structured FILE"]),
        ("eval requests", ["--llm-rewrite", "--save-rewrites"]),
    ],
)
def test_the_llm_options_are_documented(command: str, options: list[str]) -> None:
    result = CliRunner().invoke(cli, [*command.split(), "--help"])

    assert result.exit_code == 0, result.output
    for option in options:
        assert option in result.output


@pytest.mark.usefixtures("no_llm")
def test_standardize_without_an_llm_or_a_cached_answer_names_llm_base_url(catalog: Path, tmp_path: Path) -> None:
    out = tmp_path / "std.json"

    result = CliRunner().invoke(cli, ["standardize", str(catalog), "--out", str(out), "-q"])

    assert result.exit_code == ERROR_TABLE[LLMUnavailableError].exit_code
    assert "LLMUnavailableError" in result.output and "llm_base_url" in result.output
    assert not out.exists()


@pytest.mark.usefixtures("no_llm")
def test_standardize_writes_cached_answers_in_mftrs_format(
    catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolsift.llm
    from toolsift.llm.cache import standardize_subject

    def cached_output(_cache: object, task: str, model: str, subject: str) -> Any:
        hit = (task, model, subject) == ("standardize", "gpt-4o-mini", standardize_subject(DOC))
        return copy.deepcopy(AUGMENTED) if hit else None

    monkeypatch.setattr(toolsift.llm, "cached_output", cached_output)
    out = tmp_path / "std.json"

    result = CliRunner().invoke(cli, ["standardize", str(catalog), "--out", str(out), "--json"])

    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["tools"], report["sources"], report["expansions"]) == (1, {"cache": 1}, {"absent": 1})
    written = json.loads(out.read_text())
    assert written == [{"id": "clock", "type": None, "augmented": AUGMENTED, "origin_documentation": DOC}]


def test_eval_save_rewrites_without_the_llm_row_is_a_usage_error(tmp_path: Path, datasets: Path) -> None:
    result = CliRunner().invoke(cli, ["eval", str(datasets / "livemcpbench"), "--level", "request",
                                      "--save-rewrites", str(tmp_path / "out")])

    assert result.exit_code == 2
    assert "--save-rewrites" in result.output and "--llm-rewrite" in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.usefixtures("no_llm")
def test_eval_llm_rewrite_with_no_llm_and_nothing_cached_names_both_ways_out(datasets: Path) -> None:
    from toolsift.errors import ConfigError

    result = CliRunner().invoke(cli, ["eval", str(datasets / "livemcpbench"), "--level", "request",
                                      "--llm-rewrite", "--no-record", "-q"])

    assert result.exit_code == ERROR_TABLE[ConfigError].exit_code, result.output
    assert "llm_base_url" in result.output and "toolsift cache import" in result.output
    assert "Traceback" not in result.output
