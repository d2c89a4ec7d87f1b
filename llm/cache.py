"""A content-addressed store of LLM outputs on disk.

Two keys lead to an entry: the *prompt key* (model + the exact messages + the answer schema), used by
live calls, and the *subject key* (task + model + the input's identity), which lets a caller without
an LLM find an earlier answer for the same input — including the published outputs that
``toolsift cache import`` loads. Entries are JSON files written atomically (temp file + rename).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["LLMCache", "cached_output", "standardize_subject"]


def _digest(payload: Any) -> str:
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()


class LLMCache:
    """LLM outputs under ``root/<2 hex>/<sha256>.json``.

    Args:
        root: the cache folder (``Settings.llm_cache_path``); created on first write.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @staticmethod
    def prompt_key(model: str, messages: Sequence[Mapping[str, str]], schema: Mapping[str, Any]) -> str:
        return _digest({"model": model, "messages": [dict(m) for m in messages], "schema": schema})

    @staticmethod
    def subject_key(task: str, model: str, subject: str) -> str:
        return _digest({"task": task, "model": model, "subject": subject})

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached output for ``key``, or None (a missing or unreadable entry is a miss)."""
        try:
            entry = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None
        output = entry.get("output") if isinstance(entry, dict) else None
        return dict(output) if isinstance(output, dict) else None

    def put(self, key: str, output: Mapping[str, Any], *, meta: Mapping[str, Any]) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"meta": dict(meta), "output": dict(output)}, out, ensure_ascii=False)
        os.replace(tmp, path)

    def stats(self) -> dict[str, int]:
        files = list(self.root.glob("*/*.json")) if self.root.exists() else []
        return {"entries": len(files), "bytes": sum(f.stat().st_size for f in files)}

    def clear(self) -> int:
        files = list(self.root.glob("*/*.json")) if self.root.exists() else []
        for f in files:
            f.unlink()
        return len(files)


def cached_output(cache: LLMCache, task: str, model: str, subject: str) -> dict[str, Any] | None:
    """An earlier answer of ``model`` to ``task`` for ``subject`` (live or imported), without an LLM."""
    return cache.get(LLMCache.subject_key(task, model, subject))


def standardize_subject(documentation: Mapping[str, Any]) -> str:
    """The identity of a raw tool documentation: sha256 of its canonical JSON."""
    blob = json.dumps(documentation, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()
