"""Bulk writes back off and retry while the node answers 429, as opensearch-py's helpers can; when the node
keeps refusing, the ingest stops with the cause and the remedy and leaves no half-built index version.

The node refuses for real: its in-flight-requests circuit breaker is lowered below a bulk request's size
(:class:`tests.pressure.RefusingNode`), so OpenSearch answers ``429 circuit_breaking_exception`` as a node
whose heap is full does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.pressure import RefusingNode
from toolsift.errors import ClusterError
from toolsift.evaluation.evalruns import EvalRunLog, EvalRunRow
from toolsift.ingest.pipeline import ingest_catalog
from toolsift.mappings.index import IndexManager

#: LiveMCPBench servers of the catalog: 3 servers, 34 documents (one bulk request).
SERVERS = 3


def _catalog(datasets: Path, folder: Path, servers: int) -> Path:
    data = json.loads((datasets / "livemcpbench" / "tools.json").read_text(encoding="utf-8"))[:servers]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tools.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def _versions(client: Any, alias: str) -> list[str]:
    """The alias's index versions (``-000001`` …; not its side indices such as ``-approvals``)."""
    return sorted(row["index"] for row in client.cat.indices(index=f"{alias}-0*", format="json"))


def _documents(client: Any, alias: str) -> int:
    client.indices.refresh(index=alias)
    return int(client.count(index=alias)["count"])


def test_an_ingest_whose_bulk_write_the_node_refuses_with_429_backs_off_retries_and_writes_every_document(
    client: Any, settings: Any, model: Any, datasets: Path, tmp_path: Path
) -> None:
    catalog = _catalog(datasets, tmp_path / "servers", SERVERS)
    quick = settings.with_overrides(bulk_initial_backoff=0.5)

    with RefusingNode(client, transient=True) as node:
        # The refusal starts once the documents are embedded, before their bulk request is sent.
        report = ingest_catalog(client, quick, model, catalog,
                                progress=lambda stage, done, total: node.refuse() if stage == "index" else None)
        refusals = node.refusals

    assert node.armed and node.lifted.is_set() and refusals >= 1  # the node did refuse the write with 429
    assert report.ok and not report.failed
    assert _documents(client, settings.index) == report.tools + report.agents == 34


def test_an_evaluations_rows_are_recorded_after_the_node_refused_them_once(client: Any, settings: Any) -> None:
    # The report's evaluation failed with 429 when it recorded its rows: that write now backs off too.
    log = EvalRunLog.open(client, settings.with_overrides(eval_runs_index=f"{settings.index}-evalruns"))
    rows = [EvalRunRow(query_set="toolink", dataset_path="/data/toolink", index="toolsift-eval-toolink-raw",
                       kind="mftr", method="mftr", retriever="minilm", row=f"row {i}", main=i == 0, queries=497,
                       metrics={"ndcg@10": 0.5, "recall@10": 0.6}) for i in range(40)]

    with RefusingNode(client, transient=True) as node:
        node.refuse()
        run_id = log.record(rows)
        refusals = node.refusals

    assert refusals >= 1 and node.lifted.is_set()
    assert run_id is not None
    assert len([r for r in log.history() if r["run_id"] == run_id]) == 40


def test_an_ingest_the_node_keeps_refusing_stops_naming_the_cause_and_the_remedy_and_removes_the_new_version(
    client: Any, settings: Any, model: Any, datasets: Path, tmp_path: Path
) -> None:
    catalog = _catalog(datasets, tmp_path / "servers", SERVERS)
    quick = settings.with_overrides(bulk_max_retries=2, bulk_initial_backoff=0.2)

    with RefusingNode(client, transient=False) as node, pytest.raises(ClusterError) as refused:
        ingest_catalog(client, quick, model, catalog,
                       progress=lambda stage, done, total: node.refuse() if stage == "index" else None)

    message = str(refused.value)
    assert "\n" not in message
    assert "429 (circuit_breaking_exception: [in_flight_requests] Data too large" in message
    assert "after 2 retries" in message and "the node is out of memory" in message
    assert f"the half-built index version {settings.index}-000001 was removed" in message
    assert _versions(client, settings.index) == []  # no version left behind, aliased or not
    assert IndexManager(client, settings.index).current() is None


def test_a_rebuild_the_node_keeps_refusing_leaves_the_serving_version_as_it_was(
    client: Any, settings: Any, model: Any, datasets: Path, tmp_path: Path
) -> None:
    catalog = _catalog(datasets, tmp_path / "servers", SERVERS)
    ingest_catalog(client, settings, model, catalog)
    quick = settings.with_overrides(bulk_max_retries=1, bulk_initial_backoff=0.2)

    with RefusingNode(client, transient=False) as node, pytest.raises(ClusterError, match="000002 was removed"):
        ingest_catalog(client, quick, model, catalog, rebuild=True,
                       progress=lambda stage, done, total: node.refuse() if stage == "index" else None)

    assert _versions(client, settings.index) == [f"{settings.index}-000001"]
    assert IndexManager(client, settings.index).require().index == f"{settings.index}-000001"
    assert _documents(client, settings.index) == 34
