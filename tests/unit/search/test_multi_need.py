"""Multi-need search without an LLM: the needs a request's files imply, the texts one request is
searched with, and tools ranked by their need and their server."""

from __future__ import annotations

import pytest

from toolsift.errors import BadQueryError
from toolsift.evaluation.request_eval import score_answers
from toolsift.query.decompose import file_needs, request_needs
from toolsift.query.structured import StructuredQuery, ToolNeed
from toolsift.agents.aggregation import place_prerequisites, rank_tools_by_server
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


def test_a_negative_server_weight_is_refused() -> None:
    """(``top_k`` is the request's, validated once by :class:`~toolsift.search.request.SearchRequest`.)"""
    with pytest.raises(BadQueryError):
        rank_tools_by_server([], [], server_weight=-0.1, top_k=5)


# --- the words of the whole request ------------------------------------------------------------------------
def test_the_requests_words_are_one_more_need_so_its_topic_cannot_bury_the_tool_its_action_names() -> None:
    from toolsift.search.planner import LEXICAL_NEED, LEXICAL_WEIGHT, PlannerParams, lexical_need, rank_planned
    from toolsift.search.request import StepRanking

    # "search the web for recent news about electric cars": the hybrid ranking reads its topic (the EV
    # finder first, the web search below two other searches); BM25 over the same documents ranks the
    # web search first (the demo index's scores, rounded).
    request = "search the web for recent news about electric cars"
    hybrid = StepRanking(request, (_tool("osm/find_ev", "agent:osm", 0.84, 1), _tool("yahoo/search", "agent:yahoo", 0.55, 2),
                                   _tool("hn/search", "agent:hn", 0.5, 3), _tool("ddg/web_search", "agent:ddg", 0.25, 4)),
                         (RankedAgent("agent:osm", "osm", 0.84, 1), RankedAgent("agent:yahoo", "yahoo", 0.55, 2),
                          RankedAgent("agent:hn", "hn", 0.5, 3), RankedAgent("agent:ddg", "ddg", 0.25, 4)))
    bm25 = StepRanking(request, (_tool("ddg/web_search", "agent:ddg", 1.0, 1), _tool("hn/search", "agent:hn", 0.6, 2),
                                 _tool("osm/find_ev", "agent:osm", 0.2, 3)),
                       (RankedAgent("agent:ddg", "ddg", 1.0, 1), RankedAgent("agent:hn", "hn", 0.6, 2)))
    params = PlannerParams(0.4, 0)

    def plan(*rankings: StepRanking) -> tuple[list[RankedTool], list[RankedAgent]]:
        return rank_planned(rankings, top_k=3, params=params, identities=lambda ids: {})

    words = lexical_need(bm25, 1.0)  # as planned_rankings keeps it: on [0, 1], weighed by λ when ranked
    tools, agents = plan(hybrid, words)

    assert "ddg/web_search" not in [t.doc_id for t in plan(hybrid)[0]]  # by meaning alone: buried
    assert words.text == LEXICAL_NEED and not words.agents  # the words rank tools, not servers
    assert [a.agent_id for a in agents] == [a.agent_id for a in plan(hybrid)[1]]
    assert [t.doc_id for t in tools] == ["osm/find_ev", "ddg/web_search", "yahoo/search"]
    web = tools[1]
    assert web.contributions == {"need": pytest.approx(LEXICAL_WEIGHT), "server": pytest.approx(0.4 * 0.25)}
    assert web.via_need == LEXICAL_NEED  # what ranked it is said
    assert tools[0].via_need == request


def test_lambda_weighs_the_requests_words_and_zero_leaves_them_out() -> None:
    from toolsift.search.planner import LEXICAL_NEED, PlannerParams, lexical_need, rank_planned
    from toolsift.search.request import StepRanking

    meaning = StepRanking("add two numbers", (_tool("calc/add", "agent:calc", 0.8, 1),), ())
    words = lexical_need(StepRanking("add two numbers", (_tool("plus/squared_plus", "agent:plus", 1.0, 1),
                                                         _tool("calc/add", "agent:calc", 0.3, 2)), ()), 1.0)

    def ranked(lexical_weight: float) -> list[tuple[str, float]]:
        tools, _ = rank_planned((meaning, words), top_k=5, params=PlannerParams(0.0, 0, lexical_weight),
                                identities=lambda ids: {})
        return [(t.doc_id, round(t.score, 3)) for t in tools]

    assert ranked(0.9) == [("plus/squared_plus", 0.9), ("calc/add", 0.8)]  # the words' coincidence wins
    assert ranked(0.5) == [("calc/add", 0.8), ("plus/squared_plus", 0.5)]
    assert ranked(0.0) == [("calc/add", 0.8)]  # no words' need at all
    assert words.text == LEXICAL_NEED


@pytest.mark.parametrize("bad", [-0.1, 2.5, True, "0.5"])
def test_a_lexical_weight_outside_zero_to_two_is_refused_by_name(bad: object) -> None:
    from toolsift.search.planner import PlannerParams

    with pytest.raises(BadQueryError, match="lexical_weight"):
        PlannerParams(0.4, 1, bad)  # type: ignore[arg-type]


def test_lambda_comes_from_the_settings_and_a_weights_artifact_and_round_trips() -> None:
    from toolsift.config import Settings
    from toolsift.search.planner import PlannerParams

    params = PlannerParams.from_settings(Settings(lexical_weight=0.3))
    assert params.lexical_weight == 0.3
    assert PlannerParams.from_dict({"lexical_weight": 0}, params) == PlannerParams(params.server_weight,
                                                                                  params.prerequisite_tools, 0.0)
    assert PlannerParams.from_dict(params.to_dict()) == params
    assert "words x 0.3" in params.describe()


# --- prerequisites -----------------------------------------------------------------------------------------
def _needing(doc_id: str, score: float, *prerequisites: str) -> RankedTool:
    return RankedTool(doc_id, doc_id.split("/")[1], "tool", "agent:" + doc_id.split("/")[0], score,
                      prerequisites=prerequisites)


def _holds_the_prerequisite_rule(placed: list[RankedTool]) -> None:
    """Scores never rise down the list, and a prerequisite scores strictly below the tool that needs it."""
    scores = [t.score for t in placed]
    assert scores == sorted(scores, reverse=True)
    by_id = {t.doc_id: t for t in placed}
    for tool in placed:
        if tool.prerequisite_of is not None:
            assert tool.score < by_id[tool.prerequisite_of].score


def test_the_best_tools_bring_their_prerequisites_right_after_them_scored_below_them() -> None:
    tools = [_needing("maps/nearby", 1.2, "maps/geocode"), _needing("web/search", 0.8)]
    geocode = _needing("maps/geocode", 0.0)

    placed = place_prerequisites(tools, {"maps/geocode": geocode}, top=1, top_k=3)

    assert [t.doc_id for t in placed] == ["maps/nearby", "maps/geocode", "web/search"]
    assert placed[1].prerequisite_of == "maps/nearby"
    assert 0.8 < placed[1].score < 1.2  # between the tool that needs it and the next tool
    assert placed[1].contributions == {"prerequisite": placed[1].score}
    _holds_the_prerequisite_rule(placed)


def test_a_prerequisite_never_ties_its_tool_even_last_or_among_equal_scores() -> None:
    two = [_needing("maps/nearby", 1.0, "maps/geocode", "maps/meet"), _needing("web/search", 1.0),
           _needing("news/bbc", 0.5)]
    known = {"maps/geocode": _needing("maps/geocode", 0.0), "maps/meet": _needing("maps/meet", 0.0)}

    placed = place_prerequisites(two, known, top=1, top_k=5)

    # a tool scoring the same as the one that needs them stays above the prerequisites
    assert [t.doc_id for t in placed] == ["maps/nearby", "web/search", "maps/geocode", "maps/meet", "news/bbc"]
    _holds_the_prerequisite_rule(placed)
    assert len({t.score for t in placed}) == 4  # only the two tools scored 1.0 by the ranking tie

    alone = place_prerequisites([_needing("maps/nearby", 1.0, "maps/geocode")], known, top=1, top_k=5)
    assert [t.doc_id for t in alone] == ["maps/nearby", "maps/geocode"]
    _holds_the_prerequisite_rule(alone)


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


# --- what an answer says about each tool ------------------------------------------------------------------
def test_a_multi_need_table_shows_each_tools_need_and_server_terms_and_whose_prerequisite_it_is() -> None:
    from toolsift.cli.search import render_result
    from toolsift.search import SearchResult

    request = "find EV charging stations near the Louvre"
    near = RankedTool("maps/find_ev", "find_ev", "tool", "agent:maps", 1.2, contributions={"need": 0.86, "server": 0.34},
                      via_need=request, prerequisites=("maps/geocode",))
    geocode = RankedTool("maps/geocode", "geocode", "tool", "agent:maps", 1.0, contributions={"prerequisite": 1.0},
                         prerequisite_of="maps/find_ev")
    other = RankedTool("web/search", "search", "tool", "agent:web", 0.8, contributions={"need": 0.6, "server": 0.2},
                       via_need="near the Louvre")
    result = SearchResult(query=StructuredQuery.from_text(request), method="multi-field", retriever="hybrid",
                          level="tool", tools=(near, geocode, other), ranker="multi-need")

    rows = render_result(result).splitlines()[-3:]

    assert "need 0.86 (the whole request) + server 0.34" in rows[0]
    assert "prerequisite of find_ev" in rows[1]
    assert "need 0.60 ('near the Louvre') + server 0.20" in rows[2]
    assert not any("desc=" in row for row in rows)


# --- the multi-need ranking's own parameters ---------------------------------------------------------------
def test_planner_parameters_come_from_a_weights_artifact_tuned_for_them_else_from_the_settings() -> None:
    from toolsift.config import Settings
    from toolsift.ranker.artifact import WeightsArtifact
    from toolsift.ranker.mftr import MFTRWeights
    from toolsift.search.planner import PlannerParams
    from toolsift.search.searcher import planner_params

    weights = MFTRWeights.from_field_weights({"description": 1.0}, ("bm25",))
    settings = Settings(server_weight=0.7, prerequisite_tools=2)
    tuned = WeightsArtifact(weights=weights, config={"planner": {"server_weight": 0.1, "prerequisite_tools": 0}})

    assert planner_params(None, settings) == PlannerParams(0.7, 2)
    assert planner_params(WeightsArtifact(weights=weights, config={}), settings) == PlannerParams(0.7, 2)
    assert planner_params(tuned, settings) == PlannerParams(0.1, 0)


@pytest.mark.parametrize(("data", "named"), [
    ({"server_weight": -0.1}, "server_weight"), ({"server_weight": "high"}, "server_weight"),
    ({"prerequisite_tools": 1.5}, "prerequisite_tools"), ({"prerequisite_tools": 101}, "prerequisite_tools"),
    ({"beta": 0.3}, "beta"),
])
def test_a_bad_planner_parameter_is_refused_naming_it(data: dict[str, object], named: str) -> None:
    from toolsift.search.planner import PlannerParams

    with pytest.raises(BadQueryError, match=named):
        PlannerParams.from_dict(data)
