"""Learned weights as versioned artifacts."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolsift.errors import ConfigError
from toolsift.ranker.artifact import WeightsArtifact, load_artifact
from toolsift.ranker.mftr import MFTRWeights


def _artifact(bias: float = 0.0) -> WeightsArtifact:
    weights = MFTRWeights.initial(("bm25",))
    return WeightsArtifact(weights=MFTRWeights.from_dict({**weights.to_dict(), "bias": bias}),
                           config={"retriever": "bm25", "dataset": "apibank"})


def test_each_save_is_a_new_version_and_a_name_folder_loads_the_newest(tmp_path: Path) -> None:
    first = _artifact(0.1).save(tmp_path, "apibank-bm25")
    second = _artifact(0.2).save(tmp_path, "apibank-bm25")

    assert first.path == tmp_path / "apibank-bm25" / "v001" / "weights.json"
    assert second.path == tmp_path / "apibank-bm25" / "v002" / "weights.json"
    assert load_artifact(tmp_path / "apibank-bm25").weights.bias == pytest.approx(0.2)
    assert load_artifact(first.path.parent).weights.bias == pytest.approx(0.1)
    assert load_artifact(first.path).config["retriever"] == "bm25"


def test_the_digest_changes_with_the_weights() -> None:
    assert _artifact(0.1).digest != _artifact(0.2).digest
    assert _artifact(0.1).digest == _artifact(0.1).digest


def test_a_missing_or_foreign_file_is_a_config_error_naming_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="weights"):
        load_artifact(tmp_path / "nothing")
    bad = tmp_path / "weights.json"
    bad.write_text('{"format": "something-else"}')
    with pytest.raises(ConfigError, match="not a toolsift weights artifact"):
        load_artifact(bad)


def test_names_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="weights name"):
        _artifact().save(tmp_path, "../escape")
