"""The document model and the index template derived from it."""

from __future__ import annotations

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
from toolsift.mappings.template import build_mappings, index_body, mapping_fingerprint

__all__ = [
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
    "index_body",
    "mapping_fingerprint",
    "rerank_text",
    "tool_routing",
    "vector_field",
]
