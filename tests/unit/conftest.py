"""Fixtures shared by the unit tests (no node, no model)."""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolsift.config import get_settings


@pytest.fixture()
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No TOOLSIFT_* variables, no ./toolsift.toml, and a fresh get_settings cache."""
    for name in list(os.environ):
        if name.startswith("TOOLSIFT_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture()
def cache(monkeypatch: pytest.MonkeyPatch) -> dict[tuple[str, str, str], Any]:
    """``(task, model, subject) -> answer``, served by a patched ``toolsift.llm.cached_output``."""
    import toolsift.llm

    entries: dict[tuple[str, str, str], Any] = {}

    def cached_output(_cache: object, task: str, model: str, subject: str) -> Any:
        return copy.deepcopy(entries.get((task, model, subject)))

    monkeypatch.setattr(toolsift.llm, "cached_output", cached_output)
    return entries
