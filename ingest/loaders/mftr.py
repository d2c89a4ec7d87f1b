"""MFTR's already-standardised documents.

A JSON list of ``{id, type, augmented: {description, parameters, response, examples},
origin_documentation}`` (MFTR's ``standardized_tools.<model>.json``). The raw documentation stays the
origin documentation, so the Full-Doc text is the same as the ToolRet catalog's; the ``augmented``
object becomes :attr:`RawTool.standardized`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from toolsift.ingest.loaders._common import catalog_label, identified_records, peek_json, type_name
from toolsift.ingest.records import LoadedRecord, RawTool, RejectedRecord

__all__ = ["NAME", "detect", "load"]

NAME = "mftr"


def detect(path: Path) -> bool:
    """True for a JSON list whose first record has ``augmented`` or ``origin_documentation``."""
    if path.suffix.lower() != ".json":
        return False
    peek = peek_json(path)
    return (
        peek is not None
        and peek.top == "list"
        and isinstance(peek.first, dict)
        and ("augmented" in peek.first or "origin_documentation" in peek.first)
    )


def load(path: Path) -> Iterator[LoadedRecord]:
    """Yield one :class:`RawTool` per record (``standardized`` = the ``augmented`` object).

    A record without ``augmented`` is yielded with ``standardized=None`` and is standardised by rule
    like any raw documentation.

    Raises:
        CatalogError: the file is missing, not valid JSON, or not a list.
    """
    source = catalog_label(path, NAME)
    for item in identified_records(path, source, "MFTR records"):
        if isinstance(item, RejectedRecord):
            yield item
            continue
        position, record, tool_id = item
        documentation = record.get("origin_documentation")
        if not isinstance(documentation, dict):
            yield RejectedRecord(
                source,
                position,
                f"the origin_documentation must be an object, got {type_name(documentation)}",
                record_id=tool_id,
                field="origin_documentation",
            )
            continue
        augmented = record.get("augmented")
        if augmented is not None and not isinstance(augmented, dict):
            yield RejectedRecord(
                source,
                position,
                f"augmented must be an object, got {type_name(augmented)}",
                record_id=tool_id,
                field="augmented",
            )
            continue
        yield RawTool(source, position, documentation, tool_id, None, standardized=augmented)
