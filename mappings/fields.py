"""How a record declares its index fields: one kind per dataclass field, from which mappings derive.

Every index toolsift writes has a record (a frozen dataclass) whose fields carry a ``kind`` in their
metadata, given with :func:`doc_field`. The tool index's records are in
:mod:`toolsift.mappings.model`; the side indices' (query log, eval runs, judgments, query sets,
history) next to their index bodies. :mod:`toolsift.mappings.template` turns kinds into mappings
(:func:`~toolsift.mappings.template.field_mapping`), so a record and its index cannot drift apart.

Kinds:

* ``keyword``, ``boolean``, ``integer``, ``float``, ``date`` — OpenSearch's types of those names;
* ``text`` — analysed with toolsift's identifier-aware analyzer; ``text_keyword`` adds a ``keyword``
  sub-field (ignore_above 256);
* ``baseline_text`` — analysed like the papers' BM25 baselines (Lucene's English analyzer), so the
  Full-Doc figures are comparable;
* ``standard_text`` — OpenSearch's standard analyzer; ``standard_text_raw`` adds a ``raw`` keyword
  sub-field (ignore_above 1024) for grouping by the exact text;
* ``stored`` — kept in ``_source``, not indexed;
* ``vector`` — a ``knn_vector`` of the index's embedding dimension;
* ``nested`` — one sub-document each (the tool index's parameters and examples).

``vector=True`` on a text field adds a ``knn_vector`` sibling (``<name>_vector``; inside nested
documents: ``vector``).
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Literal, get_args

__all__ = ["FieldKind", "FIELD_KINDS", "doc_field"]

FieldKind = Literal[
    "keyword",
    "boolean",
    "integer",
    "float",
    "date",
    "text",
    "text_keyword",
    "baseline_text",
    "standard_text",
    "standard_text_raw",
    "stored",
    "vector",
    "nested",
]

#: Every kind a record field may declare.
FIELD_KINDS: tuple[str, ...] = get_args(FieldKind)


def doc_field(kind: FieldKind, *, vector: bool = False, default: Any = None, factory: Any = None) -> Any:
    """A dataclass field of an index record: its ``kind`` (and ``vector`` flag) in the metadata.

    Args:
        kind: one of :data:`FIELD_KINDS`.
        vector: the text field also gets an embedding (a ``knn_vector`` sibling).
        default: the field's default value.
        factory: a default factory instead (for tuples, dicts).
    """
    meta = {"kind": kind, "vector": vector}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)

