"""Loading a model is silent: no "Loading weights" progress bar on every ``toolsift search``."""

from __future__ import annotations

import pytest

from toolsift.config import Settings


@pytest.mark.usefixtures("clean_env")
def test_loading_the_bundled_embedder_writes_nothing_to_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    from transformers.utils import logging as hf_logging

    from toolsift.encoders.embedding import BUNDLED_MODEL, _cached, load_embedder

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


def test_concurrent_query_encodes_share_forward_passes_and_give_the_vectors_of_lone_encodes() -> None:
    import threading

    import numpy as np

    from toolsift.encoders.embedding import Embedder

    embedder = Embedder(device="cpu")
    texts = [f"find a tool that converts {thing} files" for thing in
             ("pdf", "csv", "excel", "word", "image", "audio", "video", "markdown", "json", "xml", "zip", "html")]
    alone = {t: embedder.encode_query([t], cache=False)[0] for t in texts}
    passes = 0
    forward = embedder._forward

    def counting(batch: list[str], side: str) -> np.ndarray:
        nonlocal passes
        passes += 1
        return forward(batch, side)

    embedder._forward = counting  # type: ignore[method-assign]
    start = threading.Barrier(len(texts))
    got: dict[str, np.ndarray] = {}

    def ask(text: str) -> None:
        start.wait()
        got[text] = embedder.encode_query([text])[0]

    threads = [threading.Thread(target=ask, args=(t,)) for t in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert set(got) == set(texts)
    assert all(np.allclose(got[t], alone[t], atol=1e-5) for t in texts)  # padding in a batch changes nothing
    assert passes < len(texts)  # the waiting requests rode along in shared passes
