"""ToolRet catalogs: a JSON list of ``{id, documentation: {...}, type}``.

The documentation objects are heterogeneous (web APIs with parameters and responses, Python functions
with a signature); normalisation reads them. Tools have no agent; the tool id is the record's ``id``.
"""

from __future__ import annotations

from typing import Any

from toolsift.ingest.loaders.base import IdentifiedListLoader

__all__ = ["ToolRetLoader", "LOADER", "NAME", "detect", "load"]


class ToolRetLoader(IdentifiedListLoader):
    """One :class:`RawTool` per record, or a :class:`RejectedRecord` for one without a usable id or
    whose documentation is not an object.

    Raises (while loading):
        CatalogError: the file is missing, not valid JSON, or not a list.
    """

    NAME = "toolret"
    WHAT = "ToolRet records"
    DOCUMENTATION = "documentation"

    def fits(self, first: dict[str, Any]) -> bool:
        """The first record has ``id`` and ``documentation``."""
        return "id" in first and "documentation" in first


LOADER = ToolRetLoader()
NAME = LOADER.NAME
detect = LOADER.detect
load = LOADER.load
