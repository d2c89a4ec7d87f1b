"""The tenant-leak test: a tenant never sees another tenant's tool, agent or bundle, through any path.

One index holds two tenants' servers and public ones (LiveMCPBench slices), and a history whose
bundles mix them. Every path is asked as each tenant — the backend at every level (tool with each
retriever and Full-Doc, agent, auto, set), the search API's routes, the MCP server (its own test
module, `test_mcp_server.py`, runs the same check over stdio and HTTP), the workbench — with the
benchmark's requests and with the other tenant's own tool descriptions as requests (the searches most
likely to surface them). Nothing foreign may come back.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.integration.conftest import TenantCatalog

pytestmark = pytest.mark.integration

TENANTS = ("acme", "globex")


def _probes(catalog: TenantCatalog, client: Any, tenant: str, n: int = 12) -> list[str]:
    """Requests for the tenant: benchmark questions, and the other tenants' tool descriptions."""
    foreign = sorted(d for d in catalog.foreign(tenant) if not d.startswith("agent:"))[:n]
    docs = client.mget(index=catalog.settings.index, body={"ids": foreign}, _source=["description", "name"])["docs"]
    texts = [f"{d['_source']['name']}: {d['_source']['description']}"[:500] for d in docs if d.get("found")]
    return [*catalog.queries[:n], *texts]


def _seen(answer: dict[str, Any]) -> set[str]:
    """Every document id an answer names: tools, agents, set members, dropped tools, bundles' tools."""
    ids = {t.get("id") or t.get("tool_id") for t in answer.get("tools", [])}
    ids |= {a["id"] for a in answer.get("agents", [])}
    dropped = answer.get("dropped")  # PTR's dropped tools (the API's `dropped` counts budget cuts)
    ids |= {d["tool_id"] for d in dropped} if isinstance(dropped, list) else set()
    for step in answer.get("steps", []):
        ids |= {a["id"] for a in step.get("agents", [])}
    return {i for i in ids if i}


@pytest.fixture(scope="module")
def backend(tenant_catalog: TenantCatalog, client: Any, embedder: Any) -> Any:
    from toolsift.search import SearchBackend

    return SearchBackend(client, tenant_catalog.settings, embedder=embedder)


@pytest.mark.parametrize("tenant", TENANTS)
def test_the_backend_never_answers_a_tenant_with_another_tenants_documents_at_any_level(
        tenant_catalog: TenantCatalog, client: Any, backend: Any, tenant: str) -> None:
    from toolsift.query.structured import StructuredQuery
    from toolsift.search import SearchRequest

    foreign = tenant_catalog.foreign(tenant)
    asked = 0
    for text in _probes(tenant_catalog, client, tenant):
        requests = [SearchRequest(query=text, tenant=tenant, top_k=1000, retriever=r, rewrite=False)
                    for r in ("bm25", "minilm", "hybrid")]
        # with an extracted argument the parameters' nested k-NN runs too (its sub-documents' own tenants)
        argued = StructuredQuery.from_text(text, as_argument=True)
        requests += [SearchRequest(structured=argued, tenant=tenant, top_k=1000, retriever=r) for r in ("minilm", "hybrid")]
        requests += [SearchRequest(query=text, tenant=tenant, top_k=1000, method="full-doc", retriever="hybrid"),
                     SearchRequest(query=text, tenant=tenant, top_k=20, level="agent", rewrite=False),
                     SearchRequest(query=text, tenant=tenant, top_k=20, level="auto", rewrite=False),
                     SearchRequest(query=text, tenant=tenant, level="set")]
        for request in requests:
            answer = backend.search(request).to_dict()
            assert not _seen(answer) & foreign, (request.level, request.retriever, text)
            asked += 1
    assert asked >= 100


def test_without_a_tenant_boundary_the_same_probes_do_reach_every_tenant(
        tenant_catalog: TenantCatalog, client: Any, backend: Any) -> None:
    """The check above can fail: unscoped, these requests return both tenants' tools."""
    from toolsift.search import SearchRequest

    seen: set[str] = set()
    for tenant in TENANTS:
        for text in _probes(tenant_catalog, client, tenant, n=4):
            seen |= _seen(backend.search(SearchRequest(query=text, top_k=50, rewrite=False)).to_dict())
    owners = {tenant_catalog.owner[i] for i in seen}
    assert {"acme", "globex"} <= owners


def test_set_recommendations_draw_only_on_bundles_the_tenant_may_see_whole(
        tenant_catalog: TenantCatalog, client: Any, embedder: Any, backend: Any) -> None:
    from toolsift.ranker.history import HistoryStore

    allowed = {"acme": {"b-acme", "b-public", "b-acme-public"}, "globex": {"b-globex", "b-public"}}
    reached: set[str] = set()
    for query in tenant_catalog.queries[:10]:
        vector = embedder.encode_query([query])[0].tolist()
        reached |= {b.bundle.bundle_id for b in HistoryStore(client, tenant_catalog.settings.index).acquire(query, vector)}
        for tenant in TENANTS:
            history = HistoryStore(client, tenant_catalog.settings.index, tenant=tenant)
            bundles = history.acquire(query, vector)
            assert {b.bundle.bundle_id for b in bundles} <= allowed[tenant]
            assert not {t for b in bundles for t in b.bundle.tools} & tenant_catalog.foreign(tenant)
            votes = history.query_votes([vector])[0]
            assert not set(votes) & tenant_catalog.foreign(tenant)
    assert "b-mixed" in reached  # unscoped, the same lookups do reach the mixed bundle


@pytest.fixture(scope="module")
def api(tenant_catalog: TenantCatalog, client: Any, embedder: Any, serve_app_for_session: Any) -> str:
    from toolsift.api.app import create_app
    from toolsift.api.service import ToolSearchService

    return str(serve_app_for_session(create_app(
        tenant_catalog.settings, service_factory=lambda s: ToolSearchService(client, s, embedder))).url)


@pytest.mark.parametrize("tenant", TENANTS)
def test_the_search_api_never_answers_a_key_with_another_tenants_documents(
        api: str, tenant_catalog: TenantCatalog, client: Any, tenant: str) -> None:
    foreign = tenant_catalog.foreign(tenant)
    headers = tenant_catalog.header(tenant)
    for text in _probes(tenant_catalog, client, tenant, n=6):
        for body in ({"query": text, "top_k": 50}, {"query": text, "level": "agent"}, {"query": text, "level": "auto"}):
            answer = httpx.post(f"{api}/v1/search", json=body, headers=headers, timeout=60)
            assert answer.status_code == 200 and not _seen(answer.json()) & foreign
        toolset = httpx.post(f"{api}/v1/toolset", json={"query": text}, headers=headers, timeout=60)
        assert toolset.status_code == 200 and not _seen(toolset.json()) & foreign
    for tool in sorted(foreign)[:10]:
        answer = httpx.get(f"{api}/v1/tools/{tool}", headers=headers, timeout=30)
        assert answer.status_code == 404


def test_an_all_tenant_admin_key_sees_every_tenant(api: str, tenant_catalog: TenantCatalog, client: Any) -> None:
    seen: set[str] = set()
    for tenant in TENANTS:
        for text in _probes(tenant_catalog, client, tenant, n=3):
            answer = httpx.post(f"{api}/v1/search", json={"query": text, "top_k": 50},
                                headers=tenant_catalog.header("root"), timeout=60)
            seen |= _seen(answer.json())
    assert {"acme", "globex"} <= {tenant_catalog.owner[i] for i in seen}
