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
    from toolsift.sets.history_store import HistoryStore

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
    from toolsift.api.search_service import ToolSearchService

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


# --- feedback: only on an answer given to the same key, only on that answer's tools -------------------

FEEDBACK_QUERY = "search the web for recent news articles"


def _tools_of(catalog: TenantCatalog, tenant: str) -> list[str]:
    """The tool ids (no agents) of ``tenant`` ("": public), sorted."""
    return sorted(d for d, o in catalog.owner.items() if o == tenant and not d.startswith("agent:"))


def _feedback(api: str, catalog: TenantCatalog, key: str, request_id: str, *tools: str) -> httpx.Response:
    calls = [{"tool_id": tool, "called": True, "success": True} for tool in tools]
    return httpx.post(f"{api}/v1/feedback", json={"request_id": request_id, "calls": calls},
                      headers=catalog.header(key), timeout=60)


def _stored_feedback(client: Any, catalog: TenantCatalog, request_id: str) -> list[dict[str, Any]]:
    index = f"{catalog.settings.feedback_index}*"
    client.indices.refresh(index=index, ignore_unavailable=True)
    hits = client.search(index=index, ignore_unavailable=True,
                         body={"size": 100, "query": {"term": {"request_id": request_id}}})["hits"]["hits"]
    return [hit["_source"] for hit in hits]


def test_feedback_names_an_answer_given_to_the_same_key_and_only_tools_of_that_answer(
        api: str, tenant_catalog: TenantCatalog, client: Any) -> None:
    import uuid

    public = _tools_of(tenant_catalog, "")
    answer = httpx.post(f"{api}/v1/search", json={"query": FEEDBACK_QUERY, "top_k": 20},
                        headers=tenant_catalog.header("acme"), timeout=60).json()
    given = [t["id"] for t in answer["tools"]]
    shared = next(t for t in given if t in public)  # a tool every key may see, in acme's answer
    outside = next(t for t in public if t not in given)  # one every key may see, not in it
    other = next(t for t in given if t != shared)
    request_id = answer["request_id"]

    # another tenant's request id, an id never issued, and another key of the same tenant: one answer
    stolen = _feedback(api, tenant_catalog, "globex", request_id, shared)
    never = _feedback(api, tenant_catalog, "acme", uuid.uuid4().hex, shared)
    other_key = _feedback(api, tenant_catalog, "acme-admin", request_id, shared)
    assert stolen.status_code == 404, stolen.text
    assert stolen.json() == never.json() == other_key.json()
    assert (stolen.json()["code"], stolen.json()["field"]) == ("not_found", "request_id")

    # a tool the answer did not hold, even one the key may see
    not_given = _feedback(api, tenant_catalog, "acme", request_id, other, outside)
    assert not_given.status_code == 400, not_given.text
    assert not_given.json()["field"] == "calls.1.tool_id" and outside in not_given.json()["error"]
    assert _stored_feedback(client, tenant_catalog, request_id) == []

    own = _feedback(api, tenant_catalog, "acme", request_id, other, shared)
    assert own.status_code == 200 and own.json()["stored"] == 2
    assert {(d["tool_id"], d["tenant"], d["key"]) for d in _stored_feedback(client, tenant_catalog, request_id)} == {
        (other, "acme", "acme"), (shared, "acme", "acme")}
    # the query log holds the answer under its request id: whom it was given to, and which tools
    record = client.get(index=tenant_catalog.settings.query_log_index, id=request_id)["_source"]
    assert (record["tenant"], record["key"], record["answered_ids"]) == ("acme", "acme", given)


@pytest.fixture(scope="module")
def unlogged_api(tenant_catalog: TenantCatalog, client: Any, embedder: Any, serve_app_for_session: Any) -> str:
    from toolsift.api.app import create_app
    from toolsift.api.search_service import ToolSearchService

    settings = tenant_catalog.settings.with_overrides(query_log=False)
    return str(serve_app_for_session(create_app(
        settings, service_factory=lambda s: ToolSearchService(client, s, embedder))).url)


def test_without_a_query_log_feedback_is_refused_with_the_reason(
        unlogged_api: str, tenant_catalog: TenantCatalog, client: Any) -> None:
    answer = httpx.post(f"{unlogged_api}/v1/search", json={"query": FEEDBACK_QUERY, "top_k": 3},
                        headers=tenant_catalog.header("acme"), timeout=60).json()
    refused = _feedback(unlogged_api, tenant_catalog, "acme", answer["request_id"], answer["tools"][0]["id"])

    assert refused.status_code == 403, refused.text
    assert refused.json()["field"] == "request_id" and "query_log" in refused.json()["error"]
    assert _stored_feedback(client, tenant_catalog, answer["request_id"]) == []


def test_a_forwarded_call_counts_as_feedback_only_on_an_answer_given_to_the_caller(
        tenant_catalog: TenantCatalog, client: Any, embedder: Any) -> None:
    """The MCP server's ``call_tool`` records its call through these: checked before the call is
    forwarded, stored after it."""
    import uuid

    from toolsift.access import Principal
    from toolsift.api.search_service import ToolSearchService
    from toolsift.search.request import SearchRequest
    from toolsift.errors import BadQueryError, NotFoundError

    service = ToolSearchService(client, tenant_catalog.settings, embedder)
    acme, globex = Principal("acme", "acme", "search"), Principal("globex", "globex", "search")
    answer = service.search(acme, SearchRequest(query=FEEDBACK_QUERY, top_k=20))
    public = _tools_of(tenant_catalog, "")
    shared = next(t["id"] for t in answer["tools"] if t["id"] in public)
    request_id = answer["request_id"]

    # checked before the call is forwarded (this tool is no live source's: the next check would refuse it)
    with pytest.raises(NotFoundError, match="unknown request_id"):
        service.call_target(globex, shared, {}, request_id)
    with pytest.raises(BadQueryError, match="not from a live MCP source"):
        service.call_target(acme, shared, {}, request_id)
    with pytest.raises(NotFoundError, match="unknown request_id"):
        service.record_call(globex, request_id, shared, True)
    with pytest.raises(NotFoundError, match="unknown request_id"):
        service.record_call(acme, uuid.uuid4().hex, shared, True)
    assert service.record_call(acme, None, shared, True).startswith("not stored")  # no search to attach it to
    assert service.record_call(acme, request_id, shared, True) == "stored"

    assert [(d["tool_id"], d["key"]) for d in _stored_feedback(client, tenant_catalog, request_id)] == [(shared, "acme")]
    # a tool set's answer (several searches behind it) is recorded under its request id with its members
    toolset = service.toolset(acme, SearchRequest(query=tenant_catalog.queries[0]))
    member = toolset["tools"][0]["id"]
    assert service.record_call(acme, toolset["request_id"], member, False) == "stored"


# --- the workbench: judgments and query sets stay in their writer's tenant ----------------------------

SECRET = "tenant-a confidential merger plan with initech"


@pytest.fixture(scope="module")
def workbench(tenant_catalog: TenantCatalog, client: Any, embedder: Any, serve_app_for_session: Any) -> str:
    """The workbench over the tenants' index, with the fixture's keys."""
    from tests.integration.conftest import TENANT_PREFIX
    from toolsift.workbench.app import create_app
    from toolsift.workbench.session import Workbench

    settings = tenant_catalog.settings.with_overrides(
        judgments_index=f"{TENANT_PREFIX}judgments", query_sets_index=f"{TENANT_PREFIX}querysets", query_log=False)
    return str(serve_app_for_session(create_app(Workbench(client, settings, embedder, rewrite=False))).url)


def _wb(url: str, path: str, catalog: TenantCatalog, key: str, body: dict[str, Any] | None = None) -> httpx.Response:
    if body is None:
        return httpx.get(url + path, headers=catalog.header(key), timeout=120)
    return httpx.post(url + path, json=body, headers=catalog.header(key), timeout=120)


def test_a_tenants_judgments_and_query_sets_are_invisible_to_other_tenants(
        workbench: str, tenant_catalog: TenantCatalog) -> None:
    acme_tool, public_tool = _tools_of(tenant_catalog, "acme")[0], _tools_of(tenant_catalog, "")[0]
    for tool in (acme_tool, public_tool):
        judged = _wb(workbench, "/api/judgments", tenant_catalog, "acme-admin",
                     {"query": SECRET, "tool_id": tool, "relevant": True})
        assert judged.status_code == 200, judged.text
    made = _wb(workbench, "/api/querysets/from-judgments", tenant_catalog, "acme-admin", {"name": "acme-merger"})
    assert made.status_code == 200, made.text

    def judgments(key: str) -> set[tuple[str, str]]:
        listed = _wb(workbench, "/api/judgments", tenant_catalog, key).json()["judgments"]
        return {(j["query"], j["tool_id"]) for j in listed}

    def query_sets(key: str) -> set[str]:
        listed = {s["name"] for s in _wb(workbench, "/api/querysets", tenant_catalog, key).json()["query_sets"]}
        assert listed == {s["name"] for s in _wb(workbench, "/api/config", tenant_catalog, key).json()["query_sets"]}
        return listed

    assert not any(query == SECRET for query, _ in judgments("globex"))
    assert "acme-merger" not in query_sets("globex")
    stolen = _wb(workbench, "/api/compare", tenant_catalog, "globex", {"query_set": "acme-merger"})
    missing = _wb(workbench, "/api/compare", tenant_catalog, "globex", {"query_set": "no-such-set"})
    assert stolen.status_code == 400 and stolen.json()["error"] == missing.json()["error"].replace("no-such-set",
                                                                                                   "acme-merger")
    # the writer's tenant sees them, and so does an all-tenant key
    for key in ("acme", "root"):
        assert {(SECRET, acme_tool), (SECRET, public_tool)} <= judgments(key)
        assert "acme-merger" in query_sets(key)
    assert _wb(workbench, "/api/compare", tenant_catalog, "acme", {"query_set": "acme-merger"}).status_code == 200


def test_a_judgment_names_a_tool_its_writer_may_see(workbench: str, tenant_catalog: TenantCatalog,
                                                    client: Any) -> None:
    from tests.integration.conftest import TENANT_PREFIX

    globex_tool, missing_tool = _tools_of(tenant_catalog, "globex")[0], "no-such-server/no_such_tool"
    body = {"query": "export the quarterly figures", "relevant": True}
    foreign = _wb(workbench, "/api/judgments", tenant_catalog, "acme-admin", {**body, "tool_id": globex_tool})
    missing = _wb(workbench, "/api/judgments", tenant_catalog, "acme-admin", {**body, "tool_id": missing_tool})
    everywhere = _wb(workbench, "/api/judgments", tenant_catalog, "root", {**body, "tool_id": missing_tool})

    assert foreign.status_code == 404, foreign.text
    assert foreign.json() == {**missing.json(), "error": missing.json()["error"].replace(missing_tool, globex_tool)}
    assert (foreign.json()["code"], foreign.json()["field"]) == ("not_found", "tool_id")
    assert everywhere.status_code == 404
    index = f"{TENANT_PREFIX}judgments"
    client.indices.refresh(index=index)
    stored = client.count(index=index, body={"query": {"terms": {"tool_id": [globex_tool, missing_tool]}}})
    assert stored["count"] == 0
