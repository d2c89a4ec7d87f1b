"""One capability once, against the index: read the ranked tools' descriptions and collapse their
copies (:mod:`toolsift.ranker.copies` decides what a copy is).

A search that answers each capability once ranks deeper than it answers (:func:`depth_for`), reads the
descriptions of that ranking's tools whose name a tool of another server shares (the only ones that can
be copies; none shared, no read) in one search by id (within the caller's scope: a copy the caller may
not see is never named), and keeps the first ``top_k`` tools left.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opensearchpy import OpenSearch

from toolsift.mappings import F
from toolsift.query.scope import UNSCOPED, Scope
from toolsift.ranker.copies import ToolText, collapse_copies, possible_copies
from toolsift.records import RankedTool

__all__ = ["COPY_DEPTH", "depth_for", "answer_once"]

#: How many times ``top_k`` a search that answers each capability once ranks before collapsing (at
#: 100k tools 60 % of a top 10 repeats a capability: three times as deep leaves ten after it).
COPY_DEPTH = 3


def depth_for(top_k: int) -> int:
    """How deep to rank for ``top_k`` capabilities."""
    return top_k * COPY_DEPTH


def answer_once(client: OpenSearch, index: str, tools: Sequence[RankedTool], *, top_k: int,
                threshold: float, scope: Scope = UNSCOPED) -> list[RankedTool]:
    """The first ``top_k`` of ``tools`` (best first) once their copies are collapsed (each kept tool's
    ``also_on`` names the copies it stands for).

    Args:
        index: the alias the tools were ranked from.
        threshold: the ``copy_overlap`` setting.
        scope: the caller's tenant and filters (the ranking's own).
    """
    ids = possible_copies(tools)
    if not ids:  # no two servers' tools share a name: nothing to collapse, nothing to read
        return list(tools[:top_k])
    body: dict[str, Any] = {"size": len(ids), "_source": [F.description],
                            "query": {"bool": {"filter": [{"ids": {"values": ids}}, *scope.clauses()]}}}
    hits = client.search(index=index, body=body)["hits"]["hits"]
    descriptions = {str(hit["_id"]): str((hit.get("_source") or {}).get(F.description) or "") for hit in hits}
    texts = {t.doc_id: ToolText(t.name, descriptions[t.doc_id], bool(t.risk))
             for t in tools if t.doc_id in descriptions}
    return collapse_copies(tools, texts, threshold)[:top_k]
