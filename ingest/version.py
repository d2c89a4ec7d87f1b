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
from importlib import resources
from pathlib import Path

__all__ = ["DOCUMENT_BUILDER_MODULES", "document_builder_version"]

#: (package, file inside it) of every source file whose code decides a document's content.
DOCUMENT_BUILDER_MODULES: tuple[tuple[str, str], ...] = (
    *(("toolsift.ingest", name) for name in (
        "raw_records.py",
        "normalise.py",
        "parameters.py",
        "derive.py",
        "prerequisites.py",
        "embed.py",
        "pipeline.py",  # the write pass: one bulk-loaded segment, so approximate k-NN answers the same
    )),
    *(("toolsift.ingest.loaders", name) for name in (
        "__init__.py", "base.py", "files.py", "naming.py", "beir.py", "mcp.py", "mftr.py",
        "openai_functions.py", "openapi.py", "openapi_refs.py", "toolret.py",
    )),
    *(("toolsift.screen", name) for name in (
        "screening.py",
        "unicode_fold.py",
        "intent.py",
        "intent_words.py",
        "meaning.py",
        "e5.py",
        "data/screen_model.json",  # the meaning screen's adapter and thresholds decide which tools are flagged
        "data/screen_adapter.safetensors",
    )),
    *(("toolsift.standardise", name) for name in (
        "tasks.py", "answers.py", "required.py", "standardiser.py", "catalog.py",
    )),
    # the document records themselves (field list, content hash) live with the mapping; a tenant
    # catalog's ids are scoped there too
    ("toolsift.mappings", "model.py"),
    ("toolsift.mappings", "scoped.py"),
)


def _builder_files() -> list[Path]:
    return [Path(str(resources.files(package) / name)) for package, name in DOCUMENT_BUILDER_MODULES]


@lru_cache(maxsize=1)
def document_builder_version() -> str:
    """16 hex digits: SHA-256 over the document-building modules' names and source bytes."""
    digest = hashlib.sha256()
    for file in _builder_files():
        digest.update(file.name.encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()[:16]
