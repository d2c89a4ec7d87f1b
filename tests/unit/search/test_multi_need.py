"""Multi-need search without an LLM: the needs a request's files imply, the texts one request is
searched with, and tools ranked by their need and their server."""

from __future__ import annotations

import pytest

from toolsift.errors import BadQueryError
from toolsift.evaluation.requests import score_answers
from toolsift.query.decompose import file_needs, request_needs
from toolsift.query.structured import StructuredQuery, ToolNeed
from toolsift.ranker.agents import place_prerequisites, rank_tools_by_server
from toolsift.records import RankedAgent, RankedTool
from toolsift.search.planner import planning_texts


# --- needs a file path implies ----------------------------------------------------------------------
@pytest.mark.parametrize(("request_text", "needs"), [
    ("Generate a research summary for NCT04280705 and save it as Markdown to /root/markdown/NCT.md.",
     ["write text file to path"]),
    ("Make a web page about the history of AI saved at /root/html/ai.html.", ["write text file to path"]),
    ("Help me make a STEINS;GATE introduction PPT and save it to /root/ppt/STEINS_GATE.pptx.",
     ["write powerpoint presentation file to path"]),
    ("Read the data under /root/excel/people_data.xlsx and tell me Sophia Moore's bmi.",
     ["read excel spreadsheet file from path"]),
    ("Analyse the audio file located at /root/music/alarm.wav. Then summarise it.", ["read audio file from path"]),
    ("Read the sales data from /root/excel/sales.xlsx, plot it by month and save it in /root/figs/sale.png",
     ["read excel spreadsheet file from path", "write png image file to path"]),
    ("Put the notes in ~/notes/", ["write file to path"]),
    ("Download the air quality report, saved at /root/csv/air.csv", ["write text file to path"]),
    ("Give me a comparison table in a markdown report in /root/markdown/compare.md.", ["write text file to path"]),
    ("Get line 10 of /root/txt/Android.txt, please note that this file is very large", ["read text file from path"]),
    ("What are the changes in my log files /root/txt/a.txt and /root/txt/b.txt?", ["read text file from path"]),
    ("Create a document with headings and insert clock.png under /root/picture, save it in /root/word/a.docx",
     ["read png image file from path", "write word document file to path"]),
])
def test_a_path_in_a_clause_is_a_need_to_read_or_write_that_kind_of_file(request_text: str, needs: list[str]) -> None:
    assert file_needs(request_text) == needs


@pytest.mark.parametrize("request_text", [
    "What is the weather in Paris tomorrow?",
    "Get deepwiki for vercel/ai and convert its structure to mindmap",  # a repository, not a path
    "Compare version 3.5/4 ratios, e.g. www.example.com",
])
def test_a_request_without_a_file_path_implies_no_file_need(request_text: str) -> None:
    assert file_needs(request_text) == []


def test_request_needs_are_the_clauses_then_the_file_needs_not_already_there() -> None:
    needs = request_needs("Find today's LeetCode challenge and save a walkthrough to /root/md/daily.md.")

    assert needs == ["Find today's LeetCode challenge", "save a walkthrough to /root/md/daily.md.",
                     "write text file to path"]


# --- the texts one request is searched with -----------------------------------------------------------
def test_a_plain_request_is_searched_whole_then_by_its_rule_based_needs() -> None:
    texts = planning_texts(StructuredQuery.from_text("Find the news and write it to /root/md/news.md"))

    assert texts == ["Find the news and write it to /root/md/news.md", "Find the news",
                     "write it to /root/md/news.md", "write text file to path"]


def test_a_rewritten_request_is_searched_whole_then_by_the_rewrites_tool_needs() -> None:
    sq = StructuredQuery(text="plan my trip", tool_needs=(
        ToolNeed("find trains", "search train tickets between two cities", "tickets"),
        ToolNeed("book a room", "", "listings"),
    ))

    assert planning_texts(sq) == ["plan my trip", "search train tickets between two cities", "book a room"]


def test_a_one_need_request_without_structure_is_searched_once() -> None:
    assert planning_texts(StructuredQuery.from_text("What time is it in Tokyo?")) == ["What time is it in Tokyo?"]


# --- tools by need and by server --------------------------------------------------------------------------
def _tool(doc_id: str, agent: str, score: float, rank: int) -> RankedTool:
    return RankedTool(doc_id, doc_id.split("/")[1], "tool", agent, score, first_stage_rank=rank)


def test_the_server_the_request_points_at_lifts_its_tools_over_a_slightly_better_lone_tool() -> None:
    steps = [[_tool("chart/bar", "agent:chart", 1.0, 1), _tool("ppt/create", "agent:ppt", 0.9, 2)],
             [_tool("ppt/save", "agent:ppt", 0.8, 1), _tool("chart/line", "agent:chart", 0.7, 2)]]
    agents = [RankedAgent("agent:ppt", "ppt", 1.0, 1), RankedAgent("agent:chart", "chart", 0.3, 2)]

    ranked = rank_tools_by_server(steps, agents, server_weight=0.4, top_k=4)

    assert [t.doc_id for t in ranked] == ["ppt/create", "ppt/save", "chart/bar", "chart/line"]
    assert ranked[0].contributions == {"need": 0.9, "server": pytest.approx(0.4)}
    assert ranked[0].score == pytest.approx(1.3)


def test_without_a_server_weight_tools_keep_their_best_score_over_the_needs() -> None:
    steps = [[_tool("a/x", "agent:a", 0.5, 1)], [_tool("a/x", "agent:a", 0.9, 1), _tool("b/y", "agent:b", 0.6, 2)]]

    ranked = rank_tools_by_server(steps, [RankedAgent("agent:b", "b", 1.0, 1)], server_weight=0.0, top_k=5)

    assert [(t.doc_id, t.score) for t in ranked] == [("a/x", 0.9), ("b/y", 0.6)]


def test_agent_documents_in_a_ranking_are_not_tools() -> None:
    steps = [[RankedTool("agent:a", "a", "agent", None, 1.0, first_stage_rank=1), _tool("a/x", "agent:a", 0.4, 2)]]

    assert [t.doc_id for t in rank_tools_by_server(steps, [], server_weight=0.4, top_k=5)] == ["a/x"]


@pytest.mark.parametrize(("weight", "top_k"), [(-0.1, 5), (0.4, 0)])
def test_a_negative_server_weight_or_an_empty_answer_is_refused(weight: float, top_k: int) -> None:
    with pytest.raises(BadQueryError):
        rank_tools_by_server([], [], server_weight=weight, top_k=top_k)


# --- prerequisites -----------------------------------------------------------------------------------------
def _needing(doc_id: str, score: float, *prerequisites: str) -> RankedTool:
    return RankedTool(doc_id, doc_id.split("/")[1], "tool", "agent:" + doc_id.split("/")[0], score,
                      prerequisites=prerequisites)


def test_the_best_tools_bring_their_prerequisites_right_after_them_with_their_score() -> None:
    tools = [_needing("maps/nearby", 1.2, "maps/geocode"), _needing("web/search", 0.8)]
    geocode = _needing("maps/geocode", 0.0)

    placed = place_prerequisites(tools, {"maps/geocode": geocode}, top=1, top_k=3)

    assert [t.doc_id for t in placed] == ["maps/nearby", "maps/geocode", "web/search"]
    assert placed[1].prerequisite_of == "maps/nearby"
    assert placed[1].score == 1.2 and placed[1].contributions == {"prerequisite": 1.2}


def test_a_prerequisite_further_down_moves_up_and_one_higher_up_stays() -> None:
    tools = [_needing("rail/date", 1.0), _needing("rail/tickets", 0.95, "rail/codes", "rail/date"),
             _needing("web/search", 0.8), _needing("rail/codes", 0.5)]
    known = {t.doc_id: t for t in tools}

    placed = place_prerequisites(tools, known, top=2, top_k=10)

    assert [t.doc_id for t in placed] == ["rail/date", "rail/tickets", "rail/codes", "web/search"]
    assert placed[0].prerequisite_of is None and placed[0].score == 1.0  # ranked above its tool: it stays


def test_only_the_top_tools_bring_prerequisites_and_the_answer_keeps_its_length() -> None:
    tools = [_needing("a/x", 1.0), _needing("b/y", 0.9, "b/z"), _needing("c/w", 0.8)]
    known = {"b/z": _needing("b/z", 0.0)}

    assert [t.doc_id for t in place_prerequisites(tools, known, top=1, top_k=3)] == ["a/x", "b/y", "c/w"]
    assert [t.doc_id for t in place_prerequisites(tools, known, top=2, top_k=3)] == ["a/x", "b/y", "b/z"]
    assert place_prerequisites(tools, {}, top=2, top_k=3) == tools  # an unknown (unseen) prerequisite is skipped


def test_a_negative_number_of_tools_bringing_prerequisites_is_refused() -> None:
    with pytest.raises(BadQueryError):
        place_prerequisites([], {}, top=-1, top_k=3)


# --- the whole-request measures ----------------------------------------------------------------------------
def test_tool_recall_is_by_name_on_any_server_and_agents_are_the_servers_of_the_top_tools() -> None:
    answers = {"t": [("write_file", "agent:desktop"), ("fetch", "agent:fetch"), ("write_file", "agent:fs"),
                     ("search", "agent:web"), ("other", "agent:x"), ("get_news", "agent:news")]}

    scores = score_answers(answers, {"t": ["write_file", "get_news"]}, {"t": {"agent:fs": 1, "agent:news": 1}}, ["t"])

    assert scores["tool_R@5"] == 0.5  # get_news is sixth
    assert scores["tool_R@10"] == 1.0
    assert scores["agent_R@5"] == 0.5  # servers at first appearance: desktop, fetch, fs, web, x
