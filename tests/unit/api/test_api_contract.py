"""The search API's contract, without OpenSearch: the real app and the real service over a fake backend.

``create_app``'s ``service_factory`` builds a real :class:`~toolsift.api.search_service.ToolSearchService`;
the service makes its own :class:`~toolsift.search.backend.SearchBackend` (no seam for another), so the
factory replaces its ``backend`` with a :class:`~tests.fakes.MemoryBackend`: five tools in memory,
delivered through the real definitions and token budgets. Starlette's ``TestClient`` runs the app's
lifespan, so the service is built as ``toolsift serve api`` builds it. What the real index ranks is
tests/integration/test_search_api.py's; here: what the API promises about any ranking.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from fastapi.testclient import TestClient
from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError

from tests.fakes import MemoryBackend
from toolsift.access import ApiKey, hash_key
from toolsift.api.app import create_app
from toolsift.api.search_service import ToolSearchService
from toolsift.config import Settings
from toolsift.errors import ClusterError
from toolsift.mappings import AgentDoc, ParameterDoc, ToolDoc

pytestmark = pytest.mark.usefixtures("clean_env")

#: What the TestClient answers (an httpx2 response in this starlette).
Response = Any
KEYS = {"acme": "tsk_acme-test-key", "globex": "tsk_globex-test-key"}
QUERY = "search the web for recent news articles"
QUERY_PARAM = ParameterDoc("query", "string", "What to search for.")
DOCS: list[ToolDoc | AgentDoc] = [
    AgentDoc(agent_id="agent:web", name="web", description="Web tools."),
    AgentDoc(agent_id="agent:files", name="files", description="File tools."),
    ToolDoc(tool_id="web/search", name="search", agent_id="agent:web", source="mcp/web",
            description="Search the web for recent news articles and pages. Returns titles and links.",
            parameters=(QUERY_PARAM, ParameterDoc("limit", "integer", "How many results.", required=False)),
            response="A list of results.", raw={"name": "search"}),
    ToolDoc(tool_id="web/fetch", name="fetch", agent_id="agent:web", source="mcp/web",
            description="Fetch a web page by its URL.", parameters=(ParameterDoc("url", "string", "The page."),)),
    ToolDoc(tool_id="files/write", name="write", agent_id="agent:files", source="mcp/files",
            description="Write text to a file on disk.", parameters=(ParameterDoc("path", "string", "Where."),)),
    ToolDoc(tool_id="acme/news", name="news", source="acme/crm", tenants=("acme",),
            description="Recent news about acme's customers.", parameters=(QUERY_PARAM,)),
    ToolDoc(tool_id="globex/news", name="news", source="globex/crm", tenants=("globex",),
            description="Search recent news articles about globex's customers.", parameters=(QUERY_PARAM,)),
]
#: What acme's search for QUERY finds, best first (globex/news is globex's alone).
ACME_RANKING = ["web/search", "acme/news", "web/fetch"]


def keyed_settings(**overrides: Any) -> Settings:
    keys = [ApiKey(name=tenant, tenant=tenant, sha256=hash_key(key)) for tenant, key in KEYS.items()]
    return Settings(index="tools", api_keys=keys, **overrides)  # type: ignore[arg-type]


class Api:
    """The app on a TestClient, the fake behind it, and calls as a tenant's key makes them."""

    def __init__(self, http: TestClient, backend: MemoryBackend) -> None:
        self.http, self.backend = http, backend

    def post(self, path: str, body: Any, tenant: str | None = "acme", **headers: str) -> Response:
        return self.http.post(path, json=body, headers={**self.key(tenant), **headers})

    def search(self, tenant: str | None = "acme", **body: Any) -> Response:
        return self.post("/v1/search", {"query": QUERY, **body}, tenant)

    @staticmethod
    def key(tenant: str | None) -> dict[str, str]:
        return {} if tenant is None else {"Authorization": f"Bearer {KEYS[tenant]}"}


@contextmanager
def serving(settings: Settings) -> Iterator[Api]:
    backend = MemoryBackend(DOCS, index=settings.index)

    def service(s: Settings) -> ToolSearchService:
        svc = ToolSearchService(backend.client, s)  # type: ignore[arg-type]  # builds a SearchBackend of its own
        svc.backend = backend  # type: ignore[assignment]
        return svc

    app = create_app(settings, service_factory=service, allowed_hosts=["testserver"])
    with TestClient(app) as http:  # `with`: the lifespan runs, the service is built
        yield Api(http, backend)


@pytest.fixture()
def api() -> Iterator[Api]:
    with serving(keyed_settings()) as served:
        yield served


def ids(answer: Response | dict[str, Any]) -> list[str]:
    """The answer's tool ids, in its order."""
    body = answer if isinstance(answer, dict) else answer.json()
    return [t["id"] for t in body["tools"]]


# --- a search --------------------------------------------------------------------------------------------


def test_a_search_answers_the_ranked_tools_with_a_fresh_request_id(api: Api) -> None:
    first, second = api.search(), api.search()

    assert first.status_code == 200, first.text
    body = first.json()
    assert ids(first) == ACME_RANKING
    assert [t["rank"] for t in body["tools"]] == [1, 2, 3]
    assert [t["score"] for t in body["tools"]] == sorted((t["score"] for t in body["tools"]), reverse=True)
    assert re.fullmatch(r"[0-9a-f]{32}", body["request_id"]) and body["request_id"] != second.json()["request_id"]
    assert (body["query"], body["level"], body["format"]) == (QUERY, "tool", "toolsift")


@pytest.mark.parametrize(("fmt", "shape"), [
    ("openai", {"type", "function"}),
    ("mcp", {"name", "description", "inputSchema"}),
    ("toolsift", {"id", "name", "description", "input_schema", "server", "source", "response"}),
])
def test_each_tool_is_a_ready_to_call_definition_in_the_asked_format(api: Api, fmt: str, shape: set[str]) -> None:
    answer = api.search(format=fmt).json()

    assert answer["format"] == fmt and ids(answer) == ACME_RANKING
    assert all(set(t["definition"]) == shape for t in answer["tools"])
    search = answer["tools"][0]
    schema = {"openai": lambda d: d["function"]["parameters"], "mcp": lambda d: d["inputSchema"],
              "toolsift": lambda d: d["input_schema"]}[fmt](search["definition"])
    assert schema["required"] == ["query"] and set(schema["properties"]) == {"query", "limit"}
    assert all(t["tokens"] > 0 for t in answer["tools"])
    assert answer["total_tokens"] == sum(t["tokens"] for t in answer["tools"]) and "cl100k_base" in answer["tokenizer"]


def test_max_results_and_the_token_budget_cut_the_answer_in_rank_order(api: Api) -> None:
    full = api.search().json()
    budget = full["tools"][0]["tokens"] + full["tools"][1]["tokens"]

    two = api.search(max_results=2).json()
    cut = api.search(token_budget=budget).json()
    none = api.search(token_budget=1).json()

    assert ids(two) == ACME_RANKING[:2] and (two["truncated_by"], two["dropped"]) == ("max_results", 1)
    assert ids(cut) == ACME_RANKING[:2] and cut["truncated_by"] == "token_budget" and cut["total_tokens"] <= budget
    assert none["tools"] == [] and none["truncated_by"] == "token_budget"
    assert full["truncated_by"] is None and full["dropped"] == 0


def test_brief_entries_are_only_id_name_and_a_one_line_description(api: Api) -> None:
    brief = api.search(brief=True, format="openai").json()

    assert brief["brief"] is True and ids(brief) == ACME_RANKING
    assert all(set(t) == {"id", "name", "description"} for t in brief["tools"])
    assert brief["tools"][0] == {"id": "web/search", "name": "search",
                                 "description": "Search the web for recent news articles and pages."}
    assert brief["total_tokens"] < api.search(format="openai").json()["total_tokens"]


def test_pinned_tools_come_first_in_the_order_given_and_are_marked(api: Api) -> None:
    answer = api.search(pinned=["files/write", "acme/news"]).json()

    assert ids(answer) == ["files/write", "acme/news", "web/search", "web/fetch"]
    assert [t.get("pinned", False) for t in answer["tools"]] == [True, True, False, False]
    assert answer["pinned"] == ["files/write", "acme/news"] and answer["pinned_over_budget"] is False


@pytest.mark.parametrize("unknown", ["no/such-tool", "globex/news"], ids=["missing", "another-tenants"])
def test_a_pinned_id_the_caller_cannot_see_is_a_400_naming_pinned_n(api: Api, unknown: str) -> None:
    answer = api.search(pinned=[unknown, "web/fetch"])

    assert answer.status_code == 400
    assert answer.json() == {"error": f"pinned.0: no tool {unknown!r}", "code": "bad_query", "field": "pinned.0"}
    assert api.backend.requests == []  # refused before any search


# --- refusals: one error body, never a traceback ---------------------------------------------------------


@pytest.mark.parametrize(("body", "field"), [
    ({"query": QUERY, "top_k": 0}, "top_k"),
    ({"query": QUERY, "format": "yaml"}, "format"),
    ({"query": QUERY, "filters": {"servers": [""]}}, "filters.servers.0"),
    ({"query": QUERY, "pinned": [""]}, "pinned.0"),
    ({"query": QUERY, "surprise": 1}, "surprise"),
    ({"query": 5}, "query"),
])
def test_a_body_field_that_fails_validation_is_a_400_naming_it(api: Api, body: dict[str, Any], field: str) -> None:
    answer = api.post("/v1/search", body)

    assert answer.status_code == 400
    assert answer.json()["field"] == field and answer.json()["code"] == "bad_request"
    assert answer.json()["error"].startswith(f"{field}: ") and "Traceback" not in answer.text
    assert api.backend.requests == []


def test_a_request_with_nothing_to_search_is_a_400_bad_query(api: Api) -> None:
    answer = api.search(query="   ")

    assert answer.status_code == 400 and answer.json()["code"] == "bad_query"


def test_an_unknown_route_is_a_404_in_the_one_error_body(api: Api) -> None:
    answer = api.http.get("/v2/search", headers=api.key("acme"))

    assert answer.status_code == 404
    assert answer.json() == {"error": "Not Found", "code": "not_found", "field": None}


def test_a_body_not_sent_as_json_is_a_415(api: Api) -> None:
    answer = api.http.post("/v1/search", content=f'{{"query": "{QUERY}"}}',
                           headers={**api.key("acme"), "content-type": "text/plain"})

    assert answer.status_code == 415
    assert answer.json()["code"] == "unsupported_media_type" and answer.json()["field"] == "Content-Type"
    assert api.backend.requests == []


def test_a_body_over_max_body_bytes_is_a_413_naming_the_setting() -> None:
    with serving(keyed_settings(max_body_bytes=1024)) as api:
        answer = api.search(query="x" * 2000)

        assert answer.status_code == 413
        assert answer.json()["code"] == "request_too_large" and "1,024" in answer.json()["error"]
        assert api.backend.requests == []


# --- keys and tenants ------------------------------------------------------------------------------------


def test_with_keys_configured_a_missing_or_wrong_key_is_a_401_asking_for_one(api: Api) -> None:
    missing = api.search(tenant=None)
    wrong = api.post("/v1/search", {"query": QUERY}, None, Authorization="Bearer tsk_nope")

    assert missing.status_code == 401 and missing.json()["code"] == "unauthorized"
    assert "Authorization: Bearer" in missing.json()["error"]
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert wrong.status_code == 401 and wrong.json()["error"] == "the API key is not valid"
    assert api.backend.requests == []


def test_the_keys_tenant_reaches_the_backend_and_bounds_the_answer(api: Api) -> None:
    acme, globex = api.search(), api.search(tenant="globex")

    assert [r.tenant for r in api.backend.requests] == ["acme", "globex"]
    assert {tenant for _, tenant in api.backend.tenants} == {"acme", "globex"}
    assert "acme/news" in ids(acme) and "globex/news" not in ids(acme)
    assert "globex/news" in ids(globex) and "acme/news" not in ids(globex)


def test_without_keys_the_api_is_open_and_searches_every_tenant() -> None:
    with serving(Settings(index="tools")) as api:
        answer = api.search(tenant=None)

        assert answer.status_code == 200
        assert api.backend.requests[0].tenant is None
        assert {"acme/news", "globex/news"} <= set(ids(answer))


def test_another_tenants_tool_is_404_with_the_same_words_as_a_missing_one(api: Api) -> None:
    own = api.http.get("/v1/tools/acme/news", params={"format": "mcp"}, headers=api.key("acme"))
    other = api.http.get("/v1/tools/globex/news", headers=api.key("acme"))
    missing = api.http.get("/v1/tools/no/such-tool", headers=api.key("acme"))

    assert own.status_code == 200 and set(own.json()["definition"]) == {"name", "description", "inputSchema"}
    assert other.status_code == 404 and other.json()["code"] == "not_found"
    assert missing.json() == {**other.json(), "error": "no tool 'no/such-tool'"}


# --- OpenSearch down, health and metrics ---------------------------------------------------------------------


@pytest.mark.parametrize("failure", [
    ClusterError("OpenSearch is unreachable: connection refused"),
    OpenSearchConnectionError("N/A", "Connection refused", None),
], ids=["cluster-error", "client-connection-error"])
def test_a_cluster_failing_mid_search_is_a_503_opensearch_unavailable_without_a_traceback(
        api: Api, failure: Exception) -> None:
    api.backend.error = failure

    answer = api.search()

    assert answer.status_code == 503
    assert set(answer.json()) == {"error", "code", "field"} and answer.json()["code"] == "opensearch_unavailable"
    assert "Traceback" not in answer.text and "File \"" not in answer.text


def test_health_is_open_and_counts_the_index_documents(api: Api) -> None:
    answer = api.http.get("/health")

    assert answer.status_code == 200
    assert answer.json() == {"status": "ok", "index": "tools", "documents": len(DOCS)}
    assert api.backend.client.counted == ["tools"]


def test_health_with_opensearch_unreachable_is_a_503_naming_the_cluster(api: Api) -> None:
    api.backend.client.down = True

    answer = api.http.get("/health")

    assert answer.status_code == 503 and answer.json()["code"] == "opensearch_unavailable"
    assert keyed_settings().effective_url in answer.json()["error"] and "Traceback" not in answer.text


def test_metrics_need_a_key_and_count_requests_by_route_status_and_the_callers_tenant(api: Api) -> None:
    api.search()
    api.search(top_k=0)

    anonymous = api.http.get("/metrics")
    metrics = api.http.get("/metrics", headers=api.key("acme"))
    other = api.http.get("/metrics", headers=api.key("globex"))

    assert anonymous.status_code == 401
    assert metrics.status_code == 200 and metrics.headers["content-type"].startswith("text/plain")
    assert 'toolsift_api_requests_total{route="/v1/search",status="200",tenant="acme"} 1.0' in metrics.text
    assert 'toolsift_api_requests_total{route="/v1/search",status="400",tenant="acme"} 1.0' in metrics.text
    # another tenant's key reads its own series only: none of acme's searches
    assert other.status_code == 200 and 'tenant="acme"' not in other.text and "/v1/search" not in other.text
