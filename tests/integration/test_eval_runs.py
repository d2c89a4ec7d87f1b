"""Eval runs on a real node: every `toolsift eval` run is recorded, one document per table row, in the
eval runs index (under the tests: ``toolsift-test-evalruns``, set for the whole session by
tests/conftest.py); ``--no-record`` writes nothing, and an index that cannot be written never fails
the evaluation.

The evaluations are BM25 Full-Doc runs on an APIBank slice (its first 8 queries, the tools they label
and the first 20 others), whose eval index is built by the first run and dropped at the end.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolsift.cli.main import cli
from toolsift.evaluation.evalruns import EvalRunLog, EvalRunRow
from toolsift.mappings.evalruns_doc import eval_runs_index_body
from toolsift.mappings.index import IndexManager

pytestmark = pytest.mark.integration

#: tests/conftest.py's TOOLSIFT_EVAL_RUNS_INDEX: where every eval of the test session records.
RUNS_INDEX = "toolsift-test-evalruns"
QUERY_SET = "apibank-evalruns-slice"
ALIAS = f"toolsift-eval-{QUERY_SET}"
RECORDED = re.compile(r"recorded as eval run ([0-9a-f]{32}) in (\S+)")


@pytest.fixture(scope="module")
def folder(client: Any, datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    source = datasets / "toolret" / "apibank"
    queries = json.loads((source / "queries.json").read_text(encoding="utf-8"))[:8]
    labelled = {label["id"] for q in queries for label in q["labels"]}
    tools = json.loads((source / "tools.json").read_text(encoding="utf-8"))
    target = tmp_path_factory.mktemp("evalruns") / QUERY_SET
    target.mkdir()
    (target / "queries.json").write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
    (target / "tools.json").write_text(json.dumps([t for i, t in enumerate(tools) if i < 20 or t["id"] in labelled],
                                                  ensure_ascii=False), encoding="utf-8")
    yield target
    IndexManager(client, ALIAS).delete_all()
    for pipeline in client.search_pipeline.get(ignore=404):
        if pipeline.startswith(f"{ALIAS}-"):
            client.search_pipeline.delete(id=pipeline)


@pytest.fixture(autouse=True)
def _fresh_runs(client: Any) -> Iterator[None]:
    client.indices.delete(index=RUNS_INDEX, ignore_unavailable=True)
    yield
    client.indices.delete(index=RUNS_INDEX, ignore_unavailable=True)


def evaluate(base_settings: Any, folder: Path, *extra: str) -> Any:
    return CliRunner().invoke(cli, ["--opensearch-url", base_settings.opensearch_url, "eval", str(folder),
                                    "--method", "full-doc", "--retriever", "bm25", "-q", *extra], catch_exceptions=True)


def documents(client: Any) -> list[dict[str, Any]]:
    client.indices.refresh(index=RUNS_INDEX)
    return [h["_source"] for h in client.search(index=RUNS_INDEX, body={"size": 100})["hits"]["hits"]]


def test_an_eval_run_is_recorded_with_its_query_set_metrics_and_source(
    client: Any, base_settings: Any, folder: Path, tmp_path: Path
) -> None:
    out = tmp_path / "eval.json"

    result = evaluate(base_settings, folder, "--json", str(out))

    assert result.exit_code == 0, result.output
    match = RECORDED.search(result.stderr)
    assert match and match.group(2) == RUNS_INDEX and "recorded as" not in result.stdout
    (row,) = documents(client)
    printed = json.loads(out.read_text(encoding="utf-8"))
    assert (row["run_id"], row["source"], row["query_set"], row["kind"]) == (match.group(1), "cli", QUERY_SET, "tool")
    assert (row["method"], row["retriever"], row["row"], row["main"]) == ("full-doc", "bm25", "full-doc · bm25", True)
    assert row["queries"] == printed["n_queries"] == 8 and row["index"] == printed["index"]
    assert row["dataset_path"] == str(folder.resolve())
    assert row["ndcg_10"] == pytest.approx(printed["metrics"]["ndcg@10"], abs=1e-4)
    assert row["recall_10"] == pytest.approx(printed["metrics"]["recall@10"], abs=1e-4)
    assert {"ndcg_5", "recall_5", "latency_p50_ms", "latency_p95_ms", "duration_s", "recorded_at"} <= set(row)
    assert "tracc" not in row and row["weights_version"] is None
    assert set(row["metrics"]) == set(printed["metrics"])
    mapping = client.indices.get_mapping(index=RUNS_INDEX)[RUNS_INDEX]["mappings"]
    assert mapping["_meta"]["toolsift"]["schema"] == "evalruns"


def test_no_record_writes_nothing(client: Any, base_settings: Any, folder: Path) -> None:
    result = evaluate(base_settings, folder, "--no-record")

    assert result.exit_code == 0, result.output
    assert "recorded as" not in result.output
    assert not client.indices.exists(index=RUNS_INDEX)


@pytest.mark.parametrize("unwritable", ["closed", "foreign mapping"])
def test_an_index_that_cannot_be_written_does_not_fail_the_eval(
    client: Any, base_settings: Any, folder: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, unwritable: str
) -> None:
    if unwritable == "closed":
        client.indices.create(index=RUNS_INDEX, body=eval_runs_index_body())
        client.indices.close(index=RUNS_INDEX)
    else:
        client.indices.create(index=RUNS_INDEX, body={"mappings": {"dynamic": "strict",
                                                                   "properties": {"x": {"type": "keyword"}}}})
    out = tmp_path / "eval.json"

    with caplog.at_level(logging.WARNING, logger="toolsift.evaluation.evalruns"):
        result = evaluate(base_settings, folder, "--json", str(out))

    assert result.exit_code == 0, result.output
    assert "full-doc" in result.stdout and json.loads(out.read_text(encoding="utf-8"))["n_queries"] == 8
    assert "recorded as" not in result.output
    assert any("cannot be written" in r.getMessage() for r in caplog.records)


def test_the_history_is_oldest_first_in_table_order_and_filters_by_query_set(client: Any, base_settings: Any) -> None:
    log = EvalRunLog.open(client, base_settings)
    assert log.index == RUNS_INDEX and log.history() == [] and log.query_sets() == []

    def rows(query_set: str, *names: str) -> list[EvalRunRow]:
        return [EvalRunRow(query_set=query_set, dataset_path=f"/data/{query_set}", index=f"toolsift-eval-{query_set}",
                           kind="agent", method="tool-to-agent", retriever="minilm", row=name, main=i == 0, queries=5,
                           metrics={"ndcg@5": 0.1 * (i + 1), "recall@5": 0.5}) for i, name in enumerate(names)]

    first = log.record(rows("livemcpbench", *(f"row {i}" for i in range(12))))
    second = log.record(rows("toollens", "PTR"), source="ui")
    third = log.record(rows("livemcpbench", "main again"))

    assert None not in (first, second, third) and len({first, second, third}) == 3
    history = log.history("livemcpbench")
    assert [r["run_id"] for r in history] == [first] * 12 + [third]
    assert [r["row"] for r in history[:12]] == [f"row {i}" for i in range(12)]
    assert history[0]["ndcg_5"] == pytest.approx(0.1) and history[0]["main"] is True
    assert [(r["run_id"], r["source"]) for r in log.history()][-2:] == [(second, "ui"), (third, "cli")]
    assert [r["run_id"] for r in log.history(size=1)] == [third]
    assert log.query_sets() == ["livemcpbench", "toollens"]
