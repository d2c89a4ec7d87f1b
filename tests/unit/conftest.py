"""Fixtures shared by the unit tests (no node, no model)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

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
