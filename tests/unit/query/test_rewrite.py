"""Tool-aware query rewriting (MFTR §3.3): cache first, then the LLM with BM25 context, else the text.

No network: a fake OpenSearch client answers the context search, a :class:`~tests.fakes.ScriptedLLM`
the rewrite, and the cache is a dict behind a patched ``toolsift.llm.cached_output``.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.fakes import ScriptedLLM
from toolsift.config import Settings
from toolsift.errors import BadQueryError, LLMOutputError
from toolsift.opensearch import cap_terms
from toolsift.query.rewrite import (
    REWRITE_SCHEMA,
    ContextTool,
    QueryRewriter,
    RewriteContext,
    parse_rewrite,
)

pytestmark = pytest.mark.usefixtures("clean_env")

MODEL = "gpt-4o-mini"
REQUEST = "Can you tell me about the historical events of April 21st?"
#: The MFTR paper's GPT-4o-mini rewrite format (shared/datasets/mftr/*/rewritten_queries.*.json).
PAPER_REWRITE: dict[str, Any] = {
    "tool_needs": [{
        "user_intent": "I want to know what happened on April 21st in history.",
        "tool_description": "Query historical events that occurred on a specified date.",
        "expected_response": "A list of historical events for the given date.",
    }],
    "extracted_arguments": {"date": "The calendar date whose historical events are requested."},
}
HITS = [
    {"_id": "apibank_tool_33", "_source": {
        "name": "QueryHistoryToday",
        "description": "Query the history of a specified date.",
        "parameters": [{"name": "date", "type": "str", "description": "The date.", "required": True}],
        "response": "A list of historical events.",
        "examples": [{"text": "What happened today in history?"}],
    }},
    {"_id": "apibank_tool_2", "_source": {"name": "Calendar", "description": "Add an event to the calendar."}},
]


@dataclass
class FakeClient:
    hits: list[dict[str, Any]]
    bodies: list[dict[str, Any]] = field(default_factory=list)
    indices: list[str] = field(default_factory=list)

    def search(self, *, index: str, body: dict[str, Any]) -> dict[str, Any]:
        self.indices.append(index)
        self.bodies.append(body)
        return {"hits": {"hits": copy.deepcopy(self.hits[: body["size"]])}}


def llm_answering(answers: list[Any]) -> ScriptedLLM:
    return ScriptedLLM(answers, model=MODEL)


def rewriter(
    llm: ScriptedLLM | None, client: FakeClient | None = None, **settings: Any
) -> QueryRewriter:
    return QueryRewriter(
        client or FakeClient(HITS),  # type: ignore[arg-type]
        Settings(index="tools", **settings),
        llm,  # type: ignore[arg-type]
        object(),  # type: ignore[arg-type]
    )


# --- the answer format ---------------------------------------------------------------------------------


def test_the_papers_rewrite_parses_with_the_request_as_text() -> None:
    query = parse_rewrite(PAPER_REWRITE, REQUEST)

    assert query.text == REQUEST
    assert query.tool_needs[0].tool_description.startswith("Query historical events")
    assert dict(query.extracted_arguments) == PAPER_REWRITE["extracted_arguments"]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ({"tool_needs": [], "extracted_arguments": {}}, "non-empty list"),
        ({"tool_needs": [PAPER_REWRITE["tool_needs"][0]] * 6, "extracted_arguments": {}}, "at most 5"),
        ({"tool_needs": [{"user_intent": "", "tool_description": ""}]}, "has no text"),
        ({"tool_needs": PAPER_REWRITE["tool_needs"], "extracted_arguments": ["date"]}, "extracted_arguments"),
        ([PAPER_REWRITE], "JSON object"),
    ],
)
def test_an_answer_outside_the_rewrite_format_is_rejected(answer: Any, reason: str) -> None:
    with pytest.raises(BadQueryError, match=reason):
        parse_rewrite(answer, REQUEST)


def test_the_schema_accepts_the_papers_rewrites_and_bounds_the_needs() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(REWRITE_SCHEMA)

    jsonschema.validate(PAPER_REWRITE, REWRITE_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**PAPER_REWRITE, "tool_needs": PAPER_REWRITE["tool_needs"] * 6}, REWRITE_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**PAPER_REWRITE, "extracted_arguments": {"date": 21}}, REWRITE_SCHEMA)


# --- the order: cache, LLM, fallback -------------------------------------------------------------------


def test_a_cached_rewrite_is_used_without_the_llm_or_the_index(cache: dict[Any, Any]) -> None:
    cache[("rewrite", MODEL, REQUEST)] = PAPER_REWRITE
    client = FakeClient(HITS)
    llm = llm_answering([])

    rewrite = rewriter(llm, client).rewrite(REQUEST)

    assert rewrite.source == "cache"
    assert rewrite.query == parse_rewrite(PAPER_REWRITE, REQUEST)
    assert client.bodies == [] and llm.calls == []


def test_the_cache_is_keyed_by_the_configured_model(cache: dict[Any, Any]) -> None:
    cache[("rewrite", MODEL, REQUEST)] = PAPER_REWRITE

    assert rewriter(None, llm_model="another-model").rewrite(REQUEST).source == "fallback"


def test_without_an_llm_an_unknown_request_falls_back_to_one_need(cache: dict[Any, Any]) -> None:
    client = FakeClient(HITS)

    rewrite = rewriter(None, client).rewrite(f"  {REQUEST} ")

    assert rewrite.source == "fallback"
    need = rewrite.query.tool_needs[0]
    assert (need.user_intent, need.tool_description, need.expected_response) == (REQUEST,) * 3
    assert rewrite.query.extracted_arguments == {}
    assert client.bodies == []


def test_an_invalid_cached_rewrite_counts_as_a_miss(cache: dict[Any, Any]) -> None:
    cache[("rewrite", MODEL, REQUEST)] = {"tool_needs": []}

    assert rewriter(None).rewrite(REQUEST).source == "fallback"


def test_an_empty_request_is_rejected_before_any_call(cache: dict[Any, Any]) -> None:
    llm = llm_answering([])
    with pytest.raises(BadQueryError):
        rewriter(llm).rewrite("   ")
    assert llm.calls == []


def test_the_llm_rewrites_with_the_bm25_context_in_data_sections(cache: dict[Any, Any]) -> None:
    client = FakeClient(HITS)
    llm = llm_answering([PAPER_REWRITE])

    rewrite = rewriter(llm, client, rewrite_context=20).rewrite(REQUEST)

    assert rewrite.source == "llm"
    assert rewrite.query == parse_rewrite(PAPER_REWRITE, REQUEST)
    (call,) = llm.calls
    assert (call.task, call.subject) == ("rewrite", REQUEST)
    data = call.data
    assert data["request"] == REQUEST
    assert data["candidate_tools"].splitlines() == [
        "1. QueryHistoryToday: Query the history of a specified date.",
        "2. Calendar: Add an event to the calendar.",
    ]
    example = json.loads(data["example_tool_document"])
    assert example == {
        "description": "Query the history of a specified date.",
        "parameters": [{"name": "date", "type": "str", "description": "The date.", "required": True}],
        "response": "A list of historical events.",
        "examples": ["What happened today in history?"],
    }
    assert REQUEST not in call.instructions  # the request is data, never instructions


def test_the_context_is_the_bm25_top_k_unflagged_tools_by_description(cache: dict[Any, Any]) -> None:
    client = FakeClient(HITS)

    context = rewriter(None, client, rewrite_context=7).context(REQUEST)

    (body,) = client.bodies
    assert client.indices == ["tools"]
    assert body["size"] == 7
    assert body["query"]["bool"]["must"] == [{"match": {"description": REQUEST}}]
    # a tool the ingest screen flagged never reaches the prompt
    assert body["query"]["bool"]["filter"] == [{"term": {"entity": "tool"}},
                                               {"bool": {"must_not": [{"term": {"risk": "flagged"}}]}}]
    assert context.tools[0] == ContextTool("apibank_tool_33", "QueryHistoryToday", "Query the history of a specified date.")


def test_a_pasted_document_is_capped_in_the_context_query(cache: dict[Any, Any]) -> None:
    client = FakeClient(HITS)
    long_request = " ".join(f"word{i}" for i in range(5000))

    rewriter(None, client).context(long_request)

    assert client.bodies[0]["query"]["bool"]["must"][0]["match"]["description"] == cap_terms(long_request)


def test_a_context_of_zero_tools_searches_nothing(cache: dict[Any, Any]) -> None:
    client = FakeClient(HITS)
    llm = llm_answering([PAPER_REWRITE])

    rewriter(llm, client, rewrite_context=0).rewrite(REQUEST)

    assert client.bodies == []
    assert llm.calls[0].data["candidate_tools"] == "(none)"
    assert llm.calls[0].data["example_tool_document"] == "(none)"


def test_an_llm_that_keeps_answering_badly_is_an_error(cache: dict[Any, Any]) -> None:
    with pytest.raises(LLMOutputError):
        rewriter(llm_answering([LLMOutputError("invalid rewrite after 3 attempts")])).rewrite(REQUEST)


def test_a_check_rejects_an_llm_answer_outside_the_format(cache: dict[Any, Any]) -> None:
    # A blank need passes the schema, not the rewrite's check: the client sends it back for another try,
    # and an LLM that keeps answering it is an LLMOutputError naming the check's reason.
    blank = {"tool_needs": [dict.fromkeys(PAPER_REWRITE["tool_needs"][0], " ")], "extracted_arguments": {}}
    llm = llm_answering([blank, PAPER_REWRITE])

    assert rewriter(llm).rewrite(REQUEST).query == parse_rewrite(PAPER_REWRITE, REQUEST)
    assert llm.calls[0].attempts == 2
    with pytest.raises(LLMOutputError, match="has no text"):
        rewriter(llm_answering([blank] * 3)).rewrite(REQUEST)


def test_context_sections_say_none_when_nothing_matched() -> None:
    sections = RewriteContext((), None).data_sections(REQUEST)

    assert sections == {"request": REQUEST, "candidate_tools": "(none)", "example_tool_document": "(none)"}
