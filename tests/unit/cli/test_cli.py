"""The ``toolsift`` command line: help for every command, and clean error messages."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolsift.cli.main import cli
from toolsift.errors import ERROR_TABLE, ClusterError, ConfigError

COMMANDS = ["approvals", "bench", "cache", "dashboards", "demo", "deploy", "eval", "history", "index", "ingest", "keys",
            "learn", "llm", "node", "search", "serve", "standardize", "sync", "train"]
SUBCOMMANDS = [
    ["llm", "fetch"],
    ["learn", "ab", "start"],
    ["learn", "ab", "report"],
    ["bench", "feedback"],
    ["history", "load"],
    ["sync", "status"],
    ["sync", "versions"],
    ["bench", "freshness"],
    ["bench", "catalog"],
    ["bench", "scale"],
    ["bench", "ingest"],
    ["bench", "encoder"],
    ["bench", "vectors"],
    ["bench", "shards"],
    ["bench", "prompts"],
    ["bench", "node-loss"],
    ["history", "show"],
    ["node", "install"],
    ["node", "start"],
    ["node", "stop"],
    ["node", "status"],
    ["node", "logs"],
    ["index", "status"],
    ["index", "drop"],
    ["cache", "import"],
    ["cache", "stats"],
    ["cache", "clear"],
    ["serve", "ranker"],
    ["serve", "api"],
    ["serve", "mcp"],
    ["keys", "create"],
    ["dashboards", "import"],
    ["bench", "latency"],
    ["bench", "failover"],
    ["bench", "screen"],
    ["approvals", "list"],
    ["approvals", "show"],
    ["approvals", "approve"],
    ["approvals", "reject"],
    ["deploy", "opensearch"],
]
UNREACHABLE = "http://127.0.0.1:9"


pytestmark = pytest.mark.usefixtures("clean_env")


@pytest.fixture()
def runner() -> CliRunner:
    return CliRunner()


# --- help -------------------------------------------------------------------------------------------------


def test_root_help_lists_every_command(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["--help"])

    assert result.exit_code == 0, result.output
    commands = result.output.split("Commands:", 1)[1]
    listed = [line.split()[0] for line in commands.splitlines() if line.strip()]
    assert listed == COMMANDS
    for option in ("--config", "--opensearch-url", "--index", "--version"):
        assert option in result.output


def test_every_command_in_the_group_is_listed_and_resolvable() -> None:
    import click

    ctx = click.Context(cli)
    assert cli.list_commands(ctx) == COMMANDS  # type: ignore[attr-defined]
    for name in COMMANDS:
        assert cli.get_command(ctx, name) is not None, name  # type: ignore[attr-defined]
    assert cli.get_command(ctx, "nonsense") is None  # type: ignore[attr-defined]


@pytest.mark.parametrize("args", [[c] for c in COMMANDS] + SUBCOMMANDS, ids=" ".join)
def test_every_command_has_working_help(runner: CliRunner, args: list[str]) -> None:
    result = runner.invoke(cli, [*args, "--help"])

    assert result.exit_code == 0, result.output
    assert result.output.startswith("Usage: ")
    assert " ".join(args) in result.output.splitlines()[0]


def test_an_unknown_command_is_a_usage_error(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["nonsense"])

    assert result.exit_code == 2
    assert "No such command 'nonsense'" in result.output


def test_version_is_reported(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["--version"])

    assert result.exit_code == 0
    assert "0.1.0" in result.output


# --- errors become messages ------------------------------------------------------------------------------------


def test_an_unreachable_cluster_is_a_one_line_error_naming_the_url(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["--opensearch-url", UNREACHABLE, "index", "status"])

    assert result.exit_code == ERROR_TABLE[ClusterError].exit_code
    assert result.output.startswith("Error: ClusterError: ")
    assert f"no OpenSearch answers at {UNREACHABLE}" in result.output
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)


def test_the_installed_script_prints_the_error_without_a_traceback() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLSIFT_")}
    script = Path(sys.executable).parent / "toolsift"
    if not script.exists():
        pytest.skip(f"console script not installed at {script}")

    done = subprocess.run(
        [str(script), "--opensearch-url", UNREACHABLE, "index", "status"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )

    assert done.returncode == ERROR_TABLE[ClusterError].exit_code
    assert done.stdout == ""
    assert done.stderr.startswith("Error: ClusterError: no OpenSearch answers at http://127.0.0.1:9")
    assert "Traceback" not in done.stderr


def test_a_bad_environment_setting_is_a_config_error(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIFT_CANDIDATES", "0")

    result = runner.invoke(cli, ["index", "status"])

    assert result.exit_code == ERROR_TABLE[ConfigError].exit_code
    assert result.output.startswith("Error: ConfigError: invalid toolsift configuration")
    assert "candidates" in result.output
    assert "Traceback" not in result.output


def test_a_bad_flag_value_is_a_config_error(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["--index", "Bad Name", "index", "status"])

    assert result.exit_code == ERROR_TABLE[ConfigError].exit_code
    assert result.output.startswith("Error: ConfigError: ")
    assert "index" in result.output


# --- the ranker service's commands ----------------------------------------------------------------------


def test_bench_with_a_folder_is_the_latency_benchmark(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["bench", str(tmp_path / "missing")])

    assert result.exit_code == 2
    assert "Usage: cli bench latency" in result.output
    assert "'DATASET_DIR'" in result.output


def test_bench_failover_needs_a_folder_or_a_queries_file(runner: CliRunner, tmp_path: Path) -> None:
    neither = runner.invoke(cli, ["bench", "failover"])
    queries = tmp_path / "queries.txt"
    queries.write_text("send an email\n", encoding="utf-8")
    both = runner.invoke(cli, ["bench", "failover", str(tmp_path), "--queries", str(queries)])

    for result in (neither, both):
        assert result.exit_code == 2
        assert "give DATASET_DIR or --queries FILE" in result.output


def test_search_takes_a_ranker_url_and_serve_ranker_its_options(runner: CliRunner) -> None:
    search = runner.invoke(cli, ["search", "--help"]).output
    serve = runner.invoke(cli, ["serve", "ranker", "--help"]).output

    assert "--ranker-url" in search
    for option in ("--host", "--port", "--weights", "--reranker", "--rerank-top", "--rerank-weight", "--token",
                   "--device"):
        assert option in serve, option


def test_a_degraded_result_says_so_in_the_rendered_output() -> None:
    from toolsift.cli.search import render_result
    from toolsift.query.structured import StructuredQuery
    from toolsift.records import RankedTool
    from toolsift.search import SearchResult

    tool = RankedTool(doc_id="t1", name="SendEmail", entity="tool", agent_id=None, score=3.2, first_stage_rank=1)
    reason = "ranker service at http://127.0.0.1:8300 unreachable (ConnectError)"
    common = {"query": StructuredQuery.from_text("send a mail"), "method": "multi-field", "retriever": "bm25",
              "level": "tool", "tools": (tool,)}

    degraded = render_result(SearchResult(**common, degraded=True, degraded_reason=reason))  # type: ignore[arg-type]
    ranked = render_result(SearchResult(**common))  # type: ignore[arg-type]

    assert f"degraded: {reason} (first-stage order)" in degraded.splitlines()
    assert "degraded" not in ranked


def test_a_tool_answered_once_lists_the_servers_of_its_copies_under_the_table() -> None:
    from toolsift.cli.search import render_result
    from toolsift.query.structured import StructuredQuery
    from toolsift.records import RankedTool, ToolCopy
    from toolsift.search import SearchResult

    copies = (ToolCopy("@acme/desktop-commander/list_directory", "list_directory", "agent:@acme/desktop-commander"),)
    tool = RankedTool(doc_id="filesystem/list_directory", name="list_directory", entity="tool",
                      agent_id="agent:filesystem", score=1.0, also_on=copies)
    lone = RankedTool(doc_id="weather/get_alerts", name="get_alerts", entity="tool", agent_id="agent:weather", score=0.5)

    shown = render_result(SearchResult(query=StructuredQuery.from_text("list a folder"), method="multi-field",
                                       retriever="hybrid", level="tool", tools=(tool, lone)))

    assert shown.splitlines()[-1] == "#1 list_directory is also on: @acme/desktop-commander"
    assert "get_alerts is also on" not in shown
