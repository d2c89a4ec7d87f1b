"""Deeply nested catalogs, generated: any depth is a document or a clear rejection, never a crash.

A hostile (or broken) catalog can nest a record's fields thousands of levels deep in a file of a
few kilobytes: lists in lists, objects in objects, JSON schemas in schemas, ``$ref`` chains that
inline one schema into the next, JSON text or a Python signature nested inside a string. Reading
such a catalog — every loader, and the whole first pass of an ingest (normalisation, content and
definition hashes, the screen) — ends in one of three ways only: the record is a document; it is
rejected naming its position and field (``nested deeper than N levels``, ``Settings.max_nesting_depth``),
also when it nests too deep for Python's own JSON parser; or, when such text is also broken (truncated),
a :class:`~toolsift.errors.CatalogError` names the file and the place. The other records of the catalog are never lost to it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolsift.config import Settings
from toolsift.errors import CatalogError
from toolsift.ingest.approvals import definition_hash
from toolsift.ingest.loaders import load_catalog
from toolsift.ingest.pipeline import normalised_records, validate_catalog
from toolsift.mappings.model import ToolDoc

LIMIT = Settings().max_nesting_depth

# --- deep JSON, written as text (building it as Python values and dumping them would itself recurse) ---


def nested(shape: str, depth: int) -> str:
    """``depth`` steps of one shape of nesting around a leaf, as JSON text (a step is one JSON level, two
    for the shapes in :data:`LEVELS_PER_STEP`)."""
    if shape == "list":
        return "[" * depth + '"x"' + "]" * depth
    if shape == "dict":
        return '{"a": ' * depth + '"x"' + "}" * depth
    if shape == "schema":  # a JSON schema whose one property is an object schema, and so on
        return '{"type": "object", "properties": {"p": ' * depth + '{"type": "string"}' + "}}" * depth
    if shape == "items":  # an array of arrays of ...
        return '{"type": "array", "items": ' * depth + '{"type": "string"}' + "}" * depth
    if shape == "allof":
        return '{"allOf": [' * depth + '{"type": "object", "properties": {"q": {"type": "string"}}}' + "]}" * depth
    if shape == "refs":  # objects that carry a $ref beside what they nest
        return '{"$ref": "#/nowhere", "items": ' * depth + '"x"' + "}" * depth
    raise AssertionError(shape)


def ref_chain(length: int) -> str:
    """OpenAPI ``components.schemas`` where S0 has a property of schema S1, S1 of S2, ... (JSON text)."""
    schemas = [
        f'"S{i}": {{"type": "object", "description": "level {i}", '
        f'"properties": {{"next": {{"$ref": "#/components/schemas/S{i + 1}"}}}}}}'
        for i in range(length)
    ]
    schemas.append(f'"S{length}": {{"type": "string"}}')
    return "{" + ", ".join(schemas) + "}"


GOOD_TOOL = '{"name": "good_tool", "description": "Finds the weather for a city.", "parameters": {"city": "string"}}'


@dataclass(frozen=True)
class Place:
    """Where in a catalog the deep value goes, and the field a rejection must then name."""

    fmt: str
    suffix: str
    template: str  # with @DEEP@ where the nested value goes
    field: str  # the field a depth rejection names
    kept_as_text: bool = False  # nesting inside a string: read as text, never rejected for depth


def _toolret(field: str) -> str:
    return (f'[{{"id": "good", "documentation": {GOOD_TOOL}}}, '
            f'{{"id": "deep", "documentation": {{"name": "deep_tool", "description": "Deep.", "{field}": @DEEP@}}}}]')


def _openapi(deep_path: str) -> str:
    """An OpenAPI document with a good operation at ``/good`` and ``deep_path`` (its JSON text) at ``/deep``."""
    return ('{"openapi": "3.0.0", "info": {"title": "Weather"}, "paths": {'
            '"/good": {"get": {"operationId": "good_tool", "summary": "Finds the weather."}}, '
            '"/deep": ' + deep_path + "}}")


PLACES = {
    "toolret-parameters": Place("toolret", ".json", _toolret("parameters"), "parameters"),
    "toolret-responses": Place("toolret", ".json", _toolret("responses"), "responses"),
    "toolret-description": Place("toolret", ".json", _toolret("description"), "description"),
    "toolret-examples": Place("toolret", ".json", _toolret("examples"), "examples"),
    "toolret-other": Place("toolret", ".json", _toolret("x_vendor"), "x_vendor"),
    "toolret-json-text": Place("toolret", ".json", _toolret("parameters").replace("@DEEP@", '"@DEEP@"'),
                               "parameters", kept_as_text=True),
    "mcp-inputschema": Place("mcp", ".json", (
        '[{"name": "Server", "description": "A server.", "tools": [' + GOOD_TOOL.replace('"parameters"', '"inputSchema"')
        + ', {"name": "deep_tool", "description": "Deep.", "inputSchema": @DEEP@}]}]'), "inputSchema"),
    "mcp-server-config": Place("mcp", ".json", (
        '[{"name": "Server", "description": "A server.", "config": @DEEP@, "tools": []}, '
        '{"name": "Other", "description": "Another.", "tools": ['
        + GOOD_TOOL.replace('"parameters"', '"inputSchema"') + "]}]"), "config"),
    "openai-parameters": Place("openai_functions", ".json", (
        '[{"type": "function", "function": ' + GOOD_TOOL + '}, '
        '{"type": "function", "function": {"name": "deep_tool", "description": "Deep.", "parameters": @DEEP@}}]'),
        "function.parameters"),
    "openapi-parameter-schema": Place("openapi", ".json", _openapi(
        '{"get": {"operationId": "deep_tool", "summary": "Deep.", '
        '"parameters": [{"name": "q", "in": "query", "schema": @DEEP@}]}}'), "parameters"),
    "openapi-response-schema": Place("openapi", ".json", _openapi(
        '{"get": {"operationId": "deep_tool", "summary": "Deep.", "responses": {"200": {'
        '"description": "ok", "content": {"application/json": {"schema": @DEEP@}}}}}}'), "responses"),
    "openapi-body-schema": Place("openapi", ".json", _openapi(
        '{"post": {"operationId": "deep_tool", "summary": "Deep.", "requestBody": {'
        '"content": {"application/json": {"schema": @DEEP@}}}}}'), "parameters"),
    "openapi-yaml-parameter-schema": Place("openapi", ".yaml", (
        'openapi: "3.0.0"\ninfo: {title: Weather}\npaths:\n'
        '  /good: {get: {operationId: good_tool, summary: Finds the weather.}}\n'
        '  /deep: {get: {operationId: deep_tool, summary: Deep., '
        'parameters: [{name: q, in: query, schema: @DEEP@}]}}\n'), "parameters"),
    "mftr-augmented": Place("mftr", ".json", (
        '[{"id": "good", "augmented": {"description": "Finds the weather."}, "origin_documentation": ' + GOOD_TOOL
        + '}, {"id": "deep", "augmented": {"description": "Deep.", "parameters": @DEEP@}, '
        '"origin_documentation": {"name": "deep_tool", "description": "Deep."}}]'), "standardized.parameters"),
    "beir-line": Place("beir", ".jsonl", (
        '{"_id": "good", "title": "good_tool", "text": "Finds the weather for a city."}\n'
        '{"_id": "deep", "title": "deep_tool", "text": "Deep.", "metadata": @DEEP@}\n'), "metadata"),
    "beir-toolbench-text": Place("beir", ".jsonl", (
        '{"_id": "good", "title": "good_tool", "text": "Finds the weather for a city."}\n'
        '{"_id": "deep", "text": "category_name:Data, tool_name:Deep, api_name:deep_tool, api_description:Deep., '
        'required_params: @DEEP@"}\n'), "required_params", kept_as_text=True),
}

SHAPES = ["list", "dict", "schema", "items", "allof", "refs"]
#: JSON levels one step of a shape adds (a schema's ``properties.p``, allOf's object and list): a record
#: "half the limit deep" counts its levels, not its steps.
LEVELS_PER_STEP = {"schema": 2, "allof": 2}
DEPTHS = st.one_of(
    st.integers(min_value=0, max_value=2000),
    st.sampled_from([LIMIT - 2, LIMIT - 1, LIMIT, LIMIT + 1, 300, 500, 999, 1000, 1500, 2000, 5000]),
)


def catalog(tmp_path: Path, place: Place, deep: str) -> Path:
    path = tmp_path / f"deep{place.suffix}"
    if place.kept_as_text:  # the nesting is text inside a JSON string
        deep = deep.replace('"', '\\"')
    text = place.template.replace("@DEEP@", deep)
    if place.suffix == ".yaml":
        text = text.replace('"x"', "x")
    path.write_text(text, encoding="utf-8")
    return path


def first_pass(path: Path, fmt: str) -> Any:
    """The ingest's first pass over the file, and what an ingest computes of every accepted document
    (its content hash, its pinned definition, the JSON sent to OpenSearch); or the one whole-file error."""
    try:
        report = validate_catalog(path, Settings(), fmt=fmt)
        for _, item in normalised_records(load_catalog(path, fmt), Settings().max_field_chars):
            if isinstance(item, ToolDoc):
                assert item.content_hash and definition_hash(item)
                json.dumps(asdict(item))
    except CatalogError as exc:
        if type(exc) is not CatalogError:
            raise
        assert str(path) in str(exc), f"a whole-file error must name the file: {exc}"
        assert "too deep to parse" in str(exc) or "not valid" in str(exc), exc
        return exc
    return report


def check(tmp_path: Path, place: Place, shape: str, depth: int) -> None:
    path = catalog(tmp_path, place, nested(shape, depth))
    result = first_pass(path, place.fmt)
    if isinstance(result, CatalogError):
        assert depth > LIMIT, f"a file {depth} levels deep must parse: {result}"
        return
    for reject in result.rejected:
        assert reject.position and reject.reason and reject.field, reject
        assert "deep" in str(reject) or "Server" in str(reject) or reject.field == "agent_id", reject
    assert result.tools >= 1, "the good record must be kept"
    depth_rejects = [r for r in result.rejected if "nested deeper than" in r.reason or "too deep to parse" in r.reason]
    for reject in depth_rejects:  # a JSONL line too deep for the parser is measured by scanning it
        assert f"nested deeper than {LIMIT} levels" in reject.reason or "too deep to parse" in reject.reason
        assert reject.field == place.field, reject
    if depth * LEVELS_PER_STEP.get(shape, 1) <= LIMIT // 2 or place.kept_as_text:
        assert not depth_rejects, depth_rejects
    # An OpenAPI $ref that points nowhere stands for its whole object (what it nests is dropped).
    dropped = place.fmt == "openapi" and shape == "refs"
    if depth > 2 * LIMIT and not place.kept_as_text and not dropped:
        assert depth_rejects, f"{depth} levels of {shape} under {place.field} must be rejected: {result.to_dict()}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(place=st.sampled_from(sorted(PLACES)), shape=st.sampled_from(SHAPES), depth=DEPTHS)
def test_any_nesting_in_any_format_is_a_document_or_a_rejection_naming_the_record_and_field(
    tmp_path: Path, place: str, shape: str, depth: int
) -> None:
    check(tmp_path, PLACES[place], shape, depth)


@pytest.mark.parametrize("depth", [LIMIT + 1, 300, 500, 800])
def test_a_toolret_record_500_levels_deep_is_rejected_naming_it_and_its_field(tmp_path: Path, depth: int) -> None:
    path = catalog(tmp_path, PLACES["toolret-parameters"], nested("list", depth))

    report = validate_catalog(path, Settings())

    (reject,) = report.rejected
    assert (reject.position, reject.record_id, reject.field) == ("record 1", "deep", "parameters")
    assert f"nested deeper than {LIMIT} levels (at parameters[0][0][0]" in str(reject)
    assert report.tools == 1


def test_a_record_nested_as_deep_as_the_limit_is_kept(tmp_path: Path) -> None:
    path = catalog(tmp_path, PLACES["toolret-parameters"], nested("list", LIMIT - 1))  # documentation is level 1

    report = validate_catalog(path, Settings())

    assert (report.tools, report.rejected) == (2, [])


def test_a_configured_limit_applies(tmp_path: Path) -> None:
    path = catalog(tmp_path, PLACES["toolret-parameters"], nested("dict", 100))

    assert len(validate_catalog(path, Settings()).rejected) == 1
    assert validate_catalog(path, Settings(max_nesting_depth=128)).rejected == []


@pytest.mark.parametrize("shape", ["list", "dict", "schema"])
def test_a_record_too_deep_for_the_parser_is_rejected_alone_naming_its_field(tmp_path: Path, shape: str) -> None:
    path = catalog(tmp_path, PLACES["toolret-parameters"], nested(shape, 5000))

    report = validate_catalog(path, Settings())

    assert report.tools == 1  # the good record beside it is read as usual
    [rejected] = report.rejected
    assert (rejected.record_id, rejected.field) == ("deep", "parameters")
    assert "nested deeper than" in rejected.reason


def test_text_too_deep_for_the_parser_and_broken_is_an_error_naming_the_file_and_the_place(tmp_path: Path) -> None:
    path = catalog(tmp_path, PLACES["toolret-parameters"], nested("list", 5000))
    path.write_text(path.read_text()[:-40], encoding="utf-8")  # cut off inside the deep record

    with pytest.raises(CatalogError) as raised:
        validate_catalog(path, Settings())

    assert str(raised.value).startswith(f"catalog file {str(path)!r} is not valid JSON: ")
    assert "line 1 column" in str(raised.value)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(length=st.one_of(st.integers(min_value=1, max_value=2000), st.sampled_from([10, 64, 65, 500])))
def test_an_openapi_ref_chain_of_any_length_is_inlined_only_as_deep_as_the_limit(tmp_path: Path, length: int) -> None:
    path = tmp_path / "chain.json"
    path.write_text(
        '{"openapi": "3.0.0", "info": {"title": "Chain"}, "components": {"schemas": ' + ref_chain(length) + '}, '
        '"paths": {"/c": {"post": {"operationId": "chained", "summary": "Follows the chain.", "requestBody": '
        '{"content": {"application/json": {"schema": {"$ref": "#/components/schemas/S0"}}}}}}}}', encoding="utf-8")

    report = first_pass(path, "openapi")

    assert not isinstance(report, CatalogError)
    assert not report.rejected and report.tools == 1  # past the limit a reference stays a reference


@pytest.mark.parametrize("text", [
    "def deep_tool(a: " + "-" * 3000 + "1): ...",  # a unary minus chain: ast.parse itself recurses
    "def deep_tool(a: " + "-" * 1800 + "1): ...",  # parses, but unparsing the annotation recurses
    "def deep_tool(a: " + "L[" * 199 + "int" + "]" * 199 + "): ...",
    "(a=" + "(" * 300 + "1" + ")" * 300 + ")",
])
def test_a_signature_nested_too_deep_to_read_is_kept_as_text_or_ignored(tmp_path: Path, text: str) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"id": "sig", "documentation": {"name": "deep_tool", "func_description": text}},
                                {"id": "sig2", "documentation": {"name": "other", "signature": text}}]))

    report = validate_catalog(path, Settings())

    assert (report.tools, report.rejected) == (2, [])


@pytest.mark.parametrize("fmt", ["toolret", "mcp", "openai_functions", "openapi", "beir"])
def test_a_record_nested_100_000_levels_costs_only_itself(tmp_path: Path, fmt: str) -> None:
    place = next(p for p in PLACES.values() if p.fmt == fmt and not p.kept_as_text)
    path = catalog(tmp_path, place, nested("list", 100_000))

    report = validate_catalog(path, Settings())  # the format is detected: sniffing must not crash either

    (reject,) = report.rejected
    assert reject.field == place.field and "nested" in reject.reason
    assert report.tools == 1
