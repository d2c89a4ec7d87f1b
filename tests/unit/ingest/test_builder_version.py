"""The document-building code's version: a hash of its source that changes with the code."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolsift.ingest.version as version


def test_every_named_module_exists_so_none_is_silently_left_out() -> None:
    here = Path(version.__file__).resolve().parent

    assert all((here / name).is_file() for name in version.DOCUMENT_BUILDER_MODULES)
    assert {p.relative_to(here).as_posix() for p in (here / "loaders").glob("*.py")} <= set(
        version.DOCUMENT_BUILDER_MODULES
    )


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
