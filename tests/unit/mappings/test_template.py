"""The index template is derived from the document model, so records, mapping and queries cannot drift."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from toolsift.mappings import (
    NESTED_VECTOR_FIELDS,
    SCHEMA_VERSION,
    VECTOR_FIELDS,
    AgentDoc,
    F,
    ParameterDoc,
    ToolDoc,
    build_mappings,
    index_body,
    mapping_fingerprint,
    tool_routing,
    vector_field,
)
from toolsift.mappings.template import BASELINE_ANALYZER, BASELINE_SIMILARITY, TEXT_ANALYZER, build_settings
from toolsift.query.builder import HIT_FIELDS, PARAMETER_SOURCE

DIM = 384


def _knn_vectors(props: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    for name, spec in props.items():
        path = f"{prefix}{name}"
        if spec.get("type") == "knn_vector":
            yield path, spec
        if "properties" in spec:
            yield from _knn_vectors(spec["properties"], f"{path}.")


def _resolve(props: dict[str, Any], dotted: str) -> dict[str, Any]:
    head, _, rest = dotted.partition(".")
    spec: dict[str, Any] = props[head]
    if rest and rest in spec.get("fields", {}):  # a multi-field such as name.keyword
        return dict(spec["fields"][rest])
    return _resolve(spec["properties"], rest) if rest else spec


@pytest.fixture(scope="module")
def props() -> dict[str, Any]:
    return dict(build_mappings(DIM)["properties"])


# --- every model field is mapped ---------------------------------------------------------------------------


@pytest.mark.parametrize("record", [ToolDoc, AgentDoc], ids=lambda r: r.__name__)
def test_every_document_field_is_mapped(record: type, props: dict[str, Any]) -> None:
    missing = [f.name for f in dataclasses.fields(record) if f.name not in props]
    assert missing == []


@pytest.mark.parametrize("record", [ToolDoc, AgentDoc], ids=lambda r: r.__name__)
def test_every_field_marked_vector_has_a_knn_vector_sibling(record: type, props: dict[str, Any]) -> None:
    for f in dataclasses.fields(record):
        if not f.metadata.get("vector"):
            continue
        path = vector_field(f.name)
        assert _resolve(props, path)["type"] == "knn_vector", path


def test_the_mapping_holds_exactly_the_model_fields_their_vectors_and_the_bookkeeping_fields(
    props: dict[str, Any],
) -> None:
    model = {f.name for r in (ToolDoc, AgentDoc) for f in dataclasses.fields(r)}
    top_vectors = {f"{n}_vector" for r in (ToolDoc, AgentDoc) for n in VECTOR_FIELDS if n in {f.name for f in dataclasses.fields(r)}}

    assert set(props) == model | top_vectors | {"entity", "relation", "content_hash"}


def test_the_field_name_registry_matches_the_model() -> None:
    for record in (ToolDoc, AgentDoc):
        for f in dataclasses.fields(record):
            assert getattr(F, f.name) == f.name
    assert vector_field("description") == "description_vector"
    assert vector_field("parameters") == F.param_vector == "parameters.vector"
    assert vector_field("examples") == F.example_vector == "examples.vector"
    assert NESTED_VECTOR_FIELDS == ("parameters", "examples")
    assert VECTOR_FIELDS == ("description", "response", "overview", "full_doc")


@pytest.mark.parametrize(
    "path",
    [*HIT_FIELDS, *PARAMETER_SOURCE, F.param_description, F.param_type, F.param_vector, F.example_text, F.example_vector],
)
def test_every_field_the_queries_name_exists_in_the_mapping(path: str, props: dict[str, Any]) -> None:
    assert "type" in _resolve(props, path)


# --- vectors --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [8, 384, 768])
def test_every_knn_vector_is_lucene_hnsw_cosine_with_the_given_dimension(dim: int) -> None:
    vectors = dict(_knn_vectors(build_mappings(dim)["properties"]))

    assert set(vectors) == {
        "description_vector", "response_vector", "overview_vector", "full_doc_vector", "parameters.vector",
        "examples.vector",
    }
    for path, spec in vectors.items():
        assert spec["dimension"] == dim, path
        assert spec["method"]["name"] == "hnsw", path
        assert spec["method"]["engine"] == "lucene", path
        assert spec["method"]["space_type"] == "cosinesimil", path


# --- nested, join, stored, baseline ------------------------------------------------------------------------------


def test_parameters_are_nested_documents_with_every_parameter_field_and_a_vector(props: dict[str, Any]) -> None:
    params = props["parameters"]

    assert params["type"] == "nested"
    assert set(params["properties"]) == {f.name for f in dataclasses.fields(ParameterDoc)} | {"vector", "tenants"}
    assert params["properties"]["required"] == {"type": "boolean"}
    assert params["properties"]["type"] == {"type": "keyword"}
    assert params["properties"]["name"]["fields"]["keyword"]["type"] == "keyword"


def test_examples_are_nested_documents_with_text_and_a_vector(props: dict[str, Any]) -> None:
    examples = props["examples"]

    assert examples["type"] == "nested"
    assert set(examples["properties"]) == {"text", "vector", "tenants"}
    assert examples["properties"]["text"] == {"type": "text", "analyzer": TEXT_ANALYZER}


def test_tools_agents_and_their_sub_documents_carry_tenants_for_filtering(props: dict[str, Any]) -> None:
    assert props["tenants"] == {"type": "keyword"}
    assert props["parameters"]["properties"]["tenants"] == {"type": "keyword"}
    assert props["examples"]["properties"]["tenants"] == {"type": "keyword"}


def test_the_join_field_makes_agents_parents_of_tools(props: dict[str, Any]) -> None:
    assert props["relation"] == {"type": "join", "relations": {"agent": "tool"}}


def test_raw_documentation_is_stored_but_not_indexed(props: dict[str, Any]) -> None:
    assert props["raw"] == {"type": "object", "enabled": False}


def test_full_doc_uses_the_baseline_analyzer_and_similarity(props: dict[str, Any]) -> None:
    assert props["full_doc"] == {"type": "text", "analyzer": BASELINE_ANALYZER, "similarity": BASELINE_SIMILARITY}


def test_the_mftr_text_fields_use_the_toolsift_analyzer(props: dict[str, Any]) -> None:
    for name in ("description", "response", "function", "when_to_use", "limitations"):
        assert props[name] == {"type": "text", "analyzer": TEXT_ANALYZER}, name
    assert props["name"]["analyzer"] == TEXT_ANALYZER
    assert props["name"]["fields"]["keyword"] == {"type": "keyword", "ignore_above": 256}
    assert props["tool_id"] == props["agent_id"] == props["source"] == {"type": "keyword"}


def test_every_analyzer_and_similarity_the_mapping_names_is_defined_in_the_settings(props: dict[str, Any]) -> None:
    settings = build_settings()
    analyzers = settings["analysis"]["analyzer"]
    filters = settings["analysis"]["filter"]
    tokenizers = settings["analysis"]["tokenizer"]

    def walk(p: dict[str, Any]) -> Iterator[dict[str, Any]]:
        for spec in p.values():
            yield spec
            if "properties" in spec:
                yield from walk(spec["properties"])

    for spec in walk(props):
        if "analyzer" in spec:
            assert spec["analyzer"] in analyzers
        if "similarity" in spec:
            assert spec["similarity"] in settings["similarity"]
    builtin_filters = {"lowercase"}
    for analyzer in analyzers.values():
        assert analyzer["tokenizer"] in tokenizers or analyzer["tokenizer"] == "standard"
        assert all(f in filters or f in builtin_filters for f in analyzer["filter"])
    assert settings["similarity"][BASELINE_SIMILARITY] == {"type": "BM25", "k1": 1.5, "b": 0.75}


def test_every_vector_is_kept_out_of_source() -> None:
    mappings = build_mappings(DIM)
    vectors = {path for path, _ in _knn_vectors(mappings["properties"])}

    assert set(mappings["_source"]["excludes"]) == vectors


def test_the_mapping_is_strict() -> None:
    assert build_mappings(DIM)["dynamic"] == "strict"


def test_settings_enable_knn_with_the_given_shards_and_replicas() -> None:
    index = build_settings(shards=3, replicas=2)["index"]

    assert index == {"knn": True, "number_of_shards": 3, "number_of_replicas": 2}


# --- index body, metadata and fingerprint ------------------------------------------------------------------------


def test_index_body_records_model_dimension_schema_and_fingerprint() -> None:
    body = index_body(dimension=DIM, embedding_model="all-MiniLM-L6-v2", shards=2, replicas=1)

    assert body["mappings"]["_meta"] == {
        "toolsift": {
            "schema_version": SCHEMA_VERSION,
            "mapping_fingerprint": mapping_fingerprint(DIM),
            "embedding_model": "all-MiniLM-L6-v2",
            "embedding_dim": DIM,
        }
    }
    assert body["settings"]["index"]["number_of_shards"] == 2
    assert body["settings"]["index"]["number_of_replicas"] == 1
    assert {k: v for k, v in body["mappings"].items() if k != "_meta"} == build_mappings(DIM)


def test_the_fingerprint_is_stable_and_changes_with_the_dimension() -> None:
    assert mapping_fingerprint(384) == mapping_fingerprint(384)
    assert mapping_fingerprint(384) != mapping_fingerprint(768)
    assert len(mapping_fingerprint(384)) == 16


def test_the_fingerprint_ignores_the_embedding_model_name() -> None:
    a = index_body(dimension=DIM, embedding_model="model-a")["mappings"]["_meta"]["toolsift"]
    b = index_body(dimension=DIM, embedding_model="model-b")["mappings"]["_meta"]["toolsift"]

    assert a["mapping_fingerprint"] == b["mapping_fingerprint"]


# --- content hash and routing ------------------------------------------------------------------------------------


def _tool(**changes: Any) -> ToolDoc:
    base = ToolDoc(
        tool_id="t1",
        name="get_weather",
        description="Current weather for a city.",
        parameters=(ParameterDoc(name="city", type="string", description="City name"),),
        examples=("weather in Paris",),
    )
    return dataclasses.replace(base, **changes)


def test_content_hash_is_stable_for_equal_documents() -> None:
    assert _tool().content_hash == _tool().content_hash
    assert len(_tool().content_hash) == 64


@pytest.mark.parametrize(
    "change",
    [
        {"description": "Weather forecast for a city."},
        {"parameters": (ParameterDoc(name="city", type="string", description="City name", required=False),)},
        {"examples": ("weather in Rome",)},
        {"agent_id": "weather-server"},
        {"raw": {"name": "get_weather"}},
    ],
    ids=lambda c: next(iter(c)),
)
def test_content_hash_changes_when_a_field_changes(change: dict[str, Any]) -> None:
    assert _tool(**change).content_hash != _tool().content_hash


def test_agent_content_hash_changes_with_its_description() -> None:
    agent = AgentDoc(agent_id="a1", name="Weather", description="Weather tools")

    assert agent.content_hash == AgentDoc(agent_id="a1", name="Weather", description="Weather tools").content_hash
    assert agent.content_hash != dataclasses.replace(agent, description="Maps tools").content_hash


def test_a_tool_is_routed_to_its_agent_or_else_to_itself() -> None:
    assert tool_routing(_tool(agent_id="a1")) == "a1"
    assert tool_routing(_tool()) == "t1"


def test_required_parameters_are_those_not_marked_optional() -> None:
    doc = _tool(parameters=(ParameterDoc(name="city"), ParameterDoc(name="units", required=False)))

    assert [p.name for p in doc.required_parameters] == ["city"]
