"""ToolRet catalogs: a JSON list of ``{id, documentation: {...}, type}``.

The documentation objects are heterogeneous (web APIs with parameters and responses, Python functions
with a signature); normalisation reads them. Tools have no agent; the tool id is the record's ``id``.
"""

from __future__ import annotations

from typing import Any

from toolsift.ingest.loaders.base import IdentifiedListLoader, not_an_object
from toolsift.ingest.raw_records import LoadedRecord, RawTool

__all__ = ["ToolRetLoader", "LOADER", "NAME", "detect", "load"]


class ToolRetLoader(IdentifiedListLoader):
    """One :class:`RawTool` per record, or a :class:`RejectedRecord` for one without a usable id or
    whose documentation is not an object.

    Raises (while loading):
        CatalogError: the file is missing, not valid JSON, or not a list.
    """

    NAME = "toolret"
    WHAT = "ToolRet records"

    def fits(self, first: dict[str, Any]) -> bool:
        """The first record has ``id`` and ``documentation``."""
        return "id" in first and "documentation" in first

    def record(self, source: str, position: str, record: dict[str, Any], tool_id: str) -> LoadedRecord:
        documentation = record.get("documentation")
        if not isinstance(documentation, dict):
            return not_an_object(
                source, position, "documentation", documentation, record_id=tool_id, label="the documentation"
            )
        return RawTool(source, position, documentation, tool_id, None)


LOADER = ToolRetLoader()
NAME = LOADER.NAME
detect = LOADER.detect
load = LOADER.load
