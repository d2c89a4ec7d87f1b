"""ToolRet catalogs: a JSON list of ``{id, documentation: {...}, type}``.

The documentation objects are heterogeneous (web APIs with parameters and responses, Python functions
with a signature); normalisation reads them. Tools have no agent; the tool id is the record's ``id``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from toolsift.ingest.loaders._common import (
    catalog_label,
    id_text,
    list_records,
    peek_json,
    read_json,
    type_name,
)
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
    records = list_records(read_json(path), path, "ToolRet records")
    for index, record in enumerate(records):
        position = f"record {index}"
        if not isinstance(record, dict):
            yield RejectedRecord(source, position, f"expected an object, got {type_name(record)}")
            continue
        if "id" not in record:
            yield RejectedRecord(source, position, "the record has no id", field="id")
            continue
        tool_id = id_text(record["id"])
        if tool_id is None:
            yield RejectedRecord(
                source,
                position,
                f"the id must be a string or an integer, got {type_name(record['id'])}",
                field="id",
            )
            continue
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
