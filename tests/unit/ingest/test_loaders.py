"""Catalog loaders: which format a file is, what records it yields, and how a bad file is reported."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path

import pytest

from toolsift.errors import CatalogError, CatalogRecordError
from toolsift.ingest import (
    LoadedRecord,
    RawAgent,
    RawTool,
    RejectedRecord,
    detect_format,
    load_catalog,
    normalise_agent,
    normalise_tool,
)
from toolsift.ingest.loaders import LOADERS, get_loader
from toolsift.mappings.model import AgentDoc, ToolDoc

CATALOGS = Path(__file__).resolve().parents[2] / "resources" / "catalogs"


def records(path: Path, format: str | None = None) -> list[LoadedRecord]:
    return list(load_catalog(path, format))


def tools(path: Path) -> list[RawTool]:
    return [r for r in records(path) if isinstance(r, RawTool)]


def normalised(path: Path) -> tuple[list[ToolDoc | AgentDoc], list[CatalogRecordError]]:
    docs: list[ToolDoc | AgentDoc] = []
    errors: list[CatalogRecordError] = []
    for record in load_catalog(path):
        if isinstance(record, RejectedRecord):
            errors.append(record.to_error())
            continue
        try:
            if isinstance(record, RawAgent):
                docs.append(normalise_agent(record))
            else:
                docs.append(normalise_tool(record))
        except CatalogRecordError as exc:
            errors.append(exc)
    return docs, errors


# --- the registry ------------------------------------------------------------------------------------


def test_registry_lists_every_format_in_detection_priority() -> None:
    assert list(LOADERS) == ["mftr", "toolret", "mcp", "openai_functions", "openapi", "beir"]
    for name, loader in LOADERS.items():
        assert name == loader.NAME
        assert get_loader(name) is loader


def test_unknown_format_name_is_an_error_listing_the_known_ones() -> None:
    with pytest.raises(CatalogError, match=r"unknown catalog format 'csv'.*toolret.*beir"):
        get_loader("csv")


@pytest.mark.parametrize(
    ("file_name", "expected"),
    [
        ("toolret_duplicate_ids.json", "toolret"),
        ("mftr_standardized.json", "mftr"),
        ("mcp_servers.json", "mcp"),
        ("mcp_server_tools.json", "mcp"),
        ("openai_functions.json", "openai_functions"),
        ("openapi_petstore.yaml", "openapi"),
        ("beir_corpus.jsonl", "beir"),
    ],
)
def test_each_fixture_catalog_is_detected_as_its_format(file_name: str, expected: str) -> None:
    assert detect_format(CATALOGS / file_name) == expected


def test_truncated_list_is_still_detected_by_its_first_record() -> None:
    assert detect_format(CATALOGS / "broken.json") == "toolret"


def test_undetectable_file_names_the_path_and_the_known_formats(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some words\n", encoding="utf-8")
    with pytest.raises(CatalogError, match=r"notes\.txt.*known formats: mftr, toolret, mcp"):
        detect_format(path)


def test_undetectable_broken_json_reports_where_parsing_stopped(tmp_path: Path) -> None:
    path = tmp_path / "catalog.json"
    path.write_text('{"tools": [1, 2,\n', encoding="utf-8")
    with pytest.raises(CatalogError, match=r"catalog\.json.*not valid JSON.*line 2 column 1"):
        detect_format(path)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("tools.json", "", r"tools\.json' is empty: no tools to read"),
        ("tools.jsonl", "\n  \n", r"tools\.jsonl' is empty: no tools to read"),
        ("tools.json", "[]", r"is an empty list: no tools to read"),
        ("tools.json", "{}", r"is an empty object: no tools to read"),
        ("tools.json", '"a string"', r"expected a JSON list or object of tools at the top level, got a string"),
        ("tools.json", "42", r"expected a JSON list or object of tools at the top level, got a number"),
        ("tools.json", '["get_weather"]', r"expected a list of tool objects, but its first item is a string"),
        ("tools.json", '[{"title": "x"}]', r"its records have keys \['title'\], which no format recognises"),
        ("tools.json", '{"servers": []}', r"an object with keys \['servers'\], which no format recognises"),
    ],
)
def test_a_file_no_format_recognises_says_what_it_holds(tmp_path: Path, name: str, content: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CatalogError, match=message):
        detect_format(path)


def test_missing_file_is_a_catalog_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.json"
    with pytest.raises(CatalogError, match=r"nowhere\.json.*does not exist"):
        load_catalog(missing)
    with pytest.raises(CatalogError, match=r"nowhere\.json.*does not exist"):
        load_catalog(missing, "toolret")


def test_an_explicit_format_skips_detection() -> None:
    loaded = records(CATALOGS / "toolret_duplicate_ids.json", "toolret")
    assert [r.position for r in loaded] == ["record 0", "record 1", "record 2"]


# --- whole-file problems -----------------------------------------------------------------------------


def test_truncated_json_raises_with_line_and_column() -> None:
    with pytest.raises(CatalogError) as caught:
        records(CATALOGS / "broken.json")
    message = str(caught.value)
    assert "broken.json" in message
    assert "line 3 column" in message
    assert "truncated" in message


def test_top_level_of_the_wrong_type_is_a_catalog_error(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"id": "x", "documentation": {}}), encoding="utf-8")
    with pytest.raises(CatalogError, match=r"expected a JSON list of ToolRet records.*got an object"):
        records(path, "toolret")


def test_a_non_utf8_file_is_a_catalog_error(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_bytes(b'[{"id": "x", "documentation": {"name": "caf\xe9"}}]')
    with pytest.raises(CatalogError, match="not UTF-8"):
        records(path, "toolret")


# --- ToolRet -----------------------------------------------------------------------------------------


def test_toolret_record_becomes_a_tool_with_its_id_and_no_agent() -> None:
    first = tools(CATALOGS / "toolret_duplicate_ids.json")[0]
    assert first == RawTool(
        source="toolret/toolret_duplicate_ids",
        position="record 0",
        documentation={"name": "First", "description": "Came first."},
        tool_id="dup",
        agent_id=None,
    )


def test_duplicate_ids_are_both_yielded_for_the_pipeline_to_report() -> None:
    loaded = tools(CATALOGS / "toolret_duplicate_ids.json")
    assert [(t.tool_id, t.position) for t in loaded] == [
        ("dup", "record 0"),
        ("unique", "record 1"),
        ("dup", "record 2"),
    ]


def test_records_the_loader_cannot_form_are_yielded_as_rejected_with_their_position() -> None:
    rejected = [r for r in records(CATALOGS / "toolret_wrong_types.json") if isinstance(r, RejectedRecord)]
    assert [(r.position, r.field) for r in rejected] == [
        ("record 3", "id"),
        ("record 4", "documentation"),
        ("record 5", None),
    ]
    assert rejected[1].record_id == "doc-text"
    error = rejected[0].to_error()
    assert isinstance(error, CatalogRecordError)
    assert error.to_dict() == {
        "source": "toolret/toolret_wrong_types",
        "position": "record 3",
        "record_id": None,
        "field": "id",
        "reason": "the id must be a string or an integer, got an object",
    }


def test_a_bad_record_does_not_hide_the_good_ones_after_it() -> None:
    loaded = records(CATALOGS / "toolret_wrong_types.json")
    assert loaded[-1] == RawTool(
        "toolret/toolret_wrong_types",
        "record 6",
        {"name": "Fine", "description": "A good record among bad ones."},
        "fine",
        None,
    )


def test_integer_ids_are_written_out_as_text(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"id": 17, "documentation": {"name": "T"}}]), encoding="utf-8")
    (tool,) = tools(path)
    assert tool.tool_id == "17"


def test_source_label_is_format_and_catalog_folder_for_generic_file_names(tmp_path: Path) -> None:
    folder = tmp_path / "apibank"
    folder.mkdir()
    path = folder / "tools.json"
    path.write_text(json.dumps([{"id": "a", "documentation": {"name": "A"}}]), encoding="utf-8")
    assert tools(path)[0].source == "toolret/apibank"


# --- MCP ---------------------------------------------------------------------------------------------


def test_mcp_servers_yield_each_agent_before_its_tools() -> None:
    loaded = records(CATALOGS / "mcp_servers.json")
    kinds = [(type(r).__name__, r.position) for r in loaded]
    assert kinds == [
        ("RawAgent", "server 0"),
        ("RawTool", "server 0 tool 0"),
        ("RawTool", "server 0 tool 1"),
        ("RawAgent", "server 1"),
        ("RawTool", "server 1 tool 0"),
    ]


def test_mcp_server_becomes_an_agent_with_slug_id_tags_and_no_tool_lists() -> None:
    agent = records(CATALOGS / "mcp_servers.json")[0]
    assert isinstance(agent, RawAgent)
    assert agent.agent_id == "agent:weather-mcp-server"
    assert agent.name == "Weather MCP Server"
    assert agent.description == "Forecasts and current conditions."
    assert agent.tags == ("Discovery",)
    assert agent.documentation["tools"] == {"weather": {"server_name": "weather", "version": "0.1.0"}}
    assert agent.documentation["config"] == {
        "mcpServers": {"weather": {"command": "npx", "args": ["weather-mcp"]}}
    }


def test_an_mcp_server_carries_its_tools_names_for_its_overview() -> None:
    agents = [r for r in records(CATALOGS / "mcp_servers.json") if isinstance(r, RawAgent)]

    assert agents[0].tool_names == ("get_forecast", "get_alerts")
    single = records(CATALOGS / "mcp_server_tools.json")[0]
    assert isinstance(single, RawAgent)
    assert single.tool_names == ("add_note", "search_notes")  # the duplicate name once


def test_mcp_tool_ids_are_server_slug_slash_tool_name() -> None:
    loaded = tools(CATALOGS / "mcp_servers.json")
    assert [(t.tool_id, t.agent_id) for t in loaded] == [
        ("weather-mcp-server/get_forecast", "agent:weather-mcp-server"),
        ("weather-mcp-server/get_alerts", "agent:weather-mcp-server"),
        ("鸣潮-mcp-server/lookup", "agent:鸣潮-mcp-server"),
    ]


def test_mcp_server_with_a_plain_tool_list_and_several_categories() -> None:
    agent = records(CATALOGS / "mcp_servers.json")[3]
    assert isinstance(agent, RawAgent)
    assert agent.tags == ("Entertainment", "Games")
    assert "tools" not in agent.documentation


def test_mcp_server_without_a_name_rejects_it_and_its_tools(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text(
        json.dumps([{"name": "", "tools": [{"name": "t", "inputSchema": {}}]}]), encoding="utf-8"
    )
    loaded = records(path, "mcp")
    assert all(isinstance(r, RejectedRecord) for r in loaded)
    assert [r.position for r in loaded] == ["server 0", "server 0 tool 0"]


def test_single_server_tools_list_uses_server_info_as_the_agent() -> None:
    loaded = records(CATALOGS / "mcp_server_tools.json")
    agent = loaded[0]
    assert isinstance(agent, RawAgent)
    assert (agent.agent_id, agent.name, agent.position) == ("agent:notes-server", "Notes Server", "server")
    assert "tools" not in agent.documentation
    assert [(r.position, r.tool_id, r.agent_id) for r in loaded[1:] if isinstance(r, RawTool)] == [
        ("tool 0", "notes-server/add_note", "agent:notes-server"),
        ("tool 1", "notes-server/search_notes", "agent:notes-server"),
        ("tool 2", "notes-server/add_note", "agent:notes-server"),
    ]


def test_duplicate_tool_names_in_one_server_keep_the_same_id_and_are_not_merged() -> None:
    docs, errors = normalised(CATALOGS / "mcp_server_tools.json")
    assert errors == []
    ids = Counter(d.tool_id for d in docs if isinstance(d, ToolDoc))
    assert ids["notes-server/add_note"] == 2


def test_bare_tool_list_without_a_server_name_has_no_agent_and_ids_from_the_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "github-server.json"
    path.write_text(
        json.dumps([{"name": "create_issue", "description": "Open an issue.", "inputSchema": {}}]),
        encoding="utf-8",
    )
    assert detect_format(path) == "mcp"
    (tool,) = records(path)
    assert isinstance(tool, RawTool)
    assert (tool.tool_id, tool.agent_id, tool.source) == (
        "github-server/create_issue",
        None,
        "mcp/github-server",
    )


# --- OpenAI functions --------------------------------------------------------------------------------


def test_openai_functions_wrapped_and_bare_become_tools_named_by_their_function() -> None:
    loaded = tools(CATALOGS / "openai_functions.json")
    assert [(t.tool_id, t.agent_id, t.position) for t in loaded] == [
        ("get_weather", None, "record 0"),
        ("send_email", None, "record 1"),
    ]
    assert loaded[0].documentation["type"] == "function"


@pytest.mark.parametrize("wrapper", ["functions", None])
def test_openai_functions_under_functions_or_as_a_bare_list(tmp_path: Path, wrapper: str | None) -> None:
    items = [{"name": "ping", "description": "Ping a host.", "parameters": {"type": "object"}}]
    path = tmp_path / "defs.json"
    path.write_text(json.dumps({wrapper: items} if wrapper else items), encoding="utf-8")
    assert detect_format(path) == "openai_functions"
    assert [t.tool_id for t in tools(path)] == ["ping"]


# --- BEIR --------------------------------------------------------------------------------------------


def test_beir_lines_become_tools_with_line_positions_and_bad_lines_rejected() -> None:
    loaded = records(CATALOGS / "beir_corpus.jsonl")
    summary = [
        (type(r).__name__, r.position, r.tool_id if isinstance(r, RawTool) else None) for r in loaded
    ]
    assert summary == [
        ("RawTool", "line 1", "0"),
        ("RejectedRecord", "line 2", None),
        ("RawTool", "line 3", "2"),
        ("RejectedRecord", "line 4", None),
        ("RejectedRecord", "line 6", None),
        ("RawTool", "line 7", "7"),
    ]
    bad_json = loaded[1]
    assert isinstance(bad_json, RejectedRecord)
    assert bad_json.reason.startswith("not valid JSON")


def test_beir_documentation_is_the_line_object_as_given() -> None:
    first = tools(CATALOGS / "beir_corpus.jsonl")[0]
    assert set(first.documentation) == {"_id", "title", "text", "metadata"}
    assert first.source == "beir/beir_corpus"


# --- MFTR --------------------------------------------------------------------------------------------


def test_mftr_record_keeps_origin_documentation_and_carries_augmented_as_standardized() -> None:
    (tool,) = tools(CATALOGS / "mftr_standardized.json")
    assert tool.tool_id == "apibank_tool_0"
    assert tool.documentation["name"] == "GetUserToken"
    assert tool.standardized is not None
    assert tool.standardized["description"] == "Authenticate a user and return a token."


# --- the real benchmark catalogs ---------------------------------------------------------------------


def _counts(path: Path) -> Counter[str]:
    docs, errors = normalised(path)
    assert errors == []
    return Counter(type(d).__name__ for d in docs)


def test_livemcpbench_gives_70_agents_and_527_tools(datasets: Path) -> None:
    path = datasets / "livemcpbench" / "tools.json"
    assert detect_format(path) == "mcp"
    assert _counts(path) == Counter({"AgentDoc": 70, "ToolDoc": 527})


def test_livemcpbench_ids_are_unique_and_every_tool_has_a_known_agent(datasets: Path) -> None:
    docs, _ = normalised(datasets / "livemcpbench" / "tools.json")
    agent_ids = {d.agent_id for d in docs if isinstance(d, AgentDoc)}
    tool_docs = [d for d in docs if isinstance(d, ToolDoc)]
    assert len(agent_ids) == 70
    assert len({d.tool_id for d in tool_docs}) == 527
    assert {d.agent_id for d in tool_docs} == agent_ids


def test_toollens_corpus_gives_464_tools(datasets: Path) -> None:
    path = datasets / "toollens" / "corpus.jsonl"
    assert detect_format(path) == "beir"
    assert _counts(path) == Counter({"ToolDoc": 464})


def test_toolret_apibank_and_toolink_load_completely(datasets: Path) -> None:
    assert detect_format(datasets / "toolret" / "apibank" / "tools.json") == "toolret"
    assert _counts(datasets / "toolret" / "apibank" / "tools.json") == Counter({"ToolDoc": 101})
    assert _counts(datasets / "toolret" / "toolink" / "tools.json") == Counter({"ToolDoc": 1804})


def test_mftr_standardized_apibank_gives_101_tools_with_examples(datasets: Path) -> None:
    path = datasets / "mftr" / "apibank" / "standardized_tools.gpt-4o-mini.json"
    assert detect_format(path) == "mftr"
    docs, errors = normalised(path)
    assert errors == []
    assert len(docs) == 101
    assert all(isinstance(d, ToolDoc) and d.examples for d in docs)
    assert {d.source for d in docs} == {"mftr/apibank"}


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_a_lone_surrogate_escape_is_read_as_the_replacement_character_and_the_tool_is_kept(
        tmp_path: Path, suffix: str) -> None:
    """``"\\ud800"`` with no partner is valid JSON but no UTF-8 text can hold it: hashing, the screen and
    OpenSearch would choke on it. It is read as U+FFFD, in values and keys, and a real pair stays whole."""
    from toolsift.config import Settings
    from toolsift.ingest.pipeline import normalised_records, validate_catalog

    if suffix == ".json":
        text = ('[{"name": "srv", "description": "A server.", "tools": [{"name": "odd", '
                '"description": "Broken \\ud800 text \\udc00 and a real pair \\ud83d\\ude00.", '
                '"inputSchema": {"type": "object", "properties": {"k\\udfff": {"type": "string", '
                '"description": "A key with a lone low surrogate."}}}}]}]')
    else:
        text = '{"_id": "odd", "title": "odd", "text": "Broken \\ud800 text \\udc00 and a real pair \\ud83d\\ude00."}\n'
    path = tmp_path / f"catalog{suffix}"
    path.write_text(text, encoding="utf-8")

    report = validate_catalog(path, Settings())
    [doc] = [item for _, item in normalised_records(load_catalog(path), 100_000) if isinstance(item, ToolDoc)]

    assert report.rejected == [] and report.tools == 1
    assert "Broken \ufffd text \ufffd and a real pair \U0001f600." in doc.description
    assert doc.content_hash  # hashing encodes the text as UTF-8: it would raise on a surrogate
    json.dumps(dataclasses.asdict(doc), ensure_ascii=False).encode("utf-8")  # what goes to OpenSearch
