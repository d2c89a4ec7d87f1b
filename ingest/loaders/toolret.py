"""ToolRet catalogs: a JSON list of ``{id, documentation: {...}, type}``.

The documentation objects are heterogeneous (web APIs with parameters and responses, Python functions
with a signature); normalisation reads them. Tools have no agent; the tool id is the record's ``id``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from toolsift.ingest.loaders._common import catalog_label, identified_records, peek_json, type_name
from toolsift.ingest.records import LoadedRecord, RawTool, RejectedRecord

__all__ = ["NAME", "detect", "load"]

NAME = "toolret"


def detect(path: Path) -> bool:
    """True for a JSON list whose first record has ``id`` and ``documentation``."""
    if path.suffix.lower() != ".json":
        return False
    peek = peek_json(path)
    return (
        peek is not None
        and peek.top == "list"
        and isinstance(peek.first, dict)
        and "id" in peek.first
        and "documentation" in peek.first
    )


def load(path: Path) -> Iterator[LoadedRecord]:
    """Yield one :class:`RawTool` per record, or a :class:`RejectedRecord` for one without a usable id.

    Raises:
        CatalogError: the file is missing, not valid JSON, or not a list.
    """
    source = catalog_label(path, NAME)
    for item in identified_records(path, source, "ToolRet records"):
        if isinstance(item, RejectedRecord):
            yield item
            continue
        position, record, tool_id = item
        documentation = record.get("documentation")
        if not isinstance(documentation, dict):
            yield RejectedRecord(
                source,
                position,
                f"the documentation must be an object, got {type_name(documentation)}",
                record_id=tool_id,
                field="documentation",
            )
            continue
        yield RawTool(source, position, documentation, tool_id, None)
