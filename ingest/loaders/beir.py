"""BEIR corpora: ``corpus.jsonl``, one ``{_id, title, text, metadata}`` object per line.

The file is streamed line by line. The documentation is the line's object as given; normalisation
reads the tool out of it (ToolBench-style ``text`` such as ToolLens's ``category_name:..., tool_name:...,
api_name:..., api_description:..., required_params: [...], optional_params: [...], return_schema: {...}``
is parsed into its fields; other corpora use ``title`` as the name and ``text`` as the description).
The tool id is ``_id``; positions are 1-based line numbers. A line that is not a JSON object, or has
no usable ``_id``, is yielded as a :class:`RejectedRecord`; blank lines are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from toolsift.ingest.loaders.base import CatalogLoader, not_expected, record_id
from toolsift.ingest.loaders.files import first_jsonl_record, json_message, parse_json, read_lines
from toolsift.ingest.nesting import json_nesting
from toolsift.ingest.raw_records import LoadedRecord, RawTool, RejectedRecord

__all__ = ["BeirLoader", "LOADER", "NAME", "detect", "load"]


class BeirLoader(CatalogLoader):
    """One :class:`RawTool` per line, streaming.

    Raises (while loading):
        CatalogError: the file is missing or cannot be read.
    """

    NAME = "beir"
    SUFFIXES = (".jsonl",)

    def sniff(self, path: Path) -> bool:
        """The first record has ``_id`` and ``text`` or ``title``."""
        first = first_jsonl_record(path)
        return isinstance(first, dict) and "_id" in first and ("text" in first or "title" in first)

    def records(self, path: Path, source: str) -> Iterator[LoadedRecord]:
        for number, raw_line in read_lines(path):
            record = _line(source, number, raw_line)
            if record is not None:
                yield record


def _line(source: str, number: int, raw_line: bytes) -> LoadedRecord | None:
    """The line's tool, or why it is rejected; None for a blank line."""
    position = f"line {number}"
    try:
        line = raw_line.decode("utf-8-sig" if number == 1 else "utf-8").strip()
    except UnicodeDecodeError as exc:
        return RejectedRecord(source, position, f"not UTF-8 text (byte {exc.start})")
    if not line:
        return None
    try:
        record = parse_json(line)
    except RecursionError:
        nesting = json_nesting(line)
        return RejectedRecord(source, position, f"too deep to parse: {nesting}", field=nesting.key)
    except json.JSONDecodeError as exc:
        return RejectedRecord(source, position, f"not valid JSON: {json_message(exc)} at column {exc.colno}")
    if not isinstance(record, dict):
        return not_expected(source, position, record)
    tool_id = record_id(source, position, record, "_id", "_id")
    if isinstance(tool_id, RejectedRecord):
        return tool_id
    return RawTool(source, position, record, tool_id, None)


LOADER = BeirLoader()
NAME = LOADER.NAME
detect = LOADER.detect
load = LOADER.load
