"""No tenant sees another tenant's tools, agents, judgments, query sets, answers, pending changes or figures.

Each tenant's key asks every path of the running processes with the requests most likely to surface a
foreign tool: the other tenants' own tool descriptions, word for word. The search API (every level,
the tool set, one tool by id), the MCP server (search, tool set, one tool) and the workbench (search,
tool set, judgments, query sets) must answer with the caller's and public documents only; a foreign
tool's id is answered exactly like an id that does not exist; feedback naming another tenant's answer
is refused exactly like feedback naming an answer never given.

Objects keyed by a name are kept apart too (the leak through the review queue, issue 44, is probed in
``test_shared_names.py``): a tenant's pending change reaches its own admins and the all-tenant admins
only; a query-set name and a judgment (same query, same public tool) two tenants both use are two
objects. The metrics answer a tenant's key with its tenant's figures only: the workbench's latency
(its searches), its eval runs (none: they are the operator's), the search API's Prometheus series
(labelled ``tenant``) and the ranker's (none: they count every tenant together).
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


# --- objects keyed by a name: pending changes, query sets, judgments -----------------------------------------


def _reingest(dep: Deployment, tenant: str, change: str) -> dict[str, Any]:
    """The tenant's catalog re-ingested (`toolsift ingest --tenant`) with its first tool's description changed."""
    import subprocess

    from tests.security.conftest import TOOLSIFT

    catalog = dep.folder / f"{tenant}.json"
    servers = json.loads(catalog.read_text(encoding="utf-8"))
    tool = next(iter(servers[0]["tools"].values()))["tools"][0]  # LiveMCPBench: {config name: {tools: [...]}}
    tool["description"] = f"{tool['description']} {change}"
    catalog.write_text(json.dumps(servers, ensure_ascii=False), encoding="utf-8")
    done = subprocess.run([TOOLSIFT, "ingest", str(catalog), "--tenant", tenant, "--json"], capture_output=True,
                          text=True, timeout=900, env=dep.environment())
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    return dict(json.loads(done.stdout))


def test_a_tenant_s_pending_change_reaches_its_own_admins_and_the_all_tenant_admins_only(
        deployment: Deployment) -> None:
    change = "ACME-REVIEW-7731: now also posts the quarterly numbers."
    report = _reingest(deployment, "acme", change)
    [held] = report["held"]
    url = deployment.url("ui")
    queues = {key: httpx.get(f"{url}/api/approvals", headers=deployment.header(key), timeout=60)
              for key in ("acme-admin", "globex-admin", "root")}

    assert held["id"].startswith("@acme/") and held["reason"] == "changed"
    assert all(q.status_code == 200 for q in queues.values())
    assert [e["id"] for e in queues["acme-admin"].json()["pending"] if change in "\n".join(e["diff"])] == [held["id"]]
    assert held["id"] in {e["id"] for e in queues["root"].json()["pending"]}
    assert change not in queues["globex-admin"].text and held["id"] not in queues["globex-admin"].text


def test_a_query_set_name_two_tenants_use_is_two_sets(deployment: Deployment) -> None:
    url = deployment.url("ui")
    for key, tool in (("acme-admin", deployment.tools["acme"][1][0]), ("globex-admin", deployment.tools["globex"][1][0])):
        judged = httpx.post(f"{url}/api/judgments", headers=deployment.header(key), timeout=60,
                            json={"query": f"{key} shared-name probe", "tool_id": tool, "relevant": True})
        assert judged.status_code == 200, judged.text
        made = httpx.post(f"{url}/api/querysets/from-judgments", json={"name": "team-set"},
                          headers=deployment.header(key), timeout=60)
        assert made.status_code == 200, made.text
    listed = {key: [s for s in _ok(httpx.get(f"{url}/api/querysets", headers=deployment.header(key), timeout=60))[
        "query_sets"] if s["name"] == "team-set"] for key in ("acme", "globex", "root")}

    assert [s["tenant"] for s in listed["acme"]] == ["acme"]
    assert [s["tenant"] for s in listed["globex"]] == ["globex"]
    assert sorted(s["tenant"] for s in listed["root"]) == ["acme", "globex"]


def test_two_tenants_judging_the_same_public_tool_for_the_same_query_keep_two_verdicts(
        deployment: Deployment) -> None:
    url, public = deployment.url("ui"), deployment.tools[""][0][0]
    query = "one query, one public tool, two tenants"
    for key, relevant in (("acme-admin", True), ("globex-admin", False)):
        judged = httpx.post(f"{url}/api/judgments", json={"query": query, "tool_id": public, "relevant": relevant},
                            headers=deployment.header(key), timeout=60)
        assert judged.status_code == 200, judged.text
    seen = {key: [(j["tenant"], j["relevant"]) for j in _ok(httpx.get(
        f"{url}/api/judgments", headers=deployment.header(key), timeout=60))["judgments"] if j["query"] == query]
        for key in ("acme", "globex")}

    assert seen == {"acme": [("acme", True)], "globex": [("globex", False)]}


# --- metrics: a tenant's key reads its tenant's figures, an all-tenant key everyone's -------------------------------


def _searched(dep: Deployment) -> None:
    """A few searches by each tenant's key (logged with the tenant the answer went to)."""
    for key in ("acme", "globex", "globex"):
        _ok(httpx.post(f"{dep.url('api')}/v1/search", json={"query": "send an email", "top_k": 3},
                       headers=dep.header(key), timeout=120))


def test_the_workbench_latency_of_a_tenant_s_key_counts_its_tenant_s_searches_only(
        deployment: Deployment, client: Any) -> None:
    _searched(deployment)
    url, index = deployment.url("ui"), deployment.settings.query_log_index
    client.indices.refresh(index=index)
    figures = {key: _ok(httpx.get(f"{url}/api/metrics/latency", params={"since": "now-1d"},
                                  headers=deployment.header(key), timeout=60)) for key in ("acme", "globex", "root")}
    logged = {tenant: int(client.count(index=index, body={"query": {"bool": {"filter": [
        {"term": {"tenant": tenant}}, {"range": {"timestamp": {"gte": "now-1d"}}}]}}})["count"])
        for tenant in ("acme", "globex")}

    assert logged["acme"] > 0 and logged["globex"] > 0
    assert figures["acme"]["searches"] == logged["acme"]
    assert figures["globex"]["searches"] == logged["globex"]
    assert figures["root"]["searches"] >= logged["acme"] + logged["globex"]


def test_eval_runs_are_the_operator_s_a_tenant_s_key_reads_none(deployment: Deployment, client: Any) -> None:
    from toolsift.evaluation.evalruns import EvalRunLog, EvalRunRow

    EvalRunLog.open(client, deployment.settings).record([EvalRunRow(
        query_set="globex-private-benchmark", dataset_path="/data/globex/private-benchmark", index="eval-x",
        kind="tool", method="multi-field", retriever="bm25", row="main", main=True, queries=3,
        metrics={"ndcg@10": 0.5})])
    url = deployment.url("ui")
    runs = {key: httpx.get(f"{url}/api/metrics/evalruns", headers=deployment.header(key), timeout=60)
            for key in ("acme", "root")}

    assert runs["acme"].status_code == runs["root"].status_code == 200
    assert runs["acme"].json()["runs"] == 0 and "globex-private-benchmark" not in runs["acme"].text
    assert "globex-private-benchmark" in runs["root"].text


def test_the_search_api_prometheus_metrics_of_a_tenant_s_key_are_its_tenant_s_series_only(
        deployment: Deployment) -> None:
    _searched(deployment)
    url = deployment.url("api")
    text = {key: httpx.get(f"{url}/metrics", headers=deployment.header(key), timeout=60) for key in ("acme", "root")}

    assert text["acme"].status_code == text["root"].status_code == 200
    assert 'route="/v1/search",status="200",tenant="acme"' in text["acme"].text
    assert 'tenant="globex"' not in text["acme"].text and 'tenant="*"' not in text["acme"].text
    assert 'tenant="globex"' in text["root"].text and 'tenant="acme"' in text["root"].text


def test_the_ranker_s_metrics_count_every_tenant_together_and_a_tenant_s_key_reads_none(
        deployment: Deployment) -> None:
    url = deployment.url("ranker")
    acme = httpx.get(f"{url}/metrics", headers=deployment.header("acme"), timeout=60)
    root = httpx.get(f"{url}/metrics", headers=deployment.header("root"), timeout=60)

    assert acme.status_code == root.status_code == 200
    assert "toolsift_ranker_request_duration_seconds_count" in root.text
    assert "toolsift_ranker" not in acme.text
