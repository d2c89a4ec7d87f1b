"""MFTR's already-standardised documents.

A JSON list of ``{id, type, augmented: {description, parameters, response, examples},
origin_documentation}`` (MFTR's ``standardized_tools.<model>.json``). The raw documentation stays the
origin documentation, so the Full-Doc text is the same as the ToolRet catalog's; the ``augmented``
object becomes :attr:`RawTool.standardized`.
"""

from __future__ import annotations

from typing import Any

from toolsift.ingest.loaders.base import IdentifiedListLoader, not_an_object
from toolsift.ingest.raw_records import LoadedRecord, RawTool

__all__ = ["MftrLoader", "LOADER", "NAME", "detect", "load"]


class MftrLoader(IdentifiedListLoader):
    """One :class:`RawTool` per record (``standardized`` = the ``augmented`` object).

    A record without ``augmented`` is yielded with ``standardized=None`` and is standardised by rule
    like any raw documentation.

    Raises (while loading):
        CatalogError: the file is missing, not valid JSON, or not a list.
    """

    NAME = "mftr"
    WHAT = "MFTR records"
    DOCUMENTATION = "origin_documentation"

    def fits(self, first: dict[str, Any]) -> bool:
        """The first record has ``augmented`` or ``origin_documentation``."""
        return "augmented" in first or "origin_documentation" in first

    def tool(
        self, source: str, position: str, record: dict[str, Any], tool_id: str, documentation: dict[str, Any]
    ) -> LoadedRecord:
        """The tool, ``standardized`` by its ``augmented`` object, or the rejection of a record whose
        ``augmented`` is not an object."""
        augmented = record.get("augmented")
        if augmented is not None and not isinstance(augmented, dict):
            return not_an_object(source, position, "augmented", augmented, record_id=tool_id)
        return RawTool(source, position, documentation, tool_id, None, standardized=augmented)


LOADER = MftrLoader()
NAME = LOADER.NAME
detect = LOADER.detect
load = LOADER.load
