"""The document models and the index bodies derived from them.

The tool index's records (:mod:`~toolsift.mappings.model`) and template
(:mod:`~toolsift.mappings.template`); the side indices' records and bodies (query log, eval runs,
the workbench's judgments and query sets, history), all declared with
:func:`~toolsift.mappings.fields.doc_field`. The index versions behind an alias are managed by
:class:`toolsift.mappings.index.IndexManager`.
"""

from __future__ import annotations

from toolsift.mappings.evalruns import EVAL_RUNS_SCHEMA_VERSION, EvalRunDoc, eval_runs_index_body
from toolsift.mappings.feedback import FEEDBACK_SCHEMA_VERSION, FeedbackDoc, feedback_index_body
from toolsift.mappings.fields import FIELD_KINDS, FieldKind, doc_field
from toolsift.mappings.history import HISTORY_SCHEMA_VERSION, HistoryDoc, history_alias, history_index_body
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
from toolsift.mappings.querylog import QUERY_LOG_SCHEMA_VERSION, QueryLogDoc, query_log_index_body
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
    "FEEDBACK_SCHEMA_VERSION",
    "FeedbackDoc",
    "feedback_index_body",
    "QUERY_LOG_SCHEMA_VERSION",
    "QueryLogDoc",
    "query_log_index_body",
    "EVAL_RUNS_SCHEMA_VERSION",
    "EvalRunDoc",
    "eval_runs_index_body",
    "WORKBENCH_SCHEMA_VERSION",
    "JudgmentDoc",
    "QuerySetDoc",
    "judgments_index_body",
    "query_sets_index_body",
    "HISTORY_SCHEMA_VERSION",
    "HistoryDoc",
    "history_alias",
    "history_index_body",
]
