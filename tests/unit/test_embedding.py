"""Loading a model is silent: no "Loading weights" progress bar on every ``toolsift search``."""

from __future__ import annotations

import pytest

from toolsift.config import Settings


@pytest.mark.usefixtures("clean_env")
def test_loading_the_bundled_embedder_writes_nothing_to_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    from transformers.utils import logging as hf_logging

    from toolsift.embedding import BUNDLED_MODEL, _cached, load_embedder

    _cached.cache_clear()  # a real load, not the embedder an earlier test left in the cache
    bars_before = hf_logging.is_progress_bar_enabled()
    capfd.readouterr()

    embedder = load_embedder(Settings())

    out, err = capfd.readouterr()
    assert embedder.name == BUNDLED_MODEL and embedder.dimension == 384
    assert err == ""
    assert out == ""
    assert hf_logging.is_progress_bar_enabled() == bars_before  # switched off for the load only


def test_loading_a_cross_encoder_writes_nothing_to_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    from toolsift.ranker.rerankers import CrossEncoderReranker, bundled_minilm_path

    capfd.readouterr()
    reranker = CrossEncoderReranker(bundled_minilm_path(), device="cpu")

    _, err = capfd.readouterr()
    assert reranker.name.startswith("cross-encoder:")
    assert err == ""
