"""The side indices' mappings are derived from their records, as the tool index's is from ToolDoc.

The bodies are pinned byte for byte (``json.dumps`` in order) to what the hand-written bodies were
before they were derived, so existing indices keep matching what toolsift creates.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

import pytest

from toolsift.errors import ToolsiftError
from toolsift.mappings import (
    FIELD_KINDS,
    EvalRunDoc,
    JudgmentDoc,
    QuerySetDoc,
    build_settings,
    doc_field,
    eval_runs_index_body,
    field_mapping,
    judgments_index_body,
    query_sets_index_body,
    record_properties,
    side_index_body,
)
from toolsift.learning.querylog_doc import QueryLogDoc, query_log_index_body
from toolsift.sets.history_doc import HistoryDoc, history_index_body

KEYWORD = {"type": "keyword"}
FLOAT = {"type": "float"}
RAW_TEXT = {"type": "text", "fields": {"raw": {"type": "keyword", "ignore_above": 1024}}}
STORED = {"type": "object", "enabled": False}
SETTINGS = {"index": {"number_of_shards": 1, "auto_expand_replicas": "0-1"}}


def hand_written(schema: str, version: int, properties: dict[str, Any], *, settings: dict[str, Any] = SETTINGS,
                 meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """A body as it was written by hand: ``settings``, then a strict mapping whose ``_meta`` names the
    ``schema``, its ``version`` and ``meta``, and ``properties`` (in this order, as ``json.dumps`` sees it)."""
    toolsift = {"schema": schema, "schema_version": version, **(meta or {})}
    return {"settings": settings, "mappings": {"dynamic": "strict", "_meta": {"toolsift": toolsift}, "properties": properties}}


#: Each side index: (its record, its body, field → the mapping's type).
FIELD_TYPES: dict[str, tuple[type, dict[str, Any], dict[str, str]]] = {
    "querylog": (QueryLogDoc, query_log_index_body(), {
        "timestamp": "date", "request": "text", "level": "keyword", "method": "keyword",
        "retriever": "keyword", "index": "keyword", "ranker": "keyword", "reranker": "keyword",
        "weights_version": "keyword", "source": "keyword", "degraded": "boolean",
        "degraded_reason": "text", "latency_ms": "float", "tool_ids": "keyword", "top_tool": "keyword",
        "agent_ids": "keyword", "answer": "object", "request_id": "keyword", "tenant": "keyword",
        "key": "keyword", "answered_ids": "keyword",
    }),
    "evalruns": (EvalRunDoc, eval_runs_index_body(), {
        "run_id": "keyword", "recorded_at": "date", "query_set": "keyword", "dataset_path": "keyword",
        "index": "keyword", "kind": "keyword", "method": "keyword", "retriever": "keyword",
        "row": "keyword", "main": "boolean", "queries": "integer", "ndcg_10": "float",
        "recall_10": "float", "tracc": "float", "ndcg_5": "float", "recall_5": "float",
        "latency_p50_ms": "float", "latency_p95_ms": "float", "duration_s": "float",
        "weights_version": "keyword", "source": "keyword", "git_commit": "keyword", "metrics": "object",
    }),
    "judgments": (JudgmentDoc, judgments_index_body(), {
        "judged_at": "date", "query": "text", "query_set": "keyword", "index": "keyword",
        "tool_id": "keyword", "tool_name": "keyword", "agent_id": "keyword", "relevant": "boolean",
        "grade": "integer", "source": "keyword", "weights_version": "keyword", "tenant": "keyword",
    }),
    "querysets": (QuerySetDoc, query_sets_index_body(), {
        "name": "keyword", "index": "keyword", "origin": "keyword", "created": "date",
        "size": "integer", "queries": "object", "tenant": "keyword",
    }),
    "history": (HistoryDoc, history_index_body(8, {}), {
        "kind": "keyword", "bundle_id": "keyword", "tools": "keyword", "text": "text",
        "vector": "knn_vector", "n_queries": "integer", "tenants": "keyword",
    }),
}


@pytest.mark.parametrize("name", list(FIELD_TYPES))
def test_the_derived_mapping_has_the_expected_field_types_in_the_records_order(name: str) -> None:
    record, body, expected = FIELD_TYPES[name]
    props = body["mappings"]["properties"]

    assert {field: spec["type"] for field, spec in props.items()} == expected
    assert list(props) == [f.name for f in dataclasses.fields(record)]
    assert body["mappings"]["dynamic"] == "strict"
    assert body["mappings"]["_meta"]["toolsift"]["schema"] == name


def test_the_query_log_body_is_the_one_written_by_hand_before() -> None:
    """Version 2 added who an answer was given to (``request_id``, ``tenant``, ``key``, ``answered_ids``)."""
    expected = hand_written("querylog", 2, {
        "timestamp": {"type": "date"}, "request": RAW_TEXT,
        "level": KEYWORD, "method": KEYWORD, "retriever": KEYWORD, "index": KEYWORD,
        "ranker": KEYWORD, "reranker": KEYWORD, "weights_version": KEYWORD, "source": KEYWORD,
        "degraded": {"type": "boolean"}, "degraded_reason": {"type": "text"},
        "latency_ms": FLOAT, "tool_ids": KEYWORD, "top_tool": KEYWORD, "agent_ids": KEYWORD,
        "answer": STORED, "request_id": KEYWORD, "tenant": KEYWORD, "key": KEYWORD, "answered_ids": KEYWORD,
    })
    assert json.dumps(query_log_index_body()) == json.dumps(expected)


def test_the_eval_runs_body_is_the_one_written_by_hand_before() -> None:
    expected = hand_written("evalruns", 1, {
        "run_id": KEYWORD, "recorded_at": {"type": "date"},
        "query_set": KEYWORD, "dataset_path": KEYWORD, "index": KEYWORD,
        "kind": KEYWORD, "method": KEYWORD, "retriever": KEYWORD, "row": KEYWORD,
        "main": {"type": "boolean"}, "queries": {"type": "integer"},
        "ndcg_10": FLOAT, "recall_10": FLOAT, "tracc": FLOAT, "ndcg_5": FLOAT, "recall_5": FLOAT,
        "latency_p50_ms": FLOAT, "latency_p95_ms": FLOAT, "duration_s": FLOAT,
        "weights_version": KEYWORD, "source": KEYWORD, "git_commit": KEYWORD,
        "metrics": STORED,
    })
    assert json.dumps(eval_runs_index_body()) == json.dumps(expected)


def test_the_workbench_bodies_are_the_ones_written_by_hand_before() -> None:
    """Version 2 added the writer's ``tenant`` to both."""
    judgments = hand_written("judgments", 2, {
        "judged_at": {"type": "date"}, "query": RAW_TEXT,
        "query_set": KEYWORD, "index": KEYWORD, "tool_id": KEYWORD, "tool_name": KEYWORD,
        "agent_id": KEYWORD, "relevant": {"type": "boolean"}, "grade": {"type": "integer"},
        "source": KEYWORD, "weights_version": KEYWORD, "tenant": KEYWORD,
    })
    query_sets = hand_written("querysets", 2, {
        "name": KEYWORD, "index": KEYWORD, "origin": KEYWORD, "created": {"type": "date"},
        "size": {"type": "integer"}, "queries": STORED, "tenant": KEYWORD,
    })
    assert json.dumps(judgments_index_body()) == json.dumps(judgments)
    assert json.dumps(query_sets_index_body()) == json.dumps(query_sets)


def test_the_history_body_is_the_one_written_by_hand_before() -> None:
    knn = {
        "type": "knn_vector",
        "dimension": 8,
        "doc_values": False,
        "method": {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil",
                   "parameters": {"m": 16, "ef_construction": 128}},
    }
    expected = hand_written("history", 3, {
        "kind": KEYWORD, "bundle_id": KEYWORD, "tools": KEYWORD,
        "text": {"type": "text", "analyzer": "toolsift_text"},
        "vector": knn, "n_queries": {"type": "integer"},
        "tenants": {"type": "keyword"},
    }, settings={
        "index": {"knn": True, "number_of_shards": 1, "auto_expand_replicas": "0-1"},
        "analysis": build_settings()["analysis"],
    }, meta={"embedding_model": "m", "k": 3})
    assert json.dumps(history_index_body(8, {"embedding_model": "m", "k": 3})) == json.dumps(expected)


# --- the derivation ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Baseline:
    text: str = doc_field("baseline_text", default="")


def test_settings_follow_the_records_kinds() -> None:
    flat = side_index_body(QuerySetDoc, schema="s", schema_version=1)
    assert flat["settings"] == SETTINGS  # no vector, no toolsift analyzer: neither knn nor analysis

    baseline = side_index_body(_Baseline, schema="b", schema_version=2, meta={"note": "x"})
    assert baseline["settings"]["analysis"] == build_settings()["analysis"]
    assert baseline["settings"]["similarity"] == build_settings()["similarity"]
    assert baseline["mappings"]["_meta"] == {"toolsift": {"schema": "b", "schema_version": 2, "note": "x"}}


def test_every_kind_but_nested_has_a_mapping() -> None:
    for kind in FIELD_KINDS:
        if kind != "nested":
            assert field_mapping(kind, 4)["type"]


def test_an_unknown_kind_or_a_vector_without_dimension_is_a_toolsift_error() -> None:
    with pytest.raises(ToolsiftError, match="unknown field kind 'colour'"):
        field_mapping("colour")
    with pytest.raises(ToolsiftError, match="dimension"):
        record_properties(HistoryDoc)


def test_a_side_record_has_only_flat_fields() -> None:
    @dataclass(frozen=True)
    class Nested:
        items: tuple[str, ...] = doc_field("nested", factory=tuple)

    with pytest.raises(ToolsiftError, match="Nested.items"):
        record_properties(Nested)
