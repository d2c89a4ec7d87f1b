"""Request shaping: a :class:`~toolsift.search.request.SearchRequest` becomes what the searcher ranks.

One place for what every front end used to do itself: the caller's steps become tool needs, the
rule-based decomposition splits the text, a structured query is taken as given, otherwise the text is
rewritten (cached rewrite, else the configured LLM, else the text itself); the agent's instruction
then joins as one more need.

A rewrite is an LLM's answer to a prompt that held tool text (the pseudo-relevance context): one that
carries findings of the hostile-text screen the request itself does not have is not used, and the
request is searched as text (source ``fallback``). The rewriter never shows the LLM a flagged tool;
this catches what the screen did not flag in the tools but does in the answer.
"""

from __future__ import annotations

from collections.abc import Callable

from opensearchpy import OpenSearch

from toolsift.config import Settings
from toolsift.screen.screening import Finding, introduced
from toolsift.query.decompose import decompose
from toolsift.query.rewrite import rewrite_request
from toolsift.query.structured import StructuredQuery, ToolNeed
from toolsift.search.request import RequestSource, SearchRequest

__all__ = ["shape_request", "carried_tool_text"]


def carried_tool_text(query: StructuredQuery, request: str) -> list[Finding]:
    """What the hostile-text screen finds in a rewrite of ``request`` that the request lacks."""
    return introduced([*query.all_texts(), *query.extracted_arguments], request)


def shape_request(
    request: SearchRequest,
    client: OpenSearch,
    settings: Settings,
    structure: Callable[[str], StructuredQuery],
) -> tuple[str | StructuredQuery, RequestSource]:
    """What to search with, and where its form came from.

    Args:
        structure: the searcher's own structuring of a plain text (used when an instruction joins a
            request that was not rewritten).
    """
    query: str | StructuredQuery
    source: RequestSource
    if request.steps:
        needs = tuple(ToolNeed(s, s, s) for s in request.steps)
        query, source = StructuredQuery(tool_needs=needs, text=request.query or " | ".join(request.steps)), "steps"
    elif request.decompose:
        query, source = decompose(request.query), "decompose"
    elif request.structured is not None:
        query, source = request.structured, "file"
    elif not request.rewrite or request.method == "full-doc":
        # Full-Doc matches the request text alone: a rewrite would not change its ranking.
        query, source = request.query, "off"
    else:
        query, source = rewrite_request(client, settings, request.query, tenant=request.tenant)
        if isinstance(query, StructuredQuery) and carried_tool_text(query, request.query):
            query, source = request.query, "fallback"
    if request.instruction and request.method == "multi-field":
        structured = query if isinstance(query, StructuredQuery) else structure(query)
        query = structured.with_instruction(request.instruction)
    return query, source
