"""``bench latency``: every dense row and the dense floor pay a cold query encoding in every sample.

The query-embedding cache of :class:`Embedder` used to be warmed by the first dense row, so later rows
and the floor timed a cache hit instead of an encoding. Here the ingest and the node are stubbed out,
the Embedder is the real class (its cache included) over a counting fake model, and the events are
checked: every dense call is immediately preceded by the model encoding that call's query.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import toolsift.bench.search_bench as bench
from toolsift.config import Settings
from toolsift.encoders.embedding import Embedder

Event = tuple[str, str, str]

# A repeated query ("a") and warm-up queries that are timed again afterwards.
QUERIES = {"q1": "a", "q2": "b", "q3": "a", "q4": "c"}
WARMUP = 2
DENSE_ROWS = {"full-doc minilm", "multi-field minilm", "multi-field hybrid", "reference: dense floor"}


class CountingModel:
    """Stands in for the SentenceTransformer: records every text it is asked to encode."""

    def __init__(self, events: list[Event]) -> None:
        self.events = events

    def encode_query(self, texts: Sequence[str], **_: Any) -> np.ndarray:
        self.events.extend(("encode", "", t) for t in texts)
        return np.ones((len(texts), 4), dtype=np.float32) / 2

    encode_document = encode_query


def counting_embedder(events: list[Event]) -> Embedder:
    """The real Embedder (cache, locks, clear_query_cache) without loading a model."""
    embedder = Embedder.__new__(Embedder)
    embedder.name, embedder.device, embedder.batch_size, embedder.dimension = "fake", "cpu", 64, 4
    embedder._model, embedder._onnx = CountingModel(events), None  # type: ignore[assignment]
    embedder._lock, embedder._cache_lock = threading.Lock(), threading.Lock()
    embedder._query_cache = OrderedDict()
    embedder._pending_lock, embedder._pending = threading.Lock(), []
    return embedder


class FakeBackend:
    """Encodes the query for dense retrievers through the embedder, as the Searcher does."""

    def __init__(self, settings: Settings, embedder: Embedder, events: list[Event]) -> None:
        self.settings, self.embedder, self.events = settings, embedder, events

    def search(self, request: Any) -> None:
        if request.retriever != "bm25":
            self.embedder.encode_query([request.query])
        self.events.append(("search", f"{request.method} {request.retriever}", request.query))

    def searcher(self) -> Any:
        return SimpleNamespace(index=SimpleNamespace(index=self.settings.index))


class FakeClient:
    def __init__(self, events: list[Event]) -> None:
        self.events = events

    def search(self, *, index: str, body: dict[str, Any]) -> None:
        self.events.append(("search", "knn" if "knn" in body["query"] else "match", index))


@pytest.fixture()
def events(monkeypatch: pytest.MonkeyPatch, clean_env: None) -> list[Event]:
    log: list[Event] = []
    monkeypatch.setattr(bench, "load_benchmark", lambda *_a, **_k: SimpleNamespace(
        name="tiny", catalog_path=Path("catalog.json"), catalog_format="mcp", queries=QUERIES))
    monkeypatch.setattr(bench, "IndexManager", lambda *_a: SimpleNamespace(delete_all=lambda: None))
    monkeypatch.setattr(bench, "ingest_catalog", lambda *_a, **_k: SimpleNamespace(
        agents=1, tools=2, seconds=1.0, embed_seconds=0.5))
    monkeypatch.setattr(bench, "_embedding_rate", lambda *_a: {"documents": 3})
    monkeypatch.setattr(bench, "SearchBackend", lambda _client, settings, *, embedder: FakeBackend(settings, embedder, log))
    return log


def _rows(events: list[Event], embedder: Embedder) -> dict[str, Any]:
    return bench.run_bench(FakeClient(events), Settings(), embedder, Path("."), warmup=WARMUP)  # type: ignore[arg-type]


def test_every_dense_row_and_the_floor_encode_each_query_cold(events: list[Event]) -> None:
    figures = _rows(events, counting_embedder(events))

    assert list(figures["search_latency_ms"]) == list(bench.SEARCH_VARIANTS)
    calls = [i for i, e in enumerate(events) if e[0] == "search"]
    texts = list(QUERIES.values())
    assert len(calls) == len(bench.SEARCH_VARIANTS) * (WARMUP + len(texts))
    encodes_by_row: dict[str, list[str]] = {}
    previous = -1
    for n, i in enumerate(calls):
        row = list(bench.SEARCH_VARIANTS)[n // (WARMUP + len(texts))]
        between = [e for e in events[previous + 1 : i] if e[0] == "encode"]
        previous = i
        encodes_by_row.setdefault(row, []).extend(t for _, _, t in between)
        expected = texts[:WARMUP] + texts
        query = expected[n % len(expected)]
        # a dense call encodes its own query, once, just before its request; a BM25 call encodes nothing
        assert [t for _, _, t in between] == ([query] if row in DENSE_ROWS else []), (row, n)
    # every dense row (floor included) paid the same encodings: the warm-up's, then one per timed query
    for row in DENSE_ROWS:
        assert encodes_by_row[row] == texts[:WARMUP] + texts, row


def test_a_cache_warmed_before_the_bench_serves_no_timed_call(events: list[Event]) -> None:
    embedder = counting_embedder(events)
    embedder.encode_query(list(QUERIES.values()))  # a cache someone else warmed before the bench
    events.clear()

    _rows(events, embedder)

    floor_encodes = [t for kind, _, t in events if kind == "encode"][-(WARMUP + len(QUERIES)):]
    assert floor_encodes == list(QUERIES.values())[:WARMUP] + list(QUERIES.values())


def test_the_table_says_which_rows_include_a_cold_encoding() -> None:
    for row, includes in bench.SEARCH_VARIANTS.items():
        assert ("cold query encoding" in includes) == (row in DENSE_ROWS), row
        assert ("no encoding" in includes) == (row not in DENSE_ROWS), row
    assert "cleared before every call" in bench.SAMPLING


def test_clear_query_cache_makes_the_next_call_encode_again() -> None:
    events: list[Event] = []
    embedder = counting_embedder(events)
    embedder.encode_query(["x"])
    embedder.encode_query(["x"])
    assert [t for _, _, t in events] == ["x"]  # cached
    embedder.clear_query_cache()
    embedder.encode_query(["x"])
    assert [t for _, _, t in events] == ["x", "x"]
