"""What an agent asks of toolsift, answered the same way over HTTP and MCP.

:class:`ToolSearchService` sits between the two front ends (:mod:`toolsift.api.app`,
:mod:`toolsift.api.mcp_server`) and the one search backend: it turns an agent's call into a
:class:`~toolsift.search.SearchRequest` in the caller's tenant, asks the backend, and answers with
the tools as ready-to-call definitions (:mod:`toolsift.search.definitions`) capped by
``max_results`` and a token budget. It holds no HTTP or MCP types, so both protocols return the same
JSON for the same call.

Every answer carries a fresh ``request_id``; with the query log on, the search is logged under it,
with the caller's tenant and key and the tools handed over (:func:`toolsift.learning.querylog.issuing`),
and feedback on it (``/v1/feedback``, a forwarded ``call_tool``) is accepted only from that key and
only on those tools (:class:`~toolsift.learning.feedback.FeedbackStore`).

A call is the request (:class:`~toolsift.search.request.SearchRequest`, built and validated at the
edge; the service sets its tenant from the caller's key and its request id) and how to hand the tools
over (:class:`Delivery`). Two of those options shape a search's tool list:

* ``brief`` — each tool only ``{id, name, description}``: the name the asked format's client calls it
  by and a one-line description (:func:`~toolsift.search.definitions.one_line`), the shape hosted
  tool-search protocols list for deferred loading (the full definition is ``get_tool``'s); the
  budgets count these brief entries. A flagged tool's line starts with the short flag and the entry
  keeps its ``risk`` reasons.
* ``pinned`` — tool ids (at most :data:`MAX_PINNED`) always returned, first and in the order given,
  whatever the search finds, its filters and ``risky`` say; ``top_k`` is the search's alone, but the
  pinned tools count against ``max_results`` and the token budget and are never cut by them: when
  they alone are over a limit they are all returned, nothing else is, and the answer says
  ``pinned_over_budget``. A pinned tool the search finds too is returned once, in its pinned place.
  Every id must be a tool the caller's tenant may see: one that is not (no such tool, another
  tenant's, an agent) is a :class:`PinnedToolError`, 400 naming the field ``pinned.N`` the way the
  request's own fields are named (``filters.servers.0``) and feedback's (``calls.N.tool_id``), with the
  same words for a missing and another tenant's tool, so no other tenant's id is revealed.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from opensearchpy import OpenSearch

from toolsift.access import Principal
from toolsift.config import McpSource, Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import BadQueryError, ForbiddenError, NotFoundError
from toolsift.mappings import F
from toolsift.records import RankedTool
from toolsift.search.backend import SearchBackend
from toolsift.search.definitions import TOKENIZER, Fitted, Format, ToolDefinition
from toolsift.learning.feedback import FeedbackStore, ToolOutcome
from toolsift.learning.querylog import issuing
from toolsift.search.request import MAX_SERVED_TOP_K, SearchRequest, SearchResponse, explanation

__all__ = ["Delivery", "agent_filter", "CallTarget", "ToolSearchService", "PinnedToolError", "MAX_TOP_K", "MAX_PINNED"]

#: The most tools (or agents) one agent call may ask for.
MAX_TOP_K = MAX_SERVED_TOP_K  # the schemas of the search API and the MCP server bound top_k by it
#: The most tools one search may pin.
MAX_PINNED = 50


class PinnedToolError(BadQueryError):
    """A pinned id that is not a tool the caller may see (``field``: ``pinned.N``, its place in the list)."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


def agent_filter(servers: Sequence[str]) -> tuple[str, ...]:
    """A call's server filter as the request's agent filter: ids ``agent:<slug>`` or bare slugs."""
    return tuple(s if s.startswith("agent:") else f"agent:{s}" for s in servers)


@dataclass(frozen=True)
class Delivery:
    """How a search's tools are handed over; what to search is the call's
    :class:`~toolsift.search.request.SearchRequest` (the one record from the edge to the backend)."""

    format: Format = "toolsift"
    max_results: int | None = None
    token_budget: int | None = None
    brief: bool = False
    pinned: tuple[str, ...] = ()


@dataclass(frozen=True)
class CallTarget:
    """Where a call of an indexed tool goes: its live source and the tool's own name there."""

    tool_id: str
    source: McpSource
    name: str


class ToolSearchService:
    """Agent-facing tool search over one backend.

    Args:
        client: a connected client.
        settings: the defaults (index, retriever, token budget, feedback index).
        embedder: the embedding model, loaded once by the caller (the server's lifespan).
    """

    def __init__(self, client: OpenSearch, settings: Settings, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self.backend = SearchBackend(client, settings, embedder=embedder, source="api")
        self.feedback_store = FeedbackStore(client, settings)

    def warm(self) -> None:
        """Build the backend's searchers now (:meth:`SearchBackend.warm`), not on the first call."""
        self.backend.warm()

    # --- calls ------------------------------------------------------------------------------------
    def search(self, who: Principal, request: SearchRequest, delivery: Delivery = Delivery()) -> dict[str, Any]:
        """Tools (or agents) for ``request``, as ``who`` may see them, with ready-to-call definitions.

        The request's tenant is always ``who``'s (whatever the request says) and its id a fresh one."""
        pinned = self._pinned(who, delivery.pinned)
        request_id = _request_id()
        request = replace(request, tenant=who.tenant, request_id=request_id)
        with issuing(request_id, tenant=who.tenant, key=who.name) as issue:
            answer = self._answer(who, request, delivery, self.backend.search(request), request_id, pinned)
            # Logged in the search's own order, pinned tools last: feedback is accepted on every tool
            # handed over, and what learns from it reads the ranks as the search's, not the agent's pins.
            ids = [t["id"] for t in answer["tools"]]
            issue.answered([i for i in ids if i not in pinned] + [i for i in ids if i in pinned])
        return answer

    def toolset(self, who: Principal, request: SearchRequest, delivery: Delivery = Delivery()) -> dict[str, Any]:
        """PTR's precise tool set for ``request`` (from the index's history when it has one)."""
        request_id = _request_id()
        request = replace(request, level="set", tenant=who.tenant, request_id=request_id)
        with issuing(request_id, tenant=who.tenant, key=who.name) as issue:
            response = self.backend.search(request)
            assert response.tool_set is not None
            tool_set = response.tool_set.tool_set
            fitted = self._deliver(who, [m.tool_id for m in tool_set.members], delivery)
            delivered = {t.tool_id: t for t in fitted.tools}
            members = [
                {"id": m.tool_id, "name": delivered[m.tool_id].name, "need": m.need, "reason": m.reason, "why": m.why,
                 "coverage": round(m.coverage, 4), "tokens": delivered[m.tool_id].tokens,
                 "definition": delivered[m.tool_id].definition, **_risk(delivered[m.tool_id])}
                for m in tool_set.members if m.tool_id in delivered
            ]
            issue.answered([m["id"] for m in members])
        return {
            "request_id": request_id, "query": request.query, "format": delivery.format, "tools": members,
            "needs": list(tool_set.needs), "unsolved_needs": list(tool_set.unsolved),
            "history": response.tool_set.history, **_budget(fitted),
            "timings_ms": {k: round(v, 2) for k, v in response.tool_set.timings.items()},
        }

    def get_tool(self, who: Principal, tool_id: str, fmt: Format = "toolsift") -> dict[str, Any]:
        """One tool's definition, ready to call.

        Raises:
            NotFoundError: no such tool, or one ``who``'s tenant may not see (the same answer).
        """
        fitted = self.backend.deliver([tool_id], tenant=who.tenant, fmt=fmt)  # one tool: never budget-capped
        if not fitted.tools:
            raise NotFoundError(f"no tool {tool_id!r}")
        tool = fitted.tools[0]
        return {"id": tool.tool_id, "name": tool.name, "original_name": tool.original_name, "server": tool.server,
                "format": fmt, "tokens": tool.tokens, "tokenizer": TOKENIZER, "definition": tool.definition,
                **_risk(tool)}

    def feedback(self, who: Principal, request_id: str, outcomes: Sequence[ToolOutcome]) -> dict[str, Any]:
        """Store which tools of the answer ``request_id`` the agent called and whether the calls succeeded,
        each report once: ``stored`` counts the outcomes written now, ``already_recorded`` those this key
        had reported the same way before (not stored again).

        Raises:
            BadQueryError: a malformed request id or outcome list, or a tool the answer did not hold
                (``NotAnsweredError``, naming ``calls.N.tool_id``).
            NotFoundError: no answer was given to ``who``'s key under ``request_id`` (``UnknownRequestError``).
            ForbiddenError: the query log is off, so no answer can be checked (``FeedbackOffError``).
        """
        done = self.feedback_store.record(request_id, outcomes, who)
        return {"request_id": request_id, "stored": done.stored, "already_recorded": done.already_recorded}

    def call_target(self, who: Principal, tool_id: str, arguments: Any, request_id: str | None = None) -> CallTarget:
        """Check a call of ``tool_id`` with ``arguments`` before it is forwarded, and say where it goes.

        The tool must be one ``who`` may see, indexed from a live source (``mcp_sources``), with no
        changed definition waiting for approval (the server would run the new one), and the arguments
        must satisfy its input schema. With a ``request_id`` (and the query log on) the call will be
        feedback on that answer, so the answer must be one given to ``who``'s key and hold the tool.

        Raises:
            NotFoundError: no such tool, or one ``who``'s tenant may not see; no answer given to
                ``who``'s key under ``request_id``.
            BadQueryError: not from a live source, or arguments that do not fit the schema (the
                message names the argument).
            ForbiddenError: a changed definition of the tool waits for approval.
        """
        import jsonschema

        from toolsift.ingest.approvals import ApprovalStore

        found = self.backend.tool_sources([tool_id], tenant=who.tenant).get(tool_id)
        if found is None:
            raise NotFoundError(f"no tool {tool_id!r}")
        if request_id is not None and self.feedback_store.checks:
            self.feedback_store.check(request_id, [ToolOutcome(tool_id, called=True)], who)
        label = str(found.get(F.source) or "")
        source = next((s for s in self.settings.mcp_sources if label == f"mcp/{s.name}"), None)
        if source is None:
            raise BadQueryError(f"tool {tool_id!r} is not from a live MCP source ({label or 'no source'}): "
                                "toolsift forwards calls only to the servers in mcp_sources; call it where it is hosted")
        record = ApprovalStore(self.backend.client, self.settings.index).get([tool_id]).get(tool_id)
        if record is not None and record.status == "pending":
            raise ForbiddenError(f"a changed definition of {tool_id!r} waits for approval (`toolsift approvals show "
                                 f"{tool_id}`); it cannot be called until then")
        stored = found.get(F.raw)
        raw: dict[str, Any] = stored if isinstance(stored, dict) else {}
        if not isinstance(arguments, dict):
            raise BadQueryError(f"arguments must be an object, got {type(arguments).__name__}")
        declared = raw.get("inputSchema")
        schema: dict[str, Any] = declared if isinstance(declared, dict) else {"type": "object"}
        try:
            problem = jsonschema.exceptions.best_match(
                jsonschema.validators.validator_for(schema)(schema).iter_errors(arguments))
        except jsonschema.exceptions.SchemaError as exc:
            raise BadQueryError(f"tool {tool_id!r} has an input schema that is not valid JSON Schema "
                                f"({exc.message}); the call is not forwarded") from None
        if problem is not None:
            where = ".".join(["arguments", *(str(p) for p in problem.absolute_path)])
            raise BadQueryError(f"{where}: {problem.message}")
        return CallTarget(tool_id, source, str(raw.get("name") or found.get(F.name) or tool_id))

    def record_call(self, who: Principal, request_id: str | None, tool_id: str, success: bool, note: str = "") -> str:
        """Record a forwarded call as feedback on the answer ``request_id`` (the ``/v1/feedback`` store,
        checked the same way); says whether it was stored, and if not why.

        A call without a request id, or on a service that keeps no query log, is forwarded all the
        same: it is feedback on no answer toolsift can check, so nothing is stored.

        Raises:
            NotFoundError, BadQueryError: as :meth:`feedback` (the request id is not an answer given to
                ``who``'s key, or the answer did not hold the tool).
        """
        if request_id is None:
            return "not stored: the call named no request_id"
        if not self.feedback_store.checks:
            return "not stored: this service keeps no query log (query_log = false) to check the request_id against"
        done = self.feedback(who, request_id, [ToolOutcome(tool_id, called=True, success=success, note=note[:500])])
        return "already recorded (the same outcome was reported before)" if done["already_recorded"] else "stored"

    # --- answers ----------------------------------------------------------------------------------
    def _pinned(self, who: Principal, pinned: Sequence[str]) -> tuple[str, ...]:
        """The pinned ids, each once in its first place, once each is known to be a tool ``who`` may see
        (the tenant check of :meth:`get_tool`: the backend's own, on the tools' ids).

        Raises:
            PinnedToolError: more than :data:`MAX_PINNED`, or an id that is not such a tool.
        """
        if len(pinned) > MAX_PINNED:
            raise PinnedToolError(f"pinned: at most {MAX_PINNED} tools may be pinned, got {len(pinned)}", "pinned")
        if not pinned:
            return ()
        visible = self.backend.tool_sources(list(dict.fromkeys(pinned)), tenant=who.tenant)
        unknown = [(n, tool_id) for n, tool_id in enumerate(pinned) if tool_id not in visible]
        if unknown:
            n, tool_id = unknown[0]
            more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
            raise PinnedToolError(f"pinned.{n}: no tool {tool_id!r}{more}", f"pinned.{n}")
        return tuple(dict.fromkeys(pinned))

    def _deliver(self, who: Principal, ids: Sequence[str], delivery: Delivery, keep: int = 0) -> Fitted:
        budget = delivery.token_budget if delivery.token_budget is not None else self.settings.token_budget
        return self.backend.deliver(ids, tenant=who.tenant, fmt=delivery.format, max_results=delivery.max_results,
                                    token_budget=budget, brief=delivery.brief, keep=keep)

    def _answer(self, who: Principal, request: SearchRequest, delivery: Delivery, response: SearchResponse,
                request_id: str, pinned: tuple[str, ...] = ()) -> dict[str, Any]:
        result = response.result
        assert result is not None
        ranked = {t.doc_id: t for t in result.tools if t.entity == "tool"}
        found = [i for i in ranked if i not in pinned]  # a pinned tool the search found keeps its pinned place
        fitted = self._deliver(who, [*pinned, *found], delivery, keep=len(pinned))
        tools = []
        for rank, tool in enumerate(fitted.tools, start=1):
            hit = ranked.get(tool.tool_id)
            also_on = _also_on(hit)
            if delivery.brief:
                tools.append({**tool.definition, **_risk(tool), **also_on})
                continue
            entry: dict[str, Any] = {
                "rank": rank, "id": tool.tool_id, "name": tool.name, "original_name": tool.original_name,
                "server": tool.server, "score": None if hit is None else round(hit.score, 6),
                "missing_required_parameters": [] if hit is None else list(hit.missing_required),
                "tokens": tool.tokens, "definition": tool.definition, **_risk(tool), **also_on,
            }
            if tool.tool_id in pinned:
                entry["pinned"] = True
            if hit is None:  # pinned, not found by the search: nothing ranked it
                tools.append(entry)
                continue
            if hit.prerequisite_of:  # a tool its server needs called before the one above it
                entry["prerequisite_of"] = hit.prerequisite_of
            if request.explain:
                entry["explain"] = {
                    "field_scores": {k: round(v, 4) for k, v in hit.field_scores.items()},
                    "contributions": {k: round(v, 4) for k, v in hit.contributions.items()},
                    "explanation": explanation(hit),  # what ranked it: need + server, a prerequisite, fields
                    "base_score": None if hit.base_score is None else round(hit.base_score, 6),
                    "reranker_score": None if hit.reranker_score is None else round(hit.reranker_score, 6),
                    "first_stage_rank": hit.first_stage_rank,
                }
            tools.append(entry)
        answer: dict[str, Any] = {
            "request_id": request_id, "query": request.query, "level": result.level,
            "requested_level": result.requested_level or result.level, "format": delivery.format, "tools": tools,
            **_budget(fitted),
            "agents": [{"rank": a.rank, "id": a.agent_id, "name": a.name, "score": round(a.score, 6)}
                       for a in result.agents],
            "rewrite_source": response.rewrite_source, "degraded": result.degraded,
            "degraded_reason": result.degraded_reason,
            "timings_ms": {k: round(v, 2) for k, v in result.timings.items()},
        }
        if result.level_reason:
            answer["level_reason"] = result.level_reason
        if delivery.brief:
            answer["brief"] = True
        if pinned:
            answer["pinned"] = list(pinned)
            answer["pinned_over_budget"] = fitted.kept_over_limits
        return answer


def _risk(tool: ToolDefinition) -> dict[str, Any]:
    """``{"risk": [reasons]}`` for a tool the ingest screen flagged (its definition carries the flag too)."""
    return {"risk": list(tool.risk)} if tool.risk else {}


def _also_on(hit: RankedTool | None) -> dict[str, Any]:
    """``{"also_on": [{id, server}]}`` for a tool that stands for its copies on other servers (one
    capability once): each copy's id and server, best-ranked first."""
    if hit is None or not hit.also_on:
        return {}
    return {"also_on": [{"id": c.doc_id, "server": c.agent_id} for c in hit.also_on]}


def _request_id() -> str:
    return uuid.uuid4().hex


def _budget(fitted: Fitted) -> dict[str, Any]:
    return {"total_tokens": fitted.total_tokens, "dropped": fitted.dropped, "truncated_by": fitted.truncated_by,
            "tokenizer": TOKENIZER}
