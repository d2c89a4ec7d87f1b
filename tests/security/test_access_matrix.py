"""Who may do what, on every front end: the key matrix, the Host allow-list and cross-site writes.

Every route of the four running front ends is asked with no key, a wrong key, a tenant's search key,
a tenant's admin key and the all-tenant admin key; the answer's status must be the one the route
promises, and a refusal is the one JSON error body (``error``, ``code``, ``field``). A foreign
``Host`` (DNS rebinding) is refused by every front end before any route runs. A write sent from
another site's page — an ``Origin`` of another site, ``Sec-Fetch-Site: cross-site``, or a body that is
not JSON (a form or ``text/plain``, which a page may send without asking) — is refused whether the
caller holds a key or not, and changes nothing; programs (no ``Origin``) and the service's own pages
write as before. A key never comes back in an answer.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.security.conftest import INITIALIZE, MCP_HEADERS, RAW_KEYS, Deployment

pytestmark = [pytest.mark.integration, pytest.mark.security]

CALLERS = ("none", "wrong", "acme", "acme-admin", "root")
ATTACKER = "https://attacker.example"


def _headers(dep: Deployment, caller: str) -> dict[str, str]:
    if caller == "none":
        return {}
    if caller == "wrong":
        return {"Authorization": "Bearer tsk_not-a-key-anyone-was-given"}
    return dep.header(caller)


def _request(dep: Deployment, front_end: str, method: str, path: str, body: Any, headers: dict[str, str]) -> httpx.Response:
    path = path.replace("{acme_tool}", dep.tools["acme"][0][0])
    url = dep.url(front_end) + path
    if front_end == "mcp":
        headers = {**MCP_HEADERS, **headers}
    if method == "GET":
        return httpx.get(url, headers=headers, timeout=120)
    return httpx.post(url, json=body, headers=headers, timeout=120)


#: (front end, method, path, body) -> the status each caller gets, in CALLERS order.
MATRIX: list[tuple[str, str, str, Any, tuple[int, ...]]] = [
    ("api", "GET", "/health", None, (200, 200, 200, 200, 200)),
    ("api", "POST", "/v1/search", {"query": "send an email"}, (401, 401, 200, 200, 200)),
    ("api", "POST", "/v1/toolset", {"query": "send an email"}, (401, 401, 200, 200, 200)),
    ("api", "GET", "/v1/tools/{acme_tool}", None, (401, 401, 200, 200, 200)),
    ("api", "POST", "/v1/feedback", {"request_id": "0" * 32, "calls": [{"tool_id": "x", "called": True}]},
     (401, 401, 404, 404, 404)),
    ("api", "GET", "/metrics", None, (401, 401, 200, 200, 200)),
    ("mcp", "POST", "/mcp", INITIALIZE, (401, 401, 200, 200, 200)),
    ("ui", "GET", "/health", None, (200, 200, 200, 200, 200)),
    ("ui", "GET", "/api/config", None, (401, 401, 200, 200, 200)),
    ("ui", "POST", "/api/search", {"query": "send an email", "top_k": 3}, (401, 401, 200, 200, 200)),
    ("ui", "GET", "/api/judgments", None, (401, 401, 200, 200, 200)),
    ("ui", "POST", "/api/judgments", {"query": "q", "tool_id": "{acme_tool}", "relevant": True},
     (401, 401, 403, 200, 200)),
    ("ui", "POST", "/api/weights/clear", {}, (401, 401, 403, 403, 200)),
    ("ui", "GET", "/api/approvals", None, (401, 401, 403, 200, 200)),
    ("ranker", "GET", "/health", None, (200, 200, 200, 200, 200)),
    ("ranker", "GET", "/metrics", None, (401, 401, 200, 200, 200)),
    # a rank request that is not one: a caller with a key reaches the route (400 bad_request), others never do
    ("ranker", "POST", "/v1/rank", {"not": "a rank request"}, (401, 401, 400, 400, 400)),
]


@pytest.mark.parametrize(("front_end", "method", "path", "body", "expected"), MATRIX,
                         ids=[f"{m[0]}:{m[1]} {m[2]}" for m in MATRIX])
def test_every_route_answers_each_kind_of_caller_as_promised(
        deployment: Deployment, front_end: str, method: str, path: str, body: Any, expected: tuple[int, ...]) -> None:
    if isinstance(body, dict) and body.get("tool_id") == "{acme_tool}":
        body = {**body, "tool_id": deployment.tools["acme"][0][0]}
    got = {}
    for caller in CALLERS:
        answer = _request(deployment, front_end, method, path, body, _headers(deployment, caller))
        got[caller] = answer.status_code
        if answer.status_code in (401, 403):
            error = answer.json()
            assert error["code"] in ("unauthorized", "forbidden") and error["error"], (caller, answer.text)
        for raw in RAW_KEYS.values():
            assert raw not in answer.text
    assert got == dict(zip(CALLERS, expected, strict=True))


@pytest.mark.parametrize("front_end", ["api", "mcp", "ui", "ranker"])
def test_a_foreign_host_is_refused_before_any_route_runs(deployment: Deployment, front_end: str) -> None:
    path = {"api": "/v1/search", "mcp": "/mcp", "ui": "/api/search", "ranker": "/v1/rank"}[front_end]
    headers = {**deployment.header("root"), "Host": "rebound.attacker.example"}
    answer = _request(deployment, front_end, "POST", path, {"query": "x"}, headers)
    health = httpx.get(deployment.url(front_end) + "/health", headers={"Host": "rebound.attacker.example"}, timeout=60)

    assert (answer.status_code, answer.json()["code"], answer.json()["field"]) == (403, "forbidden", "Host")
    assert health.status_code == 403 or front_end == "mcp"


#: One state-changing route per front end, with a body it would take from a program.
WRITES = {
    "api": ("/v1/feedback", {"request_id": "0" * 32, "calls": [{"tool_id": "x", "called": True}]}),
    "mcp": ("/mcp", INITIALIZE),
    "ui": ("/api/weights/clear", {}),
    "ranker": ("/v1/rank", {"not": "a rank request"}),
}


@pytest.mark.parametrize("front_end", list(WRITES))
@pytest.mark.parametrize("keyed", [True, False], ids=["with-key", "without-key"])
def test_a_write_from_another_sites_page_is_refused_with_or_without_a_key(
        deployment: Deployment, front_end: str, keyed: bool) -> None:
    path, body = WRITES[front_end]
    key = deployment.header("root") if keyed else {}
    foreign_origin = _request(deployment, front_end, "POST", path, body, {**key, "Origin": ATTACKER})
    cross_site = _request(deployment, front_end, "POST", path, body, {**key, "Sec-Fetch-Site": "cross-site"})

    assert (foreign_origin.status_code, foreign_origin.json()["field"]) == (403, "Origin")
    assert (cross_site.status_code, cross_site.json()["field"]) == (403, "Sec-Fetch-Site")


@pytest.mark.parametrize("front_end", list(WRITES))
def test_a_write_a_page_could_send_without_asking_is_not_taken(deployment: Deployment, front_end: str) -> None:
    """A form or ``text/plain`` body needs no CORS preflight; a JSON body from another site does."""
    path, _ = WRITES[front_end]
    url = deployment.url(front_end) + path
    headers = deployment.header("root")
    as_text = httpx.post(url, content=b'{"query": "x"}', headers={**headers, "Content-Type": "text/plain"}, timeout=60)
    as_form = httpx.post(url, data={"query": "x"}, headers=headers, timeout=60)

    assert (as_text.status_code, as_text.json()["code"]) == (415, "unsupported_media_type")
    assert (as_form.status_code, as_form.json()["code"]) == (415, "unsupported_media_type")


def test_the_workbenchs_own_page_still_writes_and_a_cross_site_clear_changed_nothing(
        deployment: Deployment, client: Any) -> None:
    url = deployment.url("ui")
    alias = deployment.settings.index
    pipelines_before = {p: b for p, b in client.search_pipeline.get(ignore=404).items() if p.startswith(alias)}
    refused = httpx.post(f"{url}/api/weights/clear", json={}, timeout=60,
                         headers={**deployment.header("root"), "Origin": ATTACKER, "Sec-Fetch-Site": "cross-site"})
    pipelines_after = {p: b for p, b in client.search_pipeline.get(ignore=404).items() if p.startswith(alias)}
    own_page = httpx.post(f"{url}/api/search", json={"query": "send an email", "top_k": 3}, timeout=120,
                          headers={**deployment.header("acme"), "Origin": url, "Sec-Fetch-Site": "same-origin"})

    assert refused.status_code == 403
    assert pipelines_after == pipelines_before
    assert own_page.status_code == 200, own_page.text
