"""The search backend's records: what a front end asks (:class:`SearchRequest`) and what it gets
back (:class:`SearchResponse`, holding a :class:`SearchResult` or a tool set), with their JSON forms.

No I/O here: the CLI, the workbench and the API build a request, :class:`~toolsift.search.backend.SearchBackend`
answers it, and each front end renders the response its own way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from toolsift.config import Copies, MultiNeed, Retriever, RiskyTools
from toolsift.errors import BadQueryError
from toolsift.query.scope import Scope
from toolsift.query.structured import StructuredQuery
from toolsift.agents.aggregation import MergeRule
from toolsift.sets.ptr import PTRConfig, ToolSet
from toolsift.records import FieldSignals, RankedAgent, RankedTool, ToolCopy

__all__ = [
    "Method",
    "Level",
    "RequestedLevel",
    "SearchLevel",
    "RequestSource",
    "MAX_TOP_K",
    "MAX_SERVED_TOP_K",
    "SearchRequest",
    "check_request_text",
    "check_top_k",
    "StepRanking",
    "SearchResult",
    "SearchResponse",
    "SetResult",
    "tool_to_dict",
    "copy_to_dict",
    "explanation",
    "why",
]

Method = Literal["multi-field", "full-doc"]
#: What an answer holds: tools, or agents (Tool-to-Agent retrieval).
Level = Literal["tool", "agent"]
#: What a search asks for: ``auto`` answers with agents when several of an agent's tools make the
#: tool answer (:func:`~toolsift.agents.aggregation.decide_level`), else with the tools.
RequestedLevel = Literal["tool", "agent", "auto"]
#: What a front end may ask for: a level, or ``set``: a precise tool set (PTR) instead of a list.
SearchLevel = Literal["tool", "agent", "auto", "set"]
#: Where the structured query came from: the rewrite's (``llm``, ``cache``, ``fallback``: the plain
#: request), the caller's structured query (``file``), no rewrite (``off``), the caller's steps,
#: rule-based decomposition.
RequestSource = Literal["llm", "cache", "fallback", "file", "off", "steps", "decompose"]
#: The most tools (or agents) one request may ask for.
MAX_TOP_K = 1000
#: The most a served request may ask for (search API, MCP server, workbench): their schemas' bound.
MAX_SERVED_TOP_K = 100


@dataclass(frozen=True)
class SearchResult:
    """A ranked answer plus how it was produced.

    ``timings`` (milliseconds): ``encode`` (query embedding), ``candidates`` and ``field_scores``
    (OpenSearch round trips, HTTP included), ``rank`` (the ranker), ``total``.

    At agent level ``steps`` holds each step's own ranking (one step: direct querying) and every
    agent says which steps reached it; ``requested_level`` is what was asked (``auto`` resolves
    to ``level``, with ``level_reason``).
    """

    query: StructuredQuery
    method: Method
    retriever: Retriever
    level: Level
    tools: tuple[RankedTool, ...]
    agents: tuple[RankedAgent, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)
    index: str = ""
    ranker: str = ""
    reranker: str | None = None
    degraded: bool = False
    degraded_reason: str | None = None
    steps: tuple[StepRanking, ...] = ()
    requested_level: RequestedLevel | None = None
    level_reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query.text,
            "structured_query": self.query.to_dict(),
            "method": self.method,
            "retriever": self.retriever,
            "level": self.level,
            "requested_level": self.requested_level or self.level,
            "level_reason": self.level_reason,
            "steps": [{"step": i + 1, **s.to_dict()} for i, s in enumerate(self.steps)],
            "index": self.index,
            "ranker": self.ranker,
            "reranker": self.reranker,
            "degraded": self.degraded,
            "degraded_reason": self.degraded_reason,
            "timings_ms": {k: round(v, 2) for k, v in self.timings.items()},
            "tools": [tool_to_dict(t, i + 1) for i, t in enumerate(self.tools)],
            "agents": [
                {"rank": a.rank, "id": a.agent_id, "name": a.name, "score": round(a.score, 6), "via": list(a.via),
                 "steps": list(a.steps), "step_scores": [round(v, 4) for v in a.step_scores]}
                for a in self.agents
            ],
        }


def tool_to_dict(t: RankedTool, rank: int) -> dict[str, Any]:
    """One ranked tool as JSON (``toolsift search --json``, the query log, the workbench)."""
    return {
        "rank": rank,
        "id": t.doc_id,
        "name": t.name,
        "entity": t.entity,
        "agent_id": t.agent_id,
        "score": round(t.score, 6),
        "base_score": None if t.base_score is None else round(t.base_score, 6),
        "reranker_score": None if t.reranker_score is None else round(t.reranker_score, 6),
        "field_scores": {k: round(v, 4) for k, v in t.field_scores.items()},
        "contributions": {k: round(v, 4) for k, v in t.contributions.items()},
        "raw_scores": {k: {f: round(s, 4) for f, s in v.items()} for k, v in t.raw_scores.items()},
        "missing_required_parameters": list(t.missing_required),
        "first_stage_rank": t.first_stage_rank,
        "explanation": explanation(t),
        **({"prerequisite_of": t.prerequisite_of} if t.prerequisite_of else {}),
        **({"risk": list(t.risk)} if t.risk else {}),
        **({"also_on": [copy_to_dict(c) for c in t.also_on]} if t.also_on else {}),
    }


def copy_to_dict(copy: ToolCopy) -> dict[str, Any]:
    """A copy a ranked tool stands for (its ``also_on``) as JSON: its id, name and server."""
    return {"id": copy.doc_id, "name": copy.name, "agent_id": copy.agent_id}


#: Short labels of a field ranking's terms in one line of text.
_TERM_LABELS = {"description": "desc", "parameters": "para", "response": "resp", "examples": "exam"}


def explanation(t: RankedTool) -> dict[str, Any]:
    """What ranked ``t``, as JSON: the terms its score is made of, by the ranking that made it.

    ``kind`` says which: ``prerequisite`` (placed after the tool that needs it: ``prerequisite_of``,
    its ``score`` strictly below that tool's), ``multi-need`` (``need``: the text whose joint ranking
    gave the best score and that score; ``server``: its server's term, β × the server's score),
    ``fields`` (``terms``: each MFTR field's weighted contribution, plus penalty, bias and the
    reranker's term when the ranking has them; they sum to the score) or ``first-stage`` (OpenSearch's
    own score: full-doc, or a ranker that did not answer).

    Example:
        >>> explanation(RankedTool("m/near", "near", "tool", "agent:m", 1.2,
        ...                        contributions={"need": 0.9, "server": 0.3}, via_need="find a park"))
        {'kind': 'multi-need', 'need': {'text': 'find a park', 'score': 0.9}, 'server': {'agent_id': 'agent:m', 'score': 0.3}}
    """
    parts = t.contributions
    if t.prerequisite_of:
        return {"kind": "prerequisite", "prerequisite_of": t.prerequisite_of, "score": round(t.score, 6)}
    if "need" in parts:
        return {"kind": "multi-need", "need": {"text": t.via_need, "score": round(parts["need"], 4)},
                "server": {"agent_id": t.agent_id, "score": round(parts.get("server", 0.0), 4)}}
    if parts:
        return {"kind": "fields", "terms": {k: round(v, 4) for k, v in parts.items()}}
    return {"kind": "first-stage", "score": round(t.score, 6)}


def why(t: RankedTool, *, request: str = "", names: Mapping[str, str] | None = None, width: int = 48) -> str:
    """:func:`explanation` in one line, for a table: ``need 0.85 (the whole request) + server 0.34``,
    ``prerequisite of find_ev_charging_stations``, ``desc=0.31 para=0.12 resp=0.00 exam=0.05``.

    Args:
        request: the request's text (its need is then said as "the whole request").
        names: tool id → name, for the tool a prerequisite is placed after (default: the id's last part).
        width: the longest need text quoted.
    """
    found = explanation(t)
    if found["kind"] == "prerequisite":
        needed = str(found["prerequisite_of"])
        return f"prerequisite of {(names or {}).get(needed, needed.rsplit('/', 1)[-1])}"
    if found["kind"] == "multi-need":
        text = str(found["need"]["text"])
        said = "the whole request" if text == request or not text else (
            repr(text if len(text) <= width else text[: width - 1] + "…"))
        return f"need {found['need']['score']:.2f} ({said}) + server {found['server']['score']:.2f}"
    if found["kind"] == "fields":
        return " ".join(f"{_TERM_LABELS.get(k, k)}={v:.2f}" for k, v in found["terms"].items())
    return "first-stage score (OpenSearch)"


@dataclass(frozen=True)
class StepRanking:
    """One step's joint ranking: its entities (scores in [0, 1]) and their owners by Algorithm 1."""

    text: str
    entities: tuple[RankedTool, ...]
    agents: tuple[RankedAgent, ...]

    def to_dict(self, top: int = 5) -> dict[str, Any]:
        return {
            "text": self.text,
            "agents": [{"id": a.agent_id, "name": a.name, "score": round(a.score, 4)} for a in self.agents[:top]],
        }




# Lone surrogates (what undecodable bytes become) and control characters other than tab and newlines.
_NOT_TEXT = re.compile(r"[\ud800-\udfff]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def check_top_k(top_k: int) -> None:
    """The one check of how many tools (or agents) a request asks for: 1 to :data:`MAX_TOP_K`. Made by
    the search package's two entries, :class:`SearchRequest` and :meth:`Searcher.search`; the stages
    below them trust it.

    Raises:
        BadQueryError: ``top_k`` out of range.
    """
    if not 1 <= top_k <= MAX_TOP_K:
        raise BadQueryError(f"top_k must be between 1 and {MAX_TOP_K}, got {top_k}")


def check_request_text(text: str, what: str) -> None:
    """Raise :class:`BadQueryError` when ``text`` is not clean Unicode text.

    A lone surrogate (a command line's undecodable bytes, a ``\\udc80`` in JSON) cannot be hashed,
    embedded or sent to OpenSearch; a control character (ESC, NUL, ...) means nothing to a search and
    could drive a terminal that echoes the request. The message names the character as an escape,
    never raw, and where it is.
    """
    found = _NOT_TEXT.search(text)
    if found is None:
        return
    char = found.group()
    code = char.encode("unicode_escape", "backslashreplace").decode("ascii")
    kind = "a lone surrogate (undecodable bytes?)" if "\ud800" <= char <= "\udfff" else "a control character"
    raise BadQueryError(f"the {what} holds {kind}, {code}, at character {found.start() + 1}: send UTF-8 text")


@dataclass(frozen=True)
class SearchRequest:
    """One search, as every front end asks it.

    Args:
        query: the request text. With ``steps`` it is only the label logged; with ``structured`` the
            text recorded beside it.
        structured: a rewritten structured query to search with as given (no rewrite).
        steps: step-wise querying: each text is one tool need (one step at agent level).
        decompose: split ``query`` into steps with the rule-based decomposition (no LLM).
        instruction: the agent's task instruction, matched against descriptions and examples as one
            more tool need (multi-field only).
        rewrite: rewrite ``query`` into tool needs and arguments (a cached rewrite, else the LLM when
            one is configured, else the request as one need).
        level: ``tool``, ``agent`` (Tool-to-Agent retrieval), ``auto`` or ``set`` (PTR tool set).
        top_k: how many tools (or agents) to return.
        method, retriever, merge: the tool-level ranking, the first stage (default: the setting),
            how an agent-level answer merges its steps.
        index, weights, reranker, ranker_url: per-request choices of index alias, learned weights,
            second-stage reranker and remote ranker (default: the settings).
        agents: a filter: only tools of these agents or MCP servers (ids ``agent:<slug>``, as search
            answers name them) are candidates (tool and ``auto`` level).
        tags: a filter: only tools with at least one of these tags (tool and ``auto`` level).
        tenant: the caller's tenant, set by the front end from the caller's key, never from the
            request body: only that tenant's and public tools, agents and bundles are seen, at every
            level. None: every tenant (no keys configured, or an all-tenant admin key).
        multi_need: how a tool search treats a request with several needs (``auto``, ``on``,
            ``off``; :mod:`toolsift.search.planner`); default: the ``multi_need`` setting.
        risky: ``flag`` (return flagged tools with their reasons) or ``exclude`` (leave them out);
            default: the ``risky_tools`` setting.
        copies: a tool answer's copies of one tool on several servers: ``once`` (the best-ranked, the
            others named in its ``also_on``) or ``all`` (every copy ranked); default: the ``copies`` setting.
        explain: the per-field evidence of every tool (field scores, contributions, raw scores) in
            the JSON answer; off, each tool keeps its identity, scores and missing parameters.
        candidates: also return every first-stage candidate's signals (tool level, multi-field), for
            re-ranking them with other weights (the workbench); a multi-need answer returns its texts'
            rankings (``SearchResult.steps``) instead. The ranking is the same as without.
        request_id: the id the front end answers under (search API, MCP server): the query log files
            the search under it, and a tenant's A/B test puts the request in an arm by it. None: an
            unlogged request (CLI, evaluation), always the control arm.

    Raises:
        BadQueryError: a request that cannot be answered (nothing to search with, conflicting inputs).
    """

    query: str = ""
    structured: StructuredQuery | None = None
    steps: tuple[str, ...] = ()
    decompose: bool = False
    instruction: str | None = None
    rewrite: bool = True
    level: SearchLevel = "tool"
    top_k: int = 10
    method: Method = "multi-field"
    retriever: Retriever | None = None
    merge: MergeRule = "max"
    index: str | None = None
    weights: Path | None = None
    reranker: str | None = None
    ranker_url: str | None = None
    agents: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    tenant: str | None = None
    explain: bool = True
    candidates: bool = False
    multi_need: MultiNeed | None = None
    risky: RiskyTools | None = None
    copies: Copies | None = None
    request_id: str | None = None

    def __post_init__(self) -> None:
        check_request_text(self.query, "query")
        for number, step in enumerate(self.steps, start=1):
            check_request_text(step, f"step {number}")
        if self.instruction is not None:
            check_request_text(self.instruction, "instruction")
        if self.structured is not None:
            for text in self.structured.all_texts():
                check_request_text(text, "structured query")
        steps = tuple(" ".join(s.split()) for s in self.steps)
        object.__setattr__(self, "steps", steps)
        if steps and not all(steps):
            raise BadQueryError("a step is empty")
        if steps and (self.structured is not None or self.decompose):
            raise BadQueryError(
                "steps give the tool needs themselves: send them without a structured query or decompose")
        if self.decompose and (self.structured is not None or not self.query.strip()):
            raise BadQueryError("decompose splits the query text: send a query and no structured query")
        if not (self.query.strip() or self.structured is not None or steps):
            raise BadQueryError("the request has no query text, structured query or steps to search with")
        check_top_k(self.top_k)
        if self.level not in ("tool", "agent", "auto", "set"):
            raise BadQueryError(f"unknown level {self.level!r}; use tool, agent, auto or set")
        if self.method not in ("multi-field", "full-doc"):
            raise BadQueryError(f"unknown method {self.method!r}; use multi-field or full-doc")
        if self.retriever is not None and self.retriever not in ("bm25", "minilm", "hybrid"):
            raise BadQueryError(f"unknown retriever {self.retriever!r}; use bm25, minilm or hybrid")
        scope = self.scope  # validates the filters
        object.__setattr__(self, "agents", scope.agents)
        object.__setattr__(self, "tags", scope.tags)
        if scope.narrows and self.level in ("agent", "set"):
            raise BadQueryError(f"agent and tag filters narrow a tool search; level {self.level!r} does not take them")
        if self.merge not in ("max", "rrf"):
            raise BadQueryError(f"unknown merge rule {self.merge!r}; use max or rrf")
        if self.multi_need is not None and self.multi_need not in ("auto", "on", "off"):
            raise BadQueryError(f"unknown multi_need {self.multi_need!r}; use auto, on or off")
        if self.risky is not None and self.risky not in ("flag", "exclude"):
            raise BadQueryError(f"unknown risky {self.risky!r}; use flag or exclude")
        if self.copies is not None and self.copies not in ("once", "all"):
            raise BadQueryError(f"unknown copies {self.copies!r}; use once or all")

    @property
    def scope(self) -> Scope:
        """The caller's tenant and the request's filters, as every first-stage query carries them."""
        return Scope(tenant=self.tenant, agents=self.agents, tags=self.tags)

    def overrides(self) -> dict[str, Any]:
        """The settings this request chooses for itself (None: the configured one)."""
        return {"index": self.index, "retriever": self.retriever, "weights": self.weights,
                "ranker_url": self.ranker_url, "reranker": self.reranker, "multi_need": self.multi_need,
                "risky_tools": self.risky, "copies": self.copies}


@dataclass(frozen=True)
class SetResult:
    """A recommended set, with the parameters that decided it and where the time went."""

    tool_set: ToolSet
    config: PTRConfig
    history: bool
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {**self.tool_set.to_dict(), "history": self.history, "ptr": self.config.to_dict(),
                "timings_ms": {k: round(v, 2) for k, v in self.timings.items()}}


@dataclass(frozen=True)
class SearchResponse:
    """The backend's answer: a ranked result, or a recommended tool set (``level == "set"``).

    ``rewrite_source`` says where the structured query came from; ``candidates`` holds the
    first-stage candidates' signals when the request asked for them.
    """

    request: SearchRequest
    rewrite_source: RequestSource
    result: SearchResult | None = None
    tool_set: SetResult | None = None
    candidates: tuple[FieldSignals, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON every front end returns (``toolsift search --json``)."""
        if self.tool_set is not None:
            return {"query": self.request.query, "rewrite_source": self.rewrite_source, **self.tool_set.to_dict()}
        assert self.result is not None
        answer = {**self.result.to_dict(), "rewrite_source": self.rewrite_source}
        if not self.request.explain:
            evidence = ("field_scores", "contributions", "raw_scores", "explanation")
            answer["tools"] = [{k: v for k, v in t.items() if k not in evidence} for t in answer["tools"]]
        return answer
