"""The search API (`toolsift serve api`'s app) over real HTTP, on the real node: keys, tenants, formats,
caps, errors. Requests go through httpx to a uvicorn server on loopback."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.conftest import TenantCatalog

pytestmark = pytest.mark.integration

QUERY = "search the web for recent news articles"


@pytest.fixture(scope="module")
def api(tenant_api: str) -> str:
    return tenant_api


def _post(api: str, path: str, body: dict[str, Any], key: str | None = None, catalog: TenantCatalog | None = None,
          **headers: str) -> httpx.Response:
    sent = dict(headers)
    if key is not None and catalog is not None:
        sent.update(catalog.header(key))
    return httpx.post(f"{api}{path}", json=body, headers=sent, timeout=60)


def test_a_call_without_a_key_or_with_a_wrong_key_is_401_and_says_what_to_send(api: str) -> None:
    missing = httpx.post(f"{api}/v1/search", json={"query": QUERY}, timeout=30)
    wrong = httpx.post(f"{api}/v1/search", json={"query": QUERY}, headers={"Authorization": "Bearer tsk_nope"},
                       timeout=30)

    assert missing.status_code == 401 and missing.json()["code"] == "unauthorized"
    assert "Authorization: Bearer" in missing.json()["error"]
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert wrong.status_code == 401 and wrong.json()["error"] == "the API key is not valid"


def test_a_search_answers_ranked_tools_each_ready_to_call_in_the_asked_format(
        api: str, tenant_catalog: TenantCatalog) -> None:
    openai = _post(api, "/v1/search", {"query": QUERY, "format": "openai", "top_k": 5}, "acme", tenant_catalog).json()
    mcp = _post(api, "/v1/search", {"query": QUERY, "format": "mcp", "top_k": 5}, "acme", tenant_catalog).json()

    assert len(openai["tools"]) == 5 and re.fullmatch(r"[0-9a-f]{32}", openai["request_id"])
    for tool in openai["tools"]:
        function = tool["definition"]["function"]
        assert tool["definition"]["type"] == "function"
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", function["name"])
        assert function["parameters"]["type"] == "object"
        assert tool["tokens"] > 0
    assert [t["id"] for t in mcp["tools"]] == [t["id"] for t in openai["tools"]]
    assert all({"name", "description", "inputSchema"} <= set(t["definition"]) for t in mcp["tools"])
    assert mcp["total_tokens"] == sum(t["tokens"] for t in mcp["tools"])
    assert "cl100k_base" in mcp["tokenizer"]


def test_the_definition_keeps_the_schema_the_catalog_gave(api: str, tenant_catalog: TenantCatalog, datasets: Any,
                                                           client: Any) -> None:
    top = _post(api, "/v1/search", {"query": QUERY, "format": "mcp", "top_k": 1}, "acme", tenant_catalog).json()
    tool = top["tools"][0]
    raw = client.get(index=tenant_catalog.settings.index, id=tool["id"])["_source"]["raw"]

    assert tool["definition"]["inputSchema"] == raw["inputSchema"]


def test_max_results_and_the_token_budget_cut_the_answer_in_rank_order(api: str, tenant_catalog: TenantCatalog) -> None:
    full = _post(api, "/v1/search", {"query": QUERY, "top_k": 10}, "acme", tenant_catalog).json()
    two = _post(api, "/v1/search", {"query": QUERY, "top_k": 10, "max_results": 2}, "acme", tenant_catalog).json()
    budget = full["tools"][0]["tokens"] + full["tools"][1]["tokens"]
    cut = _post(api, "/v1/search", {"query": QUERY, "top_k": 10, "token_budget": budget}, "acme",
                tenant_catalog).json()

    assert [t["id"] for t in two["tools"]] == [t["id"] for t in full["tools"][:2]]
    assert two["truncated_by"] == "max_results" and two["dropped"] == len(full["tools"]) - 2
    assert [t["id"] for t in cut["tools"]] == [t["id"] for t in full["tools"][:2]]
    assert cut["truncated_by"] == "token_budget" and cut["total_tokens"] <= budget


def test_explain_adds_each_tools_field_contributions(api: str, tenant_catalog: TenantCatalog) -> None:
    body = {"query": QUERY, "top_k": 3, "multi_need": "off"}
    plain = _post(api, "/v1/search", body, "acme", tenant_catalog).json()
    explained = _post(api, "/v1/search", {**body, "explain": True}, "acme", tenant_catalog).json()

    assert "explain" not in plain["tools"][0]
    assert set(explained["tools"][0]["explain"]["contributions"]) >= {"description"}


def test_on_an_index_of_servers_a_search_is_multi_need_and_explains_its_need_and_server_parts(
        api: str, tenant_catalog: TenantCatalog) -> None:
    request = f"{QUERY} and save the results to /tmp/out/results.md"
    answer = _post(api, "/v1/search", {"query": request, "top_k": 5, "explain": True}, "acme", tenant_catalog).json()

    parts = answer["tools"][0]["explain"]["contributions"]
    assert set(parts) == {"need", "server"}
    assert answer["tools"][0]["score"] == pytest.approx(parts["need"] + parts["server"], abs=1e-3)


def test_a_tool_whose_inputs_another_tool_produces_comes_with_it_marked_as_its_prerequisite(
        api: str, tenant_catalog: TenantCatalog) -> None:
    answer = _post(api, "/v1/search", {"query": "Find parking near the Forbidden City", "top_k": 5, "explain": True},
                   "globex", tenant_catalog).json()

    first, second = answer["tools"][0], answer["tools"][1]
    assert first["original_name"] == "find_parking_facilities"  # it takes a latitude and a longitude
    assert second["original_name"] == "geocode_address" and second["prerequisite_of"] == first["id"]
    assert second["server"] == first["server"] and second["score"] < first["score"]  # never ties the tool needing it
    assert second["explain"]["contributions"] == {"prerequisite": pytest.approx(second["score"], abs=1e-3)}
    assert second["explain"]["explanation"]["kind"] == "prerequisite"
    assert second["explain"]["explanation"]["prerequisite_of"] == first["id"]
    assert {t["prerequisite_of"] for t in answer["tools"] if "prerequisite_of" in t} == {first["id"]}


def test_multi_need_on_with_a_server_filter_is_a_bad_request_naming_the_conflict(
        api: str, tenant_catalog: TenantCatalog) -> None:
    answer = _post(api, "/v1/search", {"query": QUERY, "multi_need": "on", "filters": {"servers": ["web"]}}, "acme",
                   tenant_catalog)

    assert answer.status_code == 400
    assert "multi_need" in answer.json()["error"]


def test_filters_keep_only_the_named_servers_tools(api: str, tenant_catalog: TenantCatalog) -> None:
    first = _post(api, "/v1/search", {"query": QUERY, "top_k": 5}, "acme", tenant_catalog).json()["tools"][0]
    server = first["server"]
    only = _post(api, "/v1/search", {"query": QUERY, "top_k": 10, "filters": {"servers": [server]}}, "acme",
                 tenant_catalog).json()

    assert only["tools"] and {t["server"] for t in only["tools"]} == {server}


@pytest.mark.parametrize(("body", "field"), [
    ({"query": QUERY, "top_k": 0}, "top_k"),
    ({"query": QUERY, "format": "yaml"}, "format"),
    ({"query": QUERY, "filters": {"servers": [""]}}, "filters.servers.0"),
    ({"query": QUERY, "surprise": 1}, "surprise"),
    ({"query": QUERY, "token_budget": 0}, "token_budget"),
])
def test_a_bad_field_is_a_400_that_names_it(api: str, tenant_catalog: TenantCatalog, body: dict[str, Any],
                                            field: str) -> None:
    answer = _post(api, "/v1/search", body, "acme", tenant_catalog)

    assert answer.status_code == 400
    assert answer.json()["field"] == field and answer.json()["code"] == "bad_request"
    assert "Traceback" not in answer.text


def test_a_request_with_nothing_to_search_is_a_400_bad_query(api: str, tenant_catalog: TenantCatalog) -> None:
    answer = _post(api, "/v1/search", {"query": "   "}, "acme", tenant_catalog)

    assert answer.status_code == 400 and answer.json()["code"] == "bad_query"


def test_a_tool_is_served_to_its_tenant_and_is_404_to_another(api: str, tenant_catalog: TenantCatalog) -> None:
    acme_tool = next(d for d, o in tenant_catalog.owner.items() if o == "acme" and not d.startswith("agent:"))

    own = httpx.get(f"{api}/v1/tools/{acme_tool}", params={"format": "openai"}, headers=tenant_catalog.header("acme"))
    other = httpx.get(f"{api}/v1/tools/{acme_tool}", headers=tenant_catalog.header("globex"))
    missing = httpx.get(f"{api}/v1/tools/no-such-tool", headers=tenant_catalog.header("globex"))

    assert own.status_code == 200 and own.json()["definition"]["type"] == "function"
    assert other.status_code == 404 and other.json()["code"] == "not_found"
    assert missing.json() == {**other.json(), "error": "no tool 'no-such-tool'"}  # the same answer either way


def test_feedback_is_stored_with_the_request_id_and_the_caller(api: str, tenant_catalog: TenantCatalog,
                                                              client: Any) -> None:
    answer = _post(api, "/v1/search", {"query": QUERY, "top_k": 3}, "acme", tenant_catalog).json()
    calls = [{"tool_id": answer["tools"][0]["id"], "called": True, "success": True},
             {"tool_id": answer["tools"][1]["id"], "called": False}]
    stored = _post(api, "/v1/feedback", {"request_id": answer["request_id"], "calls": calls}, "acme", tenant_catalog)

    assert stored.status_code == 200 and stored.json()["stored"] == 2
    client.indices.refresh(index=tenant_catalog.settings.feedback_index)
    docs = client.search(index=tenant_catalog.settings.feedback_index,
                         body={"query": {"term": {"request_id": answer["request_id"]}}})["hits"]["hits"]
    assert {(d["_source"]["tool_id"], d["_source"]["success"], d["_source"]["tenant"], d["_source"]["key"])
            for d in docs} == {(calls[0]["tool_id"], True, "acme", "acme"), (calls[1]["tool_id"], None, "acme", "acme")}


def test_feedback_on_another_tenants_tool_is_404_and_nothing_is_stored(api: str, tenant_catalog: TenantCatalog,
                                                                       client: Any) -> None:
    globex_tool = next(d for d, o in tenant_catalog.owner.items() if o == "globex" and not d.startswith("agent:"))
    answer = _post(api, "/v1/feedback", {"request_id": "0" * 32, "calls": [{"tool_id": globex_tool, "called": True}]},
                   "acme", tenant_catalog)

    assert answer.status_code == 404
    client.indices.refresh(index=tenant_catalog.settings.feedback_index, ignore_unavailable=True)
    stored = client.count(index=f"{tenant_catalog.settings.feedback_index}*", ignore_unavailable=True,
                          body={"query": {"term": {"request_id": "0" * 32}}})
    assert stored["count"] == 0


def test_a_toolset_answers_the_set_with_definitions(api: str, tenant_catalog: TenantCatalog) -> None:
    answer = _post(api, "/v1/toolset", {"query": tenant_catalog.queries[0], "format": "mcp"}, "acme", tenant_catalog)

    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["history"] is True and body["tools"]
    assert all("inputSchema" in t["definition"] and t["need"] for t in body["tools"])


def test_health_is_open_and_metrics_need_a_key(api: str, tenant_catalog: TenantCatalog) -> None:
    health = httpx.get(f"{api}/health")
    anonymous = httpx.get(f"{api}/metrics")
    metrics = httpx.get(f"{api}/metrics", headers=tenant_catalog.header("acme"))

    assert health.status_code == 200 and health.json()["status"] == "ok" and health.json()["documents"] > 0
    assert anonymous.status_code == 401
    assert 'toolsift_api_requests_total{route="/v1/search",status="200",tenant="acme"}' in metrics.text
    assert 'tenant="globex"' not in metrics.text  # a tenant's key reads its tenant's series only


def test_a_foreign_host_header_is_refused(api: str, tenant_catalog: TenantCatalog) -> None:
    answer = _post(api, "/v1/search", {"query": QUERY}, "acme", tenant_catalog, Host="attacker.example")

    assert answer.status_code == 403 and answer.json()["code"] == "forbidden"


def test_the_openapi_document_describes_every_route(api: str) -> None:
    paths = httpx.get(f"{api}/openapi.json").json()["paths"]

    assert {"/v1/search", "/v1/toolset", "/v1/tools/{tool_id}", "/v1/feedback", "/health", "/metrics"} <= set(paths)


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (b'{"query": "find \\udc80 tools"}', "a lone surrogate"),  # an escaped lone surrogate: valid JSON, not text
        (b'{"query": "weather \\u001b[2J now"}', "the query holds a control character, \\x1b"),  # escaped ESC
        (b'{"query": "weather \x1b[2J now"}', "the body is not valid JSON at character 19: Invalid control character"),
        ('{"query": "find caf\u00e9 tools"}'.encode("latin-1"), "it is not UTF-8 text"),  # latin-1 bytes
    ],
    ids=["lone-surrogate", "escaped-escape-sequence", "raw-escape-sequence", "latin-1-bytes"],
)
def test_a_request_that_is_not_clean_text_is_a_clear_4xx_never_echoing_it_raw(
        api: str, tenant_catalog: TenantCatalog, body: bytes, what: str) -> None:
    answer = httpx.post(f"{api}/v1/search", content=body, timeout=60,
                        headers={**tenant_catalog.header("acme"), "content-type": "application/json"})

    assert answer.status_code == 400, answer.text
    assert what in answer.json()["error"]
    assert "\x1b" not in answer.text and "Traceback" not in answer.text


def test_opensearch_down_is_a_503_with_the_reason(tenant_catalog: TenantCatalog, embedder: Any,
                                                  serve_app: Any) -> None:
    from toolsift.api.app import create_app
    from toolsift.api.search_service import ToolSearchService
    from toolsift.opensearch import make_client

    dead = tenant_catalog.settings.with_overrides(opensearch_url="http://127.0.0.1:9", opensearch_timeout=2)
    app = create_app(dead, service_factory=lambda s: ToolSearchService(make_client(s), s, embedder))
    url = serve_app(app).url
    answer = httpx.post(f"{url}/v1/search", json={"query": QUERY}, headers=tenant_catalog.header("acme"), timeout=60)

    assert answer.status_code == 503
    assert answer.json()["code"] == "opensearch_unavailable" and "127.0.0.1:9" in answer.json()["error"]
    assert "Traceback" not in answer.text


def test_a_configured_token_budget_caps_searches_but_never_hides_a_tool_asked_for_by_id(
        tenant_catalog: TenantCatalog, client: Any, embedder: Any, serve_app: Any) -> None:
    from toolsift.api.app import create_app
    from toolsift.api.search_service import ToolSearchService

    tight = tenant_catalog.settings.with_overrides(token_budget=1)
    url = serve_app(create_app(tight, service_factory=lambda s: ToolSearchService(client, s, embedder))).url
    found = _post(str(url), "/v1/search", {"query": QUERY}, "acme", tenant_catalog).json()
    acme_tool = next(d for d, o in tenant_catalog.owner.items() if o == "acme" and not d.startswith("agent:"))
    one = httpx.get(f"{url}/v1/tools/{acme_tool}", headers=tenant_catalog.header("acme"))

    assert found["tools"] == [] and found["truncated_by"] == "token_budget"
    assert one.status_code == 200 and one.json()["tokens"] > 1


# --- hostile requests: bad fields, oversized bodies, other sites' pages ----------------------------------


@pytest.mark.parametrize(("path", "body"), [
    ("/v1/search", {"query": 5}),
    ("/v1/search", {"query": "x" * 32_001}),
    ("/v1/search", {"query": "x" * 1_000_000}),
    ("/v1/toolset", {"query": ""}),
], ids=["number", "one-over-the-limit", "a-megabyte", "empty-toolset-query"])
def test_a_bad_query_field_is_a_400_naming_the_body_field_query(
        api: str, tenant_catalog: TenantCatalog, path: str, body: dict[str, Any]) -> None:
    answer = _post(api, path, body, "acme", tenant_catalog)

    assert answer.status_code == 400
    assert answer.json()["field"] == "query" and answer.json()["error"].startswith("query: ")


def test_a_body_nested_past_the_depth_limit_says_so(api: str, tenant_catalog: TenantCatalog) -> None:
    answer = httpx.post(f"{api}/v1/search", content=b'{"query": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
                        headers={**tenant_catalog.header("acme"), "content-type": "application/json"}, timeout=60)

    assert answer.status_code == 400
    assert "nested too deeply" in answer.json()["error"] and "UTF-8" not in answer.json()["error"]


CAP = 1_000_000  # the capped API's max_body_bytes


@pytest.fixture(scope="module")
def capped(tenant_catalog: TenantCatalog, client: Any, embedder: Any, serve_app_for_session: Any) -> tuple[str, Any]:
    """The API with a 1 MB body cap, behind a counter of the body bytes it pulls from the server."""
    from tests.conftest import BodyCounter
    from toolsift.api.app import create_app
    from toolsift.api.search_service import ToolSearchService

    settings = tenant_catalog.settings.with_overrides(max_body_bytes=CAP)
    counter = BodyCounter(create_app(settings, service_factory=lambda s: ToolSearchService(client, s, embedder)))
    return str(serve_app_for_session(counter).url), counter


def _stream(total: int) -> Iterator[bytes]:
    """``total`` bytes of a JSON-looking body, 64 KiB at a time, never held whole."""
    chunk = b" " * 65_536
    yield b'{"query": "'
    for _ in range(total // len(chunk)):
        yield chunk


def test_an_oversized_body_is_413_and_is_not_read(capped: tuple[str, Any], tenant_catalog: TenantCatalog) -> None:
    url, counter = capped
    json_key = {**tenant_catalog.header("acme"), "content-type": "application/json"}

    counter.consumed = 0
    declared = httpx.post(f"{url}/v1/search", content=b" " * (CAP + 1), headers=json_key, timeout=60)
    declared_read = counter.consumed
    counter.consumed = 0
    streamed = httpx.post(f"{url}/v1/search", content=_stream(20_000_000), headers=json_key, timeout=60)
    streamed_read = counter.consumed

    for answer in (declared, streamed):
        assert answer.status_code == 413, answer.text[:200]
        assert answer.json()["code"] == "request_too_large" and f"{CAP:,}" in answer.json()["error"]
    assert declared_read == 0  # refused on its Content-Length
    assert streamed_read <= CAP + 1_000_000  # chunked: reading stopped at the cap, not after 20 MB


def test_without_a_key_a_large_body_is_401_before_a_byte_of_it_is_read(capped: tuple[str, Any]) -> None:
    url, counter = capped

    counter.consumed = 0
    answer = httpx.post(f"{url}/v1/search", content=_stream(20_000_000),
                        headers={"content-type": "application/json"}, timeout=60)

    assert answer.status_code == 401 and answer.json()["code"] == "unauthorized"
    assert counter.consumed == 0


def test_feedback_from_another_sites_page_is_refused_and_nothing_is_stored(
        api: str, tenant_catalog: TenantCatalog, client: Any) -> None:
    found = _post(api, "/v1/search", {"query": QUERY, "top_k": 1}, "acme", tenant_catalog).json()
    body = {"request_id": found["request_id"], "calls": [{"tool_id": found["tools"][0]["id"], "called": True}]}

    foreign = _post(api, "/v1/feedback", body, "acme", tenant_catalog, Origin="https://attacker.example")
    cross_site = _post(api, "/v1/feedback", body, "acme", tenant_catalog, **{"Sec-Fetch-Site": "cross-site"})
    as_text = httpx.post(f"{api}/v1/feedback", content=json.dumps(body),
                         headers={**tenant_catalog.header("acme"), "content-type": "text/plain"}, timeout=60)

    assert foreign.status_code == 403 and foreign.json()["code"] == "forbidden"
    assert foreign.json()["field"] == "Origin" and "https://attacker.example" in foreign.json()["error"]
    assert cross_site.status_code == 403 and cross_site.json()["field"] == "Sec-Fetch-Site"
    assert as_text.status_code == 415 and as_text.json()["code"] == "unsupported_media_type"
    client.indices.refresh(index=f"{tenant_catalog.settings.feedback_index}*", ignore_unavailable=True)
    stored = client.count(index=f"{tenant_catalog.settings.feedback_index}*", ignore_unavailable=True,
                          body={"query": {"term": {"request_id": found["request_id"]}}})
    assert stored["count"] == 0
    # the same call from a program (no Origin) or from the service's own origin is taken
    own = _post(api, "/v1/feedback", body, "acme", tenant_catalog, Origin=api)
    assert own.status_code == 200 and own.json()["stored"] == 1
