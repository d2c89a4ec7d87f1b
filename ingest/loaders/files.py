"""Reading and sniffing catalog files: whole-file problems are :class:`CatalogError` s naming the file.

A loader reads its file through these, so a missing, unreadable, non-UTF-8 or malformed file is
reported the same way whatever its format; sniffing (:func:`peek_json`, :func:`first_jsonl_record`)
never raises.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from toolsift.errors import CatalogError
from toolsift.ingest.nesting import PARSE_CUT_DEPTH, cut_json_depth, json_nesting

__all__ = [
    "require_file",
    "read_text",
    "read_json",
    "parse_json",
    "read_lines",
    "json_problem",
    "json_message",
    "too_deep_to_parse",
    "list_records",
    "listed_under",
    "type_name",
    "JsonPeek",
    "peek_json",
    "first_jsonl_record",
]

_SNIFF_CHUNK = 64 * 1024


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
        return parse_json(text)
    except RecursionError:
        raise CatalogError(f"catalog file {str(path)!r} {too_deep_to_parse(text)}") from None
    except json.JSONDecodeError as exc:
        # An unterminated string is reported where it starts, not at the end of the file.
        ends_early = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        hint = " (the file ends early: truncated?)" if ends_early else ""
        raise CatalogError(
            f"catalog file {str(path)!r} is not valid JSON: {json_problem(exc)}{hint}"
        ) from exc


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def parse_json(text: str) -> Any:
    """JSON text of a catalog, read whatever it holds.

    * Nested too deep for Python's parser (a ``RecursionError``): the containers below
      :data:`~toolsift.ingest.nesting.PARSE_CUT_DEPTH` are cut (:func:`cut_json_depth`) and the text
      parsed again, so only the deep records are rejected later, each naming its field.
    * A ``\\ud800``-style escape with no partner (a lone surrogate, which no UTF-8 text can hold) is
      replaced by U+FFFD, the replacement character, wherever it is.

    Raises:
        json.JSONDecodeError: the text is not JSON.
        RecursionError: still too deep after the cut (it cannot be: the cut text nests at most
            ``PARSE_CUT_DEPTH`` levels).
    """
    try:
        value = json.loads(text)
    except RecursionError:
        value = json.loads(cut_json_depth(text, PARSE_CUT_DEPTH))
    return without_lone_surrogates(value) if _SURROGATE_ESCAPE.search(text) else value


def _repaired(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def without_lone_surrogates(value: Any) -> Any:
    """``value`` with every string (keys too) holding a lone surrogate repaired (U+FFFD in its place);
    walked with its own stack, for any depth. Containers are repaired in place."""
    stack = [value]
    if isinstance(value, str):
        return _repaired(value)
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key in list(node):
                item = node[key]
                if isinstance(item, str):
                    item = _repaired(item)
                elif isinstance(item, (dict, list)):
                    stack.append(item)
                fixed = _repaired(key) if isinstance(key, str) else key
                if fixed != key:
                    del node[key]
                node[fixed] = item
        elif isinstance(node, list):
            for index, item in enumerate(node):
                if isinstance(item, str):
                    node[index] = _repaired(item)
                elif isinstance(item, (dict, list)):
                    stack.append(item)
    return value


def read_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """``(line number, raw line)`` for each line of the file (numbered from 1), streamed.

    Raises:
        CatalogError: the file is missing or cannot be read.
    """
    require_file(path)
    try:
        with open(path, "rb") as handle:
            yield from enumerate(handle, start=1)
    except OSError as exc:
        raise CatalogError(f"catalog file {str(path)!r} cannot be read: {exc.strerror}") from exc


def too_deep_to_parse(text: str) -> str:
    """Why JSON text that Python's parser gave up on (``RecursionError``) cannot be read, and where."""
    return f"is too deep to parse: {json_nesting(text)}"


def json_message(exc: json.JSONDecodeError) -> str:
    """What a JSON parse error says, without its position."""
    return re.sub(r"\s+at$", "", exc.msg)


def json_problem(exc: json.JSONDecodeError) -> str:
    """``<what> at line L column C`` for a JSON parse error."""
    return f"{json_message(exc)} at line {exc.lineno} column {exc.colno}"


def list_records(value: Any, path: Path, what: str) -> list[Any]:
    """``value`` when it is a JSON list, else :class:`CatalogError` saying what was expected."""
    if not isinstance(value, list):
        raise CatalogError(
            f"catalog file {str(path)!r}: expected a JSON list of {what} at the top level, "
            f"got {type_name(value)}"
        )
    return value


def listed_under(
    data: Mapping[str, Any], path: Path, keys: tuple[str, ...], what: str, expected: str
) -> list[Any]:
    """The list under the first of ``keys`` that the top-level object ``data`` has.

    Raises:
        CatalogError: the value there is not a list ("expected a JSON list of <what> under <key>"),
            or ``data`` has none of ``keys`` ("expected <expected>; found keys ...").
    """
    for key in keys:
        if key in data:
            return list_records(data[key], path, f"{what} under {key!r}")
    raise CatalogError(
        f"catalog file {str(path)!r}: expected {expected}; found keys {sorted(data)[:10]}"
    )


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
                    whole = parse_json(text + handle.read())
                except (json.JSONDecodeError, RecursionError):
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
                    except RecursionError:  # the first record nests too deep for the parser: read it cut
                        try:
                            first, _ = decoder.raw_decode(cut_json_depth(body + handle.read()))
                        except (json.JSONDecodeError, RecursionError):
                            return None
                        return JsonPeek("list", first)
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
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    return None
