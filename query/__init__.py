"""Query understanding: a request becomes a structured query (tool needs, extracted arguments) and
the OpenSearch request bodies that retrieve and score candidates field by field."""

from __future__ import annotations

from toolsift.lazy import lazy_exports

#: Public name → the module that defines it, imported on first use (:mod:`toolsift.lazy`).
_EXPORTS: dict[str, str] = {
    "StructuredQuery": "toolsift.query.structured",
    "ToolNeed": "toolsift.query.structured",
    "QueryRewriter": "toolsift.query.rewrite",
    "rewrite_request": "toolsift.query.rewrite",
    "parse_rewrite": "toolsift.query.rewrite",
    "decompose": "toolsift.query.decompose",
    "split_needs": "toolsift.query.decompose",
    "QueryBuilder": "toolsift.query.builder",
    "parse_field_scores": "toolsift.query.builder",
    "hit_identity": "toolsift.query.builder",
    "Scope": "toolsift.query.scope",
    "tenant_clause": "toolsift.query.scope",
}

__all__ = list(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
