"""The search backend's request record: what a front end may ask, and what it may not."""

from __future__ import annotations

from typing import Any

import pytest

from toolsift.errors import BadQueryError
from toolsift.query.structured import StructuredQuery
from toolsift.records import RankedTool
from toolsift.search import SearchRequest, SearchResponse, SearchResult


@pytest.mark.parametrize(("fields", "message"), [
    ({}, "no query text, structured query or steps"),
    ({"query": "   "}, "no query text"),
    ({"steps": ("read a pdf", "  ")}, "a step is empty"),
    ({"steps": ("read a pdf",), "decompose": True, "query": "x"}, "steps give the tool needs themselves"),
    ({"decompose": True, "structured": StructuredQuery.from_text("x")}, "decompose splits the query text"),
    ({"query": "x", "top_k": 0}, "top_k must be between 1 and 1000"),
    ({"query": "x", "top_k": 1001}, "top_k must be between 1 and 1000"),
    ({"query": "x", "level": "everything"}, "unknown level"),
    ({"query": "x", "method": "semantic"}, "unknown method"),
    ({"query": "x", "retriever": "splade"}, "unknown retriever"),
    ({"query": "x", "merge": "sum"}, "unknown merge rule"),
    ({"query": "x", "agents": ("agent:a", " ")}, r"filters.agents: a value is empty"),
    ({"query": "x", "tags": ("",)}, r"filters.tags: a value is empty"),
    ({"query": "x", "tags": tuple(f"t{i}" for i in range(101))}, r"filters.tags: at most 100"),
    ({"query": "x", "agents": ("agent:a",), "level": "agent"}, "does not take them"),
    ({"query": "x", "tags": ("weather",), "level": "set"}, "does not take them"),
])
def test_a_request_that_cannot_be_answered_is_a_bad_query_naming_why(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(BadQueryError, match=message):
        SearchRequest(**fields)


def test_steps_and_agent_ids_are_cleaned_and_deduplicated() -> None:
    request = SearchRequest(steps=("  read   a pdf ", "find a recipe"), agents=(" agent:a", "agent:a", "agent:b"))

    assert request.steps == ("read a pdf", "find a recipe")
    assert request.agents == ("agent:a", "agent:b")


def test_the_request_names_only_the_settings_it_chooses() -> None:
    assert SearchRequest(query="x", index="other", reranker="tool-rank:smollm2").overrides() == {
        "index": "other", "retriever": None, "weights": None, "ranker_url": None, "reranker": "tool-rank:smollm2",
        "multi_need": None, "risky_tools": None, "copies": None}


def test_flagged_tools_are_excluded_only_when_the_request_or_the_setting_says_so() -> None:
    assert SearchRequest(query="x", risky="exclude").overrides()["risky_tools"] == "exclude"
    with pytest.raises(BadQueryError, match="unknown risky 'hide'; use flag or exclude"):
        SearchRequest(query="x", risky="hide")  # type: ignore[arg-type]


def test_copies_are_collapsed_or_kept_as_the_request_or_the_setting_says() -> None:
    assert SearchRequest(query="x", copies="all").overrides()["copies"] == "all"
    with pytest.raises(BadQueryError, match="unknown copies 'some'; use once or all"):
        SearchRequest(query="x", copies="some")  # type: ignore[arg-type]


def test_without_explain_the_answer_keeps_identity_and_scores_but_not_the_field_evidence() -> None:
    tool = RankedTool(doc_id="t1", name="read_pdf", entity="tool", agent_id="agent:pdf", score=0.9,
                      field_scores={"description": 1.0}, contributions={"description": 0.9},
                      raw_scores={"bm25": {"description": 12.0}}, missing_required=("path",))
    result = SearchResult(query=StructuredQuery.from_text("read a pdf"), method="multi-field", retriever="bm25",
                          level="tool", tools=(tool,))

    explained = SearchResponse(SearchRequest(query="read a pdf"), "off", result=result).to_dict()["tools"][0]
    plain = SearchResponse(SearchRequest(query="read a pdf", explain=False), "off", result=result).to_dict()["tools"][0]

    assert explained["contributions"] == {"description": 0.9} and explained["raw_scores"]
    assert set(explained) - set(plain) == {"field_scores", "contributions", "raw_scores", "explanation"}
    assert plain["id"] == "t1" and plain["score"] == 0.9 and plain["missing_required_parameters"] == ["path"]
