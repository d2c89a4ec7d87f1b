"""The history index: PTR's tool bundles and the past queries that used them.

One index per catalog alias, ``<alias>-history``, versioned behind that alias like the catalog. Two
kinds of documents share it:

* ``bundle`` — one historical tool bundle: its ``tools`` (keyword) and a BM25 ``text`` made of its
  past queries and its tools' names, so a request can be matched against a whole bundle at once;
* ``query`` — one past query: its ``text``, its ``vector`` (the catalog's embedding model) and the
  ``bundle_id`` / ``tools`` it was answered with, for nearest-query votes.

``_meta.toolsift`` records the embedding model and the PTR parameters calibrated on this history.
"""

from __future__ import annotations

from typing import Any

from toolsift.mappings.template import TEXT_ANALYZER, _ANALYSIS, _knn

__all__ = ["HISTORY_SCHEMA_VERSION", "history_alias", "history_index_body"]

HISTORY_SCHEMA_VERSION = 1


def history_alias(catalog_alias: str) -> str:
    """The history index alias that belongs to a catalog alias."""
    return f"{catalog_alias}-history"


def history_index_body(dimension: int, meta: dict[str, Any]) -> dict[str, Any]:
    """Settings and mappings of a new history index version."""
    return {
        "settings": {"index": {"knn": True, "number_of_shards": 1, "number_of_replicas": 0}, "analysis": _ANALYSIS},
        "mappings": {
            "dynamic": "strict",
            "_meta": {"toolsift": {"schema": "history", "schema_version": HISTORY_SCHEMA_VERSION, **meta}},
            "properties": {
                "kind": {"type": "keyword"},
                "bundle_id": {"type": "keyword"},
                "tools": {"type": "keyword"},
                "text": {"type": "text", "analyzer": TEXT_ANALYZER},
                "vector": _knn(dimension),
                "n_queries": {"type": "integer"},
            },
        },
    }
