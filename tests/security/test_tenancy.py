"""No tenant sees another tenant's tools, agents, judgments, query sets or answers — through any front end.

Each tenant's key asks every path of the running processes with the requests most likely to surface a
foreign tool: the other tenants' own tool descriptions, word for word. The search API (every level,
the tool set, one tool by id), the MCP server (search, tool set, one tool) and the workbench (search,
tool set, judgments, query sets) must answer with the caller's and public documents only; a foreign
tool's id is answered exactly like an id that does not exist; feedback naming another tenant's answer
is refused exactly like feedback naming an answer never given.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from tests.security.conftest import Deployment

pytestmark = [pytest.mark.integration, pytest.mark.security]

TENANT_KEYS = ("acme", "globex")
PROBES_PER_TENANT = 6


def _probes(dep: Deployment, key: str) -> list[str]:
    """The other tenant's tool descriptions (the strongest probes), then a generic request."""
    other = "globex" if dep.tenant_of(key) == "acme" else "acme"
    texts = [description[:400] for _, description in dep.tools[other][:PROBES_PER_TENANT] if description]
    return [*texts, "read a file and send its contents by email"]


def _ids(answer: Any) -> set[str]:
    """Every document id anywhere in an answer (tools, agents, steps, set members, dropped tools)."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("id", "tool_id", "agent_id", "prerequisite_of") and isinstance(value, str):
                    found.add(value)
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(answer)
    return found


def _ok(answer: httpx.Response) -> Any:
    assert answer.status_code == 200, answer.text
    return answer.json()


@pytest.mark.parametrize("key", TENANT_KEYS)
def test_the_search_api_answers_every_level_and_the_tool_set_from_the_callers_tenant_only(
        deployment: Deployment, key: str) -> None:
    url, headers, foreign = deployment.url("api"), deployment.header(key), deployment.foreign(key)
    seen: set[str] = set()
    for probe in _probes(deployment, key):
        for level in ("tool", "agent", "auto"):
            body = {"query": probe, "level": level, "top_k": 20, "explain": True}
            seen |= _ids(_ok(httpx.post(f"{url}/v1/search", json=body, headers=headers, timeout=120)))
        seen |= _ids(_ok(httpx.post(f"{url}/v1/toolset", json={"query": probe}, headers=headers, timeout=120)))
    assert seen, "the probes found nothing at all: the test would prove nothing"
    assert not seen & foreign


@pytest.mark.parametrize("key", TENANT_KEYS)
def test_a_foreign_tool_by_id_is_answered_exactly_like_a_tool_that_does_not_exist(
        deployment: Deployment, key: str) -> None:
    url, headers = deployment.url("api"), deployment.header(key)
    other = "globex" if key == "acme" else "acme"
    own_id = deployment.tools[deployment.tenant_of(key)][0][0]
    assert httpx.get(f"{url}/v1/tools/{own_id}", headers=headers, timeout=60).status_code == 200
    for foreign_id, _ in deployment.tools[other][:4]:
        foreign = httpx.get(f"{url}/v1/tools/{foreign_id}", headers=headers, timeout=60)
        missing = httpx.get(f"{url}/v1/tools/{foreign_id}-does-not-exist", headers=headers, timeout=60)
        assert foreign.status_code == missing.status_code == 404
        # the same words, but for the id asked (which the answer repeats)
        assert foreign.json()["error"].replace(foreign_id, "ID") == \
            missing.json()["error"].replace(f"{foreign_id}-does-not-exist", "ID")
        assert foreign.json()["code"] == missing.json()["code"] == "not_found"


def test_feedback_on_another_tenants_answer_is_refused_like_feedback_on_an_answer_never_given(
        deployment: Deployment) -> None:
    url = deployment.url("api")
    answer = _ok(httpx.post(f"{url}/v1/search", json={"query": _probes(deployment, "globex")[0], "top_k": 3},
                            headers=deployment.header("acme"), timeout=120))
    call = [{"tool_id": answer["tools"][0]["id"], "called": True, "success": True}]
    stolen = httpx.post(f"{url}/v1/feedback", json={"request_id": answer["request_id"], "calls": call},
                        headers=deployment.header("globex"), timeout=60)
    invented = httpx.post(f"{url}/v1/feedback", json={"request_id": "0" * 32, "calls": call},
                          headers=deployment.header("globex"), timeout=60)
    own = httpx.post(f"{url}/v1/feedback", json={"request_id": answer["request_id"], "calls": call},
                     headers=deployment.header("acme"), timeout=60)

    assert (stolen.status_code, stolen.json()) == (invented.status_code, invented.json())
    assert stolen.status_code == 404 and stolen.json()["field"] == "request_id"
    assert own.status_code == 200, own.text


@asynccontextmanager
async def _mcp(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers=headers, timeout=120) as http, \
            streamable_http_client(f"{url}/mcp", http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _content(result: Any) -> Any:
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text) if result.content else {}


@pytest.mark.parametrize("key", TENANT_KEYS)
def test_the_mcp_server_answers_searches_tool_sets_and_get_tool_from_the_callers_tenant_only(
        deployment: Deployment, key: str) -> None:
    url, foreign = deployment.url("mcp"), deployment.foreign(key)
    other = "globex" if key == "acme" else "acme"

    async def probe() -> tuple[set[str], list[bool]]:
        seen: set[str] = set()
        refused: list[bool] = []
        async with _mcp(url, deployment.header(key)) as session:
            for text in _probes(deployment, key):
                for level in ("tool", "agent"):
                    answer = await session.call_tool("search_tools", {"query": text, "top_k": 20, "level": level})
                    assert not answer.is_error, answer.content
                    seen |= _ids(_content(answer))
                answer = await session.call_tool("recommend_toolset", {"task": text})
                assert not answer.is_error, answer.content
                seen |= _ids(_content(answer))
            for foreign_id, _ in deployment.tools[other][:3]:
                foreign = await session.call_tool("get_tool", {"tool_id": foreign_id})
                missing = await session.call_tool("get_tool", {"tool_id": f"{foreign_id}-does-not-exist"})
                said = str(foreign.content[0].text).replace(foreign_id, "ID")
                refused.append(bool(foreign.is_error) and bool(missing.is_error)
                               and said == str(missing.content[0].text).replace(f"{foreign_id}-does-not-exist", "ID"))
        return seen, refused

    seen, refused = anyio.run(probe)
    assert seen and not seen & foreign
    assert all(refused)


@pytest.mark.parametrize("key", TENANT_KEYS)
def test_the_workbench_searches_and_sets_from_the_callers_tenant_only(deployment: Deployment, key: str) -> None:
    url, headers, foreign = deployment.url("ui"), deployment.header(key), deployment.foreign(key)
    seen: set[str] = set()
    for text in _probes(deployment, key)[:3]:
        search = _ok(httpx.post(f"{url}/api/search", json={"query": text, "top_k": 20}, headers=headers, timeout=120))
        seen |= _ids(search)
        seen |= _ids(_ok(httpx.post(f"{url}/api/set", json={"search_id": search["search_id"]}, headers=headers,
                                    timeout=120)))
    assert seen and not seen & foreign


def test_judgments_and_query_sets_of_one_tenant_are_invisible_to_another(deployment: Deployment) -> None:
    url = deployment.url("ui")
    secret = "acme confidential: the merger plan's tools"
    acme_tool = deployment.tools["acme"][0][0]
    globex_tool = deployment.tools["globex"][0][0]
    admin = deployment.header("acme-admin")
    written = httpx.post(f"{url}/api/judgments", json={"query": secret, "tool_id": acme_tool, "relevant": True},
                         headers=admin, timeout=60)
    assert written.status_code == 200, written.text
    made = httpx.post(f"{url}/api/querysets/from-judgments", json={"name": "acme-secret-set"}, headers=admin,
                      timeout=60)
    assert made.status_code == 200, made.text
    # an admin of one tenant may not judge another tenant's tool: the same answer as a tool that does not exist
    foreign = httpx.post(f"{url}/api/judgments", json={"query": "x", "tool_id": globex_tool, "relevant": True},
                         headers=admin, timeout=60)
    missing = httpx.post(f"{url}/api/judgments", json={"query": "x", "tool_id": "no-such/tool", "relevant": True},
                         headers=admin, timeout=60)

    as_globex = deployment.header("globex")
    judgments = httpx.get(f"{url}/api/judgments", headers=as_globex, timeout=60)
    query_sets = httpx.get(f"{url}/api/querysets", headers=as_globex, timeout=60)

    assert (foreign.status_code, foreign.json()["code"]) == (missing.status_code, missing.json()["code"])
    assert foreign.status_code == 404
    assert judgments.status_code == query_sets.status_code == 200
    assert secret not in judgments.text and "acme-secret-set" not in query_sets.text
    acme_view = httpx.get(f"{url}/api/judgments", headers=deployment.header("acme"), timeout=60)
    assert secret in acme_view.text  # the owner still sees it: the refusal above is about tenancy
