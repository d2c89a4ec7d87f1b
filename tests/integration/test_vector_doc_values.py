"""Vectors held once: the tool index writes no doc values for its ``knn_vector`` fields, and exact
scoring still reads every vector (real node, real LiveMCPBench servers).

The k-NN plugin would write each vector a second time as binary doc values; on the Lucene engine its
``knn_score`` script, the ``exists`` query and k-NN search read the vector files instead. Exact scores
must equal the approximate search's scores for the same documents (both ``(1 + cos) / 2``), at the top
level and inside the nested parameters.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolsift.cli.main import cli
from toolsift.mappings import F, vector_field
from toolsift.opensearch import wire_vector
from toolsift.query.builder import knn_score_query

from tests.conftest import drop_indices, ingest_tenant_slices

pytestmark = pytest.mark.integration

ALIAS = "toolsift-test-vector-doc-values"
#: LiveMCPBench servers (positions in tools.json): Filesystem, ArXiv.
SERVERS = (61, 62)
QUERY = "read the contents of a file"


@pytest.fixture(scope="module")
def vector_index(client: Any, base_settings: Any, embedder: Any, datasets: Path,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    servers = json.loads((datasets / "livemcpbench" / "tools.json").read_text(encoding="utf-8"))
    drop_indices(client, ALIAS)
    ingest_tenant_slices(client, base_settings.with_overrides(index=ALIAS, query_log=False), embedder,
                         tmp_path_factory.mktemp("vectors"), servers, {"": SERVERS})
    yield ALIAS
    drop_indices(client, ALIAS)


def _vector_fields(properties: dict[str, Any], prefix: str = "") -> dict[str, dict[str, Any]]:
    found = {}
    for name, spec in properties.items():
        if spec.get("type") == "knn_vector":
            found[prefix + name] = spec
        found.update(_vector_fields(spec.get("properties", {}), f"{prefix}{name}."))
    return found


def test_no_vector_field_writes_doc_values(client: Any, vector_index: str) -> None:
    mapping = next(iter(client.indices.get_mapping(index=vector_index).values()))["mappings"]

    fields = _vector_fields(mapping["properties"])

    assert {vector_field("description"), F.param_vector, F.example_vector} <= set(fields)
    assert all(spec.get("doc_values") is False for spec in fields.values()), fields


def test_exact_scores_equal_the_vector_search_scores(client: Any, embedder: Any, vector_index: str) -> None:
    vector = wire_vector(embedder.encode_query([QUERY])[0])
    field = vector_field("description")
    tools = int(client.count(index=vector_index, body={"query": {"exists": {"field": field}}})["count"])
    assert tools >= 10

    approximate = client.search(index=vector_index, body={
        "size": tools, "_source": False, "query": {"knn": {field: {"vector": vector, "k": tools}}}})["hits"]["hits"]
    exact = client.search(index=vector_index, body={
        "size": tools, "_source": False, "query": knn_score_query(field, vector)})["hits"]["hits"]

    assert len(exact) == len(approximate) == tools
    by_id = {h["_id"]: h["_score"] for h in approximate}
    assert all(h["_score"] == pytest.approx(by_id[h["_id"]], abs=1e-6) for h in exact)
    assert len({round(h["_score"], 6) for h in exact}) > tools // 2  # real cosines, not one constant


def test_exact_scores_inside_nested_parameters_read_their_vectors(client: Any, embedder: Any,
                                                                 vector_index: str) -> None:
    vector = wire_vector(embedder.encode_query(["the path of the file"])[0])
    body = {"size": 100, "_source": False, "query": {"nested": {
        "path": "parameters", "score_mode": "max", "query": knn_score_query(F.param_vector, vector)}}}

    hits = client.search(index=vector_index, body=body)["hits"]["hits"]

    assert len(hits) >= 10
    assert all(0.5 < h["_score"] <= 1.0 for h in hits)  # (1 + cos) / 2 of a related text
    assert len({round(h["_score"], 6) for h in hits}) > 1


def test_index_status_reports_the_primaries_bytes_per_tool(client: Any, base_settings: Any, vector_index: str) -> None:
    result = CliRunner().invoke(cli, ["--opensearch-url", base_settings.opensearch_url, "index", "status",
                                      "--index", vector_index, "--json"])

    assert result.exit_code == 0, result.output
    status = json.loads(result.output)
    tools = status["documents"]["tool"]
    assert status["primaries_bytes"] > 0 and status["schema_current"]
    assert status["kb_per_tool"] == round(status["primaries_bytes"] / tools / 1000, 1)
