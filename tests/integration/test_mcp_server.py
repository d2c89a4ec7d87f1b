"""`toolsift serve mcp` end to end: the official MCP SDK's client session against the real server process,
over stdio and over streamable HTTP, on the real node."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.environment import subprocess_environment
from tests.integration.conftest import TenantCatalog

pytestmark = pytest.mark.integration

TOOLSIFT = str(Path(sys.executable).with_name("toolsift"))
NEED = "search the web for recent news articles"
CAP = 1_000_000  # the HTTP server's max_body_bytes


def _environment(catalog: TenantCatalog, key: str | None) -> dict[str, str]:
    env = subprocess_environment()
    env.update({"TOOLSIFT_CONFIG": str(catalog.config_file()), "TOOLSIFT_OPENSEARCH_URL": catalog.settings.effective_url,
                "TOOLSIFT_INDEX": catalog.settings.index, "TOOLSIFT_FEEDBACK_INDEX": catalog.settings.feedback_index})
    if key is not None:
        env["TOOLSIFT_API_KEY"] = catalog.keys[key]
    return env


@asynccontextmanager
async def stdio_session(catalog: TenantCatalog, key: str) -> AsyncIterator[Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=TOOLSIFT, args=["serve", "mcp"], env=_environment(catalog, key))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def http_session(url: str, key: str | None, catalog: TenantCatalog) -> AsyncIterator[Any]:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = catalog.header(key) if key else {}
    async with httpx2.AsyncClient(headers=headers, timeout=120) as http, \
            streamable_http_client(f"{url}/mcp", http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _result(answer: Any) -> dict[str, Any]:
    assert not answer.is_error, answer.content
    data = answer.structured_content
    if data is None:
        data = json.loads(answer.content[0].text)
    return dict(data.get("result", data)) if "result" in data and len(data) == 1 else dict(data)


@pytest.fixture(scope="module")
def http_server(tenant_catalog: TenantCatalog) -> Iterator[str]:
    """`toolsift serve mcp --transport http` as its own process on a free loopback port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = _environment(tenant_catalog, None) | {"TOOLSIFT_MAX_BODY_BYTES": str(CAP)}
    process = subprocess.Popen([TOOLSIFT, "serve", "mcp", "--transport", "http", "--port", str(port)],
                               env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        try:
            httpx.get(f"{url}/mcp", timeout=2)
            break
        except httpx.HTTPError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise AssertionError(f"serve mcp did not start: {process.stderr.read() if process.stderr else ''}")
            time.sleep(0.5)
    yield url
    process.terminate()
    process.wait(timeout=30)


def test_over_stdio_an_agent_lists_the_three_tools_and_finds_a_tool_in_its_tenant(
        tenant_catalog: TenantCatalog) -> None:
    async def exchange() -> tuple[Any, dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with stdio_session(tenant_catalog, "acme") as session:
            listed = await session.list_tools()
            found = _result(await session.call_tool("search_tools", {"query": NEED, "top_k": 5}))
            one = _result(await session.call_tool("get_tool", {"tool_id": found["tools"][0]["id"]}))
            toolset = _result(await session.call_tool("recommend_toolset", {"task": tenant_catalog.queries[0]}))
            return listed, found, one, toolset

    listed, found, one, toolset = anyio.run(exchange)

    assert {t.name for t in listed.tools} == {"search_tools", "recommend_toolset", "get_tool", "call_tool"}
    assert all(len(t.description) > 60 for t in listed.tools)  # each says when to use it
    assert found["tools"] and found["format"] == "mcp"
    assert all("inputSchema" in t["definition"] for t in found["tools"])
    assert not {t["id"] for t in found["tools"]} & tenant_catalog.foreign("acme")
    assert one["definition"] == found["tools"][0]["definition"]
    assert toolset["tools"] and not {t["id"] for t in toolset["tools"]} & tenant_catalog.foreign("acme")


def test_over_stdio_another_tenants_tool_is_an_error_that_names_nothing(tenant_catalog: TenantCatalog) -> None:
    globex_tool = next(d for d, o in tenant_catalog.owner.items() if o == "globex" and not d.startswith("agent:"))

    async def exchange() -> Any:
        async with stdio_session(tenant_catalog, "acme") as session:
            return await session.call_tool("get_tool", {"tool_id": globex_tool})

    answer = anyio.run(exchange)

    assert answer.is_error and answer.content[0].text.endswith(f": no tool {globex_tool!r}")


def test_over_stdio_a_wrong_key_stops_the_server_before_it_serves(tenant_catalog: TenantCatalog) -> None:
    env = _environment(tenant_catalog, None) | {"TOOLSIFT_API_KEY": "tsk_wrong"}
    run = subprocess.run([TOOLSIFT, "serve", "mcp"], env=env, input="", capture_output=True, text=True, timeout=180)

    assert run.returncode == 12 and "the API key is not valid" in run.stderr
    assert "Traceback" not in run.stderr


def test_over_http_each_key_searches_in_its_own_tenant(http_server: str, tenant_catalog: TenantCatalog) -> None:
    async def exchange(key: str) -> tuple[Any, dict[str, Any]]:
        async with http_session(http_server, key, tenant_catalog) as session:
            listed = await session.list_tools()
            found = _result(await session.call_tool("search_tools", {"query": NEED, "top_k": 10, "format": "openai"}))
            return listed, found

    for key, tenant in (("acme", "acme"), ("globex", "globex")):
        listed, found = anyio.run(exchange, key)
        ids = {t["id"] for t in found["tools"]}
        assert {t.name for t in listed.tools} == {"search_tools", "recommend_toolset", "get_tool", "call_tool"}
        assert ids and not ids & tenant_catalog.foreign(tenant)
        assert all(t["definition"]["type"] == "function" for t in found["tools"])


def test_over_http_a_request_without_a_key_is_401(http_server: str) -> None:
    answer = httpx.post(f"{http_server}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
                        headers={"Accept": "application/json, text/event-stream"})

    assert answer.status_code == 401


def test_over_http_a_foreign_host_is_refused(http_server: str, tenant_catalog: TenantCatalog) -> None:
    answer = httpx.post(f"{http_server}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                        headers={**tenant_catalog.header("acme"), "Host": "attacker.example",
                                 "Accept": "application/json, text/event-stream"})

    assert answer.status_code in (403, 421)


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_over_http_refusals_are_the_one_json_error_body(http_server: str, tenant_catalog: TenantCatalog) -> None:
    keyed = {**MCP_HEADERS, **tenant_catalog.header("acme")}
    anonymous = httpx.post(f"{http_server}/mcp", json=INITIALIZE, headers=MCP_HEADERS, timeout=60)
    foreign = httpx.post(f"{http_server}/mcp", json=INITIALIZE, headers={**keyed, "Origin": "https://attacker.example"},
                         timeout=60)
    as_text = httpx.post(f"{http_server}/mcp", content=json.dumps(INITIALIZE), timeout=60,
                         headers={**keyed, "Content-Type": "text/plain"})
    declared = httpx.post(f"{http_server}/mcp", content=b" " * (CAP + 1), headers=keyed, timeout=60)

    assert (anonymous.status_code, anonymous.json()["code"]) == (401, "unauthorized")
    assert anonymous.headers["www-authenticate"].startswith("Bearer")
    assert (foreign.status_code, foreign.json()["code"], foreign.json()["field"]) == (403, "forbidden", "Origin")
    assert (as_text.status_code, as_text.json()["code"]) == (415, "unsupported_media_type")
    assert (declared.status_code, declared.json()["code"]) == (413, "request_too_large")


def test_over_http_a_huge_streamed_body_is_refused_not_read(http_server: str, tenant_catalog: TenantCatalog) -> None:
    sent = 0

    def body(total: int) -> Iterator[bytes]:
        nonlocal sent
        chunk = b" " * 65_536
        for _ in range(total // len(chunk)):
            sent += len(chunk)
            yield chunk

    keyed = httpx.post(f"{http_server}/mcp", content=body(100_000_000), timeout=120,
                       headers={**MCP_HEADERS, **tenant_catalog.header("acme")})
    keyed_sent, sent = sent, 0
    anonymous = httpx.post(f"{http_server}/mcp", content=body(100_000_000), headers=MCP_HEADERS, timeout=120)

    assert (keyed.status_code, keyed.json()["code"]) == (413, "request_too_large")
    assert (anonymous.status_code, anonymous.json()["code"]) == (401, "unauthorized")
    # the server stopped reading: the client could not hand over more than its socket buffers took
    assert keyed_sent < 40_000_000 and sent < 40_000_000
