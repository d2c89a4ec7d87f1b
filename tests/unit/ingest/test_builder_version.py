"""The document-building code's version: a hash of its source that changes with the code."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolsift.ingest.version as version


def test_every_named_module_exists_so_none_is_silently_left_out() -> None:
    assert all(file.is_file() for file in version._builder_files())
    loaders = Path(version.__file__).resolve().parent / "loaders"
    named = {name for package, name in version.DOCUMENT_BUILDER_MODULES if package == "toolsift.ingest.loaders"}
    assert {p.name for p in loaders.glob("*.py")} <= named
    screen = {p.name for p in version._builder_files() if p.parent.name == "screen"}
    standardise = {p.name for p in version._builder_files() if p.parent.name == "standardise"}
    assert {"screening.py", "unicode_fold.py", "intent.py", "meaning.py", "e5.py"} <= screen
    assert {"tasks.py", "answers.py", "required.py", "standardiser.py", "catalog.py"} <= standardise


def test_the_version_is_stable_and_follows_the_source(tmp_path: Path) -> None:
    first = version.document_builder_version()
    version.document_builder_version.cache_clear()
    assert version.document_builder_version() == first and len(first) == 16

    changed = tmp_path / "normalise.py"
    changed.write_text((Path(version.__file__).parent / "normalise.py").read_text() + "\n# edited\n")
    files = [changed if f.name == "normalise.py" else f for f in version._builder_files()]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(version, "_builder_files", lambda: files)
        version.document_builder_version.cache_clear()
        assert version.document_builder_version() != first
    version.document_builder_version.cache_clear()
    assert version.document_builder_version() == first
