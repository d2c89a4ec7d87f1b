"""The history index: PTR's tool bundles and the past queries that used them.

One index per catalog alias, ``<alias>-history``, versioned behind that alias like the catalog. Two
kinds of documents share it:

* ``bundle`` — one historical tool bundle: its ``tools`` (keyword) and a BM25 ``text`` made of its
  past queries and its tools' names, so a request can be matched against a whole bundle at once;
* ``query`` — one past query: its ``text``, its ``vector`` (the catalog's embedding model) and the
  ``bundle_id`` / ``tools`` it was answered with, for nearest-query votes.

``_meta.toolsift`` records the embedding model and the PTR parameters calibrated on this history.
The mapping is derived from :class:`HistoryDoc`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolsift.mappings.fields import doc_field
from toolsift.mappings.template import side_index_body

__all__ = ["HISTORY_SCHEMA_VERSION", "HistoryDoc", "history_alias", "history_index_body"]

#: 2: ``tenants`` on bundles and past queries.
#: 3: the ``vector`` without doc values (as the tool index's, :func:`~toolsift.mappings.template.knn_mapping`).
HISTORY_SCHEMA_VERSION = 3


@dataclass(frozen=True)
class HistoryDoc:
    """A ``bundle`` or a past ``query`` (see the module docstring); ``vector`` only on queries.

    ``tenants``: who may see it — the tenants that may see every one of its tools (empty: all its tools
    are public; ``-``, a name no tenant has: no tenant sees all of them).
    """

    kind: str = doc_field("keyword", default="")
    bundle_id: str = doc_field("keyword", default="")
    tools: tuple[str, ...] = doc_field("keyword", factory=tuple)
    text: str = doc_field("text", default="")
    vector: tuple[float, ...] | None = doc_field("vector")
    n_queries: int | None = doc_field("integer")
    tenants: tuple[str, ...] = doc_field("keyword", factory=tuple)


def history_alias(catalog_alias: str) -> str:
    """The history index alias that belongs to a catalog alias."""
    return f"{catalog_alias}-history"


def history_index_body(dimension: int, meta: dict[str, Any]) -> dict[str, Any]:
    """Settings and mappings of a new history index version."""
    return side_index_body(
        HistoryDoc, schema="history", schema_version=HISTORY_SCHEMA_VERSION, dimension=dimension, meta=meta
    )
