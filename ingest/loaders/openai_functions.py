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

from toolsift.ingest.loaders.base import JsonCatalogLoader, not_expected
from toolsift.ingest.loaders.files import JsonPeek, list_records, listed_under, read_json
from toolsift.ingest.loaders.naming import nonblank
from toolsift.ingest.raw_records import LoadedRecord, RawTool

__all__ = ["OpenAIFunctionsLoader", "LOADER", "NAME", "detect", "load"]

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


class OpenAIFunctionsLoader(JsonCatalogLoader):
    """One :class:`RawTool` per function definition.

    Raises (while loading):
        CatalogError: the file is missing, not valid JSON, or holds no list of definitions.
    """

    NAME = "openai_functions"

    def recognise(self, peek: JsonPeek) -> bool:
        """The first item (of the list, or of its ``tools``/``functions``) is a function."""
        if peek.top == "list":
            return _is_function(peek.first)
        for key in _WRAPPERS:
            items = peek.first.get(key)
            if isinstance(items, list) and items:
                return _is_function(items[0])
        return False

    def records(self, path: Path, source: str) -> Iterator[LoadedRecord]:
        data = read_json(path)
        if isinstance(data, dict):
            items = listed_under(
                data,
                path,
                _WRAPPERS,
                "function definitions",
                "a list of function definitions, or an object with a 'tools' or 'functions' list",
            )
        else:
            items = list_records(data, path, "function definitions")
        for index, item in enumerate(items):
            position = f"record {index}"
            if not isinstance(item, dict):
                yield not_expected(source, position, item)
                continue
            function = item.get("function")
            name = function.get("name") if isinstance(function, dict) else item.get("name")
            yield RawTool(source, position, item, nonblank(name), None)


LOADER = OpenAIFunctionsLoader()
NAME = LOADER.NAME
detect = LOADER.detect
load = LOADER.load
