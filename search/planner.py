"""Multi-need tool search: one request with several needs, answered with tools for each of them.

What an agent sends is one whole request ("find today's LeetCode challenge and save a walkthrough to
/root/md/a.md"), not annotated steps. One query for the whole request lets its loudest need take the
whole answer. Here, over an index that holds servers (agent documents) beside their tools:

1. **Needs** (:func:`planning_texts`): the whole request, then its needs: a rewrite's tool needs when
   the request was rewritten into several (a cached rewrite or the configured LLM), else the
   rule-based ones (:func:`~toolsift.query.decompose.request_needs`: clauses and action verbs, and
   the files the request reads or writes).
2. **One joint ranking per text** (:class:`~toolsift.agents.agent_search.StepRetriever`): tool and server
   documents ranked together on their overviews (BM25 over the flat document and k-NN over the
   overview vectors for ``hybrid``), every text's scores on [0, 1]; Algorithm 1 gives each text's
   servers. A ``hybrid`` search adds one more need, **the words of the whole request**
   (:func:`lexical_need`): its BM25 ranking alone, at λ (``lexical_weight``, by default
   :data:`LEXICAL_WEIGHT`). The dense part weighs
   0.75 of a hybrid score and reads a sentence by what it is *about* ("search the web for recent news
   about electric cars" is, to MiniLM, about electric cars: the EV-charging finder first), while the
   request's words still name what it asks a tool to do (the web search is BM25's first); a tool the
   words single out is no longer buried under the tools its topic points at. The words rank tools,
   not servers: a server is scored by the texts' joint rankings alone.
3. **Merge** (:func:`~toolsift.agents.aggregation.rank_tools_by_server`): the servers by CombMAX over
   the texts; every tool by its best score over the texts plus ``server_weight`` × its server's
   score, so the servers the request as a whole points at bring their tools up together.
4. **Prerequisites** (:func:`~toolsift.agents.aggregation.place_prerequisites`): each of the best
   ``prerequisite_tools`` tools brings the tools of its server it needs called first
   (:mod:`toolsift.ingest.prerequisites`: ``geocode_address`` before ``find_nearby_places``),
   right after it — needs the request implies but never says.

The answer's ``steps`` show each text's servers; each tool's ``contributions`` its ``need`` and
``server`` parts and ``via_need`` the text that gave its need score (a prerequisite's: one
``prerequisite`` part, strictly below the tool that needs it, and whose it is in ``prerequisite_of``).

Steps 3 and 4 (:func:`rank_planned`) read only the texts' rankings (the words' among them, on [0, 1])
and the three parameters (:class:`PlannerParams`: β, M and λ, the settings' or a pushed weights
artifact's), so the workbench re-ranks a search's kept rankings with proposed parameters exactly as
a search with them would rank.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolsift.config import Retriever, Settings
from toolsift.errors import BadQueryError
from toolsift.query.decompose import request_needs
from toolsift.query.scope import UNSCOPED, Scope
from toolsift.query.structured import StructuredQuery
from toolsift.agents.aggregation import merge_steps, place_prerequisites, rank_tools_by_server
from toolsift.records import RankedAgent, RankedTool
from toolsift.agents.agent_search import StepRetriever
from toolsift.search.request import StepRanking

__all__ = ["LEXICAL_NEED", "LEXICAL_WEIGHT", "PLANNER_PARAMETERS", "PlannedAnswer", "PlannerParams", "planning_texts", "lexical_need",
           "planned_rankings", "rank_planned", "plan_search"]

#: How many merged servers the answer lists (and the server boost can reach).
PLANNED_AGENTS = 50
#: λ: the weight of the whole request's words as a need (its BM25 ranking's [0, 1] scores × λ) in a
#: ``hybrid`` search. Chosen on half A of LiveMCPBench's whole requests by the project's rule
#: (``docs/evaluation.md``, "What agents send"); 0 would leave the words to the hybrid ranking alone.
LEXICAL_WEIGHT = 0.9
#: The need the whole request's words make, as an answer names it (a step's ``text``, a tool's ``via_need``).
LEXICAL_NEED = "words of the whole request (BM25)"


#: The most β may be (the ``server_weight`` setting's bound).
MAX_SERVER_WEIGHT = 10.0
#: The most λ may be (the ``lexical_weight`` setting's bound).
MAX_LEXICAL_WEIGHT = 2.0
#: The multi-need ranking's parameters, as settings, weights artifacts and the workbench name them.
PLANNER_PARAMETERS = ("server_weight", "prerequisite_tools", "lexical_weight")
#: The most tools that may bring their prerequisites (the ``prerequisite_tools`` setting's bound).
MAX_PREREQUISITE_TOOLS = 100


@dataclass(frozen=True)
class PlannerParams:
    """The multi-need ranking's own parameters.

    Args:
        server_weight: β, the share of a tool's server score in its score (need + β × server).
        prerequisite_tools: M, how many of the best tools bring their prerequisites (0: none).
        lexical_weight: λ, the weight of the whole request's words as a need (a ``hybrid`` search's
            :func:`lexical_need`; 0: none).

    Raises:
        BadQueryError: a value outside [0, 10] (β), [0, 100] (M) or [0, 2] (λ), or M not a whole number.
    """

    server_weight: float = 0.4
    prerequisite_tools: int = 1
    lexical_weight: float = LEXICAL_WEIGHT

    def __post_init__(self) -> None:
        beta, m, lam = self.server_weight, self.prerequisite_tools, self.lexical_weight
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not 0.0 <= beta <= MAX_SERVER_WEIGHT:
            raise BadQueryError(f"server_weight must be a number within [0, {MAX_SERVER_WEIGHT:g}], got {beta!r}")
        if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not 0.0 <= lam <= MAX_LEXICAL_WEIGHT:
            raise BadQueryError(f"lexical_weight must be a number within [0, {MAX_LEXICAL_WEIGHT:g}], got {lam!r}")
        if isinstance(m, bool) or not isinstance(m, int) or not 0 <= m <= MAX_PREREQUISITE_TOOLS:
            raise BadQueryError(
                f"prerequisite_tools must be a whole number within [0, {MAX_PREREQUISITE_TOOLS}], got {m!r}")
        object.__setattr__(self, "server_weight", float(beta))
        object.__setattr__(self, "lexical_weight", float(lam))

    @classmethod
    def from_settings(cls, settings: Settings) -> PlannerParams:
        """The settings' ``server_weight``, ``prerequisite_tools`` and ``lexical_weight``."""
        return cls(settings.server_weight, settings.prerequisite_tools, settings.lexical_weight)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], like: PlannerParams | None = None) -> PlannerParams:
        """Parameters from JSON (a weights artifact's ``planner``, the workbench's proposal); a value
        left out is ``like``'s (default: the defaults).

        Raises:
            BadQueryError: an unknown key or a bad value, named.
        """
        base = like or cls()
        unknown = sorted(set(data) - set(PLANNER_PARAMETERS))
        if unknown:
            raise BadQueryError(f"planner: unknown parameter(s) {', '.join(unknown)}; use "
                                f"{', '.join(PLANNER_PARAMETERS)}")
        m = data.get("prerequisite_tools", base.prerequisite_tools)
        if isinstance(m, float) and m.is_integer():
            m = int(m)
        return cls(data.get("server_weight", base.server_weight), m,
                   data.get("lexical_weight", base.lexical_weight))

    def to_dict(self) -> dict[str, Any]:
        return {"server_weight": self.server_weight, "prerequisite_tools": self.prerequisite_tools,
                "lexical_weight": self.lexical_weight}

    def describe(self) -> str:
        """How a tool's score is made, in words (a result's ``ranker``)."""
        return (f"need + {self.server_weight:g} x server, the request's words x {self.lexical_weight:g}, "
                f"prerequisites of the best {self.prerequisite_tools}")


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


def lexical_need(ranking: StepRanking, weight: float = LEXICAL_WEIGHT) -> StepRanking:
    """The whole request's BM25 ranking as one more need (:data:`LEXICAL_NEED`): its entities'
    scores × ``weight``, no servers (the words rank tools; servers come from the joint rankings).

    Example:
        >>> bm25 = StepRanking("search the web", (RankedTool("d/web", "web", "tool", "agent:d", 1.0),), ())
        >>> [(t.doc_id, t.score) for t in lexical_need(bm25, 0.9).entities]
        [('d/web', 0.9)]
    """
    return StepRanking(LEXICAL_NEED, tuple(e.rescored(e.score * weight) for e in ranking.entities), ())


def planned_rankings(
    steps: StepRetriever,
    requests: Sequence[StructuredQuery],
    retriever: Retriever,
    *,
    scope: Scope = UNSCOPED,
    timings: dict[str, float] | None = None,
    batch: int = 64,
    words: bool = True,
) -> list[tuple[StepRanking, ...]]:
    """Each request's rankings, as :func:`rank_planned` reads them: its texts' joint rankings
    (:func:`planning_texts`), then, in a ``hybrid`` search and with ``words``, the need its words
    make (:func:`lexical_need` of the whole request's BM25 ranking, on [0, 1]: :func:`rank_planned`
    weighs it by λ). A text several requests share is ranked once; the texts' joint rankings and the
    words' BM25 rankings go in one round trip, at most ``batch`` first stages in each.

    Raises:
        BadQueryError: a request without text, or ``batch`` < 1.
    """
    if batch < 1:
        raise BadQueryError(f"batch must be at least 1, got {batch}")
    texts_of = [planning_texts(sq) for sq in requests]
    if not all(texts_of):
        raise BadQueryError("the query has no text to search with")
    words = words and retriever == "hybrid"

    wanted = [(t, retriever) for texts in texts_of for t in texts]
    if words:
        wanted += [(texts[0], "bm25") for texts in texts_of]
    unique = list(dict.fromkeys(wanted))
    found: dict[tuple[str, Retriever], StepRanking] = {}
    for start in range(0, len(unique), batch):
        chunk = unique[start:start + batch]
        found.update(zip(chunk, steps.rank_each(chunk, timings, scope)))
    return [(*(found[(t, retriever)] for t in texts),
             *((lexical_need(found[(texts[0], "bm25")], 1.0),) if words else ())) for texts in texts_of]


def rank_planned(
    rankings: Sequence[StepRanking],
    *,
    top_k: int,
    params: PlannerParams,
    identities: Callable[[Sequence[str]], Mapping[str, RankedTool]],
    timings: dict[str, float] | None = None,
) -> tuple[list[RankedTool], list[RankedAgent]]:
    """Steps 3 and 4 over the texts' ``rankings``: the merged servers, the tools by need + β × server
    (the words' need, :data:`LEXICAL_NEED`, weighed by λ first; left out at λ = 0), the prerequisites
    of the best M right after them. ``identities`` looks up prerequisites no ranking holds (by id).

    Raises:
        BadQueryError: ``top_k`` < 1.
    """
    timings = timings if timings is not None else {}
    t0 = time.perf_counter()
    rankings = [lexical_need(r, params.lexical_weight) if r.text == LEXICAL_NEED else r for r in rankings
                if r.text != LEXICAL_NEED or params.lexical_weight > 0]
    agents = merge_steps([r.agents for r in rankings], top_k=PLANNED_AGENTS, rule="max")
    tools = rank_tools_by_server([r.entities for r in rankings], agents, server_weight=params.server_weight,
                                 top_k=top_k, texts=[r.text for r in rankings])
    timings["rank"] = (time.perf_counter() - t0) * 1000
    top = params.prerequisite_tools
    wanted = list(dict.fromkeys(p for t in tools[:top] for p in t.prerequisites))
    if wanted:
        t0 = time.perf_counter()
        known = {e.doc_id: e for r in rankings for e in r.entities if e.doc_id in wanted}
        missing = [p for p in wanted if p not in known]
        if missing:
            known.update(identities(missing))
        tools = place_prerequisites(tools, known, top=top, top_k=top_k)
        timings["prerequisites"] = (time.perf_counter() - t0) * 1000
    return tools, agents


def plan_search(
    steps: StepRetriever,
    sq: StructuredQuery,
    *,
    top_k: int,
    retriever: Retriever,
    params: PlannerParams,
    scope: Scope = UNSCOPED,
) -> PlannedAnswer:
    """Tools for every need of ``sq``, within ``scope`` (see the module's description).

    Raises:
        BadQueryError: a request without text.
    """
    timings: dict[str, float] = {}
    rankings = planned_rankings(steps, [sq], retriever, scope=scope, timings=timings,
                                words=params.lexical_weight > 0)[0]
    tools, agents = rank_planned(rankings, top_k=top_k, params=params,
                                 identities=lambda ids: steps.identities(ids, scope), timings=timings)
    return PlannedAnswer(tuple(tools), tuple(agents), tuple(rankings), timings)
