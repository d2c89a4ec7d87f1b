"""OpenAI function / tool definitions.

A JSON list, or an object with a ``tools`` or ``functions`` list, of
``{"type": "function", "function": {name, description, parameters}}`` or of bare
``{name, description, parameters}``. The documentation is the item as given; the tool id is the
function's name. No agent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolsift.errors import CatalogError
from toolsift.ingest.loaders._common import (
    catalog_label,
    list_records,
    peek_json,
    read_json,
    type_name,
)
from toolsift.ingest.records import LoadedRecord, RawTool, RejectedRecord

__all__ = ["NAME", "detect", "load"]

NAME = "openai_functions"
_WRAPPERS = ("tools", "functions")


def _is_function(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    if isinstance(item.get("function"), dict):
        return True
    # MCP tools have inputSchema, ToolRet records documentation: theirs, not ours.
    return (
        "name" in item
        and "parameters" in item
        and not {"inputSchema", "input_schema", "documentation"} & item.keys()
    )


def detect(path: Path) -> bool:
    """True when the first item (of the list, or of its ``tools``/``functions``) is a function."""
    if path.suffix.lower() != ".json":
        return False
    peek = peek_json(path)
    if peek is None:
        return False
    if peek.top == "list":
        return _is_function(peek.first)
    for key in _WRAPPERS:
        items = peek.first.get(key)
        if isinstance(items, list) and items:
            return _is_function(items[0])
    return False


def _items(data: Any, path: Path) -> list[Any]:
    if isinstance(data, dict):
        for key in _WRAPPERS:
            if key in data:
                return list_records(data[key], path, f"function definitions under {key!r}")
        raise CatalogError(
            f"catalog file {str(path)!r}: expected a list of function definitions, or an object "
            f"with a 'tools' or 'functions' list; found keys {sorted(data)[:10]}"
        )
    return list_records(data, path, "function definitions")


def load(path: Path) -> Iterator[LoadedRecord]:
    """Yield one :class:`RawTool` per function definition.

    Raises:
        CatalogError: the file is missing, not valid JSON, or holds no list of definitions.
    """
    source = catalog_label(path, NAME)
    for index, item in enumerate(_items(read_json(path), path)):
        position = f"record {index}"
        if not isinstance(item, dict):
            yield RejectedRecord(source, position, f"expected an object, got {type_name(item)}")
            continue
        function = item.get("function")
        name = function.get("name") if isinstance(function, dict) else item.get("name")
        tool_id = name if isinstance(name, str) and name.strip() else None
        yield RawTool(source, position, item, tool_id, None)
