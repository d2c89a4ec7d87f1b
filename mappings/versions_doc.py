"""The versions index: every definition a live source has served, with when it was first and last seen.

One index per catalog alias, ``<alias>-versions``, one document per (tool id, content hash): the tool's
definition as its server listed it, when a listing first held it, and — once it stopped being current
— when it was last seen and why (``superseded`` by a newer definition, ``deprecated``: the server no
longer lists the tool). :mod:`toolsift.ingest.versions` writes it on every live sync.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolsift.mappings.fields import doc_field
from toolsift.mappings.template import side_index_body

__all__ = ["VERSIONS_SCHEMA_VERSION", "VersionDoc", "versions_index", "versions_index_body"]

VERSIONS_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class VersionDoc:
    """One definition of one tool, as a live source listed it.

    Args:
        doc_id: the tool's id in the catalog index.
        source: the source label (``mcp/<name>``).
        hash: the content hash of the definition (name, description, schemas).
        status: ``current`` (the source lists it now), ``superseded`` (a newer definition replaced it)
            or ``deprecated`` (the source stopped listing the tool).
        first_seen: when a listing first held this definition.
        last_seen: when it stopped being current (None while current).
        definition: the definition as the server listed it (stored, not indexed).
    """

    doc_id: str = doc_field("keyword", default="")
    source: str = doc_field("keyword", default="")
    hash: str = doc_field("keyword", default="")
    status: str = doc_field("keyword", default="current")
    first_seen: str | None = doc_field("date", default=None)
    last_seen: str | None = doc_field("date", default=None)
    definition: dict[str, Any] = doc_field("stored", factory=dict)


def versions_index(catalog_alias: str) -> str:
    """The versions index that belongs to a catalog alias."""
    return f"{catalog_alias}-versions"


def versions_index_body() -> dict[str, Any]:
    """Settings and mappings of the versions index."""
    return side_index_body(VersionDoc, schema="versions", schema_version=VERSIONS_SCHEMA_VERSION)
