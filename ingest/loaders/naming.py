"""Names the loaders give: a catalog's label, slugs, agent ids, and record ids read from a catalog."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

from toolsift.ingest.raw_records import AGENT_ID_PREFIX

__all__ = ["catalog_name", "catalog_label", "slugify", "agent_id_for", "id_text", "nonblank"]

# File stems that name the kind of file rather than the catalog; the folder names the catalog then.
_GENERIC_STEMS = frozenset(
    {"tools", "corpus", "catalog", "functions", "openapi", "swagger", "spec", "api", "tools_list",
     "standardized_tools", "documents", "docs"}
)


def catalog_name(path: Path) -> str:
    """The catalog a file holds: its stem, or its folder's name when the stem is a generic one.

    ``toolret/apibank/tools.json`` is ``apibank``, ``specs/petstore.v3.yaml`` is ``petstore``.
    """
    stem = path.name.split(".", 1)[0]
    parent = path.resolve().parent.name
    if stem.lower() in _GENERIC_STEMS and parent:
        return parent
    return stem


def catalog_label(path: Path, format_name: str) -> str:
    """The short ``<format>/<catalog>`` label that records carry as their ``source``.

    ``toolret/apibank/tools.json`` read as ToolRet is ``toolret/apibank``; ``specs/petstore.yaml``
    read as OpenAPI is ``openapi/petstore``.
    """
    return f"{format_name}/{catalog_name(path)}"


def slugify(text: str) -> str:
    """Lower-case ``text`` and join its words with ``-``; letters of every script are kept."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"[^\w]+", "-", folded).strip("-")


def agent_id_for(name: str) -> str:
    """The id of the agent called ``name``: ``agent:`` and the name's slug."""
    return AGENT_ID_PREFIX + slugify(name)


def id_text(value: Any) -> str | None:
    """A catalog id as text: strings as they are, integers written out; None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def nonblank(value: Any) -> str | None:
    """``value`` (as given, not stripped) when it is a string with some non-space text, else None."""
    if isinstance(value, str) and value.strip():
        return value
    return None
