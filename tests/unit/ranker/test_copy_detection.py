"""One capability once: what counts as a copy of a tool, and how a ranking collapses its copies."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from toolsift.ranker.copies import (
    ToolText,
    capability_name,
    collapse_copies,
    description_overlap,
    possible_copies,
    same_capability,
)
from toolsift.records import RankedTool

# Real pairs from LiveMCPBench's catalog (tools.json): forks of one server, and same names that do other things.
FILESYSTEM_LIST = ("Get a detailed listing of all files and directories in a specified path. Results clearly "
                   "distinguish between files and directories with [FILE] and [DIR] prefixes.")
COMMANDER_LIST = ("Get a detailed listing of all files and directories in a specified path. Use this instead of "
                  "'execute_command' with ls/dir commands.")
SEARCHES = {
    "yahoo": "Fetches and organizes search results from Yahoo Finance, including stock quotes and news articles.",
    "hackernews": "Search for stories and comments on Hacker News",
    "biomcp": "Search biomedical literature, clinical trials, and genetic variants.",
}


def tool(doc_id: str, score: float = 1.0, **kw: object) -> RankedTool:
    server, _, name = doc_id.partition("/")
    return RankedTool(doc_id, name, "tool", f"agent:{server}", score, **kw)  # type: ignore[arg-type]


def test_a_name_is_compared_without_case_separators_or_punctuation() -> None:
    assert {capability_name(n) for n in ("readFile", "read_file", "Read-File", "read file", "READ.FILE")} == {"readfile"}
    assert capability_name("列出文件") == "列出文件"


def test_a_fork_that_rewrites_part_of_the_description_is_a_copy() -> None:
    assert same_capability(ToolText("list_directory", FILESYSTEM_LIST), ToolText("list_directory", COMMANDER_LIST))


def test_a_shared_name_with_another_capability_is_not_a_copy() -> None:
    texts = [ToolText("search", d) for d in SEARCHES.values()]
    assert not any(same_capability(a, b) for i, a in enumerate(texts) for b in texts[i + 1:])
    assert not same_capability(ToolText("add_table", "Add a table to a slide with enhanced formatting options."),
                               ToolText("add_table", "Add a table to a Word document."))


def test_the_same_description_under_another_name_is_not_a_copy() -> None:
    assert not same_capability(ToolText("list_directory", FILESYSTEM_LIST), ToolText("tree", FILESYSTEM_LIST))


def test_a_tool_without_a_description_is_never_a_copy() -> None:
    assert not same_capability(ToolText("get", ""), ToolText("get", ""))
    assert not same_capability(ToolText("get", "Get a user."), ToolText("get", "  "))


def test_a_flagged_fork_is_never_a_copy_of_the_clean_tool() -> None:
    clean, hostile = ToolText("list_directory", FILESYSTEM_LIST), ToolText("list_directory", FILESYSTEM_LIST, True)
    assert not same_capability(clean, hostile)
    assert same_capability(hostile, ToolText("list_directory", COMMANDER_LIST, True))


def test_overlap_is_the_share_of_the_shorter_text_the_longer_holds() -> None:
    assert description_overlap("Read a file.", "Read a file. Returns its text.") == 1.0
    assert description_overlap("", "Read a file.") == 0.0
    assert description_overlap("Read a file.", "Weather alerts") == 0.0


def test_a_ranking_keeps_the_best_copy_and_names_the_others_in_order() -> None:
    ranked = [tool("commander/list_directory", 0.9), tool("weather/get_alerts", 0.8),
              tool("filesystem/list_directory", 0.7), tool("fs-fork/listDirectory", 0.6)]
    texts = {"commander/list_directory": ToolText("list_directory", COMMANDER_LIST),
             "weather/get_alerts": ToolText("get_alerts", "Weather alerts for a US state."),
             "filesystem/list_directory": ToolText("list_directory", FILESYSTEM_LIST),
             "fs-fork/listDirectory": ToolText("listDirectory", FILESYSTEM_LIST)}
    once = collapse_copies(ranked, texts)
    assert [t.doc_id for t in once] == ["commander/list_directory", "weather/get_alerts"]
    assert [(c.doc_id, c.agent_id) for c in once[0].also_on] == [
        ("filesystem/list_directory", "agent:filesystem"), ("fs-fork/listDirectory", "agent:fs-fork")]
    assert once[1].also_on == ()


def test_tools_of_one_server_agents_prerequisites_and_unseen_tools_are_kept() -> None:
    ranked = [tool("fs/read_file"), tool("fs/readFile"), RankedTool("agent:fs", "fs", "agent", "agent:fs", 0.5),
              tool("fork/read_file", prerequisite_of="fs/read_file"), tool("hidden/read_file")]
    text = ToolText("read_file", "Read the complete contents of a file from the file system.")
    texts = {"fs/read_file": text, "fs/readFile": text, "fork/read_file": text}
    assert collapse_copies(ranked, texts) == ranked


def test_only_same_named_tools_of_different_servers_are_read_as_possible_copies() -> None:
    ranked = [tool("fs/read_file"), tool("fork/readFile"), tool("fs/write_file"), tool("fs/readfile"),
              tool("other/read_file", prerequisite_of="fs/write_file"), tool("solo/write-file")]

    assert possible_copies(ranked) == ["fs/read_file", "fork/readFile", "fs/write_file", "fs/readfile",
                                       "solo/write-file"]
    assert possible_copies(ranked[:1] + ranked[3:5]) == []  # one server's names, and a prerequisite


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["read_file", "readFile", "search", "get"]),
                          st.sampled_from([FILESYSTEM_LIST, COMMANDER_LIST, *SEARCHES.values(), ""]),
                          st.booleans()), min_size=0, max_size=12))
def test_collapsing_keeps_order_loses_no_tool_and_is_idempotent(rows: list[tuple[str, str, bool]]) -> None:
    ranked = [tool(f"s{i}/{name}", 1.0 - i / 100) for i, (name, _, _) in enumerate(rows)]
    texts = {t.doc_id: ToolText(name, text, flagged) for t, (name, text, flagged) in zip(ranked, rows, strict=True)}
    once = collapse_copies(ranked, texts)
    order = [t.doc_id for t in ranked]
    kept = [t.doc_id for t in once]
    assert kept == [i for i in order if i in kept]  # the ranking's order
    named = [c.doc_id for t in once for c in t.also_on]
    assert sorted(kept + named) == sorted(order)  # every tool kept or named once
    for t in once:  # each copy ranked below the tool that names it, and really its copy
        for c in t.also_on:
            assert order.index(c.doc_id) > order.index(t.doc_id)
            assert same_capability(texts[t.doc_id], texts[c.doc_id])
    assert collapse_copies(once, texts) == once
