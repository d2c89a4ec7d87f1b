"""The relevance-tuning workbench (``toolsift serve ui``): see why a tool ranked where it did, tune
weights on live results, judge results, and follow the metrics.

Modules: :mod:`.tuning` (re-ranking candidates with proposed weights), :mod:`.judgments` and
:mod:`.querysets` (their OpenSearch indices), :mod:`.comparison` (NDCG@10 of current vs proposed
weights on a query set), :mod:`.metrics` (eval runs and query-log latency over time),
:mod:`.session` (the state one workbench holds), :mod:`.app` (the FastAPI routes and the static
front end in ``static/``)."""

from __future__ import annotations

from toolsift.lazy import lazy_exports

#: Public name → the module that defines it, imported on first use (:mod:`toolsift.lazy`).
_EXPORTS: dict[str, str] = {
    "Workbench": "toolsift.workbench.session",
    "create_app": "toolsift.workbench.app",
}

__all__ = list(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
