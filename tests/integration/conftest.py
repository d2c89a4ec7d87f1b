"""Fixtures of the workbench's integration and browser tests: a LiveMCPBench slice behind a served workbench."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: The workbench's own indices; outside ``toolsift-test-*`` so per-test cleanups leave them alone.
WB_PREFIX = "toolsift-wbtest-"
#: 22 LiveMCPBench servers: the first 20, the Word and the Excel servers (documents, PDFs, files).
WB_SERVERS = (*range(20), 48, 65)


def _drop_workbench_indices(client: Any) -> None:
    client.indices.delete(index=f"{WB_PREFIX}*", ignore_unavailable=True, expand_wildcards="all")
    for tpl in client.indices.get_index_template(name=f"{WB_PREFIX}*", ignore=404).get("index_templates", []):
        client.indices.delete_index_template(name=tpl["name"])
    for pid in client.search_pipeline.get(ignore=404):
        if pid.startswith(WB_PREFIX):
            client.search_pipeline.delete(id=pid)


@pytest.fixture(scope="session")
def workbench_settings(client: Any, base_settings: Any, embedder: Any, datasets: Path,
                       tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Settings of a workbench over a LiveMCPBench slice (ingested once), with the query log on."""
    from toolsift.ingest.pipeline import ingest_catalog

    servers = json.loads((datasets / "livemcpbench" / "tools.json").read_text(encoding="utf-8"))
    folder = tmp_path_factory.mktemp("workbench")
    catalog = folder / "tools.json"
    catalog.write_text(json.dumps([servers[i] for i in WB_SERVERS], ensure_ascii=False), encoding="utf-8")
    settings = base_settings.with_overrides(
        index=f"{WB_PREFIX}catalog", judgments_index=f"{WB_PREFIX}judgments", query_sets_index=f"{WB_PREFIX}querysets",
        query_log=True, query_log_index=f"{WB_PREFIX}querylog", eval_runs_index=f"{WB_PREFIX}evalruns",
        data_dir=folder / "data", llm_cache_dir=folder / "llm-cache",
    )
    _drop_workbench_indices(client)
    report = ingest_catalog(client, settings, embedder, catalog)
    assert report.ok and report.agents == len(WB_SERVERS)
    yield settings
    _drop_workbench_indices(client)


@pytest.fixture(scope="session")
def workbench_url(client: Any, workbench_settings: Any, embedder: Any, serve_app_for_session: Any) -> str:
    """``toolsift serve ui``'s app over the slice, served on a loopback port for the session."""
    from toolsift.workbench.app import create_app
    from toolsift.workbench.session import Workbench

    return str(serve_app_for_session(create_app(Workbench(client, workbench_settings, embedder))).url)
