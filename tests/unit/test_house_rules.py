"""Rooms a newcomer can read: no module over 900 lines, and no function over 120 without a reason.

A long function is sometimes the clearest form (a FastAPI factory whose routes close over what it
built, a benchmark's steps in order); it then says so at its top, in a comment that starts
``# Long:``, before its docstring. Everything else is split by what it does.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.unit.test_layering import MODULES, ROOT

MAX_MODULE_LINES = 900
MAX_FUNCTION_LINES = 120
#: Every product module's file (the layering test's discovery: every package the distribution installs).
FILES = sorted(set(MODULES.values()))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_over_900_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{path.relative_to(ROOT)}: {lines} lines; split it by what it does"


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_long_function_says_why_at_its_top(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    unexplained = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            top = lines[node.lineno - 1:node.body[0].lineno - 1]
            if length > MAX_FUNCTION_LINES and not any(line.strip().startswith("# Long:") for line in top):
                unexplained.append(f"{node.name} ({length} lines)")
    assert not unexplained, f"{path.relative_to(ROOT)}: {unexplained}: split, or give the reason (# Long: ...)"
