"""Tool-to-Agent retrieval on a real node: the agent-level evaluation on a LiveMCPBench slice, and the
``toolsift search --level agent|auto`` commands on its joint index.

The slice is six real tasks (one of them names only a tool no server has, so it must be dropped) and
the servers that own their tools: 9 servers, 55 tools. Both eval indices are built once for the
module and deleted at its end.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolsift.cli.main import cli
from toolsift.agents.agent_eval import AGENT_MEASURES, AgentEvalResult, run_agent_eval
from toolsift.mappings.index import IndexManager

pytestmark = pytest.mark.integration

#: Music analysis; OpenStreetMap; Time + 12306; Excel + Calculator; arXiv + BioMCP + Fetch; and a task
#: whose only tool (get_maven_latest_version) no server in tools.json has.
TASKS = ("99d7541a", "dda8ea55", "be3f2275", "d116bda4", "7bda47e8", "de75630e")
ALIAS = "toolsift-eval-livemcpbench-slice"


def _slice(source: Path, target: Path) -> None:
    from toolsift.ingest.benchmarks import load_livemcpbench_benchmark

    tasks = [t for t in json.loads((source / "all_annotations.json").read_text(encoding="utf-8"))
             if t["task_id"].startswith(TASKS)]
    servers = set()
    benchmark = load_livemcpbench_benchmark(source)
    for task in tasks:
        servers.update(benchmark.extra["servers"][task["task_id"]])
    catalog = [s for s in json.loads((source / "tools.json").read_text(encoding="utf-8")) if s["name"] in servers]
    target.mkdir(parents=True)
    (target / "all_annotations.json").write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    (target / "tools.json").write_text(json.dumps(catalog, ensure_ascii=False), encoding="utf-8")


def _drop(client: Any) -> None:
    for alias in (ALIAS, f"{ALIAS}-agent-only"):
        IndexManager(client, alias).delete_all()
        for pipeline in client.search_pipeline.get(ignore=404):
            if pipeline.startswith(f"{alias}-"):
                client.search_pipeline.delete(id=pipeline)


@pytest.fixture(scope="module")
def folder(datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("agents") / "livemcpbench-slice"
    _slice(datasets / "livemcpbench", target)
    return target


@pytest.fixture(scope="module")
def slice_settings(base_settings: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return base_settings.with_overrides(cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def evaluated(client: Any, slice_settings: Any, embedder: Any, folder: Path) -> Iterator[AgentEvalResult]:
    _drop(client)
    yield run_agent_eval(client, slice_settings, folder, retriever="minilm", embedder=embedder)
    _drop(client)


def run_cli(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=True)


def test_the_agent_eval_scores_every_row_on_the_judged_tasks(evaluated: AgentEvalResult) -> None:
    names = [r.name for r in evaluated.rows]

    assert evaluated.n_queries == 5  # six tasks, one dropped
    assert names[0] == "step-wise · MiniLM · CombMAX merge [main]" and evaluated.main is evaluated.rows[0]
    assert names[1:] == [
        "step-wise · MiniLM · reciprocal-rank merge",
        "direct (whole question) · MiniLM",
        "own decomposition (rule-based needs) · MiniLM",
        "agent-only index (server name + description) · step-wise · MiniLM",
        "plain joint index (description vectors) · step-wise · MiniLM · reciprocal-rank merge",
        "step-wise · BM25 · CombMAX merge",
        "step-wise · BM25 + MiniLM · CombMAX merge",
    ]
    for row in evaluated.rows:
        assert list(row.metrics) == list(AGENT_MEASURES)
        assert all(0.0 <= v <= 1.0 for v in row.metrics.values()), row.name
        assert row.metrics["recall@1"] <= row.metrics["recall@3"] <= row.metrics["recall@5"], row.name
        assert row.metrics["map@5"] <= row.metrics["recall@5"] + 1e-9, row.name
    assert [r.index for r in evaluated.rows].count("agent-only") == 1
    # Nine servers and clear steps: the main row finds nearly every gold server in its top 5.
    assert evaluated.main.metrics["recall@5"] >= 0.8


def test_the_protocol_states_the_merge_the_cutoffs_and_what_happened_to_unknown_tool_names(
    evaluated: AgentEvalResult,
) -> None:
    protocol = evaluated.protocol

    assert protocol["algorithm_1"]["N"] == 50 and protocol["algorithm_1"]["K"] == 10
    assert protocol["merge"]["main"] == "max" and "CombMAX" in protocol["merge"]["max"]
    assert "1 of 6 tasks dropped (de75630e-b91e-4cc7-85b1-5d02c2455392)" in protocol["unknown_tool_names"]
    assert "0 such task(s)" in protocol["steps"]
    assert "(0 task(s))" in protocol["own_decomposition"]  # no cached rewrite: the rule-based split
    as_json = evaluated.to_dict()
    assert (as_json["method"], as_json["level"], as_json["retriever"], as_json["n_queries"]) == (
        "tool-to-agent", "agent", "minilm", 5)
    assert as_json["agent_only_index"].startswith(f"{ALIAS}-agent-only-")


def test_the_eval_command_routes_a_livemcpbench_folder_at_agent_level_and_writes_the_json(
    evaluated: AgentEvalResult, base_settings: Any, slice_settings: Any, folder: Path, tmp_path: Path
) -> None:
    out = tmp_path / "agents.json"

    result = run_cli("--opensearch-url", base_settings.opensearch_url, "eval", str(folder), "--level", "agent",
                     "--retriever", "minilm", "--limit", "2", "--json", str(out), "-q")

    assert result.exit_code == 0, result.output
    assert "| step-wise · MiniLM · CombMAX merge [main] |" in result.stdout
    assert "unknown tool names:" in result.stdout
    written = json.loads(out.read_text(encoding="utf-8"))
    assert set(written) >= {"dataset", "method", "retriever", "n_queries", "rows", "protocol"}
    assert written["n_queries"] == 2 and written["protocol"]["limit"] == 2


def test_search_level_auto_answers_with_the_agent_that_owns_several_of_the_tools(
    evaluated: AgentEvalResult, base_settings: Any
) -> None:
    args = ["--opensearch-url", base_settings.opensearch_url, "search", "what time is it in Tokyo, in New York time",
            "--index", ALIAS, "--level", "auto", "--no-rewrite"]

    as_agent = run_cli(*args, "-k", "3", "--json")
    as_tool = run_cli(*args, "-k", "1", "--json")
    shown = run_cli(*args, "-k", "3")

    assert as_agent.exit_code == 0, as_agent.output
    answer = json.loads(as_agent.stdout)
    assert (answer["requested_level"], answer["level"]) == ("auto", "agent")
    assert answer["agents"][0]["id"] == "agent:time-mcp-server"
    assert len(answer["agents"][0]["via"]) >= 2 and "of the 3 tools" in answer["level_reason"]
    single = json.loads(as_tool.stdout)
    assert (single["level"], single["agents"]) == ("tool", [])  # one tool cannot make an agent
    assert shown.exit_code == 0 and "level auto → agent: Time MCP Server" in shown.stdout


def test_search_at_agent_level_queries_each_step_and_says_which_steps_reached_each_agent(
    evaluated: AgentEvalResult, base_settings: Any
) -> None:
    result = run_cli("--opensearch-url", base_settings.opensearch_url, "search", "--index", ALIAS, "--level", "agent",
                     "--retriever", "minilm", "-k", "3", "--json",
                     "--step", "get the current time", "--step", "search train tickets from Beijing to Shanghai")

    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert [s["text"] for s in answer["steps"]] == ["get the current time", "search train tickets from Beijing to Shanghai"]
    agents = {a["id"]: a for a in answer["agents"]}
    assert {"agent:time-mcp-server", "agent:12306-mcp"} <= set(agents)
    assert 1 in agents["agent:time-mcp-server"]["steps"] and 2 in agents["agent:12306-mcp"]["steps"]
    assert all(0.0 <= a["score"] <= 1.0 for a in answer["agents"])
