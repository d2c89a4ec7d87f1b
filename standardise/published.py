"""Importing the MFTR paper's published GPT-4o-mini outputs into the LLM cache.

``rewritten_queries.<model>.json`` ({query id: structured query}) goes under the subject key of the
query *text* (task ``rewrite``), ``standardized_tools.<model>.json`` under the subject key of the raw
documentation (task ``standardize``), so the rewriter and the standardiser find them offline.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsift.errors import BadQueryError, CatalogError
from toolsift.llm.cache import LLMCache, standardize_subject
from toolsift.query.structured import StructuredQuery

__all__ = ["import_published", "ImportReport"]

_FILE = re.compile(r"^(rewritten_queries|standardized_tools)\.(.+)\.json$")


@dataclass
class ImportReport:
    """What an import stored: counts per task, and entries already present."""

    rewrites: int = 0
    standardized: int = 0
    already_present: int = 0
    files: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"rewrites": self.rewrites, "standardized": self.standardized,
                "already_present": self.already_present, "files": self.files}


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CatalogError(f"{path}: cannot read JSON ({exc})") from exc


def _queries(path: Path) -> dict[str, str]:
    data = _read(path)
    if not isinstance(data, list):
        raise CatalogError(f"{path}: expected a ToolRet queries.json (a list of {{id, query}})")
    return {str(q["id"]): str(q["query"]) for q in data if isinstance(q, dict) and "id" in q and "query" in q}


def import_published(
    cache: LLMCache, path: Path, *, queries: Path | None = None, model: str | None = None
) -> ImportReport:
    """Validate every record of the published file(s) at ``path``, then store them all.

    Args:
        path: a folder like ``shared/datasets/mftr/apibank``, or one of its files.
        queries: the ToolRet ``queries.json`` that maps query ids to texts (rewrites are keyed by
            text); default ``<folder>/../../toolret/<folder name>/queries.json``.
        model: the model name for the cache keys; default the one in the file name.

    Raises:
        CatalogError: naming the file and record when anything is malformed; nothing is stored then.
    """
    path = Path(path)
    files = sorted(p for p in (path.iterdir() if path.is_dir() else [path]) if _FILE.match(p.name))
    if not files:
        raise CatalogError(f"{path}: no rewritten_queries.<model>.json or standardized_tools.<model>.json found")
    folder = path if path.is_dir() else path.parent
    entries: list[tuple[str, dict[str, Any], dict[str, Any], str]] = []
    for file in files:
        match = _FILE.match(file.name)
        assert match is not None
        kind, file_model = match.group(1), model or match.group(2)
        data = _read(file)
        if kind == "rewritten_queries":
            qfile = queries or folder.parent.parent / "toolret" / folder.name / "queries.json"
            if not qfile.exists():
                raise CatalogError(f"{file}: rewrites are keyed by query text; give the queries.json (--queries)")
            texts = _queries(qfile)
            if not isinstance(data, dict):
                raise CatalogError(f"{file}: expected an object of query id → rewrite")
            for qid, rewrite in data.items():
                if qid not in texts:
                    raise CatalogError(f"{file}: query {qid!r} is not in {qfile}")
                try:
                    StructuredQuery.from_dict(rewrite)
                except BadQueryError as exc:
                    raise CatalogError(f"{file}: query {qid!r}: {exc}") from exc
                key = LLMCache.subject_key("rewrite", file_model, texts[qid])
                entries.append(("rewrite", dict(rewrite), {"source": str(file), "id": qid}, key))
        else:
            if not isinstance(data, list):
                raise CatalogError(f"{file}: expected a list of {{id, augmented, origin_documentation}}")
            for i, record in enumerate(data):
                if not (isinstance(record, dict) and isinstance(record.get("augmented"), dict)
                        and isinstance(record.get("origin_documentation"), dict)):
                    raise CatalogError(f"{file}: record {i} lacks an 'augmented' or 'origin_documentation' object")
                key = LLMCache.subject_key("standardize", file_model, standardize_subject(record["origin_documentation"]))
                entries.append(("standardize", dict(record["augmented"]), {"source": str(file), "id": record.get("id")}, key))
    report = ImportReport(files=[str(f) for f in files])
    for task, output, meta, key in entries:
        if cache.get(key) == output:
            report.already_present += 1
            continue
        cache.put(key, output, meta={"task": task, "imported": True, **meta})
        if task == "rewrite":
            report.rewrites += 1
        else:
            report.standardized += 1
    return report
