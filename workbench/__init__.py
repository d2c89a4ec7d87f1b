"""The relevance-tuning workbench (``toolsift serve ui``): see why a tool ranked where it did, tune
weights on live results, judge results, and follow the metrics.

Modules: :mod:`.tuning` (re-ranking candidates with proposed weights), :mod:`.judgments` and
:mod:`.querysets` (their OpenSearch indices), :mod:`.comparison` (NDCG@10 of current vs proposed
weights on a query set), :mod:`.metrics` (eval runs and query-log latency over time),
:mod:`.session` (the state one workbench holds), :mod:`.app` (the FastAPI routes and the static
front end in ``static/``)."""

from __future__ import annotations

import importlib
from typing import Any

#: Public name → the module that defines it; imported on first use (PEP 562), so importing one
#: module of the package does not load the rest (torch, FastAPI).
_EXPORTS: dict[str, str] = {
    "Workbench": "toolsift.workbench.session",
    "create_app": "toolsift.workbench.app",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
