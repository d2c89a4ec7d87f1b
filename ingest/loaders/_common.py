"""Helpers shared by the catalog loaders: reading and sniffing JSON, labels, slugs and ids."""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from toolsift.errors import CatalogError
from toolsift.ingest.records import AGENT_ID_PREFIX, RejectedRecord

__all__ = [
    "JsonPeek",
    "catalog_name",
    "catalog_label",
    "slugify",
    "agent_id_for",
    "require_file",
    "read_text",
    "read_json",
    "json_problem",
    "first_jsonl_record",
    "peek_json",
    "list_records",
    "id_text",
    "identified_records",
    "type_name",
]


# File stems that name the kind of file rather than the catalog; the folder names the catalog then.
_GENERIC_STEMS = frozenset(
    {"tools", "corpus", "catalog", "functions", "openapi", "swagger", "spec", "api", "tools_list",
     "standardized_tools", "documents", "docs"}
)
_SNIFF_CHUNK = 64 * 1024


def catalog_name(path: Path) -> str:
    """The catalog a file holds: its stem, or its folder's name when the stem is a generic one.

    ``toolret/apibank/tools.json`` is ``apibank``, ``specs/petstore.v3.yaml`` is ``petstore``.
    """
    stem = path.name.split(".", 1)[0]
    parent = path.resolve().parent.name
    if stem.lower() in _GENERIC_STEMS and parent:
        return parent
    return stem


def catalog_label(path: Path, format_name: str) -> str:
    """The short ``<format>/<catalog>`` label that records carry as their ``source``.

    ``toolret/apibank/tools.json`` read as ToolRet is ``toolret/apibank``; ``specs/petstore.yaml``
    read as OpenAPI is ``openapi/petstore``.
    """
    return f"{format_name}/{catalog_name(path)}"


def slugify(text: str) -> str:
    """Lower-case ``text`` and join its words with ``-``; letters of every script are kept."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"[^\w]+", "-", folded).strip("-")


def agent_id_for(name: str) -> str:
    """The id of the agent called ``name``: ``agent:`` and the name's slug."""
    return AGENT_ID_PREFIX + slugify(name)


def require_file(path: Path) -> None:
    """Raise :class:`CatalogError` unless ``path`` is a readable regular file."""
    if not path.exists():
        raise CatalogError(f"catalog file {str(path)!r} does not exist")
    if not path.is_file():
        raise CatalogError(f"catalog path {str(path)!r} is not a file")
    if not os.access(path, os.R_OK):
        raise CatalogError(f"catalog file {str(path)!r} is not readable")


def read_text(path: Path) -> str:
    """The file's text (UTF-8, an optional BOM dropped); :class:`CatalogError` when unreadable."""
    require_file(path)
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CatalogError(f"catalog file {str(path)!r} is not UTF-8 text (byte {exc.start})") from exc
    except OSError as exc:
        raise CatalogError(f"catalog file {str(path)!r} cannot be read: {exc.strerror}") from exc


def read_json(path: Path) -> Any:
    """Parse a whole JSON file; an invalid or truncated file raises :class:`CatalogError`.

    The error names the file and the line and column where parsing stopped.
    """
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        # An unterminated string is reported where it starts, not at the end of the file.
        ends_early = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        hint = " (the file ends early: truncated?)" if ends_early else ""
        raise CatalogError(
            f"catalog file {str(path)!r} is not valid JSON: {json_problem(exc)}{hint}"
        ) from exc


def json_problem(exc: json.JSONDecodeError) -> str:
    """``<what> at line L column C`` for a JSON parse error."""
    what = re.sub(r"\s+at$", "", exc.msg)
    return f"{what} at line {exc.lineno} column {exc.colno}"


def list_records(value: Any, path: Path, what: str) -> list[Any]:
    """``value`` when it is a JSON list, else :class:`CatalogError` saying what was expected."""
    if not isinstance(value, list):
        raise CatalogError(
            f"catalog file {str(path)!r}: expected a JSON list of {what} at the top level, "
            f"got {type_name(value)}"
        )
    return value


def type_name(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def identified_records(
    path: Path, source: str, what: str
) -> Iterator[tuple[str, dict[str, Any], str] | RejectedRecord]:
    """``(position, record, id)`` for each object of a JSON list whose records carry an ``id``.

    A record that is not an object, or whose id is missing or of an unusable type, comes out as a
    :class:`RejectedRecord` instead.
    """
    for index, record in enumerate(list_records(read_json(path), path, what)):
        position = f"record {index}"
        if not isinstance(record, dict):
            yield RejectedRecord(source, position, f"expected an object, got {type_name(record)}")
            continue
        tool_id = id_text(record.get("id"))
        if tool_id is None:
            reason = (
                "the record has no id"
                if "id" not in record
                else f"the id must be a string or an integer, got {type_name(record['id'])}"
            )
            yield RejectedRecord(source, position, reason, field="id")
            continue
        yield position, record, tool_id


def id_text(value: Any) -> str | None:
    """A catalog id as text: strings as they are, integers written out; None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


@dataclass(frozen=True)
class JsonPeek:
    """What sniffing saw at the top of a JSON file.

    Attributes:
        top: ``list`` or ``object`` (anything else is not a catalog).
        first: the first element of a list (None for an empty list), or the whole object.
    """

    top: Literal["list", "object"]
    first: Any


def peek_json(path: Path) -> JsonPeek | None:
    """Sniff a JSON file: None when it is missing, not JSON-looking, or its first record is unreadable.

    A list is read only as far as its first element, so sniffing a large catalog stays cheap; an
    object is parsed whole (catalog objects, OpenAPI specs and ``tools/list`` results, are small).
    """
    try:
        stat = path.stat()
    except OSError:
        return None
    return _peek(str(path), stat.st_mtime_ns, stat.st_size)


# Several loaders sniff the same file one after another; the cache makes that one read.
@lru_cache(maxsize=8)
def _peek(path: str, _mtime_ns: int, _size: int) -> JsonPeek | None:
    decoder = json.JSONDecoder()
    try:
        with open(path, encoding="utf-8-sig") as handle:
            text = handle.read(_SNIFF_CHUNK)
            start = len(text) - len(text.lstrip())
            if start >= len(text):
                return None
            opener = text[start]
            if opener == "{":
                try:
                    whole = json.loads(text + handle.read())
                except json.JSONDecodeError:
                    return None
                return JsonPeek("object", whole)
            if opener != "[":
                return None
            chunk = _SNIFF_CHUNK
            while True:
                body = text[start + 1 :].lstrip()
                if body.startswith("]"):
                    return JsonPeek("list", None)
                if body:
                    try:
                        first, _ = decoder.raw_decode(body)
                    except json.JSONDecodeError:
                        pass
                    else:
                        return JsonPeek("list", first)
                more = handle.read(chunk)
                if not more:
                    return None
                text += more
                chunk *= 2
    except (OSError, UnicodeDecodeError):
        return None


def first_jsonl_record(path: Path) -> Any:
    """The parsed first non-blank line of a JSONL file, or None when there is none or it is not JSON."""
    try:
        with open(path, "rb") as handle:
            for raw_line in handle:
                line = raw_line.decode("utf-8-sig").strip()
                if line:
                    return json.loads(line)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return None
