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

Errors are ``{"error": message}`` with 400 (bad input: the message names the field or record), 404,
or 503 (OpenSearch unreachable).
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError
from opensearchpy.exceptions import TransportError
from pydantic import BaseModel, ConfigDict, Field

from toolsift.errors import ToolsiftError, error_kind
from toolsift.workbench.session import Workbench

__all__ = ["create_app"]

_STRICT = ConfigDict(extra="forbid")


class ProposalBody(BaseModel):
    model_config = _STRICT
    weights: dict[str, Any] = Field(default_factory=dict)
    rerank_weight: float | None = None


class SearchBody(BaseModel):
    model_config = _STRICT
    query: str = Field(max_length=4000)
    top_k: int = Field(10, ge=1, le=100)
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


def create_app(workbench: Workbench) -> FastAPI:
    """The web app over one :class:`Workbench`."""
    app = FastAPI(title="toolsift workbench", version="1", docs_url="/api/docs", redoc_url=None)
    static = resources.files("toolsift.workbench") / "static"
    app.mount("/static", StaticFiles(directory=str(static)), name="static")

    def error_answer(exc: Exception, message: str) -> JSONResponse:
        kind = error_kind(exc)  # toolsift.errors.ERROR_TABLE: the same table the CLI's exit codes come from
        assert kind is not None
        return JSONResponse({"error": message, "code": kind.code}, status_code=kind.http_status)

    @app.exception_handler(ToolsiftError)
    async def toolsift_error(_: Request, exc: ToolsiftError) -> JSONResponse:
        return error_answer(exc, str(exc))

    @app.exception_handler(OpenSearchConnectionError)
    async def unreachable(_: Request, exc: OpenSearchConnectionError) -> JSONResponse:
        return error_answer(exc, f"OpenSearch is unreachable at {workbench.settings.effective_url}: {exc}")

    @app.exception_handler(TransportError)
    async def opensearch_error(_: Request, exc: TransportError) -> JSONResponse:
        return error_answer(exc, f"OpenSearch answered {exc.status_code}: {exc.error}")

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(str(static / "index.html"), media_type="text/html")

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "index": workbench.alias}

    @app.get("/api/config")
    def config() -> dict[str, Any]:
        return workbench.describe()

    @app.post("/api/search")
    def search(body: SearchBody) -> dict[str, Any]:
        return workbench.search(body.query, top_k=body.top_k, proposal=_proposal(body.proposal))

    @app.post("/api/rerank")
    def rerank(body: RerankBody) -> dict[str, Any]:
        return workbench.rerank(body.search_id, _proposal(body.proposal))

    @app.post("/api/set")
    def tool_set(body: SetBody) -> dict[str, Any]:
        return workbench.recommend_set(body.search_id)

    @app.post("/api/judgments")
    def judge(body: JudgmentBody) -> dict[str, Any]:
        return workbench.judge(body.query, body.tool_id, body.relevant, tool_name=body.tool_name,
                               agent_id=body.agent_id, query_set=body.query_set)

    @app.get("/api/judgments")
    def judgments(limit: int = 200) -> dict[str, Any]:
        return {"judgments": workbench.list_judgments(max(1, min(limit, 10_000)))}

    @app.get("/api/querysets")
    def query_sets() -> dict[str, Any]:
        return {"query_sets": workbench.query_sets.list(workbench.alias)}

    @app.post("/api/querysets/import")
    def import_query_set(body: ImportBody) -> dict[str, Any]:
        return workbench.import_query_set(body.path, body.name)

    @app.post("/api/querysets/from-judgments")
    def query_set_from_judgments(body: NameBody) -> dict[str, Any]:
        return workbench.query_set_from_judgments(body.name)

    @app.post("/api/compare")
    def compare(body: CompareBody) -> dict[str, Any]:
        return workbench.compare(body.query_set, _proposal(body.proposal))

    @app.post("/api/weights/save")
    def save_weights(body: SaveBody) -> dict[str, Any]:
        return workbench.save_weights(body.name, _proposal(body.proposal), body.query_set)

    @app.post("/api/weights/push")
    def push_weights(body: PushBody) -> dict[str, Any]:
        return workbench.push(body.path)

    @app.post("/api/weights/clear")
    def clear_weights() -> dict[str, Any]:
        return workbench.clear_pushed()

    @app.get("/api/metrics/evalruns")
    def eval_runs(query_set: str | None = None) -> dict[str, Any]:
        return workbench.eval_runs(query_set)

    @app.get("/api/metrics/latency")
    def latency(interval: str = "1h", since: str = "now-7d", source: str | None = None) -> dict[str, Any]:
        return workbench.latency(interval, since, source)

    return app
