"""Eval runs: each evaluation's table becomes one row per table row, with the flat metrics a dashboard
plots (ndcg_10, recall_10, tracc, ndcg_5, recall_5 — only those the run measured) and a document that
fits the strict eval runs mapping."""

from __future__ import annotations

import datetime as dt
import math
import subprocess
from pathlib import Path

from toolsift.evaluation.evalruns import (
    EvalRunRow,
    agent_eval_rows,
    eval_run_document,
    flat_metrics,
    git_commit,
    mftr_eval_rows,
    query_set_name,
    set_eval_rows,
    tool_eval_rows,
)
from toolsift.agents.agent_eval import AgentEvalResult, AgentRow
from toolsift.ingest.benchmarks import benchmark_slug
from toolsift.evaluation.mftr.results import AblationRow, MFTREvalResult
from toolsift.evaluation.runner import EvalResult
from toolsift.sets.set_eval import SetEvalResult, SetRow
from toolsift.mappings.evalruns_doc import EVAL_RUNS_SCHEMA_VERSION, eval_runs_index_body

APIBANK = Path("/data/toolret/apibank")
TOOLINK = Path("/data/toolret/toolink")
TOOL_METRICS = {"ndcg@10": 0.5172, "recall@10": 0.6139, "completeness@10": 0.4059, "ndcg@5": 0.5032, "recall@5": 0.5792}
NOW = dt.datetime(2026, 11, 22, 10, 30, tzinfo=dt.timezone.utc)


def ablation(name: str, ndcg10: float, *, beyond_paper: bool = False) -> AblationRow:
    metrics = {"ndcg@5": ndcg10 - 0.01, "ndcg@10": ndcg10, "recall@5": 0.6, "recall@10": 0.7,
               "completeness@5": 0.4, "completeness@10": 0.5}
    return AblationRow(name, metrics, metrics, [metrics], None, "std", "rewrite", "learned", beyond_paper=beyond_paper)


def test_a_tool_level_eval_is_one_main_row_with_its_latency_and_weights_version() -> None:
    result = EvalResult(dataset="apibank", method="multi-field", retriever="bm25", n_queries=101, metrics=TOOL_METRICS,
                        index="toolsift-eval-apibank-v001", embedding_model="all-MiniLM-L6-v2",
                        latency_ms={"p50": 21.5, "p95": 40.25, "p99": 51.0, "mean": 25.0, "n": 101},
                        protocol={"weights_version": "apibank-bm25/v002"})

    (row,) = tool_eval_rows(result, [APIBANK], duration_s=12.5)

    assert (row.query_set, row.dataset_path, row.index) == ("apibank", "/data/toolret/apibank", "toolsift-eval-apibank-v001")
    assert (row.kind, row.method, row.retriever, row.row, row.main, row.queries) == (
        "tool", "multi-field", "bm25", "multi-field · bm25", True, 101)
    assert (row.latency_p50_ms, row.latency_p95_ms, row.duration_s) == (21.5, 40.25, 12.5)
    assert row.weights_version == "apibank-bm25/v002"
    assert flat_metrics(row.metrics) == {"ndcg_10": 0.5172, "recall_10": 0.6139, "ndcg_5": 0.5032, "recall_5": 0.5792}


def test_an_mftr_eval_is_one_row_per_ablation_with_the_main_row_marked_and_the_mixed_set_joined() -> None:
    rows = [ablation("Full-Doc", 0.52), ablation("MFTR", 0.67), ablation("MFTR + first-stage rank", 0.68, beyond_paper=True)]
    result = MFTREvalResult(dataset="mixed-apibank-toolink", retriever="minilm", n_queries=598, metrics=rows[1].metrics,
                            ablations=rows, weights={}, first_stage={},
                            indices={"raw": "toolsift-eval-mixed-raw-v001", "std": "toolsift-eval-mixed-std-v001"},
                            embedding_model="all-MiniLM-L6-v2", latency_ms={"p50": 9.0, "p95": 14.0},
                            protocol={"main_row": "MFTR"})

    recorded = mftr_eval_rows(result, [APIBANK, TOOLINK])

    assert [r.row for r in recorded] == ["Full-Doc", "MFTR", "+ MFTR + first-stage rank"]
    assert [r.main for r in recorded] == [False, True, False]
    assert {(r.query_set, r.kind, r.method, r.retriever, r.index, r.queries) for r in recorded} == {
        ("apibank+toolink", "mftr", "mftr", "minilm", "toolsift-eval-mixed-std-v001", 598)}
    assert recorded[0].dataset_path == "/data/toolret/apibank+/data/toolret/toolink"
    # only the Full-Doc row is timed per search; the learned rows' cost is in ms/query, not a search latency
    assert [(r.latency_p50_ms, r.latency_p95_ms) for r in recorded] == [(9.0, 14.0), (None, None), (None, None)]
    assert flat_metrics(recorded[1].metrics)["ndcg_10"] == 0.67


def test_an_agent_level_eval_records_each_rows_own_retriever_and_index_and_its_at_5_measures() -> None:
    metrics = {"recall@1": 0.3, "recall@3": 0.6, "recall@5": 0.8, "map@1": 0.3, "map@3": 0.4, "map@5": 0.45,
               "ndcg@1": 0.3, "ndcg@3": 0.45, "ndcg@5": 0.5}
    result = AgentEvalResult(
        dataset="livemcpbench", retriever="minilm", n_queries=95,
        rows=[AgentRow("step-wise · MiniLM · CombMAX merge [main]", "steps", "joint", "minilm", "overview", "max",
                       metrics, main=True),
              AgentRow("agent-only index (server name + description) · step-wise · MiniLM", "steps", "agent-only",
                       "minilm", "overview", "max", metrics),
              AgentRow("step-wise · BM25 · CombMAX merge", "steps", "joint", "bm25", "overview", "max", metrics)],
        index="toolsift-eval-livemcpbench-v001", agent_only_index="toolsift-eval-livemcpbench-agent-only-v001",
        embedding_model="all-MiniLM-L6-v2")

    recorded = agent_eval_rows(result, [Path("/data/livemcpbench")], duration_s=80.0)

    assert [(r.main, r.retriever) for r in recorded] == [(True, "minilm"), (False, "minilm"), (False, "bm25")]
    assert [r.index for r in recorded] == ["toolsift-eval-livemcpbench-v001", "toolsift-eval-livemcpbench-agent-only-v001",
                                           "toolsift-eval-livemcpbench-v001"]
    assert {(r.query_set, r.kind, r.method, r.queries, r.duration_s) for r in recorded} == {
        ("livemcpbench", "agent", "tool-to-agent", 95, 80.0)}
    assert flat_metrics(recorded[0].metrics) == {"ndcg_5": 0.5, "recall_5": 0.8}


def test_a_set_eval_records_tracc_flat_and_keeps_the_at_gold_measures_in_the_metric_dict() -> None:
    def scores(value: float) -> dict[str, float]:
        return {"tracc": value, "recall@gt": 0.9, "ndcg@gt": 0.85, "set_size_error": 0.4, "set_size": 2.6}

    result = SetEvalResult(dataset="toollens", retriever="minilm", n_queries=300, index="toolsift-eval-toollens",
                           embedding_model="all-MiniLM-L6-v2",
                           rows=[SetRow("dense top-3", scores(0.18), uses_history=False),
                                 SetRow("PTR (calibrated: acquisition + coverage + multi-view)", scores(0.88),
                                        uses_history=True, main=True)])

    recorded = set_eval_rows(result, [Path("/data/toollens")])

    assert [(r.row, r.main) for r in recorded] == [("dense top-3", False),
                                                   ("PTR (calibrated: acquisition + coverage + multi-view)", True)]
    assert {(r.query_set, r.kind, r.method, r.retriever) for r in recorded} == {("toollens", "set", "set", "minilm")}
    assert flat_metrics(recorded[1].metrics) == {"tracc": 0.88}


def test_metric_names_map_onto_the_flat_fields_whatever_their_case_and_unmeasurable_values_are_left_out() -> None:
    assert flat_metrics({"NDCG@10": 0.5, "Recall@10": 0.6, "TRACC": 0.7, "MAP@5": 0.1}) == {
        "ndcg_10": 0.5, "recall_10": 0.6, "tracc": 0.7}
    assert flat_metrics({"ndcg@10": math.nan, "recall@5": 0.4}) == {"recall_5": 0.4}


def test_the_query_set_is_the_benchmarks_name_as_its_eval_index_spells_it() -> None:
    assert query_set_name([Path("/data/ToolRet API_Bank")]) == benchmark_slug("ToolRet API_Bank") == "toolret-api-bank"
    assert query_set_name([Path("/data/apibank/")]) == "apibank"
    assert query_set_name([APIBANK, TOOLINK]) == "apibank+toolink"


def test_the_document_holds_only_mapped_fields_and_the_metrics_the_run_measured() -> None:
    properties = eval_runs_index_body()["mappings"]["properties"]
    row = EvalRunRow(query_set="toollens", dataset_path="/data/toollens", index="toolsift-eval-toollens", kind="set",
                     method="set", retriever="minilm", row="PTR cold start", main=True, queries=300,
                     metrics={"tracc": 0.25, "recall@gt": 0.5, "set_size": math.inf}, duration_s=61.23456)

    document = eval_run_document(row, run_id="ab" * 16, recorded_at=NOW, source="cli", git_commit="1234abc")

    assert set(document) <= set(properties)
    assert document["tracc"] == 0.25 and not {"ndcg_10", "recall_10", "ndcg_5", "recall_5"} & set(document)
    assert "latency_p50_ms" not in document and document["duration_s"] == 61.235
    assert document["metrics"] == {"tracc": 0.25, "recall@gt": 0.5}  # a non-finite value would fail the bulk request
    assert (document["run_id"], document["recorded_at"], document["source"], document["git_commit"]) == (
        "ab" * 16, "2026-11-22T10:30:00+00:00", "cli", "1234abc")


def test_the_mapping_is_strict_one_shard_a_replica_where_a_node_can_hold_it_with_the_metric_dict_stored_not_indexed() -> None:
    body = eval_runs_index_body()

    assert body["settings"]["index"] == {"number_of_shards": 1, "auto_expand_replicas": "0-1"}
    assert body["mappings"]["dynamic"] == "strict"
    assert body["mappings"]["_meta"]["toolsift"] == {"schema": "evalruns", "schema_version": EVAL_RUNS_SCHEMA_VERSION}
    properties = body["mappings"]["properties"]
    assert properties["metrics"] == {"type": "object", "enabled": False}
    assert {name for name, spec in properties.items() if spec["type"] == "float"} == {
        "ndcg_10", "recall_10", "tracc", "ndcg_5", "recall_5", "latency_p50_ms", "latency_p95_ms", "duration_s"}
    assert properties["recorded_at"]["type"] == "date" and properties["main"]["type"] == "boolean"


def test_the_git_commit_is_this_checkouts_short_head() -> None:
    repo = Path(__file__).resolve().parents[3]
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)

    assert git_commit() == (head.stdout.strip() if head.returncode == 0 else None)
