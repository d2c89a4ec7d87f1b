"""The floor of ``toolsift bench load``: the least a search service can do per request, served through
the same HTTP stack as the search API (FastAPI on uvicorn, one worker).

``POST /v1/floor {"query": ...}`` encodes the query once with MiniLM (no cache) and runs one plain
k-NN query on ``full_doc_vector`` (top 10), answering the ids. No rewrite, no per-field scoring, no
ranking, no definitions: the API cannot be faster than this on the same machine.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel, Field

from toolsift.config import Settings, get_settings
from toolsift.mappings import F, vector_field
from toolsift.opensearch import wire_vector

__all__ = ["floor_app", "app_from_environment"]


class FloorBody(BaseModel):
    query: str = Field(min_length=1, max_length=4000)


def floor_app(settings: Settings) -> FastAPI:
    """The floor service over ``settings.index`` (model and client loaded in the lifespan)."""
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        from toolsift.encoders.embedding import load_embedder
        from toolsift.opensearch import connect

        state["client"] = connect(settings)
        state["embedder"] = load_embedder(settings)
        state["embedder"].encode_query(["warm up"], cache=False)
        yield

    app = FastAPI(title="toolsift load floor", lifespan=lifespan)

    @app.post("/v1/floor")
    def floor(body: FloorBody) -> dict[str, Any]:
        vector = wire_vector(state["embedder"].encode_query([body.query], cache=False)[0])  # as the API sends them
        answer = state["client"].search(index=settings.index, body={
            "size": 10, "_source": [F.tool_id],
            "query": {"knn": {vector_field(F.full_doc): {"vector": vector, "k": 10}}}})
        return {"tools": [hit["_id"] for hit in answer["hits"]["hits"]]}

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    return app


def app_from_environment() -> FastAPI:
    """The floor app with the settings of the environment (``uvicorn --factory``)."""
    return floor_app(get_settings())
