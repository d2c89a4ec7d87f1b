"""Importing the MFTR paper's published LLM outputs into the LLM cache, so they answer offline.

The MFTR repository publishes what GPT-4o-mini produced for its benchmarks
(``shared/datasets/mftr/<set>/``):

* ``rewritten_queries.<model>.json`` — ``{query_id: {tool_needs, extracted_arguments}}``. Each is
  stored under ``subject_key("rewrite", model, <query text>)``, the text coming from the ToolRet
  ``queries.json`` of the same set, which is how :class:`~toolsift.query.rewrite.QueryRewriter`
  looks a request up.
* ``standardized_tools.<model>.json`` — ``[{id, type, augmented, origin_documentation}]``. Each
  ``augmented`` object is stored under ``subject_key("standardize", model,
  standardize_subject(origin_documentation))``, which is how the LLM standardiser looks a raw
  documentation up.

Every record is validated before anything is written: an import stores all records or none.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from toolsift.errors import BadQueryError, CatalogError, CatalogRecordError, CatalogRejectedError
from toolsift.llm.cache import LLMCache, canonical_json
from toolsift.llm.client import Task

__all__ = ["ImportReport", "import_published", "standardize_subject", "default_queries_path"]

_FILE = re.compile(r"^(rewritten_queries|standardized_tools)\.(.+)\.json$")


def standardize_subject(documentation: Mapping[str, Any]) -> str:
    """The identity of a raw tool documentation: sha256 (hex) of its canonical JSON.

    Canonical JSON is ``json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":"))``,
    so key order and whitespace in the catalog do not matter, every value does.
    """
    return hashlib.sha256(canonical_json(documentation).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ImportReport:
    """What :func:`import_published` stored.

    Args:
        files: the published files read.
        rewrites: query rewrites stored (new or changed).
        standardized: standardised documents stored (new or changed).
        already_present: records whose identical output was already cached (left as they were).
    """

    files: tuple[str, ...]
    rewrites: int = 0
    standardized: int = 0
    already_present: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": list(self.files),
            "rewrites": self.rewrites,
            "standardized": self.standardized,
            "already_present": self.already_present,
        }


@dataclass(frozen=True)
class _Entry:
    task: Task
    model: str
    subject: str
    output: dict[str, Any]
    source: str
    record_id: str

    @property
    def key(self) -> str:
        return LLMCache.subject_key(self.task, self.model, self.subject)


def default_queries_path(path: Path) -> Path:
    """Where the ToolRet ``queries.json`` of a published set lies in the shared layout.

    ``<datasets>/mftr/<set>`` (or a file in it) → ``<datasets>/toolret/<set>/queries.json``.
    """
    folder = path if path.is_dir() else path.parent
    return folder.parent.parent / "toolret" / folder.name / "queries.json"


def _read_json(path: Path) -> Any:
    import json

    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CatalogError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CatalogError(f"{path}: not valid JSON ({exc})") from exc


def _query_texts(path: Path) -> dict[str, str]:
    data = _read_json(path)
    if not isinstance(data, list):
        raise CatalogError(f"{path}: expected a ToolRet queries.json (a list of {{id, query, ...}})")
    texts: dict[str, str] = {}
    for i, item in enumerate(data):
        if not (isinstance(item, Mapping) and isinstance(item.get("id"), str) and isinstance(item.get("query"), str)):
            raise CatalogError(f"{path}: entry {i} lacks a string 'id' and 'query'")
        texts[item["id"]] = item["query"]
    return texts


def _published_files(path: Path) -> list[tuple[Path, str, str]]:
    """(file, kind, model in its name) for each published output file at ``path``."""
    if path.is_dir():
        found = [(p, _FILE.match(p.name)) for p in sorted(path.iterdir()) if p.is_file()]
        files = [(p, m.group(1), m.group(2)) for p, m in found if m]
        if not files:
            raise CatalogError(
                f"{path}: no rewritten_queries.<model>.json or standardized_tools.<model>.json in this folder"
            )
        return files
    if not path.is_file():
        raise CatalogError(f"{path}: no such file or folder")
    match = _FILE.match(path.name)
    if match is None:
        raise CatalogError(
            f"{path}: not a published output (expected rewritten_queries.<model>.json or "
            "standardized_tools.<model>.json)"
        )
    return [(path, match.group(1), match.group(2))]


def _rewrite_entries(
    file: Path, data: Any, model: str, texts: Mapping[str, str], queries: Path, errors: list[CatalogRecordError]
) -> list[_Entry]:
    from toolsift.query.structured import StructuredQuery

    if not isinstance(data, Mapping):
        raise CatalogError(f"{file}: expected an object of query id → {{tool_needs, extracted_arguments}}")
    entries: list[_Entry] = []
    by_text: dict[str, tuple[str, dict[str, Any]]] = {}
    for qid, rewrite in data.items():
        def bad(reason: str, qid: str = qid) -> None:
            errors.append(CatalogRecordError(str(file), f"query {qid!r}", reason, record_id=qid))

        if qid not in texts:
            bad(f"no query with this id in {queries}")
            continue
        try:
            StructuredQuery.from_dict(rewrite, text=texts[qid])
        except BadQueryError as exc:
            bad(f"not a structured query: {exc}")
            continue
        text = texts[qid]
        if text in by_text and by_text[text][1] != rewrite:
            bad(f"the same query text as {by_text[text][0]!r} with a different rewrite")
            continue
        by_text[text] = (qid, dict(rewrite))
        entries.append(_Entry(Task.REWRITE, model, text, dict(rewrite), file.name, qid))
    return entries


def _standardized_entries(file: Path, data: Any, model: str, errors: list[CatalogRecordError]) -> list[_Entry]:
    from toolsift.ingest.standardise import parse_standardised

    if not isinstance(data, list):
        raise CatalogError(f"{file}: expected a list of {{id, augmented, origin_documentation}}")
    entries: list[_Entry] = []
    by_subject: dict[str, tuple[str, dict[str, Any]]] = {}
    for i, record in enumerate(data):
        record_id = str(record.get("id")) if isinstance(record, Mapping) and record.get("id") is not None else None

        def bad(reason: str, field: str | None = None, i: int = i, record_id: str | None = record_id) -> None:
            errors.append(CatalogRecordError(str(file), f"record {i}", reason, record_id=record_id, field=field))

        if not isinstance(record, Mapping):
            bad(f"must be an object, got {type(record).__name__}")
            continue
        documentation, augmented = record.get("origin_documentation"), record.get("augmented")
        if not isinstance(documentation, Mapping):
            bad("must be the raw documentation object", "origin_documentation")
            continue
        if not isinstance(augmented, Mapping):
            bad(f"must be an object, got {type(augmented).__name__}", "augmented")
            continue
        try:
            parse_standardised(augmented)
        except ValueError as exc:
            bad(str(exc), "augmented")
            continue
        subject = standardize_subject(documentation)
        if subject in by_subject and by_subject[subject][1] != augmented:
            bad(f"the same documentation as record {by_subject[subject][0]!r} with a different standardisation")
            continue
        by_subject[subject] = (record_id or f"record {i}", dict(augmented))
        entries.append(_Entry(Task.STANDARDIZE, model, subject, dict(augmented), file.name, record_id or str(i)))
    return entries


def import_published(
    cache: LLMCache, path: Path, *, queries: Path | None = None, model: str | None = None
) -> ImportReport:
    """Validate every record of the published output file(s) at ``path``, then store them all.

    Args:
        cache: the LLM output cache to write to.
        path: a folder such as ``shared/datasets/mftr/apibank`` (every
            ``rewritten_queries.<model>.json`` and ``standardized_tools.<model>.json`` in it), or
            one such file.
        queries: the ToolRet ``queries.json`` mapping query ids to texts (rewrites are keyed by the
            text); default :func:`default_queries_path` of ``path`` (``<datasets>/toolret/<set>/``).
        model: the model name in the cache keys; default the one in each file name
            (``gpt-4o-mini``). It must match ``llm_model`` for the outputs to be found.

    Returns:
        The counts of stored and already-present records.

    Raises:
        CatalogRejectedError: some records are malformed; ``errors`` names each one (file, record,
            id, reason) and nothing was stored.
        CatalogError: a file is missing or not JSON, the folder holds no published output, or
            rewrites are present and no ``queries.json`` is found.

    Example:
        >>> report = import_published(LLMCache(settings.llm_cache_path), Path("../shared/datasets/mftr/apibank"))
        >>> report.rewrites, report.standardized
        (101, 101)
    """
    path = Path(path)
    files = _published_files(path)
    errors: list[CatalogRecordError] = []
    entries: list[_Entry] = []
    texts: dict[str, str] | None = None
    for file, kind, file_model in files:
        data = _read_json(file)
        use_model = model or file_model
        if kind == "rewritten_queries":
            qfile = Path(queries) if queries is not None else default_queries_path(path)
            if not qfile.is_file():
                raise CatalogError(
                    f"{file}: rewrites are keyed by the query text, and the ToolRet queries.json was not "
                    f"found at {qfile}; give it with --queries (queries=...)"
                )
            if texts is None:
                texts = _query_texts(qfile)
            entries += _rewrite_entries(file, data, use_model, texts, qfile, errors)
        else:
            entries += _standardized_entries(file, data, use_model, errors)
    if errors:
        raise CatalogRejectedError(str(path), errors)

    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    counts = {Task.REWRITE: 0, Task.STANDARDIZE: 0}
    present = 0
    for entry in entries:
        key = entry.key
        if cache.get(key) == entry.output:
            present += 1
            continue
        meta = {
            "task": str(entry.task),
            "model": entry.model,
            "subject": entry.subject if len(entry.subject) <= 200 else entry.subject[:199] + "…",
            "created": created,
            "imported_from": entry.source,
            "record_id": entry.record_id,
        }
        cache.put(key, entry.output, meta=meta)
        counts[entry.task] += 1
    return ImportReport(
        files=tuple(str(f) for f, _, _ in files),
        rewrites=counts[Task.REWRITE],
        standardized=counts[Task.STANDARDIZE],
        already_present=present,
    )
