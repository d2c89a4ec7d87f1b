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
import re
from collections.abc import Iterator
from pathlib import Path

from toolsift.errors import CatalogError
from toolsift.ingest.loaders._common import (
    catalog_label,
    first_jsonl_record,
    id_text,
    require_file,
    type_name,
)
from toolsift.ingest.records import LoadedRecord, RawTool, RejectedRecord

__all__ = ["NAME", "detect", "load"]

NAME = "beir"


def detect(path: Path) -> bool:
    """True for a ``.jsonl`` file whose first record has ``_id`` and ``text`` or ``title``."""
    if path.suffix.lower() != ".jsonl":
        return False
    first = first_jsonl_record(path)
    return isinstance(first, dict) and "_id" in first and ("text" in first or "title" in first)


def load(path: Path) -> Iterator[LoadedRecord]:
    """Yield one :class:`RawTool` per line, streaming.

    Raises:
        CatalogError: the file is missing or cannot be read.
    """
    require_file(path)
    source = catalog_label(path, NAME)
    try:
        with open(path, "rb") as handle:
            for number, raw_line in enumerate(handle, start=1):
                yield from _line(source, number, raw_line)
    except OSError as exc:
        raise CatalogError(f"catalog file {str(path)!r} cannot be read: {exc.strerror}") from exc


def _line(source: str, number: int, raw_line: bytes) -> Iterator[LoadedRecord]:
    position = f"line {number}"
    try:
        line = raw_line.decode("utf-8-sig" if number == 1 else "utf-8").strip()
    except UnicodeDecodeError as exc:
        yield RejectedRecord(source, position, f"not UTF-8 text (byte {exc.start})")
        return
    if not line:
        return
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        what = re.sub(r"\s+at$", "", exc.msg)
        yield RejectedRecord(source, position, f"not valid JSON: {what} at column {exc.colno}")
        return
    if not isinstance(record, dict):
        yield RejectedRecord(source, position, f"expected an object, got {type_name(record)}")
        return
    if "_id" not in record:
        yield RejectedRecord(source, position, "the record has no _id", field="_id")
        return
    tool_id = id_text(record["_id"])
    if tool_id is None:
        yield RejectedRecord(
            source,
            position,
            f"_id must be a string or an integer, got {type_name(record['_id'])}",
            field="_id",
        )
        return
    yield RawTool(source, position, record, tool_id, None)
