"""Compaction: a new index drops OpenSearch's second copy of each document and answers exactly as before
(real node, real LiveMCPBench servers and questions).

The tool index excludes vectors from ``_source``, so OpenSearch keeps each document's whole JSON as
``_recovery_source`` until a merge finds that no copy needs it. The same servers are ingested twice,
once compacted (``ingest_compact``) and once not; then ``toolsift index compact`` compacts the other.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolsift.cli.main import cli
from toolsift.agents.agent_eval import load_livemcpbench
from toolsift.mappings import vector_field
from toolsift.opensearch import wire_vector
from toolsift.search.backend import SearchBackend
from toolsift.search.request import SearchRequest

from tests.conftest import drop_indices, ingest_tenant_slices

pytestmark = pytest.mark.integration

PLAIN, COMPACTED = "toolsift-test-compaction-plain", "toolsift-test-compaction-compacted"
#: LiveMCPBench servers (positions in tools.json): about 60 tools.
SERVERS = tuple(range(0, 12))
QUESTIONS = 20


def _primaries(client: Any, alias: str) -> dict[str, int]:
    """Live documents, segments and segment bytes of the primaries (the store stats lag up to 10 s)."""
    rows = [row for row in client.cat.segments(index=alias, format="json", bytes="b") if row["prirep"] == "p"]
    return {"docs": sum(int(row["docs.count"]) for row in rows), "segments": len(rows),
            "bytes": sum(int(row["size"]) for row in rows)}


@pytest.fixture(scope="module")
def indexes(client: Any, base_settings: Any, embedder: Any, datasets: Path,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    from toolsift.ingest.pipeline import ingest_catalog

    servers = json.loads((datasets / "livemcpbench" / "tools.json").read_text(encoding="utf-8"))
    drop_indices(client, PLAIN); drop_indices(client, COMPACTED)
    folder = tmp_path_factory.mktemp("compaction")
    ingest_tenant_slices(client, base_settings.with_overrides(index=PLAIN, query_log=False, ingest_compact=False),
                         embedder, folder, servers, {"": SERVERS})
    report = ingest_catalog(client, base_settings.with_overrides(index=COMPACTED, query_log=False,
                                                                 ingest_compact=True),
                            embedder, folder / "public.json")
    yield {"plain": _primaries(client, PLAIN), "report": report}
    drop_indices(client, PLAIN); drop_indices(client, COMPACTED)


def test_a_compacted_ingest_keeps_a_third_of_the_bytes(client: Any, indexes: dict[str, Any]) -> None:
    report, plain = indexes["report"], indexes["plain"]
    compacted = _primaries(client, COMPACTED)

    assert report.ok and report.compaction is not None and report.compaction.compacted
    assert report.to_dict()["compaction"]["compacted"] is True
    assert compacted["segments"] == 1
    assert compacted["docs"] == plain["docs"]  # the placeholder written to merge is gone
    assert compacted["bytes"] < 0.5 * plain["bytes"]


def test_compacted_and_plain_indexes_give_the_same_vector_scores(client: Any, embedder: Any,
                                                                 indexes: dict[str, Any]) -> None:
    vector = wire_vector(embedder.encode_query(["search the web for recent news"])[0])
    field = vector_field("description")
    body = {"size": 50, "_source": False, "query": {"knn": {field: {"vector": vector, "k": 50}}}}

    plain = client.search(index=PLAIN, body=body)["hits"]["hits"]
    compacted = client.search(index=COMPACTED, body=body)["hits"]["hits"]

    assert len(plain) == 50
    assert [(h["_id"], h["_score"]) for h in compacted] == [(h["_id"], h["_score"]) for h in plain]


def test_compacted_and_plain_indexes_answer_the_same_tools(client: Any, base_settings: Any, embedder: Any,
                                                           datasets: Path, indexes: dict[str, Any]) -> None:
    benchmark = load_livemcpbench(datasets / "livemcpbench", "request")
    questions = list(benchmark.queries.values())[:QUESTIONS]

    def answers(alias: str) -> list[list[str]]:
        backend = SearchBackend(client, base_settings.with_overrides(index=alias, query_log=False),
                                embedder=embedder)
        return [[t.doc_id for t in backend.search(SearchRequest(query=q, top_k=10)).result.tools]
                for q in questions]

    plain, compacted = answers(PLAIN), answers(COMPACTED)

    assert sum(1 for tools in plain if tools) >= QUESTIONS // 2
    assert compacted == plain


def test_index_compact_compacts_an_existing_index(client: Any, base_settings: Any,
                                                  indexes: dict[str, Any]) -> None:
    result = CliRunner().invoke(cli, ["--opensearch-url", base_settings.opensearch_url, "index", "compact",
                                      "--index", PLAIN, "--json"])

    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["compacted"] is True and report["waited_s"] >= 0
    assert 0 < report["segments_bytes_after"] < 0.5 * report["segments_bytes_before"]
    assert _primaries(client, PLAIN)["docs"] == indexes["plain"]["docs"]
