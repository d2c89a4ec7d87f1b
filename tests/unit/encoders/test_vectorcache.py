"""The vector cache: vectors by (model, dimension, side, SHA-256 of the text) in one SQLite file.

Vectors here are made by hand (the cache stores whatever it is given); the encoder behind
:class:`CachedEncoder` is a small deterministic one that records what it is asked to encode. The
real model's round trip through an ingest is in ``tests/integration/test_ingest_vector_cache.py``.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from toolsift.encoders.vectorcache import CACHE_FORMAT, CachedEncoder, VectorCache, model_identity

DIM = 8
BOUND = 1 << 30


def digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def vector(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)


class RecordingEncoder:
    """Encodes a text as a vector seeded by its length and records every call's texts."""

    def __init__(self, name: str = "recording-model", dimension: int = DIM, batch_size: int = 4) -> None:
        self.name, self.dimension, self.batch_size = name, dimension, batch_size
        self.calls: list[list[str]] = []

    def encode_document(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.stack([np.random.default_rng(len(t)).standard_normal(self.dimension).astype(np.float32)
                         for t in texts])

    @property
    def encoded(self) -> list[str]:
        return [t for call in self.calls for t in call]


@pytest.fixture()
def cache(tmp_path: Path) -> VectorCache:
    return VectorCache(tmp_path / "vectors.sqlite3", max_bytes=BOUND)


def test_a_stored_vector_is_read_back_bit_for_bit(cache: VectorCache) -> None:
    stored = {"convert a file to pdf": vector(1), "send an sms": vector(2)}
    cache.put("model-a", DIM, "document", stored)

    found = cache.get("model-a", DIM, "document", ["send an sms", "convert a file to pdf", "never stored"])

    assert set(found) == {"send an sms", "convert a file to pdf"}
    for text, vec in stored.items():
        assert found[text].dtype == np.float32 and found[text].tobytes() == vec.tobytes()


def test_a_vector_is_never_read_by_another_model_dimension_or_side(cache: VectorCache) -> None:
    cache.put("model-a", DIM, "document", {"a text": vector(1)})

    assert cache.get("model-b", DIM, "document", ["a text"]) == {}
    assert cache.get("model-a", DIM * 2, "document", ["a text"]) == {}
    assert cache.get("model-a", DIM, "query", ["a text"]) == {}
    assert set(cache.get("model-a", DIM, "document", ["a text"])) == {"a text"}


def test_the_cache_outlives_its_process_in_its_file(tmp_path: Path) -> None:
    first = VectorCache(tmp_path / "v.sqlite3", max_bytes=BOUND)
    first.put("model-a", DIM, "document", {"kept": vector(3)})
    first.close()

    again = VectorCache(tmp_path / "v.sqlite3", max_bytes=BOUND)

    assert again.get("model-a", DIM, "document", ["kept"])["kept"].tobytes() == vector(3).tobytes()


def test_a_text_the_cache_holds_is_not_encoded_again(cache: VectorCache) -> None:
    model = RecordingEncoder()
    texts = ["search the web", "read a pdf file", "search the web", "convert currencies"]

    cold = CachedEncoder(model, cache).encode_document(texts)
    warm_encoder = CachedEncoder(model, cache)
    warm = warm_encoder.encode_document(texts + ["a new text"])

    assert sorted(model.encoded) == sorted(["search the web", "read a pdf file", "convert currencies", "a new text"])
    assert (warm_encoder.encoded, warm_encoder.cached) == (1, 3)
    assert warm[:4].tobytes() == cold.tobytes()  # the cached vectors are the ones computed cold
    assert cold.shape == (4, DIM) and cold[0].tobytes() == cold[2].tobytes()


def test_a_different_model_never_reads_another_models_vectors(cache: VectorCache) -> None:
    CachedEncoder(RecordingEncoder(name="model-a"), cache).encode_document(["a shared text"])
    other = RecordingEncoder(name="model-b")
    quantised = RecordingEncoder(name="model-a")
    quantised.backend = "onnx-int8"  # type: ignore[attr-defined]

    for encoder in (other, quantised):
        cached = CachedEncoder(encoder, cache)
        cached.encode_document(["a shared text"])
        assert encoder.encoded == ["a shared text"] and cached.cached == 0


def test_texts_are_encoded_longest_first_one_batch_per_call() -> None:
    model = RecordingEncoder(batch_size=2)
    texts = ["bb", "a", "dddd", "ccc", "eeeee"]

    vectors = CachedEncoder(model, None).encode_document(texts)

    assert model.calls == [["eeeee", "dddd"], ["ccc", "bb"], ["a"]]
    assert [v.tobytes() for v in vectors] == [model.encode_document([t])[0].tobytes() for t in texts]


def test_texts_are_sorted_by_their_tokens_with_the_models_own_tokenizer() -> None:
    model = RecordingEncoder(name="all-MiniLM-L6-v2", batch_size=1)  # the bundled model's tokenizer alone
    prose = "Convert an amount of money into another currency today"  # 54 characters, 11 tokens
    json_text = '{"a":[1,2],"b":{"c":3}}'  # 23 characters, 25 tokens
    chinese = "将金额从一种货币转换为另一种货币"  # 16 characters, 18 tokens

    CachedEncoder(model, None).encode_document([prose, json_text, chinese])

    assert model.calls == [[json_text], [chinese], [prose]]


def test_a_file_that_is_not_sqlite_is_ignored_with_a_warning_and_left_as_it_was(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "vectors.sqlite3"
    path.write_bytes(b"this is no database, just bytes someone left here\n" * 100)
    before = path.read_bytes()
    model = RecordingEncoder()

    with caplog.at_level(logging.WARNING, logger="toolsift.encoders.vectorcache"):
        cache = VectorCache(path, max_bytes=BOUND)
        vectors = CachedEncoder(model, cache).encode_document(["still encoded"])

    assert not cache.enabled and vectors.shape == (1, DIM) and model.encoded == ["still encoded"]
    assert cache.get("recording-model", DIM, "document", ["still encoded"]) == {}
    assert path.read_bytes() == before
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert str(path) in caplog.records[0].getMessage()


def test_another_programs_database_is_ignored_with_a_warning_and_left_as_it_was(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "vectors.sqlite3"
    with sqlite3.connect(path) as foreign:
        foreign.execute("CREATE TABLE notes (body TEXT)")
        foreign.execute("INSERT INTO notes VALUES ('mine')")
    foreign.close()

    with caplog.at_level(logging.WARNING, logger="toolsift.encoders.vectorcache"):
        cache = VectorCache(path, max_bytes=BOUND)
        cache.put("model-a", DIM, "document", {"a text": vector(1)})

    assert not cache.enabled and "not a toolsift vector cache" in caplog.text
    with sqlite3.connect(path) as foreign:
        assert foreign.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall() == [("notes",)]
    foreign.close()


def test_a_cache_of_another_format_version_is_not_read(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "vectors.sqlite3"
    VectorCache(path, max_bytes=BOUND).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = 'toolsift-vector-cache/0' WHERE key = 'format'")
    conn.close()

    with caplog.at_level(logging.WARNING, logger="toolsift.encoders.vectorcache"):
        cache = VectorCache(path, max_bytes=BOUND)

    assert not cache.enabled and CACHE_FORMAT in caplog.text


def test_a_stored_vector_of_the_wrong_length_is_a_miss(cache: VectorCache, tmp_path: Path) -> None:
    cache.put("model-a", DIM, "document", {"damaged": vector(1), "intact": vector(2)})
    with sqlite3.connect(tmp_path / "vectors.sqlite3") as conn:
        conn.execute("UPDATE vectors SET vector = substr(vector, 1, 12) WHERE digest = ?", (digest("damaged"),))
    conn.close()

    found = cache.get("model-a", DIM, "document", ["damaged", "intact"])

    assert set(found) == {"intact"}


def test_trim_drops_the_least_recently_used_vectors_beyond_the_bound(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path / "vectors.sqlite3", max_bytes=800 * 1024)
    old = {f"old text {i}": np.full(256, i, dtype=np.float32) for i in range(400)}
    new = {f"new text {i}": np.full(256, i, dtype=np.float32) for i in range(400)}
    cache.put("model-a", 256, "document", old)
    cache.put("model-a", 256, "document", new)
    with sqlite3.connect(tmp_path / "vectors.sqlite3") as conn:  # the old ones were last used a day ago
        conn.executemany("UPDATE vectors SET used = used - 24 WHERE digest = ?", [(digest(t),) for t in old])
    conn.close()
    assert cache.live_bytes() > cache.max_bytes

    dropped = cache.trim()

    assert dropped > 0 and cache.live_bytes() <= cache.max_bytes
    assert set(cache.get("model-a", 256, "document", list(new))) == set(new)  # the least recently used went first
    assert len(cache.get("model-a", 256, "document", list(old))) == len(old) - dropped
    assert cache.trim() == 0


def test_processes_writing_one_cache_at_once_all_succeed(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite3"
    script = """
import sys, numpy as np
from pathlib import Path
from toolsift.encoders.vectorcache import VectorCache
cache = VectorCache(Path(sys.argv[1]), max_bytes=1 << 30)
me = int(sys.argv[2])
for batch in range(20):
    # texts 0-9 of every batch are written by both processes, the rest by this one
    cache.put("model-a", 8, "document", {f"t{batch}-{i if i < 10 else f'{me}-{i}'}": np.full(8, i, dtype=np.float32)
                                         for i in range(20)})
assert cache.enabled
"""
    writers = [subprocess.Popen([sys.executable, "-c", script, str(path), str(n)]) for n in (1, 2)]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]

    cache = VectorCache(path, max_bytes=BOUND)
    assert cache.count() == 20 * (10 + 2 * 10)


def test_a_model_whose_files_changed_is_another_model(tmp_path: Path) -> None:
    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "modules.json").write_text("[]")
    (folder / "model.safetensors").write_bytes(b"weights v1")
    before = model_identity(RecordingEncoder(name=str(folder)))
    (folder / "model.safetensors").write_bytes(b"weights v2, retrained")

    after = model_identity(RecordingEncoder(name=str(folder)))

    assert before != after and before.startswith(f"{folder}|{DIM}|")
