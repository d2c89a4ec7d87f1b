"""Messy catalogs, generated: every loader and the request path take any JSON a user's file may hold.

A user's catalog is what it is. Whatever the records hold — free-text parameter specs, dicts of
default values, numbers where text was expected, dangling references, control characters — reading it
never raises anything but a :class:`~toolsift.errors.CatalogError` naming the file (for a whole-file
problem) and never loses a record silently: each one comes out as a document or as a rejection that
names its position, and, when one field is to blame, the field. A record with an identity and some
text is kept. The same holds for requests: any text is a query or a clear ``BadQueryError``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolsift.errors import BadQueryError, CatalogError, CatalogRecordError
from toolsift.ingest.loaders import load_catalog
from toolsift.ingest.pipeline import normalised_records
from toolsift.mappings.model import SCHEMA_QUALITIES, AgentDoc, ToolDoc
from toolsift.query.builder import QueryBuilder
from toolsift.query.decompose import decompose
from toolsift.query.rewrite import parse_rewrite
from toolsift.search.request import SearchRequest

# Text with the characters real catalogs carry: words, identifiers, control and bidi characters.
_TEXT = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["N/A", "none", "", "  ", "text", "question, context", "image, optional text",
                     "pretrained model name", "['prompt']", "{'q': 'the query'}", "[not json",
                     "(a: str, b=1)", "def f(x, y=2): ...", "\x1b[31mred\x1b[0m", "\u202eevil", "a\x00b"]),
)
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), _TEXT)
_JSON = st.recursive(
    _SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_TEXT, inner, max_size=4)),
    max_leaves=12,
)
_KEYS = st.sampled_from([
    "name", "api_name", "description", "summary", "parameters", "api_arguments", "inputSchema", "arguments",
    "properties", "required", "required_params", "optional_params", "responses", "returns", "examples",
    "tags", "category", "when_to_use", "function", "$ref", "type",
])
_SPEC = st.one_of(
    _JSON,
    st.dictionaries(_TEXT, _SCALAR, max_size=5),  # a dict of default values
    st.fixed_dictionaries({"type": st.just("object"), "properties": st.dictionaries(_TEXT, _JSON, max_size=3),
                           "required": st.lists(_TEXT, max_size=3)}),
    st.lists(st.one_of(_TEXT, st.dictionaries(_TEXT, _JSON, max_size=2)), max_size=3),
)
_DOCUMENTATION = st.dictionaries(_KEYS, st.one_of(_JSON, _SPEC), max_size=6)
_ID = st.one_of(st.text(max_size=12), st.integers(), st.none(), st.booleans(), st.lists(st.integers(), max_size=2))


def _catalog(fmt: str, records: list[Any]) -> Any:
    """Generated records in the shape of one catalog format (ids and names where the format has them)."""
    if fmt == "toolret":
        return [{"id": rid, "documentation": doc, "type": "web"} for rid, doc in records]
    if fmt == "mcp":
        return [{"name": "Server", "description": "A server.", "tools": [
            {"name": rid, "description": doc.get("description"), "inputSchema": doc.get("inputSchema", doc)}
            for rid, doc in records
        ]}]
    if fmt == "openai_functions":
        return [{"type": "function", "function": {"name": rid, **doc}} for rid, doc in records]
    if fmt == "openapi":
        return {"openapi": "3.0.0", "info": {"title": "Generated"}, "paths": {
            f"/p{index}": {"get": {"operationId": rid, "summary": doc.get("summary"),
                                   "parameters": doc.get("parameters"), "responses": doc.get("responses")}}
            for index, (rid, doc) in enumerate(records)
        }}
    if fmt == "mftr":
        return [{"id": rid, "augmented": doc, "origin_documentation": doc} for rid, doc in records]
    raise AssertionError(fmt)


def _read(path: Path, fmt: str) -> list[Any]:
    """Everything reading the catalog gives: documents and rejections (or the one whole-file error)."""
    try:
        return [item for _, item in normalised_records(load_catalog(path, fmt), 100_000)]
    except CatalogError as exc:
        assert str(path) in str(exc), f"a whole-file error must name the file: {exc}"
        return [exc]


_FORMATS = st.sampled_from(["toolret", "mcp", "openai_functions", "openapi", "mftr"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fmt=_FORMATS, records=st.lists(st.tuples(_ID, _DOCUMENTATION), min_size=1, max_size=4))
def test_any_generated_catalog_reads_without_a_crash_and_names_every_rejection(
    tmp_path: Path, fmt: str, records: list[Any]
) -> None:
    path = tmp_path / f"{fmt}.json"
    path.write_text(json.dumps(_catalog(fmt, records)), encoding="utf-8")
    for item in _read(path, fmt):
        if isinstance(item, CatalogError):
            continue
        if isinstance(item, CatalogRecordError):
            assert item.position and item.reason and item.source
            assert item.field is not None or item.reason.startswith(("expected ", "the record has no ")), item
            assert str(item).startswith(f"{item.source} {item.position}")
            continue
        assert isinstance(item, (ToolDoc, AgentDoc))
        if isinstance(item, ToolDoc):
            assert item.tool_id and item.name
            assert item.schema_quality in SCHEMA_QUALITIES
            assert all(note.startswith("field '") for note in item.schema_notes)
            assert (item.schema_quality == "declared") or item.schema_notes


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tool_id=st.text(alphabet=st.characters(categories=["L", "N"]), min_size=1, max_size=10),
       name=st.text(min_size=1, max_size=20).filter(lambda t: any(c.isalnum() for c in t)), spec=_SPEC)
def test_a_record_with_an_id_and_some_text_is_always_kept(tmp_path: Path, tool_id: str, name: str, spec: Any) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"id": tool_id, "documentation": {"name": name, "parameters": spec}}]))
    (item,) = _read(path, "toolret")
    assert isinstance(item, ToolDoc), item


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200))
def test_any_request_text_is_a_query_or_a_clear_bad_query_error(text: str) -> None:
    try:
        request = SearchRequest(query=text)
    except BadQueryError as exc:
        assert "\x1b" not in str(exc) and "\x00" not in str(exc)  # never echoed raw
        return
    structured = decompose(request.query)
    vectors = {text: [0.0] * 4 for text in structured.all_texts()}  # the embedding of every text it searches with
    for retriever in ("bm25", "hybrid"):
        body = QueryBuilder(field_weights={"description": 1.0, "parameters": 0.5}).candidates_body(
            structured, vectors, retriever
        )
        json.dumps(body)  # what goes to OpenSearch is plain JSON


@settings(max_examples=200, deadline=None)
@given(value=_JSON)
def test_any_rewrite_answer_is_a_structured_query_or_a_bad_query_error(value: Any) -> None:
    try:
        query = parse_rewrite(value, "the request")
    except BadQueryError:
        return
    assert query.tool_needs
