"""The workbench's HTTP API and pages (FastAPI); the front end is plain HTML/JS in ``static/``.

Routes (JSON unless noted):

- ``GET /`` (page), ``GET /static/*``, ``GET /health``
- ``GET /api/config``: index, ranking, current weights and slider ranges, query sets
- ``POST /api/search`` ``{query, top_k, proposal?}``: rewritten query, current and proposed lists
- ``POST /api/rerank`` ``{search_id, proposal}``: the kept candidates ranked with the proposal
- ``POST /api/set`` ``{search_id}``: PTR's precise tool set for that request
- ``POST /api/judgments`` ``{query, tool_id, relevant (true/false/null), ...}``; ``GET /api/judgments``
- ``GET /api/querysets``; ``POST /api/querysets/import`` ``{path, name?}``;
  ``POST /api/querysets/from-judgments`` ``{name}``
- ``POST /api/compare`` ``{query_set, proposal}``: NDCG@10 / Recall@10, current vs proposed
- ``POST /api/weights/save`` ``{name, proposal, query_set?}``; ``POST /api/weights/push`` ``{path}``;
  ``POST /api/weights/clear``
- ``GET /api/metrics/evalruns?query_set=``; ``GET /api/metrics/latency?interval=&since=&source=``

**Who may call.** With API keys configured (``[[api_keys]]``, :mod:`toolsift.access`), every
``/api`` route needs one (``Authorization: Bearer <key>`` or ``X-API-Key``; 401 ``unauthorized``
without a valid one) and every write — judgments, query sets, weights saved, pushed or cleared —
needs an ``admin`` key (403 ``forbidden`` for a ``search`` key); pushing or clearing weights, which
changes the ranking of every tenant of the index, needs an admin key for every tenant (``*``). Searches, sets and comparisons run
in the key's tenant. Judgments and query sets belong to the writer's tenant: a key sees its tenant's
and the shared ones (written by all-tenant keys; judgments only on tools it may see), an all-tenant
key sees all; a judgment must name a tool its writer may see (404 ``not_found``, field ``tool_id``,
the same for a missing tool and another tenant's). The review queue (``GET /api/approvals``, admin keys)
holds a tenant's and public changes only; the metrics answer a tenant's key with its tenant's searches
(latency) and no eval runs (the operator's), an all-tenant key with everything. The page, ``/static``,
``/health`` and the API's schema (``/api/docs``) stay open. Without keys every caller may do everything (``toolsift serve ui`` then listens on loopback
only, unless forced). Before any route reads a request (:class:`toolsift.webguard.RequestGuard`),
whether or not keys are configured: a ``Host`` that is not an allowed host is 403 (DNS rebinding), a
write from another site's page 403 (an ``Origin`` that is not the workbench's own, or
``Sec-Fetch-Site: cross-site``), a missing or wrong key 401 before the body is read, a write not sent
as JSON 415, a body over ``max_body_bytes`` 413.
Paths in requests must resolve inside the workbench's roots (:meth:`Workbench.confine`).

Errors are ``{"error": message, "code": code, "field": field}`` (:func:`toolsift.webguard.error_response`)
with the status of :data:`toolsift.errors.ERROR_TABLE`: 400 (bad input: the message names the field
or record; a body outside the schema, a value of the wrong type included, is 400 ``bad_request`` naming
the first bad field, as the search API and the ranker service answer it), 401, 403, 404, 408 (a body
that did not arrive within ``request_read_timeout_s``), 413, 415, 422 (a catalog that is not one), or
503 (OpenSearch unreachable).
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import resources
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field

from toolsift.access import KeyRing, Principal
from toolsift.search.request import MAX_SERVED_TOP_K
from toolsift.webguard import (
    RequestGuard,
    allowed_hosts_for,
    answer_errors,
    answer_validation_errors,
    caller,
    key_check,
)
from toolsift.workbench.session import Workbench

__all__ = ["create_app"]

#: Request bodies: no field the schema lacks, no value of another type ("10" is no number, true no count,
#: "yes" no boolean; a JSON integer still fills a float).
_STRICT = ConfigDict(extra="forbid", strict=True)


class ProposalBody(BaseModel):
    model_config = _STRICT
    weights: dict[str, Any] = Field(default_factory=dict)
    rerank_weight: float | None = None
    #: The multi-need ranking's proposed ``server_weight``, ``prerequisite_tools`` and ``lexical_weight`` (checked by the session).
    planner: dict[str, Any] | None = None


class SearchBody(BaseModel):
    model_config = _STRICT
    query: str = Field(max_length=4000)
    top_k: int = Field(10, ge=1, le=MAX_SERVED_TOP_K)
    proposal: ProposalBody | None = None


class RerankBody(BaseModel):
    model_config = _STRICT
    search_id: str = Field(max_length=64)
    proposal: ProposalBody | None = None


class SetBody(BaseModel):
    model_config = _STRICT
    search_id: str = Field(max_length=64)


class JudgmentBody(BaseModel):
    model_config = _STRICT
    query: str = Field(max_length=4000)
    tool_id: str = Field(min_length=1, max_length=512)
    relevant: bool | None
    tool_name: str = Field("", max_length=1000)
    agent_id: str | None = Field(None, max_length=512)
    query_set: str | None = Field(None, max_length=100)


class ImportBody(BaseModel):
    model_config = _STRICT
    path: str = Field(min_length=1, max_length=4096)
    name: str | None = Field(None, max_length=100)


class NameBody(BaseModel):
    model_config = _STRICT
    name: str = Field(min_length=1, max_length=100)


class CompareBody(BaseModel):
    model_config = _STRICT
    query_set: str = Field(min_length=1, max_length=100)
    proposal: ProposalBody | None = None


class SaveBody(BaseModel):
    model_config = _STRICT
    name: str = Field(min_length=1, max_length=100)
    proposal: ProposalBody | None = None
    query_set: str | None = Field(None, max_length=100)


class PushBody(BaseModel):
    model_config = _STRICT
    path: str = Field(min_length=1, max_length=4096)


def _proposal(body: ProposalBody | None) -> dict[str, Any] | None:
    return None if body is None else body.model_dump()


def _principal(request: Request) -> Principal:
    """The caller, from its key (:class:`~toolsift.errors.AuthError` → 401 when keys are configured)."""
    keys: KeyRing = request.app.state.keys
    return caller(request, keys)


def _admin(request: Request, who: Annotated[Principal, Depends(_principal)]) -> Principal:
    """The caller, when it may write (:class:`~toolsift.errors.ForbiddenError` → 403 otherwise)."""
    who.require_admin(f"{request.method} {request.url.path}")
    return who


#: Any caller with a valid key (every caller without keys configured).
Caller = Annotated[Principal, Depends(_principal)]
#: A caller with an admin key.
Admin = Annotated[Principal, Depends(_admin)]



def create_app(workbench: Workbench, *, keys: KeyRing | None = None,
               allowed_hosts: Iterable[str] | None = None) -> FastAPI:
    """The web app over one :class:`Workbench`.

    Args:
        workbench: the state the routes act on.
        keys: the API keys callers must send (default: ``workbench.settings.api_keys``; none: open).
        allowed_hosts: the ``Host`` header values answered (default: ``workbench.settings.allowed_hosts``
            plus ``127.0.0.1``); others get 403.
    """
    keys = KeyRing(workbench.settings.api_keys) if keys is None else keys
    hosts = (allowed_hosts_for(workbench.settings.allowed_hosts, "127.0.0.1") if allowed_hosts is None
             else list(allowed_hosts))
    app = FastAPI(title="toolsift workbench", version="1", docs_url="/api/docs", redoc_url=None)
    app.state.keys = keys
    app.state.allowed_hosts = hosts
    app.add_middleware(RequestGuard, allowed_hosts=hosts, max_body_bytes=workbench.settings.max_body_bytes,
                       authenticate=key_check(keys), protected=("/api/",), open_paths=("/api/docs",),
                       read_timeout_s=workbench.settings.request_read_timeout_s)
    static = resources.files("toolsift.workbench") / "static"
    app.mount("/static", StaticFiles(directory=str(static)), name="static")

    answer_errors(app, workbench.settings.effective_url, log="toolsift.workbench")
    answer_validation_errors(app, count_others=True)  # 400 bad_request naming the field, as every service

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(str(static / "index.html"), media_type="text/html")

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "index": workbench.alias}

    @app.get("/api/config")
    def config(who: Caller) -> dict[str, Any]:
        return {**workbench.describe(who.tenant),
                "caller": {"name": who.name, "role": who.role, "tenant": who.tenant, "keys": keys.enabled}}

    @app.post("/api/search")
    def search(body: SearchBody, who: Caller) -> dict[str, Any]:
        return workbench.search(body.query, top_k=body.top_k, proposal=_proposal(body.proposal), tenant=who.tenant)

    @app.post("/api/rerank")
    def rerank(body: RerankBody, who: Caller) -> dict[str, Any]:
        return workbench.rerank(body.search_id, _proposal(body.proposal), tenant=who.tenant)

    @app.post("/api/set")
    def tool_set(body: SetBody, who: Caller) -> dict[str, Any]:
        return workbench.recommend_set(body.search_id, tenant=who.tenant)

    @app.post("/api/judgments")
    def judge(body: JudgmentBody, who: Admin) -> dict[str, Any]:
        return workbench.judge(body.query, body.tool_id, body.relevant, tool_name=body.tool_name,
                               agent_id=body.agent_id, query_set=body.query_set, tenant=who.tenant)

    @app.get("/api/judgments")
    def judgments(who: Caller, limit: int = 200) -> dict[str, Any]:
        return {"judgments": workbench.list_judgments(max(1, min(limit, 10_000)), tenant=who.tenant)}

    @app.get("/api/querysets")
    def query_sets(who: Caller) -> dict[str, Any]:
        return {"query_sets": workbench.query_sets.list(workbench.alias, who.tenant)}

    @app.post("/api/querysets/import")
    def import_query_set(body: ImportBody, who: Admin) -> dict[str, Any]:
        return workbench.import_query_set(body.path, body.name, tenant=who.tenant)

    @app.post("/api/querysets/from-judgments")
    def query_set_from_judgments(body: NameBody, who: Admin) -> dict[str, Any]:
        return workbench.query_set_from_judgments(body.name, tenant=who.tenant)

    @app.post("/api/compare")
    def compare(body: CompareBody, who: Caller) -> dict[str, Any]:
        return workbench.compare(body.query_set, _proposal(body.proposal), tenant=who.tenant)

    @app.post("/api/weights/save")
    def save_weights(body: SaveBody, who: Admin) -> dict[str, Any]:
        return workbench.save_weights(body.name, _proposal(body.proposal), body.query_set, tenant=who.tenant)

    @app.post("/api/weights/push")
    def push_weights(body: PushBody, who: Admin) -> dict[str, Any]:
        who.require_every_tenant("POST /api/weights/push")
        return workbench.push(body.path)

    @app.post("/api/weights/clear")
    def clear_weights(who: Admin) -> dict[str, Any]:
        who.require_every_tenant("POST /api/weights/clear")
        return workbench.clear_pushed()

    @app.get("/api/approvals")
    def approvals(who: Admin) -> dict[str, Any]:
        return workbench.approvals(who.tenant)

    @app.post("/api/approvals/{doc_id:path}/approve")
    def approve(doc_id: str, who: Admin) -> dict[str, Any]:
        who.require_every_tenant(f"POST /api/approvals/{doc_id}/approve")
        return workbench.decide(doc_id, True, by=f"workbench:{who.name}")

    @app.post("/api/approvals/{doc_id:path}/reject")
    def reject(doc_id: str, who: Admin) -> dict[str, Any]:
        who.require_every_tenant(f"POST /api/approvals/{doc_id}/reject")
        return workbench.decide(doc_id, False, by=f"workbench:{who.name}")

    @app.get("/api/metrics/evalruns")
    def eval_runs(who: Caller, query_set: str | None = None) -> dict[str, Any]:
        return workbench.eval_runs(query_set, tenant=who.tenant)

    @app.get("/api/metrics/latency")
    def latency(who: Caller, interval: str = "1h", since: str = "now-7d", source: str | None = None) -> dict[str, Any]:
        return workbench.latency(interval, since, source, tenant=who.tenant)

    return app
