"""What the typed client reads from an API answer and sends in a search body."""

from __future__ import annotations

from toolsift.client import ToolHit, _search_body


def test_a_tool_answered_once_carries_the_ids_of_its_copies_in_order() -> None:
    entry = {"id": "filesystem/list_directory", "name": "list_directory", "rank": 1, "score": 1.2,
             "definition": {"name": "list_directory", "description": "List a folder."},
             "also_on": [{"id": "commander/list_directory", "server": "agent:commander"},
                         {"id": "fork/list_directory", "server": "agent:fork"}]}

    hit = ToolHit.from_json(entry)

    assert hit.also_on == ("commander/list_directory", "fork/list_directory")
    assert ToolHit.from_json({**entry, "also_on": None}).also_on == ()


def test_copies_are_sent_only_when_the_caller_chooses() -> None:
    common = {"top_k": 10, "level": "tool", "format": "mcp", "brief": False, "pinned": (), "servers": (), "tags": (),
              "steps": (), "max_results": None, "token_budget": None, "instruction": None, "explain": False,
              "retriever": None, "multi_need": None, "risky": None}

    assert "copies" not in _search_body("list a folder", **common, copies=None)  # type: ignore[arg-type]
    assert _search_body("list a folder", **common, copies="all")["copies"] == "all"  # type: ignore[arg-type]
