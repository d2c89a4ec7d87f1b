"""Request → tool training pairs, read from a folder, turned into the texts toolsift serves.

The folder's shape is ``../shared/datasets/train``'s (a team's own pairs use the same):

* ``tools.jsonl`` — one tool per line: ``{"id", "name", "description", "parameters", "response", ...}``;
* ``pairs.jsonl`` — one line per (request, relevant tool):
  ``{"query_id", "query", "tool_id", "hard_negative_ids": [...]}``;
* ``splits.json`` (optional) — ``{"train": [query_id], "dev": [query_id]}``; without it every request trains.

A tool's side of a pair is what toolsift indexes for it: the tool goes through ingest's own
standardisation (:func:`~toolsift.ingest.normalise.normalise_tool`) and the text is one of the two
texts every search method's dense part reads — its flat document (``full_doc``) or its description —
chosen per example at random, so the encoder learns both views it is queried on.

Every line is checked: a malformed line, a pair naming a tool the catalog does not have, or a tool
ingest would refuse is an error naming the file and line, and nothing is trained.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolsift.errors import CatalogRecordError, ConfigError
from toolsift.ingest.normalise import normalise_tool
from toolsift.ingest.raw_records import RawTool
from toolsift.encoders.encoder_training import EmbedExample

__all__ = ["TrainingPairs", "load_training_pairs", "TOOL_TEXT_FIELDS", "MAX_TEXT_CHARS"]

#: The tool texts a pair's tool side is drawn from (the dense fields every search method reads).
TOOL_TEXT_FIELDS = ("full_doc", "description")
#: Texts are cut to this many characters before tokenising (the model reads ≤ 256 tokens of them).
MAX_TEXT_CHARS = 4000
_DOCUMENTATION_KEYS = ("name", "description", "parameters", "response")


@dataclass(frozen=True)
class _Pair:
    query_id: str
    query: str
    tool_id: str
    hard_negatives: tuple[str, ...]


@dataclass(frozen=True)
class TrainingPairs:
    """The pairs of a training folder and the tool texts they point at.

    ``sha256`` hashes the files read (tools, pairs, splits), so an artifact records exactly what it
    was trained on.
    """

    tool_texts: Mapping[str, Mapping[str, str]]
    pairs: tuple[_Pair, ...]
    splits: Mapping[str, frozenset[str]]
    sha256: str
    folder: Path

    def queries(self, split: str | None = None) -> list[str]:
        """The query ids of ``split`` (every query when None), in file order."""
        ids = dict.fromkeys(p.query_id for p in self.pairs)
        if split is None:
            return list(ids)
        chosen = self.splits.get(split)
        if chosen is None:
            raise ConfigError(f"training pairs in {self.folder}: no split {split!r} in splits.json "
                              f"(it has {sorted(self.splits)})")
        return [q for q in ids if q in chosen]

    def examples(self, split: str | None = "train", *, seed: int = 42, limit: int | None = None) -> list[EmbedExample]:
        """One example per pair of ``split`` (None: all), its tool text and negative drawn with ``seed``.

        The negative is one of the pair's hard negatives when it has any, else a random tool of the
        catalog that is not gold for the request. ``limit`` keeps the first requests only.
        """
        rng = random.Random(seed)
        keep = set(self.queries(split)[:limit] if limit else self.queries(split))
        gold: dict[str, set[str]] = defaultdict(set)
        for p in self.pairs:
            gold[p.query_id].add(p.tool_id)
        catalog = sorted(self.tool_texts)
        out: list[EmbedExample] = []
        for p in self.pairs:
            if p.query_id not in keep:
                continue
            view = rng.choice(TOOL_TEXT_FIELDS)
            choices = [t for t in p.hard_negatives if t not in gold[p.query_id]]
            negative = rng.choice(choices) if choices else _random_other(catalog, gold[p.query_id], rng)
            out.append(EmbedExample(
                query=p.query,
                positive=self._text(p.tool_id, view),
                tool_id=p.tool_id,
                negative=self._text(negative, view),
                negative_id=negative,
                gold=frozenset(gold[p.query_id]),
            ))
        return out

    def _text(self, tool_id: str, view: str) -> str:
        texts = self.tool_texts[tool_id]
        return texts.get(view) or texts["full_doc"]


def _random_other(catalog: Sequence[str], gold: set[str], rng: random.Random) -> str:
    while True:
        candidate = rng.choice(catalog)
        if candidate not in gold or len(gold) >= len(catalog):
            return candidate


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"training pairs: cannot read {path}: {exc}") from exc
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise ConfigError(f"{path.name} line {number}: not JSON ({exc})") from exc
            if not isinstance(record, dict):
                raise ConfigError(f"{path.name} line {number}: expected an object, got {type(record).__name__}")
            yield number, record


def _string(record: Mapping[str, Any], key: str, where: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: field {key!r} must be a non-empty string")
    return value


def _tool_texts(path: Path) -> dict[str, dict[str, str]]:
    texts: dict[str, dict[str, str]] = {}
    for number, record in _lines(path):
        where = f"{path.name} line {number}"
        tool_id = _string(record, "id", where)
        if tool_id in texts:
            raise ConfigError(f"{where}: tool id {tool_id!r} appears twice")
        documentation = {k: record[k] for k in _DOCUMENTATION_KEYS if record.get(k) not in (None, "", [], {})}
        try:
            doc = normalise_tool(RawTool(source=path.name, position=f"line {number}", documentation=documentation,
                                         tool_id=tool_id, agent_id=None))
        except CatalogRecordError as exc:
            raise ConfigError(f"{where}: {exc}") from exc
        texts[tool_id] = {"full_doc": doc.full_doc[:MAX_TEXT_CHARS], "description": doc.description[:MAX_TEXT_CHARS]}
    if not texts:
        raise ConfigError(f"training pairs: {path} has no tools")
    return texts


def _pairs(path: Path, tools: Mapping[str, Any]) -> list[_Pair]:
    pairs: list[_Pair] = []
    for number, record in _lines(path):
        where = f"{path.name} line {number}"
        tool_id = _string(record, "tool_id", where)
        if tool_id not in tools:
            raise ConfigError(f"{where}: tool {tool_id!r} is not in tools.jsonl")
        negatives = record.get("hard_negative_ids") or []
        if not isinstance(negatives, list) or not all(isinstance(n, str) for n in negatives):
            raise ConfigError(f"{where}: 'hard_negative_ids' must be a list of tool ids")
        unknown = [n for n in negatives if n not in tools]
        if unknown:
            raise ConfigError(f"{where}: hard negative {unknown[0]!r} is not in tools.jsonl")
        pairs.append(_Pair(_string(record, "query_id", where), _string(record, "query", where), tool_id,
                           tuple(negatives)))
    if not pairs:
        raise ConfigError(f"training pairs: {path} has no pairs")
    return pairs


def load_training_pairs(folder: Path) -> TrainingPairs:
    """Read and check a training folder (module docstring); ConfigError names the file and line."""
    folder = Path(folder)
    files = [folder / "tools.jsonl", folder / "pairs.jsonl"]
    for f in files:
        if not f.is_file():
            raise ConfigError(f"training pairs: {folder} has no {f.name} (expected tools.jsonl and pairs.jsonl)")
    splits: dict[str, frozenset[str]] = {}
    split_file = folder / "splits.json"
    if split_file.is_file():
        files.append(split_file)
        try:
            raw = json.loads(split_file.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ConfigError(f"splits.json in {folder}: not JSON ({exc})") from exc
        if not isinstance(raw, dict) or not all(isinstance(v, list) for v in raw.values()):
            raise ConfigError(f"splits.json in {folder}: expected {{split: [query_id, ...]}}")
        splits = {str(k): frozenset(str(q) for q in v) for k, v in raw.items()}
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.name.encode())
        digest.update(f.read_bytes())
    tools = _tool_texts(folder / "tools.jsonl")
    pairs = _pairs(folder / "pairs.jsonl", tools)
    if not splits:
        splits = {"train": frozenset(p.query_id for p in pairs)}
    return TrainingPairs(tools, tuple(pairs), splits, digest.hexdigest(), folder)
