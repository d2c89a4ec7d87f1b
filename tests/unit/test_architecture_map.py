"""The feature map in docs/architecture.md names folders and files that exist.

The map is how a newcomer finds a capability; a path it names that a move left behind would send them
to an empty room. Every backticked path of the map's rows (``folder/`` or ``folder/file.py``) must
exist, and each capability the layout promises one folder for has a row whose folder column is that one
folder.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"


def _map_rows() -> list[list[str]]:
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("## Feature map"):]
    section = section[:section.index("\n## ", 1)]
    return [[cell.strip() for cell in line.strip("|").split("|")]
            for line in section.splitlines() if line.startswith("| ") and not line.startswith("| feature")]


ROWS = _map_rows()


def _paths(cell: str) -> list[str]:
    return [p for p in re.findall(r"`([^`]+)`", cell) if "/" in p and " " not in p and not p.startswith("/")]


def test_the_map_has_rows() -> None:
    assert len(ROWS) >= 15


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r[0])
def test_every_path_a_row_names_exists(row: list[str]) -> None:
    missing = [p for cell in row[1:] for p in _paths(cell) if not (ROOT / p).exists()]
    assert not missing, f"{row[0]}: {missing}"


@pytest.mark.parametrize(("feature", "folder"), [
    ("learning from feedback", "learning/"), ("trained encoders", "encoders/"), ("precise tool sets", "sets/"),
    ("Tool-to-Agent", "agents/"), ("hostile-text screen", "screen/"), ("LLM standardisation", "standardise/"),
    ("benchmarks of speed, scale and faults", "bench/"),
])
def test_a_capability_lives_in_one_folder(feature: str, folder: str) -> None:
    row = next(r for r in ROWS if r[0].startswith(feature))
    assert row[1] == f"`{folder}`"
