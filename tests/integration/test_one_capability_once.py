"""One capability once, on a real node: a tool several servers offer is answered once, naming the others.

Real LiveMCPBench servers: the Filesystem MCP server and Desktop Commander (which copies several of its
tools: ``list_directory``, ``read_multiple_files``, ``move_file`` …), Basic Memory (its own
``list_directory``, another capability) and the two arXiv servers (``search_papers`` on both). Desktop
Commander is ingested for tenant ``acme`` only; everything else is public. The alias is deleted at the
module's end.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolsift.access import Principal
from toolsift.api.search_service import Delivery, ToolSearchService
from toolsift.ingest.pipeline import ingest_catalog
from toolsift.query.scope import Scope
from toolsift.search import SearchBackend, SearchRequest, Searcher

from tests.conftest import drop_indices

pytestmark = pytest.mark.integration

ALIAS = "toolsift-test-copies"
#: LiveMCPBench servers (positions in tools.json): Filesystem, Basic Memory, ArXiv, mcp-simple-arxiv.
PUBLIC = (61, 52, 62, 68)
#: Desktop Commander, for tenant acme.
ACME = (56,)
LISTING = "list the files and directories in a folder"


@pytest.fixture(scope="module")
def copies_index(client: Any, base_settings: Any, embedder: Any, datasets: Path,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    servers = json.loads((datasets / "livemcpbench" / "tools.json").read_text(encoding="utf-8"))
    folder = tmp_path_factory.mktemp("copies")
    settings = base_settings.with_overrides(index=ALIAS, query_log=False)
    drop_indices(client, ALIAS)
    for name, picked, tenants in (("public", PUBLIC, ()), ("acme", ACME, ("acme",))):
        catalog = folder / f"{name}.json"
        catalog.write_text(json.dumps([servers[i] for i in picked], ensure_ascii=False), encoding="utf-8")
        report = ingest_catalog(client, settings, embedder, catalog, tenants=tenants)
        assert report.ok and report.agents == len(picked)
    yield settings
    drop_indices(client, ALIAS)


def _listing(tools: Any) -> list[Any]:
    return [t for t in tools if t.name == "list_directory"]


def test_a_tool_two_servers_offer_is_answered_once_naming_the_other(client: Any, embedder: Any,
                                                                    copies_index: Any) -> None:
    searcher = Searcher(client, copies_index, embedder)

    once = searcher.search(LISTING, top_k=10, scope=Scope(tenant="acme"))
    every = searcher.search(LISTING, top_k=10, scope=Scope(tenant="acme"), copies="all")

    ids = [t.doc_id for t in once.tools]
    assert len(ids) == len(set(ids)) == 10
    # Basic Memory's list_directory does something else (a knowledge base's folders): never folded in.
    assert all(c.agent_id != "agent:basic-memory" for t in once.tools for c in t.also_on)
    assert all(not t.also_on for t in _listing(once.tools) if t.agent_id == "agent:basic-memory")
    filesystem = [t for t in _listing(once.tools) if t.agent_id in ("agent:filesystem-mcp-server",
                                                                   "agent:@acme/desktop-commander-mcp")]
    assert len(filesystem) == 1
    named = {c.agent_id for c in filesystem[0].also_on}
    assert named == {"agent:filesystem-mcp-server", "agent:@acme/desktop-commander-mcp"} - {filesystem[0].agent_id}
    assert {t.agent_id for t in _listing(every.tools)} >= {"agent:filesystem-mcp-server",
                                                          "agent:@acme/desktop-commander-mcp"}
    assert all(not t.also_on for t in every.tools)
    assert "copies" in once.timings


def test_a_copy_on_a_server_the_caller_cannot_see_is_never_named(client: Any, embedder: Any,
                                                                  copies_index: Any) -> None:
    result = Searcher(client, copies_index, embedder).search(LISTING, top_k=10, scope=Scope(tenant="beta"))

    named = [c.doc_id for t in result.tools for c in t.also_on]
    assert not any("desktop-commander" in i for i in named + [t.doc_id for t in result.tools])


def test_the_same_paper_search_on_two_arxiv_servers_is_one_answer(client: Any, embedder: Any,
                                                                  copies_index: Any) -> None:
    backend = SearchBackend(client, copies_index, embedder=embedder)

    response = backend.search(SearchRequest(query="search arXiv for papers about protein folding", top_k=5))

    assert response.result is not None
    papers = [t for t in response.result.tools if t.name == "search_papers"]
    assert len(papers) == 1 and len(papers[0].also_on) == 1
    assert {papers[0].agent_id, papers[0].also_on[0].agent_id} == {"agent:arxiv-mcp-server", "agent:mcp-simple-arxiv"}
    listed = response.to_dict()["tools"]
    assert [c["id"] for c in next(t for t in listed if t["name"] == "search_papers")["also_on"]] == [
        papers[0].also_on[0].doc_id]


def test_the_agent_api_names_the_copies_with_their_servers_and_takes_copies_all(client: Any, embedder: Any,
                                                                                copies_index: Any) -> None:
    service = ToolSearchService(client, copies_index, embedder)
    who = Principal(name="acme-key", tenant="acme", role="search")

    once = service.search(who, SearchRequest(query=LISTING, top_k=10), Delivery(format="mcp"))
    every = service.search(who, SearchRequest(query=LISTING, top_k=10, copies="all"), Delivery(format="mcp"))
    brief = service.search(who, SearchRequest(query=LISTING, top_k=10), Delivery(format="mcp", brief=True))

    folded = [t for t in once["tools"] if t.get("also_on")]
    assert folded and all(set(c) == {"id", "server"} for t in folded for c in t["also_on"])
    assert not any(t.get("also_on") for t in every["tools"])
    assert [t["also_on"] for t in brief["tools"] if t.get("also_on")] == [t["also_on"] for t in folded]
