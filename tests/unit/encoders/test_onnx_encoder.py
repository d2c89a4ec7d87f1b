"""The ONNX Runtime encoder: the bundled model exported here, the same embeddings as torch's.

``embedding_backend='onnx'`` must be a faster way to the *same* vectors (an index built on one backend
serves queries encoded by the other); ``onnx-int8`` moves them slightly and so is another model to an
index. Texts are a real catalog's (LiveMCPBench), long and short.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from toolsift.encoders.embedding import BUNDLED_MODEL, Embedder, model_path, resolve_backend
from toolsift.errors import ConfigError
from toolsift.ingest.embed import document_texts
from toolsift.ingest.loaders import load_catalog
from toolsift.ingest.pipeline import normalised_records
from toolsift.mappings import ToolDoc
from hypothesis import given
from hypothesis import strategies as st

from toolsift.encoders.onnx_encoder import PADDING_ALLOWANCE, PADDING_SHARE, OnnxEncoder, export_onnx, padded_batches

DATASETS = Path(__file__).resolve().parents[4] / "shared" / "datasets"


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """Every 7th text toolsift embeds for LiveMCPBench's tools (full documents past 256 tokens too)."""
    records = normalised_records(load_catalog(DATASETS / "livemcpbench" / "tools.json"), 100_000)
    docs = [doc for _, doc in records if isinstance(doc, ToolDoc)]
    found = list(dict.fromkeys(t for doc in docs for t in document_texts(doc)))[::7]
    assert len(found) > 300
    return [*found, "", "x"]


@pytest.fixture(scope="module")
def torch_vectors(texts: list[str]) -> np.ndarray:
    reference = Embedder(device="cpu", backend="torch")
    return reference.encode_document(texts)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


def test_onnx_backend_gives_torch_s_embeddings(texts: list[str], torch_vectors: np.ndarray, cache: Path) -> None:
    onnx = Embedder(device="cpu", backend="onnx", cache_dir=cache)

    vectors = onnx.encode_document(texts)

    assert onnx.name == BUNDLED_MODEL and onnx.dimension == 384
    cosines = (vectors * torch_vectors).sum(axis=1)
    assert cosines.min() >= 0.9999
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # queries and single texts take the same path as batches
    assert np.allclose(onnx.encode_query(texts[:3], cache=False), vectors[:3], atol=1e-5)


def test_a_text_s_embedding_is_the_same_bit_for_bit_alone_or_in_any_batch(texts: list[str], cache: Path) -> None:
    onnx = Embedder(device="cpu", backend="onnx", cache_dir=cache)
    sample = texts[::5]

    together = onnx.encode_document(sample)
    alone = np.stack([onnx.encode_document([t])[0] for t in sample])
    one_padded_batch = onnx._onnx.encode(sample, batch_size=len(sample)) if onnx._onnx is not None else together

    assert (together == alone).all() and (one_padded_batch == alone).all()


@given(st.lists(st.integers(min_value=1, max_value=256), max_size=300), st.integers(min_value=1, max_value=64))
def test_batches_hold_every_text_once_shortest_first_within_the_size_and_the_padding_bound(
    lengths: list[int], batch_size: int
) -> None:
    array = np.array(lengths, dtype=np.int64)

    batches = padded_batches(array, batch_size)

    rows = [int(r) for batch in batches for r in batch]
    assert sorted(rows) == list(range(len(lengths)))
    assert [array[r] for r in rows] == sorted(lengths)  # shortest first, so each batch's width is its last row's
    for batch in batches:
        own, width = int(array[batch].sum()), int(array[batch].max())
        assert 1 <= len(batch) <= batch_size
        assert len(batch) == 1 or len(batch) * width <= (1 + PADDING_SHARE) * own + PADDING_ALLOWANCE


def test_a_request_s_texts_are_not_all_padded_to_the_whole_request_while_a_catalog_s_fill_batches() -> None:
    assert [list(b) for b in padded_batches(np.array([40, 8, 15, 10]), 64)] == [[1, 3, 2], [0]]
    similar = np.array([30 + i % 4 for i in range(256)])
    assert [len(b) for b in padded_batches(similar, 64)] == [64, 64, 64, 64]


def test_int8_backend_stays_close_to_torch_and_is_another_model_to_an_index(
    texts: list[str], torch_vectors: np.ndarray, cache: Path
) -> None:
    int8 = Embedder(device="cpu", backend="onnx-int8", cache_dir=cache)

    cosines = (int8.encode_document(texts) * torch_vectors).sum(axis=1)

    assert int8.name == f"{BUNDLED_MODEL}+int8"
    assert cosines.mean() >= 0.98 and cosines.min() >= 0.9
    assert cosines.min() < 0.9999  # really quantised: not the float32 graph under another name


def test_an_export_is_made_once_and_reused(cache: Path) -> None:
    folder = model_path(BUNDLED_MODEL)
    first = export_onnx(folder, cache, quantise=False)
    written = first.stat().st_mtime_ns

    again = export_onnx(folder, cache, quantise=False)

    assert again == first and again.stat().st_mtime_ns == written
    assert export_onnx(folder, cache, quantise=True) != first
    assert not [p for p in first.parent.parent.iterdir() if p.name.startswith(".export-")]  # no staging left


def test_a_model_the_onnx_path_cannot_reproduce_is_refused_naming_the_setting_and_runs_on_torch(
    tmp_path: Path, cache: Path
) -> None:
    copy = tmp_path / "model"
    shutil.copytree(model_path(BUNDLED_MODEL), copy)
    pooling = json.loads((copy / "1_Pooling" / "config.json").read_text())
    pooling.update(pooling_mode_mean_tokens=False, pooling_mode_max_tokens=True)
    (copy / "1_Pooling" / "config.json").write_text(json.dumps(pooling))

    with pytest.raises(ConfigError, match="embedding_backend='torch'"):
        Embedder(str(copy), device="cpu", backend="onnx", cache_dir=cache)
    torch = Embedder(str(copy), device="cpu", backend="torch", cache_dir=cache)

    assert torch.backend == "torch" and torch.dimension == 384


def test_auto_backend_is_onnx_on_the_cpu_and_torch_on_a_gpu() -> None:
    assert resolve_backend("auto", "cpu") == "onnx"
    assert resolve_backend("auto", "cuda") == "torch"
    assert resolve_backend("onnx-int8", "cpu") == "onnx-int8"
    with pytest.raises(ConfigError, match="embedding_backend"):
        resolve_backend("onnx", "cuda:0")
    with pytest.raises(ConfigError, match="embedding_backend='tensorrt'"):
        resolve_backend("tensorrt", "cpu")
