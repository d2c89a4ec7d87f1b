"""How deep a catalog's values nest, measured without recursion: any depth gets a clear answer.

A catalog file of a kilobyte can nest a record's parameters thousands of levels deep. Python walks
nested values recursively (``json.dumps``, ``dataclasses.asdict``, normalisation's own readers), and
its stack ends near a thousand frames, so a record is measured here first, iteratively, and one
nested deeper than ``Settings.max_nesting_depth`` is rejected naming its field before anything walks
it (:func:`nesting_problem`). Text too deep for Python's JSON parser itself is cut down by :func:`cut_json_depth` (every
container below :data:`PARSE_CUT_DEPTH` becomes ``[]``, still deeper than any allowed limit), so
the file parses and only its deep records are rejected, each naming its field;
:func:`json_nesting` scans text without parsing it, to say where it nests deepest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DEFAULT_MAX_NESTING_DEPTH",
    "too_deep",
    "nesting_problem",
    "JsonNesting",
    "json_nesting",
    "PARSE_CUT_DEPTH",
    "cut_json_depth",
]

#: ``Settings.max_nesting_depth``'s default (and least) value: a record's documentation is level 1.
#: Real catalogs nest far less (LiveMCPBench's deepest tool schema: 13 levels with the file's own).
DEFAULT_MAX_NESTING_DEPTH = 32

_Trail = tuple[Any, "_Trail"] | None
_SHOWN_STEPS = 6


def too_deep(value: Any, limit: int) -> tuple[Any, ...] | None:
    """The path (keys and indices) to a list or object nested deeper than ``limit`` levels, or None.

    ``value`` itself, when a list or an object, is level 1; a scalar nests nothing. The walk keeps its
    own stack, so it answers for any depth.
    """
    stack: list[tuple[Any, int, _Trail]] = [(value, 1, None)]
    while stack:
        node, level, trail = stack.pop()
        items = node.items() if isinstance(node, Mapping) else enumerate(node) if isinstance(node, (list, tuple)) else None
        if items is None:
            continue
        if level > limit:
            return _steps(trail)
        for key, item in items:
            if isinstance(item, (Mapping, list, tuple)):
                stack.append((item, level + 1, (key, trail)))
    return None


def _steps(trail: _Trail) -> tuple[Any, ...]:
    steps: list[Any] = []
    while trail is not None:
        key, trail = trail
        steps.append(key)
    return tuple(reversed(steps))


def _where(steps: tuple[Any, ...]) -> str:
    text = "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in steps[:_SHOWN_STEPS])
    return text.lstrip(".") + ("…" if len(steps) > _SHOWN_STEPS else "")


def nesting_problem(documentation: Mapping[str, Any], limit: int, prefix: str = "") -> tuple[str, str] | None:
    """``(field, reason)`` when a record's documentation nests deeper than ``limit`` levels, else None.

    The field is the top-level key the deep value is under (``parameters``; under OpenAI's
    ``function`` wrapper ``function.parameters``), after ``prefix`` (``standardized.``).
    """
    steps = too_deep(documentation, limit)
    if not steps:
        return None
    depth = 1 if len(steps) > 1 and steps[0] == "function" and isinstance(steps[1], str) else 0
    field = prefix + ".".join(str(step) for step in steps[: depth + 1])
    return field, f"nested deeper than {limit} levels (at {_where(steps)}; the max_nesting_depth setting)"


@dataclass(frozen=True)
class JsonNesting:
    """How deep JSON text nests: its ``depth``, where it first gets there (1-based ``line`` and
    ``column``) and what holds that deepest point: the top-level ``key`` when the text is an object,
    the ``record`` (0-based index) when it is a list."""

    depth: int
    line: int
    column: int
    key: str | None
    record: int | None

    def __str__(self) -> str:
        what = f"record {self.record} nests" if self.record is not None else "nested"
        under = f" under {self.key!r}" if self.key else ""
        return f"{what} {self.depth:,} levels deep{under} at line {self.line} column {self.column}"


_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]')


def json_nesting(text: str) -> JsonNesting:
    """Scan JSON text (valid or not) for its deepest nesting, without parsing it."""
    depth = deepest = 0
    at = 0
    key: str | None = None
    record: int | None = None
    top_key: str | None = None
    last_string: str | None = None
    top_is_object = False
    element = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token[0] == '"':
            if depth == 1:
                last_string = token
            continue
        if token == ",":
            element += depth == 1
            continue
        if token in "[{":
            if depth == 0:
                top_is_object = token == "{"
            elif depth == 1:
                top_key = last_string[1:-1] if top_is_object and last_string else None
            depth += 1
            if depth > deepest:
                deepest, at, key = depth, match.start(), top_key
                record = None if top_is_object or depth == 1 else element
        else:
            depth = max(depth - 1, 0)
    line = text.count("\n", 0, at) + 1
    column = at - text.rfind("\n", 0, at)
    return JsonNesting(deepest, line, column, key, record)


#: Where :func:`cut_json_depth` cuts: deeper than the largest ``max_nesting_depth`` (128), so a cut
#: record is still rejected for depth, and shallow enough for Python's parser and every reader.
PARSE_CUT_DEPTH = 256


def cut_json_depth(text: str, depth: int = PARSE_CUT_DEPTH) -> str:
    """JSON text with every list or object that opens at level ``depth`` replaced by ``[]``.

    Strings are left whole (brackets inside them are text); what lies outside the deep containers is
    unchanged, so a record nested past ``depth`` keeps its identity and fields and comes out exactly
    ``depth`` levels deep: the ingest rejects it naming the field, and its siblings are read as usual.
    """
    pieces: list[str] = []
    level = 0
    kept = 0  # the text before this offset is in ``pieces``
    skipping_from: int | None = None
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token[0] == '"' or token == ",":
            continue
        if token in "[{":
            level += 1
            if level == depth and skipping_from is None:
                skipping_from = match.start()
        else:
            if level == depth and skipping_from is not None:
                pieces += [text[kept:skipping_from], "[]"]
                kept, skipping_from = match.end(), None
            level = max(level - 1, 0)
    if skipping_from is not None:  # never closed: the text is truncated; let the parser say so
        return text
    pieces.append(text[kept:])
    return "".join(pieces)
