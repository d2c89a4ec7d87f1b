"""The query log on a real node: every search recorded with its evidence, no secrets, retention, best effort."""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolsift.cli.main import cli
from toolsift.config import get_settings
from toolsift.ingest.pipeline import ingest_catalog
from toolsift.mappings.index import IndexManager
from toolsift.search import Searcher

pytestmark = pytest.mark.integration

CATALOG_ALIAS = "toolsift-test-querylog-catalog"
LOG_INDEX = "toolsift-test-querylog"


@pytest.fixture(scope="module")
def catalog(client: Any, base_settings: Any, embedder: Any, datasets: Path,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    servers = json.loads((datasets / "livemcpbench" / "tools.json").read_text(encoding="utf-8"))
    path = tmp_path_factory.mktemp("querylog") / "tools.json"
    path.write_text(json.dumps(servers[:5], ensure_ascii=False), encoding="utf-8")
    IndexManager(client, CATALOG_ALIAS).delete_all()
    settings = base_settings.with_overrides(index=CATALOG_ALIAS)
    assert ingest_catalog(client, settings, embedder, path).ok
    yield settings
    IndexManager(client, CATALOG_ALIAS).delete_all()


@pytest.fixture(autouse=True)
def _fresh_log(client: Any) -> Iterator[None]:
    client.indices.delete(index=LOG_INDEX, ignore_unavailable=True)
    yield
    client.indices.delete(index=LOG_INDEX, ignore_unavailable=True)


def records(client: Any) -> list[dict[str, Any]]:
    client.indices.refresh(index=LOG_INDEX)
    return [h["_source"] for h in client.search(index=LOG_INDEX, body={"size": 100, "sort": [{"timestamp": "asc"}]})["hits"]["hits"]]


def test_every_search_is_recorded_with_its_tools_scores_and_latency(client: Any, catalog: Any, embedder: Any) -> None:
    settings = catalog.with_overrides(query_log=True, query_log_index=LOG_INDEX)
    searcher = Searcher(client, settings, embedder)

    result = searcher.search("convert a word document to pdf", top_k=3)
    searcher.search("read a pdf file", top_k=2, level="agent")

    first, second = records(client)
    assert first["request"] == "convert a word document to pdf"
    assert first["tool_ids"] == [t.doc_id for t in result.tools] and first["top_tool"] == result.tools[0].doc_id
    assert (first["level"], first["method"], first["source"], first["degraded"]) == ("tool", "multi-field", "api", False)
    assert first["latency_ms"] > 0 and first["weights_version"] is None
    logged = first["answer"]["tools"][0]
    assert set(logged) >= {"field_scores", "contributions", "missing_required_parameters"}
    assert first["answer"]["structured_query"]["tool_needs"]
    assert second["level"] == "agent" and second["agent_ids"]


def test_no_secret_reaches_the_log(client: Any, catalog: Any, embedder: Any) -> None:
    settings = catalog.with_overrides(query_log=True, query_log_index=LOG_INDEX, llm_api_key="sk-never-log-me",
                                      ranker_token="token-never-log-me")
    Searcher(client, settings, embedder).search("convert a word document to pdf", top_k=2)

    text = json.dumps(records(client))
    assert "never-log-me" not in text


def test_the_log_is_off_by_default(client: Any, catalog: Any, embedder: Any) -> None:
    Searcher(client, catalog.with_overrides(query_log_index=LOG_INDEX), embedder).search("read a pdf file")
    assert not client.indices.exists(index=LOG_INDEX)


def test_records_past_the_retention_are_deleted_when_the_log_opens(client: Any, catalog: Any, embedder: Any) -> None:
    settings = catalog.with_overrides(query_log=True, query_log_index=LOG_INDEX, query_log_retention_days=30)
    searcher = Searcher(client, settings, embedder)
    searcher.search("read a pdf file", top_k=1)
    old = records(client)[0] | {"timestamp": (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=31)).isoformat(),
                                "request": "an old request"}
    client.index(index=LOG_INDEX, body=old, refresh=True)
    assert len(records(client)) == 2

    Searcher(client, settings, embedder)

    assert [r["request"] for r in records(client)] == ["read a pdf file"]


def test_a_log_that_cannot_be_written_does_not_fail_the_search(
    client: Any, catalog: Any, embedder: Any, caplog: pytest.LogCaptureFixture
) -> None:
    client.indices.create(index=LOG_INDEX, body={"mappings": {"dynamic": "strict", "properties": {"x": {"type": "keyword"}}}})
    settings = catalog.with_overrides(query_log=True, query_log_index=LOG_INDEX)

    with caplog.at_level(logging.WARNING, logger="toolsift.learning.querylog"):
        result = Searcher(client, settings, embedder).search("read a pdf file", top_k=2)

    assert result.tools
    assert any("cannot be written" in r.getMessage() for r in caplog.records)


def test_the_cli_records_its_searches_as_cli(client: Any, catalog: Any, base_settings: Any) -> None:
    get_settings.cache_clear()  # the process's settings are built once; this test sets them by environment
    answer = CliRunner().invoke(cli, ["--opensearch-url", base_settings.opensearch_url, "search", "read a pdf file",
                                      "--index", CATALOG_ALIAS, "--no-rewrite", "-k", "2", "--json"],
                                env={"TOOLSIFT_QUERY_LOG": "true", "TOOLSIFT_QUERY_LOG_INDEX": LOG_INDEX})
    get_settings.cache_clear()
    assert answer.exit_code == 0, answer.output

    (record,) = records(client)
    assert record["source"] == "cli" and record["request"] == "read a pdf file"


def _opened_at_once(client: Any, settings: Any, n: int) -> None:
    """``n`` logs opened at the same moment, each with its own client (as the API, the MCP server and
    the workbench open theirs when they start together)."""
    import threading

    from toolsift.opensearch import connect
    from toolsift.learning.querylog import QueryLog

    clients = [connect(settings) for _ in range(n)]
    start = threading.Barrier(n)

    def open_log(own: Any) -> None:
        start.wait()
        QueryLog.open(own, settings, source="api")

    threads = [threading.Thread(target=open_log, args=(own,)) for own in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_logs_opened_at_once_on_a_new_index_warn_of_nothing(
        client: Any, catalog: Any, embedder: Any, caplog: pytest.LogCaptureFixture) -> None:
    settings = catalog.with_overrides(query_log=True, query_log_index=LOG_INDEX)

    with caplog.at_level(logging.WARNING, logger="toolsift.learning.querylog"):
        for _ in range(3):
            client.indices.delete(index=LOG_INDEX, ignore_unavailable=True)
            _opened_at_once(client, settings, 3)

    assert [r.getMessage() for r in caplog.records if r.name == "toolsift.learning.querylog"] == []
    Searcher(client, settings, embedder).search("read a pdf file", top_k=1)
    assert len(records(client)) == 1


def test_a_retention_prune_that_fails_says_so_and_searches_are_still_logged(
        client: Any, catalog: Any, embedder: Any, caplog: pytest.LogCaptureFixture) -> None:
    from toolsift.learning.querylog_doc import query_log_index_body

    settings = catalog.with_overrides(query_log=True, query_log_index=LOG_INDEX)
    client.indices.create(index=LOG_INDEX, body=query_log_index_body())
    client.indices.put_settings(index=LOG_INDEX, body={"index": {"blocks": {"read": True}}})  # writes still go in
    try:
        with caplog.at_level(logging.WARNING, logger="toolsift.learning.querylog"):
            Searcher(client, settings, embedder).search("read a pdf file", top_k=1)
    finally:
        client.indices.put_settings(index=LOG_INDEX, body={"index": {"blocks": {"read": False}}})

    messages = [r.getMessage() for r in caplog.records if r.name == "toolsift.learning.querylog"]
    assert len(messages) == 1 and "retention prune" in messages[0] and "skipped" in messages[0], messages
    assert "unlogged" not in messages[0]
    assert [r["request"] for r in records(client)] == ["read a pdf file"]


def test_an_answer_given_under_a_request_id_is_found_at_once_even_in_a_log_made_by_an_older_toolsift(
        client: Any, catalog: Any, embedder: Any) -> None:
    from toolsift.learning.querylog_doc import query_log_index_body
    from toolsift.learning.querylog import issued_answer, issuing

    older = query_log_index_body()
    for added in ("request_id", "tenant", "key", "answered_ids"):  # the version 1 mapping
        del older["mappings"]["properties"][added]
    client.indices.create(index=LOG_INDEX, body=older)
    settings = catalog.with_overrides(query_log=True, query_log_index=LOG_INDEX)
    searcher = Searcher(client, settings, embedder)

    with issuing("a" * 32, tenant="acme", key="acme-search") as issue:
        result = searcher.search("read a pdf file", top_k=3)
        issue.answered([t.doc_id for t in result.tools[:2]])
    found = issued_answer(client, LOG_INDEX, "a" * 32)  # no refresh in between

    assert found is not None and (found.tenant, found.key) == ("acme", "acme-search")
    assert found.tool_ids == {t.doc_id for t in result.tools[:2]}
    assert issued_answer(client, LOG_INDEX, "b" * 32) is None
    (record,) = records(client)
    assert record["request"] == "read a pdf file" and record["request_id"] == "a" * 32
