"""The security suite's deployment: toolsift as an operator runs it, attacked from loopback.

One index holds three slices of LiveMCPBench: tenant ``acme``'s servers, tenant ``globex``'s and
public ones. A ``toolsift.toml`` holds five keys (a search key and an admin key of each tenant, and an
all-tenant admin key), the query log is on (feedback is checked against it) and the
body cap is 1 MB; a client has 5 s to send a request's headers, and 5 s more for its body
(``request_read_timeout_s``). The four HTTP front ends run as their own processes, exactly as
`toolsift serve …` starts them: the search API, the MCP server over streamable HTTP, the workbench and the ranker
service. Each is started once, on first use, and stopped at the end; a front end that printed a
Python traceback to its log fails the suite at teardown (a clean error never prints one).

Everything is bounded: a few dozen requests per probe family, bodies streamed rather than built, and
every HTTP call with a timeout.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import drop_indices, ingest_tenant_slices
from tests.environment import subprocess_environment

TOOLSIFT = str(Path(sys.executable).with_name("toolsift"))
#: Every index of the suite (dropped before and after it); outside ``toolsift-test-*``.
SEC_PREFIX = "toolsift-sectest-"
#: LiveMCPBench server positions per tenant ("" = public).
SLICES = {"acme": range(0, 6), "globex": range(6, 12), "": range(12, 16)}
#: The body cap the front ends run with (``max_body_bytes``).
CAP = 1_000_000
#: How long the front ends give a client to send a request's headers, and then its body (``request_read_timeout_s``).
READ_TIMEOUT_S = 5
RAW_KEYS = {"acme": "tsk_sec-acme-search", "globex": "tsk_sec-globex-search", "acme-admin": "tsk_sec-acme-admin",
            "globex-admin": "tsk_sec-globex-admin", "root": "tsk_sec-all-tenants-admin"}
KEY_ROLES = {"acme": ("acme", "search"), "globex": ("globex", "search"), "acme-admin": ("acme", "admin"),
             "globex-admin": ("globex", "admin"), "root": ("*", "admin")}
#: The MCP streamable-HTTP transport's request headers (JSON-RPC over POST, answers as JSON or SSE).
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "toolsift-security-suite", "version": "1"}}}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class FrontEnd:
    """One `toolsift serve …` process: its URL and its log."""

    name: str
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


@dataclass
class Deployment:
    """The suite's catalog, keys and front ends (started lazily, one process each)."""

    settings: Any
    folder: Path
    config: Path
    #: document id (tool or agent) -> tenant ("" public)
    owner: dict[str, str]
    #: (tool id, its description) per tenant ("" public)
    tools: dict[str, list[tuple[str, str]]]
    front_ends: dict[str, FrontEnd] = field(default_factory=dict)

    def header(self, key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {RAW_KEYS[key]}"}

    def tenant_of(self, key: str) -> str:
        return KEY_ROLES[key][0]

    def foreign(self, key: str) -> set[str]:
        """Ids of the documents the key's tenant must never see (nothing for the all-tenant key)."""
        tenant = self.tenant_of(key)
        return set() if tenant == "*" else {d for d, o in self.owner.items() if o and o != tenant}

    def environment(self, **extra: str) -> dict[str, str]:
        env = subprocess_environment()
        env.update({"TOOLSIFT_CONFIG": str(self.config), "TOOLSIFT_OPENSEARCH_URL": self.settings.effective_url,
                    "HF_HUB_OFFLINE": "1"}, **extra)
        return env

    def url(self, name: str) -> str:
        """The URL of front end ``name`` (``api``, ``mcp``, ``ui``, ``ranker``), started on first use."""
        if name not in self.front_ends:
            self.front_ends[name] = self._start(name)
        return self.front_ends[name].url

    def _start(self, name: str) -> FrontEnd:
        port = free_port()
        args = {"api": ["serve", "api"], "mcp": ["serve", "mcp", "--transport", "http"],
                "ui": ["serve", "ui", "--root", str(self.folder)], "ranker": ["serve", "ranker"]}[name]
        log = self.folder / f"{name}.log"
        with log.open("wb") as sink:
            process = subprocess.Popen([TOOLSIFT, *args, "--port", str(port)], env=self.environment(),
                                       stdout=sink, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        probe = "/mcp" if name == "mcp" else "/health"
        deadline = time.monotonic() + 240
        while True:
            try:
                httpx.get(url + probe, timeout=5)
                return FrontEnd(name, url, process, log)
            except httpx.HTTPError:
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    raise AssertionError(f"toolsift {' '.join(args)} did not start:\n{log.read_text(errors='replace')}")
                time.sleep(0.5)

    def tracebacks(self) -> dict[str, str]:
        """The front ends whose log holds a Python traceback, with the log's tail."""
        found = {}
        for end in self.front_ends.values():
            text = end.log.read_text(encoding="utf-8", errors="replace")
            if "Traceback (most recent call last)" in text:
                found[end.name] = text[-4000:]
        return found


def _toml(settings: dict[str, Any], keys: list[Any]) -> str:
    lines = [f"{name} = {json.dumps(value)}" for name, value in settings.items()]
    for entry in keys:
        lines += ["", "[[api_keys]]", f'name = "{entry.name}"', f'tenant = "{entry.tenant}"',
                  f'role = "{entry.role}"', f'sha256 = "{entry.sha256}"']
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="session")
def deployment(client: Any, base_settings: Any, embedder: Any, datasets: Path,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """The suite's deployment; its front ends are stopped at the end and none may have printed a traceback."""
    from toolsift.access import ApiKey, hash_key
    folder = tmp_path_factory.mktemp("security")
    keys = [ApiKey(name=name, tenant=KEY_ROLES[name][0], role=KEY_ROLES[name][1], sha256=hash_key(raw))
            for name, raw in RAW_KEYS.items()]
    values = {"index": f"{SEC_PREFIX}catalog", "feedback_index": f"{SEC_PREFIX}feedback",
              "query_log": True, "query_log_index": f"{SEC_PREFIX}querylog",
              "judgments_index": f"{SEC_PREFIX}judgments", "query_sets_index": f"{SEC_PREFIX}querysets",
              "eval_runs_index": f"{SEC_PREFIX}evalruns", "data_dir": str(folder / "data"),
              "llm_cache_dir": str(folder / "llm-cache"), "max_body_bytes": CAP, "ranker_max_request_bytes": CAP,
              "request_read_timeout_s": READ_TIMEOUT_S}
    config = folder / "toolsift.toml"
    config.write_text(_toml(values, keys), encoding="utf-8")
    settings = base_settings.with_overrides(**{k: (Path(v) if k.endswith("_dir") else v) for k, v in values.items()},
                                            api_keys=keys)
    servers = json.loads((datasets / "livemcpbench" / "tools.json").read_text(encoding="utf-8"))
    drop_indices(client, SEC_PREFIX)
    docs = ingest_tenant_slices(client, settings, embedder, folder, servers, SLICES)
    owner = {doc_id: doc["owner"] for doc_id, doc in docs.items()}
    tools: dict[str, list[tuple[str, str]]] = {t: [] for t in SLICES}
    for doc_id, doc in docs.items():
        if not doc_id.startswith("agent:"):
            tools[doc["owner"]].append((doc_id, str(doc.get("description") or "")))
    deployment = Deployment(settings, folder, config, owner, {t: sorted(v) for t, v in tools.items()})
    yield deployment
    for end in deployment.front_ends.values():
        end.stop()
    found = deployment.tracebacks()
    drop_indices(client, SEC_PREFIX)
    if found:
        pytest.fail("a front end printed a traceback:\n" + "\n\n".join(f"[{n}]\n{t}" for n, t in found.items()))
