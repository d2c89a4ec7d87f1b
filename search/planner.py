"""Multi-need tool search: one request with several needs, answered with tools for each of them.

What an agent sends is one whole request ("find today's LeetCode challenge and save a walkthrough to
/root/md/a.md"), not annotated steps. One query for the whole request lets its loudest need take the
whole answer. Here, over an index that holds servers (agent documents) beside their tools:

1. **Needs** (:func:`planning_texts`): the whole request, then its needs: a rewrite's tool needs when
   the request was rewritten into several (a cached rewrite or the configured LLM), else the
   rule-based ones (:func:`~toolsift.query.decompose.request_needs`: clauses and action verbs, and
   the files the request reads or writes).
2. **One joint ranking per text** (:class:`~toolsift.search.agents.StepRetriever`): tool and server
   documents ranked together on their overviews (BM25 over the flat document and k-NN over the
   overview vectors for ``hybrid``), every text's scores on [0, 1]; Algorithm 1 gives each text's
   servers.
3. **Merge** (:func:`~toolsift.ranker.agents.rank_tools_by_server`): the servers by CombMAX over
   the texts; every tool by its best score over the texts plus ``server_weight`` × its server's
   score, so the servers the request as a whole points at bring their tools up together.
4. **Prerequisites** (:func:`~toolsift.ranker.agents.place_prerequisites`): each of the best
   ``prerequisite_tools`` tools brings the tools of its server it needs called first
   (:mod:`toolsift.ingest.prerequisites`: ``geocode_address`` before ``find_nearby_places``),
   right after it — needs the request implies but never says.

The answer's ``steps`` show each text's servers; each tool's ``contributions`` its ``need`` and
``server`` parts (a prerequisite's: ``prerequisite``, and whose it is in ``prerequisite_of``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from toolsift.config import Retriever
from toolsift.query.decompose import request_needs
from toolsift.query.scope import UNSCOPED, Scope
from toolsift.query.structured import StructuredQuery
from toolsift.ranker.agents import merge_steps, place_prerequisites, rank_tools_by_server
from toolsift.records import RankedAgent, RankedTool
from toolsift.search.agents import StepRetriever
from toolsift.search.records import StepRanking

__all__ = ["PlannedAnswer", "planning_texts", "plan_search"]

#: How many merged servers the answer lists (and the server boost can reach).
PLANNED_AGENTS = 50


@dataclass(frozen=True)
class PlannedAnswer:
    """Tools for every need of one request, the servers they came from, and each text's ranking."""

    tools: tuple[RankedTool, ...]
    agents: tuple[RankedAgent, ...]
    steps: tuple[StepRanking, ...]
    timings: Mapping[str, float]


def planning_texts(sq: StructuredQuery) -> list[str]:
    """The texts one request is searched with: the whole request first, then its needs, each once.

    A structured query with several tool needs (a rewrite) gives its needs (tool description, else
    user intent); one need (a plain request) is split by the rules.

    Example:
        >>> planning_texts(StructuredQuery.from_text("Find today's news and save it to /root/md/a.md"))
        ["Find today's news and save it to /root/md/a.md", "Find today's news", 'save it to /root/md/a.md', 'write text file to path']
    """
    whole = sq.text or sq.tool_needs[0].user_intent
    if len(sq.tool_needs) > 1:
        needs = [n.tool_description or n.user_intent for n in sq.tool_needs]
    else:
        needs = request_needs(whole)
    return list(dict.fromkeys(t for t in [whole, *needs] if t and t.strip()))


def plan_search(
    steps: StepRetriever,
    sq: StructuredQuery,
    *,
    top_k: int,
    retriever: Retriever,
    server_weight: float,
    prerequisite_tools: int = 0,
    scope: Scope = UNSCOPED,
) -> PlannedAnswer:
    """Tools for every need of ``sq``, within ``scope`` (see the module's description).

    Raises:
        BadQueryError: ``top_k`` < 1, a negative ``server_weight``, or a request without text.
    """
    timings: dict[str, float] = {}
    texts = planning_texts(sq)
    rankings = steps.rank(texts, retriever, timings, scope)
    t0 = time.perf_counter()
    agents = merge_steps([r.agents for r in rankings], top_k=PLANNED_AGENTS, rule="max")
    tools = rank_tools_by_server([r.entities for r in rankings], agents, server_weight=server_weight, top_k=top_k)
    timings["rank"] = (time.perf_counter() - t0) * 1000
    wanted = list(dict.fromkeys(p for t in tools[:prerequisite_tools] for p in t.prerequisites))
    if wanted:
        t0 = time.perf_counter()
        known = {e.doc_id: e for r in rankings for e in r.entities if e.doc_id in wanted}
        missing = [p for p in wanted if p not in known]
        known.update(steps.identities(missing, scope))
        tools = place_prerequisites(tools, known, top=prerequisite_tools, top_k=top_k)
        timings["prerequisites"] = (time.perf_counter() - t0) * 1000
    return PlannedAnswer(tuple(tools), tuple(agents), tuple(rankings), timings)
