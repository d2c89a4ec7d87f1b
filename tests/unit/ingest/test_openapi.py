"""OpenAPI 3 specs: one tool per operation, the API as the agent, references resolved safely."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolsift.errors import CatalogError
from toolsift.ingest import RawAgent, RawTool, detect_format, load_catalog, normalise_agent, normalise_tool
from toolsift.ingest.loaders import openapi

SPEC = Path(__file__).resolve().parents[2] / "resources" / "catalogs" / "openapi_petstore.yaml"


def loaded(path: Path = SPEC) -> tuple[list[RawAgent], dict[str, RawTool]]:
    agents: list[RawAgent] = []
    tools: dict[str, RawTool] = {}
    for record in load_catalog(path, "openapi"):
        if isinstance(record, RawAgent):
            agents.append(record)
        elif isinstance(record, RawTool):
            tools[record.position] = record
    return agents, tools


def tool(position: str) -> RawTool:
    return loaded()[1][position]


def parameters(position: str) -> list[dict[str, Any]]:
    params = tool(position).documentation["parameters"]
    assert isinstance(params, list)
    return params


def write_spec(tmp_path: Path, spec: dict[str, Any], name: str = "api.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(spec), encoding="utf-8")
    return path


# --- detection and whole-file errors ----------------------------------------------------------------


def test_yaml_and_json_specs_are_detected(tmp_path: Path) -> None:
    assert detect_format(SPEC) == "openapi"
    as_json = write_spec(tmp_path, yaml.safe_load(SPEC.read_text(encoding="utf-8")))
    assert openapi.detect(as_json)


def test_json_and_yaml_forms_of_one_spec_give_the_same_tools(tmp_path: Path) -> None:
    # json.dumps writes YAML's integer status code 200 as the key "200", as a JSON spec has it.
    as_json = write_spec(tmp_path, yaml.safe_load(SPEC.read_text(encoding="utf-8")), "openapi_petstore.json")
    _, from_yaml = loaded()
    _, from_json = loaded(as_json)
    assert [t.documentation for t in from_json.values()] == [t.documentation for t in from_yaml.values()]
    assert [t.tool_id for t in from_json.values()] == [t.tool_id for t in from_yaml.values()]


def test_a_swagger_2_spec_is_refused_with_a_hint(tmp_path: Path) -> None:
    path = write_spec(tmp_path, {"swagger": "2.0", "info": {"title": "Old"}, "paths": {}})
    assert detect_format(path) == "openapi"
    with pytest.raises(CatalogError, match=r"Swagger 2\.0.*only OpenAPI 3"):
        list(load_catalog(path))


def test_an_unknown_openapi_version_is_refused(tmp_path: Path) -> None:
    path = write_spec(tmp_path, {"openapi": "2.5", "info": {"title": "X"}, "paths": {}})
    with pytest.raises(CatalogError, match="expected an OpenAPI 3 spec"):
        list(load_catalog(path))


def test_invalid_yaml_reports_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "api.yaml"
    path.write_text("openapi: 3.0.0\ninfo:\n  title: [unclosed\n", encoding="utf-8")
    with pytest.raises(CatalogError, match=r"api\.yaml.*not valid YAML.*line 4 column 1"):
        list(load_catalog(path))


def test_paths_that_are_not_an_object_are_a_catalog_error(tmp_path: Path) -> None:
    path = write_spec(tmp_path, {"openapi": "3.0.0", "info": {"title": "X"}, "paths": []})
    with pytest.raises(CatalogError, match="'paths' must be an object"):
        list(load_catalog(path))


# --- the agent and the tools -------------------------------------------------------------------------


def test_the_api_is_the_agent_and_is_yielded_first() -> None:
    records = list(load_catalog(SPEC))
    assert isinstance(records[0], RawAgent)
    agent = records[0]
    assert (agent.agent_id, agent.name, agent.description, agent.position) == (
        "agent:pet-store",
        "Pet Store",
        "A sample pet store.",
        "info",
    )
    assert set(agent.documentation) == {"openapi", "info"}
    assert normalise_agent(agent).agent_id == "agent:pet-store"


def test_one_tool_per_operation_with_ids_under_the_api_slug() -> None:
    _, tools = loaded()
    assert {pos: (t.tool_id, t.agent_id) for pos, t in tools.items()} == {
        "paths./pets.get": ("pet-store/listPets", "agent:pet-store"),
        "paths./pets.post": ("pet-store/post-pets", "agent:pet-store"),
        "paths./pets/{petId}.get": ("pet-store/showPetById", "agent:pet-store"),
        "paths./pets/{petId}.delete": ("pet-store/deletePet", "agent:pet-store"),
    }


def test_an_operation_without_operation_id_is_named_by_method_and_path() -> None:
    assert tool("paths./pets.post").documentation["name"] == "POST /pets"


def test_documentation_joins_summary_and_description_and_keeps_method_path_tags() -> None:
    documentation = tool("paths./pets.get").documentation
    assert documentation["name"] == "listPets"
    assert (documentation["method"], documentation["path"]) == ("GET", "/pets")
    assert documentation["description"] == (
        "List all pets\n\nReturns the pets the store has, a page at a time."
    )
    assert documentation["tags"] == ["pets"]


def test_a_spec_without_a_title_has_no_agent_and_unprefixed_ids(tmp_path: Path) -> None:
    spec = {
        "openapi": "3.1.0",
        "info": {"version": "1"},
        "paths": {
            "/ping": {"summary": "Health check.", "get": {"responses": {"200": {"description": "OK"}}}}
        },
    }
    agents, tools = loaded(write_spec(tmp_path, spec))
    assert agents == []
    ping = tools["paths./ping.get"]
    assert (ping.tool_id, ping.agent_id) == ("get-ping", None)
    assert ping.documentation["description"] == "Health check."


# --- parameters --------------------------------------------------------------------------------------


def test_path_level_parameters_are_merged_into_each_operation() -> None:
    names = [(p["name"], p["in"]) for p in parameters("paths./pets/{petId}.delete")]
    assert names == [("petId", "path"), ("X-Trace", "header")]


def test_an_operation_parameter_overrides_the_path_level_one_of_the_same_name_and_place() -> None:
    trace = [p for p in parameters("paths./pets/{petId}.get") if p["name"] == "X-Trace"]
    assert trace == [
        {"name": "X-Trace", "in": "header", "required": True,
         "description": "Trace id (operation level).", "schema": {"type": "string"}}
    ]
    delete_trace = [p for p in parameters("paths./pets/{petId}.delete") if p["name"] == "X-Trace"]
    assert delete_trace[0]["required"] is False


def test_path_parameters_are_always_required_and_others_follow_their_required_flag() -> None:
    by_name = {p["name"]: p["required"] for p in parameters("paths./pets/{petId}.delete")}
    assert by_name == {"petId": True, "X-Trace": False}


def test_a_referenced_parameter_is_resolved() -> None:
    assert parameters("paths./pets.get") == [
        {"name": "limit", "in": "query", "required": False,
         "description": "How many pets to return at one time (max 100).",
         "schema": {"type": "integer", "format": "int32"}}
    ]


def test_request_body_properties_become_body_parameters_required_per_the_schema() -> None:
    body = [(p["name"], p["in"], p["required"]) for p in parameters("paths./pets.post")]
    assert body == [("name", "body", True), ("tag", "body", False)]


def test_a_body_that_is_not_an_object_becomes_one_body_parameter(tmp_path: Path) -> None:
    spec = {
        "openapi": "3.0.0",
        "info": {"title": "Uploads"},
        "paths": {"/files": {"put": {
            "operationId": "upload",
            "requestBody": {
                "required": True,
                "description": "The file bytes.",
                "content": {
                    "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
                },
            },
        }}},
    }
    _, tools = loaded(write_spec(tmp_path, spec))
    assert tools["paths./files.put"].documentation["parameters"] == [
        {"name": "body", "in": "body", "required": True, "description": "The file bytes.",
         "schema": {"type": "string", "format": "binary"}}
    ]


def test_all_of_body_schemas_are_merged(tmp_path: Path) -> None:
    spec = {
        "openapi": "3.0.0",
        "info": {"title": "Merge"},
        "components": {"schemas": {"Base": {"type": "object", "required": ["id"],
                                            "properties": {"id": {"type": "string"}}}}},
        "paths": {"/items": {"post": {
            "operationId": "create",
            "requestBody": {"content": {"application/json": {"schema": {"allOf": [
                {"$ref": "#/components/schemas/Base"},
                {"type": "object", "properties": {"label": {"type": "string"}}},
            ]}}}},
        }}},
    }
    _, tools = loaded(write_spec(tmp_path, spec))
    params = tools["paths./items.post"].documentation["parameters"]
    assert [(p["name"], p["required"]) for p in params] == [("id", True), ("label", False)]


# --- references --------------------------------------------------------------------------------------


def test_a_self_reference_becomes_a_circular_marker() -> None:
    schema = tool("paths./pets/{petId}.get").documentation["responses"]["200"]["schema"]
    assert schema["properties"]["parent"] == {"$ref": "#/components/schemas/Pet", "circular": True}


def test_a_cycle_through_two_schemas_becomes_a_circular_marker() -> None:
    schema = tool("paths./pets/{petId}.get").documentation["responses"]["200"]["schema"]
    owner = schema["properties"]["owner"]
    assert owner["properties"]["pets"]["items"] == {"$ref": "#/components/schemas/Pet", "circular": True}


def test_a_reference_that_points_nowhere_is_marked_unresolved() -> None:
    default = tool("paths./pets/{petId}.get").documentation["responses"]["default"]
    assert default == {
        "description": "Unexpected error",
        "schema": {"$ref": "#/components/schemas/Missing", "unresolved": True},
    }


def _chain(length: int) -> dict[str, Any]:
    """Schemas S0 → S1 → ... → S<length> (each an object whose ``next`` property is the next one)."""
    schemas: dict[str, Any] = {f"S{i}": {"type": "object", "properties": {"next": {"$ref": f"#/components/schemas/S{i + 1}"}}}
                               for i in range(length)}
    schemas[f"S{length}"] = {"type": "string", "description": "the end"}
    return {"openapi": "3.0.0", "info": {"title": "Chain"}, "components": {"schemas": schemas}, "paths": {"/c": {"get": {
        "operationId": "chained", "responses": {"200": {"description": "ok", "content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/S0"}}}}}}}}}


def test_a_short_reference_chain_is_inlined_whole(tmp_path: Path) -> None:
    (tool_record,) = loaded(write_spec(tmp_path, _chain(5)))[1].values()
    schema = tool_record.documentation["responses"]["200"]["schema"]
    for _ in range(5):
        schema = schema["properties"]["next"]
    assert schema == {"type": "string", "description": "the end"}


def test_a_long_reference_chain_is_inlined_only_as_deep_as_a_record_may_nest(tmp_path: Path) -> None:
    (tool_record,) = loaded(write_spec(tmp_path, _chain(60)))[1].values()
    schema, levels = tool_record.documentation["responses"]["200"]["schema"], 0
    while "properties" in schema:
        schema, levels = schema["properties"]["next"], levels + 1
    assert schema["truncated"] is True and schema["$ref"] == f"#/components/schemas/S{levels}"
    assert 5 < levels < 20  # documentation → responses → 200 → schema, then two levels per link
    assert normalise_tool(tool_record).tool_id == "chain/chained"


def test_yaml_aliases_that_expand_a_kilobyte_into_millions_of_values_are_refused(tmp_path: Path) -> None:
    lines = ['openapi: "3.0.0"', "info: {title: Laughs}", 'x-0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"x-{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 9)]  # 10^9 values
    lines.append("paths: {/x: {get: {operationId: x, parameters: [{name: q, in: query, schema: {default: *l8}}]}}}")
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join(lines), encoding="utf-8")

    with pytest.raises(CatalogError, match=r"laughs\.yaml.*the YAML expands to too many values"):
        list(load_catalog(path, "openapi"))


def test_yaml_aliases_used_as_specs_use_them_still_load(tmp_path: Path) -> None:
    path = tmp_path / "api.yaml"
    path.write_text('openapi: "3.0.0"\ninfo: {title: Pets}\nx-id: &id {name: id, in: path, schema: {type: string}}\n'
                    "paths:\n  /a/{id}: {get: {operationId: a, parameters: [*id]}}\n"
                    "  /b/{id}: {get: {operationId: b, parameters: [*id]}}\n", encoding="utf-8")

    tools = loaded(path)[1]

    assert [t.documentation["parameters"][0]["name"] for t in tools.values()] == ["id", "id"]


def test_yaml_nested_too_deep_to_parse_is_a_catalog_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text('openapi: "3.0.0"\ninfo: {title: Deep}\npaths: {/x: {get: {operationId: x, x-deep: '
                    + "[" * 5000 + "]" * 5000 + "}}}\n", encoding="utf-8")

    with pytest.raises(CatalogError, match=r"deep\.yaml.* is too deep to parse"):
        list(load_catalog(path, "openapi"))


def test_an_external_reference_is_left_as_it_is(tmp_path: Path) -> None:
    spec = {
        "openapi": "3.0.0",
        "info": {"title": "Ext"},
        "paths": {"/a": {"get": {"operationId": "a", "responses": {
            "200": {
                "description": "OK",
                "content": {"application/json": {"schema": {"$ref": "other.yaml#/Pet"}}},
            }
        }}}},
    }
    _, tools = loaded(write_spec(tmp_path, spec))
    assert tools["paths./a.get"].documentation["responses"]["200"]["schema"] == {"$ref": "other.yaml#/Pet"}


def test_a_path_item_given_by_reference_is_followed(tmp_path: Path) -> None:
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "Refs"},
        "paths": {"/b": {"$ref": "#/components/pathItems/B"}},
        "components": {"pathItems": {"B": {"get": {"operationId": "b", "summary": "Bee."}}}},
    }
    _, tools = loaded(write_spec(tmp_path, spec))
    assert tools["paths./b.get"].tool_id == "refs/b"


def test_yaml_integer_status_codes_become_text_keys() -> None:
    assert list(tool("paths./pets.get").documentation["responses"]) == ["200"]


# --- normalised ------------------------------------------------------------------------------------


def test_an_operation_normalises_into_a_tool_document() -> None:
    document = normalise_tool(tool("paths./pets/{petId}.get"))
    assert document.name == "showPetById"
    assert document.agent_id == "agent:pet-store"
    assert document.source == "openapi/openapi_petstore"
    assert [(p.name, p.type, p.required) for p in document.parameters] == [
        ("petId", "string", True),
        ("X-Trace", "string", True),
    ]
    assert document.response == (
        "200 (object): The pet {id (integer): Unique id of the pet.; name (string): The pet's name.; "
        "parent (Pet); owner (object) {name (string); pets (array)}}; default: Unexpected error"
    )
    assert document.tags == ()


def test_operation_tags_become_tool_tags() -> None:
    assert normalise_tool(tool("paths./pets.get")).tags == ("pets",)


@pytest.mark.parametrize("paths", [None, {}])
def test_a_spec_with_no_paths_is_a_catalog_error_not_an_empty_agent(tmp_path: Path, paths: Any) -> None:
    spec: dict[str, Any] = {"openapi": "3.0.0", "info": {"title": "Empty"}}
    if paths is not None:
        spec["paths"] = paths
    with pytest.raises(CatalogError, match="the OpenAPI spec has no paths, so no operation to index"):
        list(load_catalog(write_spec(tmp_path, spec)))


def test_paths_without_any_operation_are_a_catalog_error(tmp_path: Path) -> None:
    spec = {"openapi": "3.0.0", "info": {"title": "X"}, "paths": {"/pets": {"parameters": []}}}
    with pytest.raises(CatalogError, match="paths have no operations"):
        list(load_catalog(write_spec(tmp_path, spec)))


def test_a_dangling_parameter_reference_is_kept_as_text_naming_the_reference(tmp_path: Path) -> None:
    spec = {"openapi": "3.0.0", "info": {"title": "X"}, "paths": {"/pets": {"get": {
        "operationId": "listPets", "summary": "List pets.",
        "parameters": [{"$ref": "#/components/parameters/Gone"}]}}}}
    tool = next(normalise_tool(r) for r in load_catalog(write_spec(tmp_path, spec)) if isinstance(r, RawTool))
    assert tool.schema_quality == "text"
    assert "a reference that does not resolve: '#/components/parameters/Gone'" in tool.schema_notes[0]
