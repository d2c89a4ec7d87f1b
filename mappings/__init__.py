"""The document models and the index bodies derived from them.

The tool index's records (:mod:`~toolsift.mappings.model`) and template
(:mod:`~toolsift.mappings.template`); the side indices' records and bodies (eval runs, the
workbench's judgments and query sets; the query log, feedback and history indices' records live
with their capabilities, :mod:`toolsift.learning` and :mod:`toolsift.sets`), all declared with
:func:`~toolsift.mappings.fields.doc_field`. The index versions behind an alias are managed by
:class:`toolsift.mappings.index.IndexManager`.
"""

from __future__ import annotations

from toolsift.mappings.evalruns_doc import EVAL_RUNS_SCHEMA_VERSION, EvalRunDoc, eval_runs_index_body
from toolsift.mappings.fields import FIELD_KINDS, FieldKind, doc_field
from toolsift.mappings.model import (
    NESTED_VECTOR_FIELDS,
    RERANK_SOURCE,
    SCHEMA_VERSION,
    TEXT_FIELDS,
    VECTOR_FIELDS,
    AgentDoc,
    Entity,
    F,
    ParameterDoc,
    ToolDoc,
    rerank_text,
    tool_routing,
    vector_field,
)
from toolsift.mappings.template import (
    build_mappings,
    build_settings,
    field_mapping,
    index_body,
    knn_mapping,
    mapping_fingerprint,
    record_properties,
    side_index_body,
)
from toolsift.mappings.workbench import (
    WORKBENCH_SCHEMA_VERSION,
    JudgmentDoc,
    QuerySetDoc,
    judgments_index_body,
    query_sets_index_body,
)

__all__ = [
    # the tool index
    "SCHEMA_VERSION",
    "AgentDoc",
    "Entity",
    "F",
    "NESTED_VECTOR_FIELDS",
    "ParameterDoc",
    "RERANK_SOURCE",
    "TEXT_FIELDS",
    "ToolDoc",
    "VECTOR_FIELDS",
    "build_mappings",
    "build_settings",
    "index_body",
    "mapping_fingerprint",
    "rerank_text",
    "tool_routing",
    "vector_field",
    # declaring records, deriving mappings
    "FIELD_KINDS",
    "FieldKind",
    "doc_field",
    "field_mapping",
    "knn_mapping",
    "record_properties",
    "side_index_body",
    # the side indices
    "EVAL_RUNS_SCHEMA_VERSION",
    "EvalRunDoc",
    "eval_runs_index_body",
    "WORKBENCH_SCHEMA_VERSION",
    "JudgmentDoc",
    "QuerySetDoc",
    "judgments_index_body",
    "query_sets_index_body",
]
