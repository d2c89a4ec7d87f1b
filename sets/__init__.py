"""Precise tool sets (PTR) and their metric, TRACC: one capability, one folder.

It owns the history index (its record: ``history_doc``; reading a benchmark's bundles and past queries
into it: ``history_import``; the three lookups: ``history_store``), the set decision (``ptr``), the
backend's set recommender (``recommender``: ``toolsift search --set``, ``/v1/toolset``) and
``toolsift eval --set`` (``set_eval``). TRACC itself is a metric beside Completeness@K
(:mod:`toolsift.ranker.metrics`).

Layers (``tests/unit/test_layering.py``): the record at the mappings', the import at ingest's, the
store and the decision at the ranker's, the recommender at the backend's, the evaluation at
evaluation's.
"""

from __future__ import annotations

from toolsift.lazy import lazy_exports

#: Public name → the module that defines it, imported on first use (:mod:`toolsift.lazy`).
_EXPORTS: dict[str, str] = {
    "HistoryStore": "toolsift.sets.history_store",
    "load_history": "toolsift.sets.history_import",
    "index_history": "toolsift.sets.history_import",
    "PTRConfig": "toolsift.sets.ptr",
    "ToolSet": "toolsift.sets.ptr",
    "recommend_set": "toolsift.sets.ptr",
    "SetRecommender": "toolsift.sets.recommender",
    "run_set_eval": "toolsift.sets.set_eval",
}

__all__ = list(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
