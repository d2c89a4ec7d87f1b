"""What the MFTR evaluation reads besides the benchmark folders: rewritten queries, standardised
documents, hard negatives and folds (:class:`MFTRInputs` names the files)."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolsift.errors import BadQueryError, CatalogError
from toolsift.query.structured import StructuredQuery

__all__ = [
    "MFTRInputs",
    "read_json",
    "load_rewrites",
    "load_standardized",
    "load_hard_negatives",
    "make_folds",
]


@dataclass(frozen=True)
class MFTRInputs:
    """What the MFTR evaluation reads besides the benchmark folders.

    Args:
        rewrites: rewrite files (query id → structured query); without them the rewrite rows are skipped.
        standardized: standardised-document files (tool id → ``augmented``); without them the
            rule-based standardisation stands in and the "Stand." rows are skipped.
        folds: the folds file; default: a seeded 5-fold split. Only the queries it names are used, so
            a file with one fold over part of the queries is a quick slice of the benchmark.
        hard_negatives: hard-negative files; default: mined from the index (BM25 over the raw document).
    """

    rewrites: tuple[Path, ...] = ()
    standardized: tuple[Path, ...] = ()
    folds: Path | None = None
    hard_negatives: tuple[Path, ...] = ()


def read_json(path: Path, what: str) -> Any:
    """The JSON of ``path``; :class:`CatalogError` (naming ``what``) when it cannot be read."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CatalogError(f"{what} {path}: cannot read JSON ({exc})") from exc


def load_rewrites(paths: Sequence[Path], queries: Mapping[str, str]) -> dict[str, StructuredQuery]:
    """Rewritten queries by query id (``{qid: {tool_needs, extracted_arguments}}`` files, merged)."""
    out: dict[str, StructuredQuery] = {}
    for path in paths:
        data = read_json(path, "rewrites")
        if not isinstance(data, dict):
            raise CatalogError(f"rewrites {path}: expected an object of query id → rewrite")
        for qid, rewrite in data.items():
            try:
                out[str(qid)] = StructuredQuery.from_dict(rewrite, text=queries.get(str(qid), ""))
            except BadQueryError as exc:
                raise CatalogError(f"rewrites {path}: query {qid}: {exc}") from exc
    return out


def load_standardized(paths: Sequence[Path]) -> dict[str, dict[str, Any]]:
    """Standardised documents (MFTR's ``augmented`` objects) by tool id."""
    out: dict[str, dict[str, Any]] = {}
    for path in paths:
        data = read_json(path, "standardized")
        if not isinstance(data, list):
            raise CatalogError(f"standardized {path}: expected a list of {{id, augmented, ...}}")
        for i, record in enumerate(data):
            if not isinstance(record, dict) or not isinstance(record.get("augmented"), dict) or "id" not in record:
                raise CatalogError(f"standardized {path}: record {i} lacks 'id' or an 'augmented' object")
            out[str(record["id"])] = record["augmented"]
    return out


def load_hard_negatives(paths: Sequence[Path]) -> dict[str, list[str]]:
    """``{query id: [[tool id, score], ...]}`` files → tool ids in rank order."""
    out: dict[str, list[str]] = {}
    for path in paths:
        data = read_json(path, "hard negatives")
        if not isinstance(data, dict):
            raise CatalogError(f"hard negatives {path}: expected an object of query id → [[tool id, score]]")
        for qid, ranked in data.items():
            out[str(qid)] = [str(entry[0]) if isinstance(entry, list) else str(entry) for entry in ranked]
    return out


def make_folds(query_ids: Sequence[str], k: int = 5, seed: int = 42) -> dict[str, dict[str, list[str]]]:
    """A seeded k-fold split (for sets without published folds, e.g. the mixed benchmark)."""
    ids = sorted(query_ids)
    random.Random(seed).shuffle(ids)
    parts = [ids[i::k] for i in range(k)]
    return {
        f"fold_{i}": {"train": sorted(q for j, p in enumerate(parts) if j != i for q in p), "test": sorted(parts[i])}
        for i in range(k)
    }
