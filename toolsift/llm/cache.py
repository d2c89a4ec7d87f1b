"""A content-addressed store of LLM outputs on disk.

Two keys lead to an entry:

* the **prompt key** — model + the exact messages + the answer schema — used by live calls, so the
  same prompt is never paid for twice;
* the **subject key** — task + model + the input's identity (a request text, a tool document's
  content hash) — which lets a caller without an LLM find an earlier answer for the same input,
  including the published outputs that ``toolsift cache import`` loads.

Entries are small JSON files ``{"meta": {...}, "output": {...}}`` under ``root/<2 hex>/<key>.json``,
written atomically (temporary file in the same folder, then ``os.replace``), so a crash never leaves
a half-written entry and a new process sees everything an earlier one stored. Nothing secret is
stored: ``meta`` holds the task, the model, a shortened subject and timestamps, never an API key.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["LLMCache", "cached_output", "canonical_json"]

_KEY = re.compile(r"^[0-9a-f]{64}$")


def canonical_json(value: object) -> str:
    """The one serialisation every key is hashed from: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _sha256(value: object) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


class LLMCache:
    """LLM outputs on disk, keyed by content.

    Args:
        root: the cache folder (``Settings.llm_cache_path``); created on the first write.

    Example:
        >>> cache = LLMCache(settings.llm_cache_path)
        >>> key = LLMCache.subject_key("rewrite", "gpt-4o-mini", "what happened on April 21st?")
        >>> cache.get(key)  # the cached structured query, or None
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"LLMCache({str(self.root)!r})"

    # --- keys -------------------------------------------------------------------------------------
    @staticmethod
    def prompt_key(model: str, messages: Sequence[Mapping[str, str]], schema: Mapping[str, Any]) -> str:
        """sha256 (hex) of the canonical JSON of ``{model, messages, schema}``."""
        return _sha256({"model": model, "messages": [dict(m) for m in messages], "schema": schema})

    @staticmethod
    def subject_key(task: str, model: str, subject: str) -> str:
        """sha256 (hex) of the canonical JSON of ``{task, model, subject}``."""
        return _sha256({"task": str(task), "model": model, "subject": subject})

    # --- entries ----------------------------------------------------------------------------------
    def _path(self, key: str) -> Path:
        if not _KEY.match(key):
            raise ValueError(f"not a cache key (64 lower-case hex digits): {key!r}")
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached JSON output under ``key``, or None.

        A missing, unreadable or foreign file is a miss, never an error: the caller then asks the
        LLM (or falls back) as if nothing were cached.

        Raises:
            ValueError: ``key`` is not a key made by :meth:`prompt_key` or :meth:`subject_key`.
        """
        path = self._path(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return None
        output = entry.get("output") if isinstance(entry, dict) else None
        return output if isinstance(output, dict) else None

    def meta(self, key: str) -> dict[str, Any] | None:
        """The metadata stored with the entry under ``key`` (task, model, subject, created...), or None."""
        try:
            entry = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return None
        meta = entry.get("meta") if isinstance(entry, dict) else None
        return meta if isinstance(meta, dict) else None

    def put(self, key: str, output: Mapping[str, Any], *, meta: Mapping[str, Any]) -> None:
        """Store ``output`` under ``key`` atomically (temporary file, then ``os.replace``).

        Args:
            key: from :meth:`prompt_key` or :meth:`subject_key`.
            output: the JSON object to cache.
            meta: provenance kept beside it (task, model, shortened subject, time); never secrets.

        Raises:
            ValueError: a bad key, or ``output``/``meta`` that is not JSON-serialisable.
            OSError: the cache folder cannot be written.
        """
        path = self._path(key)
        try:
            blob = json.dumps({"meta": dict(meta), "output": dict(output)}, ensure_ascii=False, indent=1)
        except TypeError as exc:
            raise ValueError(f"cache entry {key[:12]}… is not JSON-serialisable: {exc}") from exc
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:12]}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(blob)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    # --- maintenance ------------------------------------------------------------------------------
    def _entries(self) -> Iterator[Path]:
        if not self.root.is_dir():
            return
        for folder in sorted(self.root.iterdir()):
            if folder.is_dir() and len(folder.name) == 2:
                yield from (p for p in sorted(folder.glob("*.json")) if _KEY.match(p.stem))

    def stats(self) -> dict[str, int]:
        """``{"entries": N, "bytes": B}`` over the entries on disk."""
        entries = total = 0
        for path in self._entries():
            with contextlib.suppress(OSError):  # removed by a concurrent clear
                total += path.stat().st_size
                entries += 1
        return {"entries": entries, "bytes": total}

    def clear(self) -> int:
        """Delete every entry (and leftover temporary files); returns how many entries were deleted."""
        deleted = 0
        for path in list(self._entries()):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                deleted += 1
        if self.root.is_dir():
            for folder in self.root.iterdir():
                if folder.is_dir() and len(folder.name) == 2:
                    for tmp in folder.glob(".*.tmp"):
                        with contextlib.suppress(FileNotFoundError):
                            tmp.unlink()
                    with contextlib.suppress(OSError):  # not empty: a foreign file stays
                        folder.rmdir()
        return deleted


def cached_output(cache: LLMCache, task: str, model: str, subject: str) -> dict[str, Any] | None:
    """An earlier answer of ``model`` to ``task`` for ``subject`` (live or imported), without any LLM.

    Args:
        cache: the LLM output cache.
        task: the task name (``"rewrite"``, ``"standardize"``, ...).
        model: the model whose answer is wanted (``Settings.llm_model``).
        subject: the input's identity: a request text, or
            :func:`~toolsift.llm.published.standardize_subject` of a raw tool documentation.

    Returns:
        The cached JSON object, or None.
    """
    return cache.get(LLMCache.subject_key(task, model, subject))
