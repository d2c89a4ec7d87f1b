"""The version of the code that turns a catalog into index documents.

An index records, per ingested catalog, the file's hash *and* this version. A catalog is "unchanged"
only when both match, so a change to a loader, the normaliser, the rule-based standardiser, the
document records, the text that gets embedded or the way documents are written (one segment, so
approximate k-NN over a rebuilt index answers as before) re-ingests the catalog (evaluation indices are
rebuilt) even where the mapping, the catalog file and the embedding model stayed the same.

The version is a hash of those modules' source: it changes by itself with the code, so nobody has
to remember to bump it. A comment-only edit rebuilds too — a cheap false positive, never a stale
score.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

__all__ = ["DOCUMENT_BUILDER_MODULES", "document_builder_version"]

_HERE = Path(__file__).resolve().parent

#: Source files (relative to the ingest package) whose code decides a document's content.
DOCUMENT_BUILDER_MODULES: tuple[str, ...] = (
    "records.py",
    "normalise.py",
    "derive.py",
    "prerequisites.py",
    "screen.py",
    "screen_unicode.py",
    "screen_model.py",
    "screen_e5.py",
    "data/screen_model.json",  # the meaning screen's adapter and thresholds decide which tools are flagged
    "data/screen_adapter.safetensors",
    "standardise_tasks.py",
    "standardise_answers.py",
    "standardise_required.py",
    "standardise_llm.py",
    "standardise_catalog.py",
    "embed.py",
    "pipeline.py",  # the write pass: one bulk-loaded segment, so approximate k-NN answers the same
    "loaders/__init__.py",
    "loaders/base.py",
    "loaders/files.py",
    "loaders/naming.py",
    "loaders/beir.py",
    "loaders/mcp.py",
    "loaders/mftr.py",
    "loaders/openai_functions.py",
    "loaders/openapi.py",
    "loaders/openapi_refs.py",
    "loaders/toolret.py",
)


def _builder_files() -> list[Path]:
    files = [_HERE / name for name in DOCUMENT_BUILDER_MODULES]
    # The document records themselves (field list, content hash) live with the mapping.
    from toolsift.mappings import model, scoped

    files.append(Path(model.__file__).resolve())
    files.append(Path(scoped.__file__).resolve())  # a tenant catalog's ids
    return files


@lru_cache(maxsize=1)
def document_builder_version() -> str:
    """16 hex digits: SHA-256 over the document-building modules' names and source bytes."""
    digest = hashlib.sha256()
    for file in _builder_files():
        digest.update(file.name.encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()[:16]
