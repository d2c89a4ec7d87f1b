"""What the framework adapters' integration tests (tests/integration/test_adapter_*.py) share: the acme
tenant's key and tool definitions, the framework tools built from them, toolsift's own answer to compare
with, a closed port, LangChain's recording fake chat model, and the loopback server standing in for
Anthropic's and OpenAI's APIs. Not a test module: the tests import from it (fixtures included)."""

from __future__ import annotations

import importlib
import json
import re
import socket
import sys
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import Field

from tests.fakes import LoopbackJSONServer
from tests.integration.conftest import TenantCatalog
from toolsift.client import ToolHit, ToolsiftClient
from toolsift.errors import ConfigError

__all__ = ["key", "recorder", "Recorder", "RecordingChatModel", "acme_definitions", "brief_hits",
           "closed_port_url", "ranked_names", "structured_tools", "visible_tools", "visible_fixture", "visible_ids",
           "assert_refuses_bad_tool_lists", "assert_import_names"]


@pytest.fixture(scope="module")
def key(tenant_catalog: TenantCatalog) -> str:
    """The acme tenant's API key."""
    return tenant_catalog.keys["acme"]


def closed_port_url() -> str:
    """The URL of a loopback port nothing listens on (toolsift unreachable)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


# --- the acme catalog as framework tools -----------------------------------------------------------------


def acme_definitions(api: str, catalog: TenantCatalog, key: str) -> list[dict[str, Any]]:
    """The OpenAI-format definition of each tool the acme tenant owns (agents apart), as toolsift's API
    returns it, in tool id order."""
    ids = sorted(d for d, o in catalog.owner.items() if o == "acme" and not d.startswith("agent:"))
    with ToolsiftClient(api, key) as ts:
        definitions = [ts.get_tool(i, format="openai").definition for i in ids]
    assert all(d is not None for d in definitions)
    return [d for d in definitions if d is not None]


def _answer(**_: Any) -> str:
    return "ok"


def structured_tools(definitions: Sequence[dict[str, Any]]) -> list[BaseTool]:
    """A LangChain StructuredTool per OpenAI definition (named as toolsift names it), answering "ok"."""
    built: list[BaseTool] = []
    for definition in definitions:
        function = definition["function"]
        built.append(StructuredTool(name=function["name"], description=function["description"] or function["name"],
                                    args_schema=function["parameters"], func=_answer))
    return built


def visible_tools(api: str, catalog: TenantCatalog, key: str, convert: Callable[[ToolHit], Any]) -> dict[str, Any]:
    """Every tool acme may see (its own and the public ones), converted from the API's own definitions, by
    toolsift id (a name two servers share is made unique, as an agent must)."""
    ids = sorted(d for d, o in catalog.owner.items() if o in ("acme", "") and not d.startswith("agent:"))
    with ToolsiftClient(api, key) as ts:
        tools = {i: convert(ts.get_tool(i, format="openai")) for i in ids}
    taken: set[str] = set()
    for i, tool in tools.items():  # two servers' tools may share a name: the later one is renamed
        if tool["name"] in taken:
            tool["name"] = re.sub(r"[^A-Za-z0-9_-]", "_", i)[-64:]
        taken.add(tool["name"])
    assert len(taken) == len(tools)
    return tools


def visible_fixture(convert: Callable[[ToolHit], Any]) -> Any:
    """A module-scoped ``visible`` fixture: :func:`visible_tools` with ``convert`` (the adapter's own
    conversion of a toolsift hit into the provider's tool type), by toolsift id."""

    @pytest.fixture(scope="module")
    def visible(tenant_api: str, tenant_catalog: TenantCatalog, key: str) -> dict[str, Any]:
        return visible_tools(tenant_api, tenant_catalog, key, convert)

    return visible


@pytest.fixture(scope="module")
def visible_ids(visible: dict[str, Any]) -> dict[str, str]:
    """The ``ids`` map the searches take: toolsift id → the name of that tool among the test module's
    ``visible`` tools."""
    return {i: t["name"] for i, t in visible.items()}


def assert_refuses_bad_tool_lists(
        api: str, key: str, tools: Collection[Any], search_class: Callable[..., Any]) -> None:
    """``search_class(client, tools, ...)`` refuses, before any call, ``tools`` with its first tool once
    more, and an always-include name no tool has; each error names the name."""
    first = next(iter(tools))

    with ToolsiftClient(api, key) as ts:
        with pytest.raises(ConfigError) as twice:
            search_class(ts, [*tools, dict(first)])
        with pytest.raises(ConfigError) as missing:
            search_class(ts, tools, always_include=["no_such_tool"])

    assert repr(first["name"]) in str(twice.value) and "'no_such_tool'" in str(missing.value)


def assert_import_names(monkeypatch: pytest.MonkeyPatch, module: str, *, without: str, match: str,
                        loaded: bool = True) -> None:
    """Importing ``module`` afresh while ``without`` cannot be imported raises an ImportError that matches
    ``match`` (what to install). ``loaded``: ``module`` must have been imported already."""
    monkeypatch.delitem(sys.modules, module, raising=loaded)
    monkeypatch.setitem(sys.modules, without, None)

    with pytest.raises(ImportError, match=match):
        importlib.import_module(module)


# --- toolsift's own answer -------------------------------------------------------------------------------


def ranked_names(api: str, key: str, query: str, top_k: int, known: Collection[str]) -> list[str]:
    """The names toolsift's own brief answer holds that are in ``known``, in rank order."""
    with ToolsiftClient(api, key) as ts:
        found = ts.search(query, top_k=top_k, format="openai", brief=True)
    return [t.name for t in found.tools if t.name in known]


def brief_hits(api: str, key: str, query: str, top_k: int) -> list[tuple[str, str]]:
    """(id, name) of each tool of toolsift's own brief answer, in rank order."""
    with ToolsiftClient(api, key) as ts:
        return [(h.id, h.name) for h in ts.search(query, top_k=top_k, format="openai", brief=True).tools]


# --- LangChain -------------------------------------------------------------------------------------------


class RecordingChatModel(FakeMessagesListChatModel):
    """langchain_core's fake chat model, with a bind_tools that records the names of the tools bound."""

    bound: list[list[str]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Runnable[Any, Any]:
        self.bound.append([t.name if isinstance(t, BaseTool) else str(t) for t in tools])
        return self


# --- a loopback server standing in for a provider's API (Anthropic, OpenAI) ------------------------------


class Recorder(LoopbackJSONServer):
    """A loopback HTTP server answering each POST with the next canned body of ``answers``, recording what
    came: (path, lower-cased headers, JSON body). ``url`` is its root."""

    def __init__(self, answers: list[dict[str, Any]] | None = None) -> None:
        self.answers: list[dict[str, Any]] = answers if answers is not None else []
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        super().__init__(self._answer)

    def _answer(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any]:
        self.requests.append((path, headers, json.loads(body)))
        return 200, self.answers.pop(0)


@pytest.fixture()
def recorder() -> Iterator[Recorder]:
    """A :class:`Recorder` serving for the test, shut down after it."""
    rec = Recorder()
    thread = threading.Thread(target=rec.server.serve_forever, daemon=True)
    thread.start()
    yield rec
    rec.server.shutdown()
    rec.server.server_close()
