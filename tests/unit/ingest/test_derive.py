"""Rule-based expansion fills the fields a catalog left empty, from the documentation's own words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from toolsift.ingest.derive import derive_fields, identifier_words
from toolsift.ingest.loaders import load_catalog
from toolsift.ingest.normalise import normalise_tool
from toolsift.ingest.raw_records import RawTool
from toolsift.mappings.model import ParameterDoc

TOOLINK_SIGNATURE = "```python\ndef multiply_fractions(fraction_1, fraction_2):\n    ...\n    return (numerator, denominator)\n```"


def derive(view: dict[str, Any], **fields: Any) -> Any:
    values: dict[str, Any] = {"name": view.get("name", "tool"), "description": "", "parameters": (),
                              "response": "", "examples": (), "tags": ()}
    values.update(fields)
    return derive_fields(view, **values)


def test_identifiers_become_lower_case_words() -> None:
    assert identifier_words("builds_betaTesters_getToManyRelated") == "builds beta testers get to many related"
    assert identifier_words("fields[betaTesters]") == "fields beta testers"
    assert identifier_words("getHTTPResponse") == "get http response"
    assert identifier_words("get-weread_rank") == "get weread rank"


def test_a_toolink_tool_gets_its_name_as_a_user_intent_and_no_response() -> None:
    description = ("This method takes two arguments, 'fraction_1' and 'fraction_2'. "
                   "It returns the result of multiplying the two fractions.")
    derived = derive({"name": "multiply_fractions", "func_description": TOOLINK_SIGNATURE},
                     description=description)
    assert derived.examples == ("multiply fractions",)
    assert derived.fields == ("examples",)  # a return type or a repeated "returns" clause is not a response


def test_an_openapi_operation_without_text_is_described_by_its_method_path_tags_and_parameters() -> None:
    view = {"name": "builds_betaTesters_getToManyRelated", "method": "GET",
            "path": "/v1/builds/{id}/betaTesters"}
    derived = derive(view, parameters=(ParameterDoc(name="id"), ParameterDoc(name="limit", required=False)),
                     response="200 List of BetaTesters", tags=("Builds",))
    assert derived.description == (
        "builds beta testers get to many related. GET v1 builds beta testers (id). Tags: Builds. "
        "Parameters: id, limit. Returns: 200 List of BetaTesters.")
    assert derived.fields == ("description", "examples")


def test_fields_the_catalog_filled_are_never_replaced() -> None:
    derived = derive({"name": "f", "func_description": TOOLINK_SIGNATURE}, description="Adds. It returns x.",
                     response="a number", examples=("add numbers",))
    assert (derived.description, derived.examples, derived.fields) == ("", (), ())


@given(st.dictionaries(st.sampled_from(["name", "func_description", "signature", "method", "path"]),
                       st.text(max_size=60)),
       st.text(max_size=80))
def test_any_documentation_derives_text_without_raising(view: dict[str, Any], description: str) -> None:
    derived = derive(view, name=view.get("name") or "n", description=description)
    assert all(isinstance(value, str) for value in (derived.description, *derived.examples))
    assert set(derived.fields) <= {"description", "examples"}


def test_a_large_spec_with_operation_ids_only_gets_a_description_for_every_operation(tmp_path: Path) -> None:
    spec = {"openapi": "3.0.0", "info": {"title": "Store", "version": "1"}, "paths": {
        "/v1/builds/{id}/betaTesters": {"get": {"operationId": "builds_betaTesters_getToManyRelated",
                                                "tags": ["Builds"], "responses": {"200": {"description": "ok"}}}},
        "/v1/apps": {"post": {"operationId": "apps_createInstance", "tags": ["Apps"]}},
    }}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    tools = [normalise_tool(r) for r in load_catalog(path) if isinstance(r, RawTool)]
    assert [t.derived for t in tools] == [("description", "examples"), ("description", "examples")]
    assert tools[1].description == "apps create instance. POST v1 apps. Tags: Apps."


def test_derived_examples_are_indexed_for_their_words_only(embedder: Any) -> None:
    from toolsift.ingest.embed import document_texts, to_index_documents

    tool = normalise_tool(RawTool(source="t", position="1", tool_id=None, agent_id=None, documentation={
        "name": "multiply_fractions", "func_description": TOOLINK_SIGNATURE,
        "description": "It returns the product of two fractions."}))
    body = to_index_documents(embedder, [tool])[0]

    assert tool.derived == ("examples",) and tool.response == ""
    assert "multiply fractions" not in document_texts(tool)
    assert body["examples"] == [{"text": "multiply fractions"}]
    assert "description_vector" in body


def test_a_derived_description_keeps_its_vector_as_the_only_text_the_tool_has(embedder: Any) -> None:
    from toolsift.ingest.embed import to_index_documents

    tool = normalise_tool(RawTool(source="t", position="1", tool_id=None, agent_id=None, documentation={"name": "get_weather"}))
    body = to_index_documents(embedder, [tool])[0]
    assert body["description"] == "get weather." and "description_vector" in body


def test_a_reranker_reads_a_derived_description() -> None:
    from toolsift.mappings.model import rerank_text

    source = {"name": "get_weather", "description": "get weather.", "derived": ["description", "examples"]}
    assert rerank_text(source) == "name: get_weather\ndescription: get weather."
