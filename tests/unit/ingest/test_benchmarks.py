from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsift.errors import CatalogError
from toolsift.evaluation import DEFAULT_MEASURES, evaluate
from toolsift.ingest.benchmarks import (
    Benchmark,
    detect_benchmark_format,
    load_benchmark,
    load_folds,
    load_livemcpbench_benchmark,
)

DATASETS = Path(__file__).resolve().parents[3].parent / "shared" / "datasets"
needs_data = pytest.mark.skipif(not DATASETS.is_dir(), reason=f"no shared datasets at {DATASETS}")


def _mean_tools_per_query(benchmark: Benchmark) -> float:
    return sum(len(grades) for grades in benchmark.qrels.values()) / len(benchmark.qrels)


# --- real benchmark files ----------------------------------------------------------------------


@needs_data
def test_apibank_has_101_queries_with_1_70_tools_each() -> None:
    bench = load_benchmark(DATASETS / "toolret" / "apibank")
    assert (bench.name, bench.format, bench.catalog_format) == ("apibank", "toolret", "toolret")
    assert bench.catalog_path == DATASETS.resolve() / "toolret" / "apibank" / "tools.json"
    assert len(bench.queries) == len(bench.qrels) == 101
    assert round(_mean_tools_per_query(bench), 2) == 1.70
    assert bench.queries["apibank_query_0"] == (
        "Can you tell me about the historical events of April 21st?"
    )
    assert bench.qrels["apibank_query_0"] == {"apibank_tool_33": 1, "apibank_tool_53": 1}
    assert bench.splits == {"test": list(bench.queries)}
    assert bench.extra["catalog_size"] == 101
    assert bench.extra["tools_missing_from_catalog"] == []
    assert bench.extra["duplicate_judgements"] == 0
    assert bench.extra["instructions"]["apibank_query_0"].startswith("Given a `historical events")


@needs_data
def test_toolink_has_497_queries_with_2_06_tools_each() -> None:
    bench = load_benchmark(DATASETS / "toolret" / "toolink")
    assert len(bench.queries) == len(bench.qrels) == 497
    assert round(_mean_tools_per_query(bench), 2) == 2.06
    assert bench.extra["catalog_size"] == 1804
    assert bench.extra["tools_missing_from_catalog"] == []


@needs_data
def test_toollens_test_split_holds_only_its_judged_queries() -> None:
    bench = load_benchmark(DATASETS / "toollens", split="test")
    assert (bench.format, bench.catalog_format, bench.catalog_path.name) == (
        "beir",
        "beir",
        "corpus.jsonl",
    )
    assert len(bench.queries) == len(bench.qrels) == 1877
    # qrels/test.tsv has 5010 lines; 23 repeat a (query, tool) pair already listed.
    assert sum(len(grades) for grades in bench.qrels.values()) == 4987
    assert bench.extra["duplicate_judgements"] == 23
    assert {len(grades) for grades in bench.qrels.values()} == {1, 2, 3}
    assert bench.qrels["1084"] == {"0": 1, "1": 1, "2": 1}
    assert bench.queries["1084"] == "I'm creating party appetizers using the ingredient shrimp."
    assert {name: len(qids) for name, qids in bench.splits.items()} == {
        "test": 1877,
        "train": 16893,
    }
    assert bench.extra["split"] == "test"
    assert bench.extra["catalog_size"] == 464
    assert bench.extra["tools_missing_from_catalog"] == []


@needs_data
def test_toollens_train_split_can_be_loaded() -> None:
    bench = load_benchmark(DATASETS / "toollens", split="train")
    assert len(bench.queries) == 16893
    assert not set(bench.queries) & set(bench.splits["test"])


@needs_data
def test_unknown_beir_split_names_the_missing_file_and_the_available_ones() -> None:
    expected = r"dev\.tsv: file not found; available splits: test, train"
    with pytest.raises(CatalogError, match=expected):
        load_benchmark(DATASETS / "toollens", split="dev")


@needs_data
def test_livemcpbench_has_95_tasks_and_reports_the_tools_its_catalog_lacks() -> None:
    bench = load_benchmark(DATASETS / "livemcpbench")
    assert (bench.format, bench.catalog_format, bench.catalog_path.name) == (
        "livemcpbench",
        "mcp",
        "tools.json",
    )
    assert len(bench.queries) == 95
    assert bench.splits == {"test": list(bench.queries)}
    task = "0e3287cb-c0ff-4d2a-8c3d-d8833014a7b0"
    assert bench.queries[task].startswith("Generate a well-formatted PDF report")
    assert bench.extra["steps"][task][2] == "Create a word document."
    assert len(bench.extra["steps"][task]) == 5
    assert bench.extra["annotated_tools"][task][0] == "get-weread-rank"
    # Paper anchors: 2.82 steps and 2.69 annotated tools per task on average.
    assert sum(len(s) for s in bench.extra["steps"].values()) == 268
    assert sum(len(t) for t in bench.extra["annotated_tools"].values()) == 256
    unresolved = {name for names in bench.extra["unresolved_tools"].values() for name in names}
    assert unresolved == {
        "trial_references",
        "ddg-search",
        "execute_command",
        "get_maven_latest_version",
        "open_document",
    }
    # The one task whose only tool is unknown keeps its query but has no qrels.
    assert set(bench.queries) - set(bench.qrels) == {"de75630e-b91e-4cc7-85b1-5d02c2455392"}
    assert all(grade == 1 for grades in bench.qrels.values() for grade in grades.values())


@needs_data
def test_livemcpbench_shared_tool_names_follow_the_tasks_other_servers() -> None:
    bench = load_benchmark(DATASETS / "livemcpbench")
    # add_table exists in the Word and PowerPoint servers; the task's other tools are Word's.
    word_task = "423f89ba-be77-4f93-99d7-936548513eef"
    assert "Office-Word-MCP-Server/add_table" in bench.qrels[word_task]
    assert bench.extra["servers"][word_task] == ["Office-Word-MCP-Server"]
    assert bench.extra["ambiguous_tools"][word_task] == {"add_table": ["Office-Word-MCP-Server"]}
    # write_file after a tool of an unrelated server stays ambiguous: both owners are relevant.
    assert {"Desktop Commander MCP/write_file", "Filesystem MCP Server/write_file"} <= set(
        bench.qrels["2b96c022-a2db-47a5-981a-03cc6ad8f95e"]
    )


@needs_data
def test_livemcpbench_tool_ids_come_from_the_given_function() -> None:
    bench = load_benchmark(
        DATASETS / "livemcpbench",
        tool_id_for=lambda server, tool: f"{server.lower()}::{tool}",
    )
    assert (
        "office-word-mcp-server::add_table" in bench.qrels["423f89ba-be77-4f93-99d7-936548513eef"]
    )


@needs_data
def test_an_oracle_run_scores_one_on_apibank() -> None:
    bench = load_benchmark(DATASETS / "toolret" / "apibank")
    oracle = {qid: dict.fromkeys(grades, 1.0) for qid, grades in bench.qrels.items()}
    assert evaluate(bench.qrels, oracle) == dict.fromkeys(DEFAULT_MEASURES, 1.0)


@needs_data
def test_formats_are_detected_from_the_files_present() -> None:
    assert detect_benchmark_format(DATASETS / "toolret" / "apibank") == "toolret"
    assert detect_benchmark_format(DATASETS / "toollens") == "beir"
    assert detect_benchmark_format(DATASETS / "livemcpbench") == "livemcpbench"


@needs_data
def test_split_less_benchmarks_only_have_the_test_split() -> None:
    with pytest.raises(CatalogError, match="no 'train' split"):
        load_benchmark(DATASETS / "toolret" / "apibank", split="train")


@needs_data
@pytest.mark.parametrize(("name", "queries"), [("apibank", 101), ("toolink", 497)])
def test_mftr_folds_partition_the_queries(name: str, queries: int) -> None:
    folds = load_folds(DATASETS / "mftr" / name / "folds.json")
    assert list(folds) == [f"fold_{i}" for i in range(5)]
    every_test = [qid for fold in folds.values() for qid in fold["test"]]
    assert len(every_test) == len(set(every_test)) == queries
    bench = load_benchmark(DATASETS / "toolret" / name)
    for fold in folds.values():
        assert set(fold["train"]) | set(fold["test"]) == set(bench.queries)
    assert load_folds(DATASETS / "mftr" / name) == folds


# --- small folders written by the tests ----------------------------------------------------------


def _write(path: Path, content: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def _toolret(root: Path, queries: object) -> Path:
    _write(root / "tools.json", [{"id": "t1", "documentation": {}}])
    _write(root / "queries.json", queries)
    return root


def _mcp_server(name: str, *tools: str) -> dict[str, object]:
    return {"name": name, "tools": {name.lower(): {"tools": [{"name": t} for t in tools]}}}


def _task(task_id: str, steps: str, tools: str) -> dict[str, object]:
    return {
        "task_id": task_id,
        "Question": f"question {task_id}",
        "category": "Office",
        "Annotator Metadata": {"Steps": steps, "Tools": tools},
    }


def test_missing_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="nowhere: benchmark folder not found"):
        load_benchmark(tmp_path / "nowhere")


#: What ``_toolret`` writes beside the queries: a catalog of one tool.
TOOLRET_TOOLS = {"tools.json": [{"id": "t1", "documentation": {}}]}
BEIR_QUERY = {"queries.jsonl": '{"_id": "q1", "text": "x"}\n'}


@pytest.mark.parametrize(("files", "expected"), [
    pytest.param({"tools.json": []}, r"not a benchmark folder; expected tools\.json",
                 id="a-folder-of-no-known-format-says-what-is-expected"),
    pytest.param({"queries.json": []}, r"tools\.json: file not found",
                 id="a-toolret-folder-without-tools-json-names-it"),
    pytest.param({**TOOLRET_TOOLS, "queries.json": '[{"id": "q1", "query": "x", '},
                 r"queries\.json: malformed JSON at line 1",
                 id="truncated-queries-json-names-the-file-and-position"),
    pytest.param({**TOOLRET_TOOLS, "queries.json": [{"id": "q1", "labels": []}]},
                 r"queries\.json: query \[0\] \(id 'q1'\): field 'query'",
                 id="a-query-without-text-names-the-record-and-field"),
    pytest.param({**TOOLRET_TOOLS, "queries.json": [{"id": "q1", "query": "x", "labels": [{"id": "t1", "relevance": True}]}]},
                 "relevance must be an integer", id="a-non-integer-relevance-is-rejected"),
    pytest.param({"corpus.jsonl": '{"_id": "t1", "text": "x"}\n', **BEIR_QUERY,
                  "qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\tt1\thigh\n"},
                 r"test\.tsv: line 2: score 'high' is not an integer",
                 id="a-beir-qrels-line-with-a-bad-score-names-file-and-line"),
    pytest.param({**BEIR_QUERY, "qrels/test.tsv": "q1\tt1\t1\n"}, r"corpus\.jsonl: file not found",
                 id="a-beir-folder-without-corpus-names-it"),
    pytest.param({"all_annotations.json": []}, r"tools\.json: file not found",
                 id="a-livemcpbench-folder-without-tools-json-names-it"),
])
def test_a_bad_benchmark_folder_is_refused_naming_what_is_wrong(
    tmp_path: Path, files: dict[str, object], expected: str
) -> None:
    for name, content in files.items():
        _write(tmp_path / name, content)
    with pytest.raises(CatalogError, match=expected):
        load_benchmark(tmp_path)


def test_toolret_labels_absent_from_the_catalog_are_reported_not_dropped(tmp_path: Path) -> None:
    labels = [
        {"id": "t1", "relevance": 1},
        {"id": "t9", "relevance": 2},
        {"id": "t1", "relevance": 0},
    ]
    _toolret(tmp_path, [{"id": "q1", "query": "x", "labels": labels}])
    bench = load_benchmark(tmp_path)
    assert bench.qrels == {"q1": {"t1": 1, "t9": 2}}
    assert bench.extra["tools_missing_from_catalog"] == ["t9"]
    assert bench.extra["duplicate_judgements"] == 1


def test_beir_judged_query_without_text_is_an_error(tmp_path: Path) -> None:
    _write(tmp_path / "corpus.jsonl", '{"_id": "t1", "text": "x"}\n')
    _write(tmp_path / "queries.jsonl", '{"_id": "q1", "text": "x"}\nnot json\n')
    _write(tmp_path / "qrels" / "test.tsv", "q1\tt1\t1\n")
    with pytest.raises(CatalogError, match=r"queries\.jsonl: malformed JSON on line 2"):
        load_benchmark(tmp_path)
    _write(tmp_path / "queries.jsonl", '{"_id": "q2", "text": "x"}\n')
    expected = r"queries\.jsonl: 1 query ids of test\.tsv have no text"
    with pytest.raises(CatalogError, match=expected):
        load_benchmark(tmp_path)


def test_livemcpbench_steps_tools_and_ambiguity_on_a_small_folder(tmp_path: Path) -> None:
    _write(
        tmp_path / "tools.json",
        [
            _mcp_server("Word", "create_document", "add_table"),
            _mcp_server("Slides", "add_table", "add_slide"),
            _mcp_server("FS", "write_file"),
            _mcp_server("Commander", "write_file"),
        ],
    )
    _write(
        tmp_path / "all_annotations.json",
        [
            _task(
                "t1",
                "1. Create a document\n   with a title\n\n2) Add a table.\n",
                "1. create_document\n2. add_table\n3. add_table",
            ),
            _task("t2", "1. Save it", "1. write_file\n2. open_document"),
        ],
    )
    bench = load_livemcpbench_benchmark(tmp_path)
    assert bench.extra["steps"]["t1"] == ["Create a document with a title", "Add a table."]
    assert bench.extra["annotated_tools"]["t1"] == ["create_document", "add_table"]
    assert bench.qrels["t1"] == {"Word/create_document": 1, "Word/add_table": 1}
    assert bench.qrels["t2"] == {"FS/write_file": 1, "Commander/write_file": 1}
    assert bench.extra["ambiguous_tools"] == {
        "t1": {"add_table": ["Word"]},
        "t2": {"write_file": ["FS", "Commander"]},
    }
    assert bench.extra["unresolved_tools"] == {"t2": ["open_document"]}
    assert bench.extra["servers"] == {"t1": ["Word"], "t2": ["FS", "Commander"]}


def test_livemcpbench_duplicate_task_id_is_an_error(tmp_path: Path) -> None:
    _write(tmp_path / "tools.json", [_mcp_server("FS", "write_file")])
    _write(
        tmp_path / "all_annotations.json",
        [_task("t1", "1. a", "1. write_file"), _task("t1", "1. b", "1. write_file")],
    )
    with pytest.raises(CatalogError, match=r"all_annotations\.json: task \[1\].*duplicate task id"):
        load_benchmark(tmp_path)


def test_malformed_folds_are_rejected_naming_the_file(tmp_path: Path) -> None:
    folds = _write(tmp_path / "folds.json", {"fold_0": {"train": ["q1"]}})
    expected = r"folds\.json: fold 'fold_0' 'test' must be a JSON list"
    with pytest.raises(CatalogError, match=expected):
        load_folds(folds)
    _write(folds, {"fold_0": {"train": ["q1", "q2"], "test": ["q2"]}})
    with pytest.raises(CatalogError, match="1 query ids are in both train and test"):
        load_folds(tmp_path)
    with pytest.raises(CatalogError, match=r"missing\.json: file not found"):
        load_folds(tmp_path / "missing.json")
