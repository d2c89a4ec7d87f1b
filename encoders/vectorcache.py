"""Document embeddings remembered on disk by content, so a text is encoded once per model.

A catalog re-ingested (a rebuild, a new index version, an evaluation index rebuilt because the
document code changed) mostly holds texts embedded before; encoding them again was nearly all of an
ingest's time. :class:`VectorCache` keeps every document vector under the key (model identity,
dimension, side, SHA-256 of the text) in one SQLite file (``Settings.vector_cache_path``), and
:class:`CachedEncoder` puts it in front of an :class:`~toolsift.encoders.embedding.Embedder`: only texts the
cache does not hold reach the model, sorted by length and encoded one batch per call (little padding,
and the model is never held longer than one forward pass, so queries of the same process interleave).

- **Keyed by model.** The identity is the model's name, its dimension, a fingerprint of its files
  (names, sizes, modification times: a retrained model in the same folder is another model) and the
  embedder's ``backend`` when it names one (:func:`model_identity`); the vector's length is checked
  against the dimension on every read. A model never reads another's vectors.
- **Concurrent processes.** SQLite in WAL mode with a busy timeout: readers never block, writers take
  turns; two ingests sharing the cache write the same vector for the same key (``INSERT OR IGNORE``).
- **Bounded.** ``vector_cache_max_mb``: :meth:`VectorCache.trim` (called when an ingest ends) drops the
  least recently used vectors until the live pages fit in 90% of the bound; each lookup marks its hits
  used (to the hour). Deleting the file loses nothing but time.
- **Never in the way.** A file that is not SQLite, a database of another program, a cache of another
  format version, a full disk or a lock held past the timeout is a warning (logged once, naming the
  file) and the cache is off for the rest of that ingest: lookups miss, writes are dropped. The file is
  left as it was.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np

from toolsift.errors import ConfigError

__all__ = ["VectorCache", "CachedEncoder", "model_identity", "CACHE_FILE", "CACHE_FORMAT"]

_log = logging.getLogger(__name__)

#: The cache's file name inside ``Settings.vector_cache_path``.
CACHE_FILE = "vectors.sqlite3"
#: Written into the file's ``meta`` table; a file without it (or with another) is not read.
CACHE_FORMAT = "toolsift-vector-cache/1"
#: Host parameters per statement (SQLite's default limit is 32766; small statements stay fast).
_CHUNK = 500
#: Seconds a writer waits for another process's write to finish before the cache gives up.
_BUSY_TIMEOUT_S = 30.0

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS models (id INTEGER PRIMARY KEY, identity TEXT NOT NULL, "
    "dimension INTEGER NOT NULL, UNIQUE (identity, dimension))",
    # a rowid table: its rows stay on their page up to ~16 KB (a WITHOUT ROWID row past ~4 KB / 4 of a
    # page spills into overflow pages: a 1.5 KB MiniLM vector would take two 4 KB pages)
    "CREATE TABLE IF NOT EXISTS vectors (id INTEGER PRIMARY KEY, model INTEGER NOT NULL, side TEXT NOT NULL, "
    "digest BLOB NOT NULL, vector BLOB NOT NULL, used INTEGER NOT NULL)",
    "CREATE UNIQUE INDEX IF NOT EXISTS vectors_key ON vectors (model, side, digest)",
    "CREATE INDEX IF NOT EXISTS vectors_used ON vectors (used)",
)


class _Encoder(Protocol):
    name: str
    dimension: int

    def encode_document(self, texts: Sequence[str]) -> np.ndarray: ...


def _digest(text: str) -> bytes:
    # surrogatepass: a lone surrogate still hashes (the loaders repair them, a caller may not have)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def _hour() -> int:
    return int(time.time() // 3600)


def _files_fingerprint(folder: str) -> str:
    digest = hashlib.sha256()
    root = Path(folder)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        stat = path.stat()
        digest.update(f"{path.relative_to(root)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def _model_folder(name: str) -> Path:
    """The local folder of the model ``name`` (an embedder may name a variant ``<model>+<variant>``)."""
    from toolsift.encoders.embedding import model_path

    try:
        return model_path(name)
    except ConfigError:
        base, plus, _variant = name.partition("+")
        if not plus:
            raise
        return model_path(base)


@lru_cache(maxsize=4)
def _token_counter(folder: str) -> Callable[[Sequence[str]], list[int]] | None:
    """Counts each text's tokens (up to the model's ``max_seq_length``) with the model's own tokenizer;
    None when the folder has none that transformers can load."""
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    except (OSError, ValueError, KeyError):
        return None
    config = Path(folder) / "sentence_bert_config.json"
    try:
        cap = int(json.loads(config.read_text(encoding="utf-8")).get("max_seq_length", 512))
    except (OSError, ValueError, AttributeError):
        cap = 512

    lock = threading.Lock()  # a fast tokenizer set to truncate is not to be called from two threads at once

    def count(texts: Sequence[str]) -> list[int]:
        with lock:
            ids = tokenizer(list(texts), truncation=True, max_length=cap, return_attention_mask=False,
                            return_token_type_ids=False)["input_ids"]
        return [len(row) for row in ids]

    return count


def model_identity(embedder: _Encoder) -> str:
    """The cache's name for ``embedder``'s vectors: ``name|dimension|files|backend``.

    ``files`` fingerprints the local model folder (names, sizes, modification times), so weights
    replaced in place are another model; a model toolsift cannot find locally is named alone.
    ``backend`` is the embedder's ``backend`` attribute when it has one (e.g. an ONNX or int8 runtime
    whose vectors differ from torch's), else empty.
    """
    try:
        files = _files_fingerprint(str(_model_folder(embedder.name)))
    except (ConfigError, OSError):
        files = ""
    backend = str(getattr(embedder, "backend", "") or "")
    return f"{embedder.name}|{embedder.dimension}|{files}|{backend}"


def _write_ahead(conn: sqlite3.Connection) -> None:
    """Put the file in WAL mode. The switch needs the file to itself and SQLite answers "database is
    locked" at once rather than waiting (its busy timeout does not cover it), so while another process
    creates or opens the same new file it is tried again, within the busy timeout."""
    deadline = time.monotonic() + _BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class VectorCache:
    """Vectors by (model identity, side, SHA-256 of the text) in the SQLite file ``path``.

    Args:
        path: the cache file; created (with its folder) when missing.
        max_bytes: the bound :meth:`trim` holds the file's live pages to.

    Every method is safe to call from any thread and never raises a database error: see the
    module's docstring for what turns the cache off.
    """

    def __init__(self, path: Path, *, max_bytes: int) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._models: dict[tuple[str, int], int] = {}
        self._broken = False
        self._open()

    @property
    def enabled(self) -> bool:
        """False once the cache turned itself off (the warning said why)."""
        return not self._broken

    def _off(self, why: str) -> None:
        if not self._broken:
            _log.warning("vector cache %s is not used: %s; every text is encoded", self.path, why)
        self._shut()

    def _shut(self) -> None:
        """Turn the cache off and close its file, quietly."""
        self._broken = True
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None,
                                   check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            self._off(f"it cannot be opened ({exc})")
            return
        self._conn = conn
        try:
            # reading the schema is what finds a file that is not SQLite ("file is not a database")
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables and "meta" not in tables:
                self._off("it is not a toolsift vector cache (another program's database?)")
                return
            if not tables:
                conn.execute("PRAGMA page_size = 16384")  # before the first table: a new file's page size
                conn.execute("BEGIN IMMEDIATE")  # two processes creating it at once: one creates, one waits
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('format', ?)", (CACHE_FORMAT,))
                conn.execute("COMMIT")
            found = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
            if found is None or found[0] != CACHE_FORMAT:
                self._off(f"its format is {found[0] if found else 'unknown'!r}, not {CACHE_FORMAT!r}")
                return
            _write_ahead(conn)
            conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error as exc:
            self._off(f"it cannot be read ({exc})")

    def _model_id(self, identity: str, dimension: int, *, create: bool) -> int | None:
        """The model's row id; None when it has none and ``create`` is False (a lookup writes nothing)."""
        key = (identity, dimension)
        if key not in self._models:
            assert self._conn is not None
            if create:
                self._conn.execute("INSERT OR IGNORE INTO models (identity, dimension) VALUES (?, ?)", key)
            row = self._conn.execute("SELECT id FROM models WHERE identity = ? AND dimension = ?", key).fetchone()
            if row is None:
                return None
            self._models[key] = int(row[0])
        return self._models[key]

    def get(self, identity: str, dimension: int, side: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors of those ``texts`` the cache holds for this model and side (float32, read-only).

        A stored vector whose length is not ``dimension`` floats is a miss. Hits are marked used.
        """
        with self._lock:
            if self._broken or not texts:
                return {}
            try:
                return self._get(identity, dimension, side, texts)
            except sqlite3.Error as exc:
                self._off(f"a lookup failed ({exc})")
                return {}

    def _get(self, identity: str, dimension: int, side: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        assert self._conn is not None
        model = self._model_id(identity, dimension, create=False)
        if model is None:
            return {}
        by_digest = {_digest(t): t for t in dict.fromkeys(texts)}
        digests = list(by_digest)
        size, now = 4 * dimension, _hour()
        found: dict[str, np.ndarray] = {}
        stale: list[bytes] = []
        for part in _parts(digests):
            marks = ",".join("?" * len(part))
            rows = self._conn.execute(
                f"SELECT digest, vector, used FROM vectors WHERE model = ? AND side = ? AND digest IN ({marks})",
                (model, side, *part),
            ).fetchall()
            for digest, blob, used in rows:
                if len(blob) != size:
                    continue
                found[by_digest[digest]] = np.frombuffer(blob, dtype="<f4")
                if used < now:
                    stale.append(digest)
        if stale:  # least recently used: marked to the hour, so a re-ingest within the hour writes nothing
            self._conn.execute("BEGIN IMMEDIATE")
            for part in _parts(stale):
                marks = ",".join("?" * len(part))
                self._conn.execute(
                    f"UPDATE vectors SET used = ? WHERE model = ? AND side = ? AND digest IN ({marks})",
                    (now, model, side, *part),
                )
            self._conn.execute("COMMIT")
        return found

    def put(self, identity: str, dimension: int, side: str, vectors: Mapping[str, np.ndarray]) -> None:
        """Remember ``vectors`` (text → vector of ``dimension`` floats) for this model and side."""
        with self._lock:
            if self._broken or not vectors:
                return
            try:
                assert self._conn is not None
                model, now = self._model_id(identity, dimension, create=True), _hour()
                rows = []
                for text, vector in vectors.items():
                    blob = np.ascontiguousarray(vector, dtype="<f4").tobytes()
                    if len(blob) != 4 * dimension:
                        raise ConfigError(f"a vector of {len(blob) // 4} floats for a {dimension}-dimension model")
                    rows.append((model, side, _digest(text), blob, now))
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.executemany(
                    "INSERT OR IGNORE INTO vectors (model, side, digest, vector, used) VALUES (?, ?, ?, ?, ?)", rows
                )
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._off(f"a write failed ({exc})")

    def live_bytes(self) -> int:
        """Bytes of the file's pages in use (freed pages, which SQLite reuses, not counted)."""
        with self._lock:
            if self._broken:
                return 0
            try:
                return self._live_bytes()
            except sqlite3.Error as exc:
                self._off(f"its size cannot be read ({exc})")
                return 0

    def _live_bytes(self) -> int:
        assert self._conn is not None
        page_size = int(self._conn.execute("PRAGMA page_size").fetchone()[0])
        pages = int(self._conn.execute("PRAGMA page_count").fetchone()[0])
        free = int(self._conn.execute("PRAGMA freelist_count").fetchone()[0])
        return (pages - free) * page_size

    def trim(self) -> int:
        """Drop the least recently used vectors until the live pages fit in 90% of ``max_bytes``.

        Returns:
            How many vectors were dropped (0 while the cache is within its bound).
        """
        with self._lock:
            if self._broken:
                return 0
            try:
                live = self._live_bytes()
                if live <= self.max_bytes:
                    return 0
                assert self._conn is not None
                target, dropped = 0.9 * self.max_bytes, 0
                # rows of equal size: drop the share of rows that is the share of bytes over the target;
                # the schema's own pages do not shrink, so a second round takes what the first left
                for _ in range(8):
                    rows = int(self._conn.execute("SELECT count(*) FROM vectors").fetchone()[0])
                    if live <= target or rows == 0:
                        break
                    drop = min(rows, max(1, math.ceil(rows * (live - target) / live)))
                    self._conn.execute("BEGIN IMMEDIATE")
                    dropped += self._conn.execute(
                        "DELETE FROM vectors WHERE id IN (SELECT id FROM vectors ORDER BY used, id LIMIT ?)", (drop,)
                    ).rowcount
                    self._conn.execute("COMMIT")
                    live = self._live_bytes()
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                return dropped
            except sqlite3.Error as exc:
                self._off(f"it cannot be trimmed ({exc})")
                return 0

    def count(self, identity: str | None = None) -> int:
        """Vectors held (of one model identity, or of all)."""
        with self._lock:
            if self._broken:
                return 0
            try:
                assert self._conn is not None
                if identity is None:
                    return int(self._conn.execute("SELECT count(*) FROM vectors").fetchone()[0])
                return int(self._conn.execute(
                    "SELECT count(*) FROM vectors JOIN models ON models.id = vectors.model WHERE models.identity = ?",
                    (identity,),
                ).fetchone()[0])
            except sqlite3.Error as exc:
                self._off(f"it cannot be read ({exc})")
                return 0

    def close(self) -> None:
        """Close the file (the cache is off afterwards, silently)."""
        with self._lock:
            self._shut()


class _Stopped(Exception):
    """Raised by a stopped :class:`CachedEncoder` in the worker whose consumer is gone (never seen)."""


def _parts(items: Sequence[bytes]) -> Iterator[Sequence[bytes]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


class CachedEncoder:
    """An embedder's :meth:`encode_document` with a :class:`VectorCache` in front.

    Texts the cache holds are not encoded; the others are encoded longest first — by their token
    count with the model's own tokenizer (characters when it has none to load) — one batch of the
    embedder's ``batch_size`` per call, so each batch is padded to about its own texts' length and the
    model is held for one forward pass at a time, and remembered as each batch ends (an ingest
    stopped half-way keeps what it encoded). ``encoded`` and ``cached`` count distinct texts.

    Sorting by tokens, not characters (what sentence-transformers sorts by inside one call): a JSON
    full document or Chinese text holds far more tokens per character than English prose, and on
    LiveMCPBench's texts, in chunks of 2048 sorted by characters, the batches of 64 held 50% more
    token positions than the texts have tokens; sorted by tokens 8% (Toolink: 44% and 9%; the write
    pass before, 64 documents per call, 67% and 70%).

    Args:
        embedder: the model (``name``, ``dimension``, ``encode_document``).
        cache: the cache, or None to encode every text (still sorted and batched).
    """

    def __init__(self, embedder: _Encoder, cache: VectorCache | None) -> None:
        self.embedder = embedder
        self.cache = cache
        self.name: str = embedder.name
        self.dimension: int = embedder.dimension
        self.batch_size = max(1, int(getattr(embedder, "batch_size", 64)))
        self.identity = model_identity(embedder) if cache is not None else ""
        try:
            self._tokens = _token_counter(str(_model_folder(embedder.name)))
        except ConfigError:
            self._tokens = None
        self.encoded = 0
        self.cached = 0
        self._counts = threading.Lock()
        self._stopped = threading.Event()

    def stop(self) -> None:
        """No more encoding: a call under way ends after its current batch, and every call raises.

        What an ingest's writer does when it stops (an error, Ctrl-C), so its embedding worker is not
        left encoding the rest of a chunk nobody will write.
        """
        self._stopped.set()

    def encode_document(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of index-side texts, shape ``(len(texts), dimension)``, as the embedder gives them."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        unique = list(dict.fromkeys(texts))
        known = self.cache.get(self.identity, self.dimension, "document", unique) if self.cache is not None else {}
        missing = [t for t in unique if t not in known]
        if missing:
            lengths = self._tokens(missing) if self._tokens is not None else [len(t) for t in missing]
            order = sorted(range(len(missing)), key=lambda i: -lengths[i])  # stable: ties keep their order
            missing = [missing[i] for i in order]
        for start in range(0, len(missing), self.batch_size):
            if self._stopped.is_set():
                raise _Stopped("the ingest this encoder served has stopped")
            batch = missing[start : start + self.batch_size]
            fresh = dict(zip(batch, np.asarray(self.embedder.encode_document(batch), dtype=np.float32)))
            if self.cache is not None:
                self.cache.put(self.identity, self.dimension, "document", fresh)
            known.update(fresh)
        with self._counts:
            self.encoded += len(missing)
            self.cached += len(unique) - len(missing)
        return np.stack([known[t] for t in texts])
