"""Printing for people (aligned tables) and machines (JSON), in one place."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

__all__ = ["table", "markdown_table", "rejected_table", "flagged_table", "emit_json", "write_json", "write_figures", "terminal_safe", "safe_lines"]


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain aligned text table."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def rejected_table(errors: Sequence[Any]) -> str:
    """The rejected catalog records (:class:`~toolsift.errors.CatalogRecordError`) as a table."""
    return table(["position", "id", "field", "reason"], [
        [e.position, e.record_id or "", e.field or "", e.reason] for e in errors
    ])


#: The flagged records an ingest prints in full; the rest are counted (``--json`` has them all).
FLAGGED_SHOWN = 20


def flagged_table(flagged: Sequence[Any]) -> str:
    """The records kept with notes (:class:`~toolsift.ingest.raw_records.FlaggedRecord`) as a table."""
    shown = table(["position", "id", "schema", "notes"], [
        [f.position, f.record_id, f.quality, "; ".join(f.notes)] for f in flagged[:FLAGGED_SHOWN]
    ])
    more = len(flagged) - FLAGGED_SHOWN
    return shown + (f"\n… and {more} more flagged (--json lists them all)" if more > 0 else "")


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-flavoured markdown table."""
    lines = ["| " + " | ".join(str(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_fmt(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return terminal_safe(str(value))


# C0/C1 controls (ESC starts a terminal escape sequence) and the bidi controls that reorder a line.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """``text`` with control and bidi characters written as escapes (``\\x1b``, ``\\u202e``), so that
    catalog or request text printed to a terminal can neither move the cursor nor reorder the line."""
    return _UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def safe_lines(text: str) -> str:
    """Text of several lines made :func:`terminal_safe` line by line (its newlines kept)."""
    return "\n".join(terminal_safe(line) for line in text.split("\n"))


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def write_json(path: str | Path, data: Any) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_figures(json_out: Path | None, default: str, figures: Any) -> None:
    """Write a benchmark's figures as JSON to ``json_out`` (``--json``), else to ``default`` in the working
    folder, and say where on stderr."""
    out = json_out or Path(default)
    write_json(out, figures)
    click.echo(f"wrote {out}", err=True)
