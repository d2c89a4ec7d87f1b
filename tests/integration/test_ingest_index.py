"""Ingest into a real node: what lands in the index, idempotence, updates, pruning, rebuilds, joins.

Catalogs are slices of the real benchmark data written to ``tmp_path``: the first tools of ToolRet's
APIBank, and five LiveMCPBench servers as an MCP catalog. Every test owns its index alias (the
``settings`` fixture), so tests never see each other's documents.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.catalogs import benchmark_records, write_catalog
from toolsift.cli.main import cli
from toolsift.errors import IndexMismatchError
from toolsift.ingest.pipeline import ingest_catalog
from toolsift.mappings.index import IndexManager
from toolsift.search import Searcher

pytestmark = pytest.mark.integration

APIBANK_SLICE = 12
#: LiveMCPBench servers of the MCP slice (by position in tools.json) and the agent id each becomes:
#: ``agent:`` and a slug of the server's name. 20 tools, English and Chinese descriptions.
MCP_AGENTS = {
    1: "agent:mcp-yahoo-finance",
    3: "agent:hugeicons-mcp-server",
    5: "agent:pdf-reader-mcp-server",
    6: "agent:howtocook-mcp-server",
    8: "agent:duckduckgo-search-mcp-server",
}
MCP_SERVERS = tuple(MCP_AGENTS)




# --- catalog slices ---------------------------------------------------------------------------------


@pytest.fixture()
def apibank_records(datasets: Path) -> list[dict[str, Any]]:
    """The first APIBank tools, as ToolRet records (a fresh copy per test, free to edit)."""
    return copy.deepcopy(benchmark_records(datasets, "toolret/apibank")[:APIBANK_SLICE])


@pytest.fixture()
def apibank_catalog(tmp_path: Path, apibank_records: list[dict[str, Any]]) -> Path:
    return write_catalog(tmp_path / "apibank", apibank_records)


@pytest.fixture()
def ingested_apibank(client: Any, settings: Any, model: Any, apibank_catalog: Path) -> Path:
    """The APIBank catalog, ingested once already; ``write_catalog(ingested_apibank.parent, ...)`` edits it."""
    ingest_catalog(client, settings, model, apibank_catalog)
    return apibank_catalog


@pytest.fixture()
def mcp_servers(datasets: Path) -> list[dict[str, Any]]:
    servers = benchmark_records(datasets, "livemcpbench")
    return [servers[i] for i in MCP_SERVERS]


@pytest.fixture()
def mcp_catalog(tmp_path: Path, mcp_servers: list[dict[str, Any]]) -> Path:
    return write_catalog(tmp_path / "livemcpbench", mcp_servers)


def _function(name: str, description: str, properties: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """An OpenAI function tool; ``properties`` maps each (required) parameter to its (type, description)."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {key: {"type": kind, "description": text} for key, (kind, text) in properties.items()},
                "required": list(properties),
            },
        },
    }


OPENAI_FUNCTIONS = {
    "tools": [
        _function(
            "convert_currency",
            "Convert an amount of money from one currency into another at today's rate.",
            {
                "amount": ("number", "The amount to convert."),
                "from_currency": ("string", "ISO code of the source currency."),
                "to_currency": ("string", "ISO code of the target currency."),
            },
        ),
        _function(
            "send_sms",
            "Send a short text message to a phone number.",
            {
                "phone_number": ("string", "Recipient phone number."),
                "message": ("string", "The text to send."),
            },
        ),
    ]
}


# --- helpers ----------------------------------------------------------------------------------------


def server_tools(server: dict[str, Any]) -> list[dict[str, Any]]:
    tools = server["tools"]
    if isinstance(tools, dict):
        return [tool for entry in tools.values() for tool in entry["tools"]]
    return list(tools)


def agent_id_of(server: dict[str, Any], servers: list[dict[str, Any]]) -> str:
    return MCP_AGENTS[MCP_SERVERS[servers.index(server)]]


def tool_ids_of(server: dict[str, Any], servers: list[dict[str, Any]]) -> set[str]:
    """A server's tools are ``<slug of the server name>/<tool name>``."""
    prefix = agent_id_of(server, servers).removeprefix("agent:")
    return {f"{prefix}/{tool['name']}" for tool in server_tools(server)}


def hits(client: Any, index: str, query: dict[str, Any], **extra: Any) -> list[dict[str, Any]]:
    answer = client.search(index=index, body={"size": 1000, "query": query, **extra})
    return list(answer["hits"]["hits"])


def ids_of(client: Any, index: str, query: dict[str, Any]) -> set[str]:
    return {h["_id"] for h in hits(client, index, query, _source=False)}


def write_state(client: Any, index: str) -> dict[str, tuple[int, int]]:
    """Every document's (``_seq_no``, ``_version``): any write to a document changes both."""
    found = hits(client, index, {"match_all": {}}, _source=False, seq_no_primary_term=True, version=True)
    return {h["_id"]: (h["_seq_no"], h["_version"]) for h in found}


def apibank_ids(records: list[dict[str, Any]]) -> set[str]:
    return {r["id"] for r in records}


def one_parameter(name: str, description_word: str) -> dict[str, Any]:
    """A nested query: one and the same parameter is named ``name`` and has ``description_word`` in its description."""
    must = [{"term": {"parameters.name.keyword": name}}, {"match": {"parameters.description": description_word}}]
    return {"nested": {"path": "parameters", "query": {"bool": {"must": must}}}}


# --- a ToolRet catalog ------------------------------------------------------------------------------


def test_ingesting_a_toolret_slice_indexes_every_tool_with_its_parameters_as_nested_documents(
    client: Any, settings: Any, model: Any, apibank_catalog: Path, apibank_records: list[dict[str, Any]]
) -> None:
    report = ingest_catalog(client, settings, model, apibank_catalog)

    assert report.ok
    assert (report.format, report.tools, report.agents) == ("toolret", APIBANK_SLICE, 0)
    assert report.created == APIBANK_SLICE
    assert report.texts_embedded > APIBANK_SLICE  # descriptions, parameters, responses, full docs
    assert client.count(index=settings.index)["count"] == APIBANK_SLICE
    assert ids_of(client, settings.index, {"match_all": {}}) == apibank_ids(apibank_records)

    with_parameters = {r["id"] for r in apibank_records if r["documentation"].get("parameters")}
    nested_exists = {"nested": {"path": "parameters", "query": {"exists": {"field": "parameters.name"}}}}
    assert client.count(index=settings.index, body={"query": nested_exists})["count"] == len(with_parameters)

    # Each parameter of the catalog is one nested document under its tool.
    for hit in hits(client, settings.index, {"match_all": {}}, _source=["parameters.name", "parameters.required"]):
        documented = next(r for r in apibank_records if r["id"] == hit["_id"])["documentation"]["parameters"]
        assert [p["name"] for p in hit["_source"]["parameters"]] == [p["name"] for p in documented]

    # A parameter name finds exactly the tools that declare it.
    takes_username = {r["id"] for r in apibank_records if any(p["name"] == "username" for p in r["documentation"]["parameters"])}
    assert takes_username >= {"apibank_tool_0", "apibank_tool_1", "apibank_tool_4"}
    by_name = {"nested": {"path": "parameters", "query": {"term": {"parameters.name.keyword": "username"}}}}
    assert ids_of(client, settings.index, by_name) == takes_username


def test_nested_parameters_keep_each_parameters_name_and_description_together(
    client: Any, settings: Any, model: Any, apibank_catalog: Path
) -> None:
    ingest_catalog(client, settings, model, apibank_catalog)
    # ForgotPassword (apibank_tool_4) has a `username` parameter and an `email` parameter: a flattened
    # mapping would match "username whose description mentions email"; nested documents do not.
    assert ids_of(client, settings.index, one_parameter("username", "email")) == set()
    assert "apibank_tool_4" in ids_of(client, settings.index, one_parameter("email", "email"))


def test_the_index_records_its_embedding_model_and_the_alias_points_at_version_one(
    client: Any, settings: Any, model: Any, apibank_catalog: Path
) -> None:
    report = ingest_catalog(client, settings, model, apibank_catalog)

    first = f"{settings.index}-000001"
    assert report.index == first
    assert set(client.indices.get_alias(name=settings.index)) == {first}
    meta = client.indices.get_mapping(index=first)[first]["mappings"]["_meta"]["toolsift"]
    assert meta["embedding_model"] == model.name == "all-MiniLM-L6-v2"
    assert meta["embedding_dim"] == model.dimension == 384
    # The catalog that was ingested is recorded by its fingerprint, with its counts.
    (recorded,) = meta["catalogs"].values()
    assert (recorded["format"], recorded["tools"], recorded["agents"]) == ("toolret", APIBANK_SLICE, 0)


def test_reingesting_an_unchanged_catalog_writes_nothing(
    client: Any, settings: Any, model: Any, apibank_catalog: Path
) -> None:
    ingest_catalog(client, settings, model, apibank_catalog)
    before = write_state(client, settings.index)

    again = ingest_catalog(client, settings, model, apibank_catalog)

    assert again.ok
    assert (again.created, again.updated, again.deleted) == (0, 0, 0)
    assert again.texts_embedded == 0
    assert again.unchanged == APIBANK_SLICE
    assert write_state(client, settings.index) == before


def test_an_unchanged_catalog_file_is_skipped_at_once_when_asked(
    client: Any, settings: Any, model: Any, apibank_catalog: Path
) -> None:
    ingest_catalog(client, settings, model, apibank_catalog)
    before = write_state(client, settings.index)

    skipped = ingest_catalog(client, settings, model, apibank_catalog, skip_if_unchanged=True)

    assert skipped.catalog_unchanged
    assert (skipped.created, skipped.updated, skipped.unchanged) == (0, 0, APIBANK_SLICE)
    assert write_state(client, settings.index) == before


def test_a_change_to_the_document_building_code_reingests_an_unchanged_catalog_file(
    client: Any, settings: Any, model: Any, apibank_catalog: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_catalog(client, settings, model, apibank_catalog)
    import toolsift.ingest.pipeline as pipeline

    monkeypatch.setattr(pipeline, "document_builder_version", lambda: "a-newer-builder")

    again = ingest_catalog(client, settings, model, apibank_catalog, skip_if_unchanged=True)

    assert not again.catalog_unchanged
    assert again.unchanged == APIBANK_SLICE  # same documents: the content hashes still match
    recorded = IndexManager(client, settings.index).require().catalogs
    assert [entry["document_builder"] for entry in recorded.values()] == ["a-newer-builder"]


def test_an_evaluation_index_built_by_other_document_code_is_rebuilt(
    client: Any, settings: Any, model: Any, apibank_catalog: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolsift.evaluation.runner import ensure_eval_index

    first = ensure_eval_index(client, settings, model, settings.index, apibank_catalog, "toolret")
    reused = ensure_eval_index(client, settings, model, settings.index, apibank_catalog, "toolret")
    import toolsift.ingest.pipeline as pipeline

    monkeypatch.setattr(pipeline, "document_builder_version", lambda: "a-newer-builder")
    rebuilt = ensure_eval_index(client, settings, model, settings.index, apibank_catalog, "toolret")

    assert reused.catalog_unchanged and reused.index == first.index
    assert not rebuilt.catalog_unchanged and rebuilt.index != first.index
    assert rebuilt.created == APIBANK_SLICE
    assert IndexManager(client, settings.index).versions() == [rebuilt.index]


def test_a_changed_tool_is_updated_and_only_it(
    client: Any, settings: Any, model: Any, ingested_apibank: Path, apibank_records: list[dict[str, Any]]
) -> None:
    before = write_state(client, settings.index)

    new_description = "Remove a reminder of the user permanently, given its id and the user's token."
    apibank_records[6]["documentation"]["description"] = new_description  # DeleteReminder
    write_catalog(ingested_apibank.parent, apibank_records)
    report = ingest_catalog(client, settings, model, ingested_apibank, approve=True)  # the catalog's author's own edit

    assert report.ok
    assert (report.created, report.updated, report.unchanged) == (0, 1, APIBANK_SLICE - 1)
    after = write_state(client, settings.index)
    changed = {doc_id for doc_id in before if after[doc_id] != before[doc_id]}
    assert changed == {"apibank_tool_6"}
    assert after["apibank_tool_6"][1] == before["apibank_tool_6"][1] + 1
    stored = client.get(index=settings.index, id="apibank_tool_6", _source_includes=["description"])
    assert stored["_source"]["description"] == new_description


def test_prune_deletes_the_tools_a_catalog_no_longer_lists(
    client: Any, settings: Any, model: Any, ingested_apibank: Path, apibank_records: list[dict[str, Any]]
) -> None:
    dropped = {apibank_records[3]["id"], apibank_records[9]["id"]}
    kept = [r for r in apibank_records if r["id"] not in dropped]
    write_catalog(ingested_apibank.parent, kept)
    report = ingest_catalog(client, settings, model, ingested_apibank, prune=True)

    assert report.ok
    assert report.deleted == 2
    assert (report.created, report.updated, report.unchanged) == (0, 0, APIBANK_SLICE - 2)
    assert ids_of(client, settings.index, {"match_all": {}}) == apibank_ids(kept)
    assert not any(client.exists(index=settings.index, id=doc_id) for doc_id in dropped)


def test_without_prune_tools_missing_from_the_catalog_stay(
    client: Any, settings: Any, model: Any, ingested_apibank: Path, apibank_records: list[dict[str, Any]]
) -> None:
    write_catalog(ingested_apibank.parent, apibank_records[:-2])
    report = ingest_catalog(client, settings, model, ingested_apibank)

    assert report.deleted == 0
    assert ids_of(client, settings.index, {"match_all": {}}) == apibank_ids(apibank_records)


def test_prune_leaves_other_catalogs_in_the_same_index_alone(
    client: Any, settings: Any, model: Any, tmp_path: Path, ingested_apibank: Path,
    apibank_records: list[dict[str, Any]],
) -> None:
    functions = write_catalog(tmp_path / "fintools", OPENAI_FUNCTIONS)
    ingest_catalog(client, settings, model, functions)

    write_catalog(ingested_apibank.parent, apibank_records[1:])
    report = ingest_catalog(client, settings, model, ingested_apibank, prune=True)

    assert report.deleted == 1
    remaining = ids_of(client, settings.index, {"match_all": {}})
    assert {"convert_currency", "send_sms"} <= remaining
    assert apibank_records[0]["id"] not in remaining


def test_rebuild_fills_the_next_version_swaps_the_alias_and_deletes_the_old_version(
    client: Any, settings: Any, model: Any, apibank_catalog: Path
) -> None:
    ingest_catalog(client, settings, model, apibank_catalog)
    first, second = f"{settings.index}-000001", f"{settings.index}-000002"

    report = ingest_catalog(client, settings, model, apibank_catalog, rebuild=True)

    assert report.ok
    assert report.index == second
    assert report.created == APIBANK_SLICE  # a new version is filled from scratch
    assert set(client.indices.get_alias(name=settings.index)) == {second}
    assert not client.indices.exists(index=first)
    assert IndexManager(client, settings.index).versions() == [second]
    assert client.count(index=settings.index)["count"] == APIBANK_SLICE

    result = Searcher(client, settings, model).search(
        "replace my old password with a new password", top_k=3, retriever="hybrid"
    )
    assert result.index == second
    assert "apibank_tool_3" in [t.doc_id for t in result.tools]  # ModifyPassword


def test_an_index_built_for_another_embedding_model_is_refused(
    client: Any, settings: Any, model: Any, apibank_catalog: Path
) -> None:
    IndexManager(client, settings.index).ensure("other-model", model.dimension)

    with pytest.raises(IndexMismatchError) as by_search:
        Searcher(client, settings, model)
    with pytest.raises(IndexMismatchError) as by_ingest:
        ingest_catalog(client, settings, model, apibank_catalog)

    for refused in (by_search, by_ingest):
        message = str(refused.value)
        assert "other-model" in message
        assert "all-MiniLM-L6-v2" in message
    assert client.count(index=settings.index)["count"] == 0


def test_an_index_of_an_older_schema_is_refused_and_reported_stale_until_rebuilt(
    client: Any, settings: Any, model: Any, apibank_catalog: Path
) -> None:
    manager = IndexManager(client, settings.index)
    assert not manager.is_stale(model.name, model.dimension)  # no alias yet: nothing to rebuild
    ingest_catalog(client, settings, model, apibank_catalog)
    assert not manager.is_stale(model.name, model.dimension)
    assert manager.is_stale("other-model", model.dimension)

    manager.update_meta(manager.require().index, mapping_fingerprint="from-an-older-toolsift")

    assert manager.is_stale(model.name, model.dimension)
    with pytest.raises(IndexMismatchError, match="older document schema"):
        ingest_catalog(client, settings, model, apibank_catalog)
    rebuilt = ingest_catalog(client, settings, model, apibank_catalog, rebuild=True)
    assert rebuilt.ok and rebuilt.index.endswith("-000002")
    assert not manager.is_stale(model.name, model.dimension)


def test_searching_an_alias_that_does_not_exist_says_to_ingest_first(
    client: Any, settings: Any, model: Any
) -> None:
    with pytest.raises(IndexMismatchError, match="ingest"):
        Searcher(client, settings, model)


# --- an MCP catalog: agents joined to their tools ---------------------------------------------------


def test_mcp_servers_become_agents_and_their_tools_children(
    client: Any, settings: Any, model: Any, mcp_catalog: Path, mcp_servers: list[dict[str, Any]]
) -> None:
    report = ingest_catalog(client, settings, model, mcp_catalog)

    n_tools = sum(len(server_tools(s)) for s in mcp_servers)
    assert report.ok
    assert (report.format, report.agents, report.tools) == ("mcp", len(MCP_SERVERS), n_tools)
    agents = ids_of(client, settings.index, {"term": {"entity": "agent"}})
    assert agents == set(MCP_AGENTS.values())
    assert client.count(index=settings.index, body={"query": {"term": {"entity": "tool"}}})["count"] == n_tools


def test_has_child_finds_each_agent_by_its_tools_and_has_parent_finds_an_agents_tools(
    client: Any, settings: Any, model: Any, mcp_catalog: Path, mcp_servers: list[dict[str, Any]]
) -> None:
    ingest_catalog(client, settings, model, mcp_catalog)

    for server in mcp_servers:
        agent_id = agent_id_of(server, mcp_servers)
        tool_ids = tool_ids_of(server, mcp_servers)
        assert len(tool_ids) == len(server_tools(server))

        by_tool_id = {"has_child": {"type": "tool", "query": {"terms": {"tool_id": sorted(tool_ids)}}}}
        assert ids_of(client, settings.index, by_tool_id) == {agent_id}

        children = {"has_parent": {"parent_type": "agent", "query": {"ids": {"values": [agent_id]}}}}
        assert ids_of(client, settings.index, children) == tool_ids

    # A tool's own words find its server: the PDF reader is the server of the tool that reads PDFs.
    reads_pdfs = {"has_child": {"type": "tool", "query": {"match": {"description": "PDF pages metadata"}}}}
    assert ids_of(client, settings.index, reads_pdfs) == {"agent:pdf-reader-mcp-server"}


def test_every_mcp_tool_is_routed_to_its_agents_shard(
    client: Any, settings: Any, model: Any, mcp_catalog: Path
) -> None:
    ingest_catalog(client, settings, model, mcp_catalog)

    tools = hits(client, settings.index, {"term": {"entity": "tool"}}, _source=["agent_id", "relation"])
    assert tools
    for hit in tools:
        agent_id = hit["_source"]["agent_id"]
        assert agent_id.startswith("agent:")
        assert hit["_routing"] == agent_id
        assert hit["_source"]["relation"] == {"name": "tool", "parent": agent_id}
    # A routed tool is found by id only with its routing.
    some = tools[0]
    assert client.get(index=settings.index, id=some["_id"], routing=some["_routing"])["found"]


def test_the_shard_a_server_s_tools_go_to_is_the_one_bench_shards_predicts(client: Any, settings: Any) -> None:
    from toolsift.bench.shard_bench import routing_shard

    index = f"{settings.index}-routing-check"
    client.indices.create(index=index, body={"settings": {"number_of_shards": 3, "number_of_replicas": 0}})
    try:
        for key in ("agent:some-server", "agent:pdf-reader-mcp-server", "agent:météo", "agent:x"):
            found = client.search_shards(index=index, routing=key)["shards"][0][0]["shard"]
            assert found == routing_shard(key, 3, 768), key  # 768: the routing shards of a 3-shard index
    finally:
        client.indices.delete(index=index)


def test_a_tool_without_an_owner_is_indexed_and_searchable_beside_agents_and_their_tools(
    client: Any, settings: Any, model: Any, tmp_path: Path, mcp_catalog: Path
) -> None:
    ingest_catalog(client, settings, model, mcp_catalog)
    functions = write_catalog(tmp_path / "fintools", OPENAI_FUNCTIONS)

    report = ingest_catalog(client, settings, model, functions)

    assert report.ok
    assert (report.format, report.tools, report.agents, report.created) == ("openai_functions", 2, 0, 2)
    ownerless = hits(client, settings.index, {"ids": {"values": ["convert_currency", "send_sms"]}},
                     _source=["agent_id", "relation", "entity"])
    assert len(ownerless) == 2
    for hit in ownerless:
        assert hit["_source"]["entity"] == "tool"
        assert hit["_source"].get("agent_id") is None
        assert "relation" not in hit["_source"]
        assert hit.get("_routing") is None

    searcher = Searcher(client, settings, model)
    for retriever in ("bm25", "minilm", "hybrid"):
        found = searcher.search("convert 100 euros to US dollars", top_k=3, retriever=retriever)
        assert found.tools[0].doc_id == "convert_currency", retriever
        assert found.tools[0].agent_id is None
    # Agent-level search skips a tool that has no owner instead of failing on it.
    agents = searcher.search("send a text message to a phone", top_k=3, level="agent")
    assert "send_sms" in {t.doc_id for t in agents.tools}
    assert all(a.agent_id.startswith("agent:") for a in agents.agents)


class _DiesAfter:
    """The real embedder, stopped dead after ``batches`` document batches: an ingest process killed
    half-way through its write pass (the documents of the batches before are already written)."""

    def __init__(self, inner: Any, batches: int) -> None:
        self._inner, self._left = inner, batches
        self.name, self.dimension = inner.name, inner.dimension

    def encode_query(self, texts: Any) -> Any:
        return self._inner.encode_query(texts)

    def prime(self, texts: Any) -> None:
        self._inner.prime(texts)

    def encode_document(self, texts: Any) -> Any:
        if self._left == 0:
            raise KeyboardInterrupt("the ingest process was stopped")
        self._left -= 1
        return self._inner.encode_document(texts)


def _digest(client: Any, index: str) -> tuple[int, int, str]:
    """(documents, distinct ids, SHA-256 of every id with its content hash): equal digests, equal documents."""
    client.indices.refresh(index=index)
    found = hits(client, index, {"match_all": {}}, _source=["content_hash"])
    pairs = sorted((h["_id"], h["_source"]["content_hash"]) for h in found)
    return len(found), len({h["_id"] for h in found}), hashlib.sha256(json.dumps(pairs).encode()).hexdigest()


def test_an_interrupted_ingest_is_named_unfinished_and_a_rerun_converges_to_a_clean_ingest(
    client: Any, settings: Any, model: Any, datasets: Path, tmp_path: Path
) -> None:
    servers = benchmark_records(datasets, "livemcpbench")[:12]
    catalog = write_catalog(tmp_path / "servers", servers)
    clean = settings.with_overrides(index=f"{settings.index}-clean")
    ingest_catalog(client, clean, model, catalog)

    with pytest.raises(KeyboardInterrupt):  # without the vector cache, which the clean ingest filled
        ingest_catalog(client, settings.with_overrides(vector_cache=False), _DiesAfter(model, 1), catalog)
    partial = IndexManager(client, settings.index).current()
    assert partial is not None and str(catalog) in partial.unfinished and not partial.catalogs
    status = CliRunner().invoke(cli, ["--opensearch-url", settings.opensearch_url, "index", "status", "--index",
                                      settings.index])
    assert f"unfinished: the ingest of {catalog}" in status.output
    assert _digest(client, settings.index)[0] < _digest(client, clean.index)[0]

    rerun = ingest_catalog(client, settings, model, catalog, skip_if_unchanged=True)

    assert rerun.ok and not rerun.catalog_unchanged  # the partial index was not taken for current
    finished = IndexManager(client, settings.index).current()
    assert finished is not None and not finished.unfinished and finished.catalogs
    documents, distinct, digest = _digest(client, settings.index)
    assert (documents, distinct, digest) == _digest(client, clean.index)  # 0 lost, 0 duplicated
    assert documents == distinct == rerun.tools + rerun.agents
