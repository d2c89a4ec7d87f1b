"""Query understanding: a request becomes a structured query (tool needs, extracted arguments) and
the OpenSearch request bodies that retrieve and score candidates field by field."""

from __future__ import annotations

import importlib
from typing import Any

#: Public name → the module that defines it; imported on first use (PEP 562), so importing one
#: module of the package does not load the rest (torch, FastAPI).
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
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
