"""StructuredQuery: the rewrite format (MFTR §3.3) and the plain-text fallback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolsift.errors import BadQueryError
from toolsift.query.structured import MAX_QUERY_CHARS, NEED_FIELD_FOR, StructuredQuery, ToolNeed


def _need(ui: str = "book a table", td: str = "reserve a restaurant", er: str = "a booking id") -> dict[str, str]:
    return {"user_intent": ui, "tool_description": td, "expected_response": er}


# --- from_text -------------------------------------------------------------------------------------


def test_from_text_makes_one_need_whose_three_texts_are_the_request() -> None:
    sq = StructuredQuery.from_text("  What's the weather in Paris?  ")

    assert sq.tool_needs == (
        ToolNeed("What's the weather in Paris?", "What's the weather in Paris?", "What's the weather in Paris?"),
    )
    assert sq.text == "What's the weather in Paris?"
    assert dict(sq.extracted_arguments) == {}
    assert sq.argument_texts() == []


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_from_text_rejects_an_empty_query(text: str) -> None:
    with pytest.raises(BadQueryError, match="empty"):
        StructuredQuery.from_text(text)


def test_from_text_rejects_a_query_over_the_length_limit() -> None:
    with pytest.raises(BadQueryError, match=str(MAX_QUERY_CHARS)):
        StructuredQuery.from_text("x" * (MAX_QUERY_CHARS + 1))


def test_from_text_accepts_a_query_exactly_at_the_length_limit() -> None:
    assert StructuredQuery.from_text("x" * MAX_QUERY_CHARS).text == "x" * MAX_QUERY_CHARS


def test_from_text_rejects_a_non_string() -> None:
    with pytest.raises(BadQueryError, match="must be a string, got int"):
        StructuredQuery.from_text(42)  # type: ignore[arg-type]


def test_a_structured_query_without_needs_cannot_be_built() -> None:
    with pytest.raises(BadQueryError, match="at least one tool need"):
        StructuredQuery(tool_needs=())


# --- each need field is matched with the document field it mirrors -------------------------------------


def test_need_texts_are_aligned_with_the_document_fields_they_mirror() -> None:
    need = ToolNeed(user_intent="UI", tool_description="TD", expected_response="ER")

    assert need.text_for("description") == "TD"
    assert need.text_for("response") == "ER"
    assert need.text_for("examples") == "UI"
    assert set(NEED_FIELD_FOR) == {"description", "response", "examples"}


# --- from_dict with the real file format ---------------------------------------------------------------


def test_from_dict_reads_entries_of_the_real_rewrite_file(datasets: Path) -> None:
    path = datasets / "mftr" / "apibank" / "rewritten_queries.gpt-4o-mini.json"
    if not path.exists():
        pytest.skip(f"{path} not found")
    entries = list(json.loads(path.read_text(encoding="utf-8")).items())[:2]
    assert len(entries) == 2

    for query_id, raw in entries:
        sq = StructuredQuery.from_dict(raw, text=query_id)

        assert sq.text == query_id
        assert len(sq.tool_needs) == len(raw["tool_needs"])
        for need, raw_need in zip(sq.tool_needs, raw["tool_needs"]):
            assert need.user_intent == raw_need["user_intent"].strip()
            assert need.tool_description == raw_need["tool_description"].strip()
            assert need.expected_response == raw_need["expected_response"].strip()
        assert dict(sq.extracted_arguments) == {
            k.strip(): v.strip() for k, v in raw["extracted_arguments"].items()
        }
        assert sq.argument_texts() == [f"{k}: {v}" for k, v in sq.extracted_arguments.items()]
        # to_dict gives the file format back.
        assert StructuredQuery.from_dict(sq.to_dict(), text=query_id) == sq


def test_from_dict_parses_several_needs_and_arguments_in_order() -> None:
    sq = StructuredQuery.from_dict(
        {
            "tool_needs": [_need("a", "b", "c"), _need("d", "e", "f")],
            "extracted_arguments": {"city": "the city", "date": "the day"},
        },
        text="weather then calendar",
    )

    assert sq.tool_needs == (ToolNeed("a", "b", "c"), ToolNeed("d", "e", "f"))
    assert list(sq.extracted_arguments.items()) == [("city", "the city"), ("date", "the day")]
    assert sq.text == "weather then calendar"


def test_from_dict_treats_missing_or_null_arguments_as_none() -> None:
    assert dict(StructuredQuery.from_dict({"tool_needs": [_need()]}).extracted_arguments) == {}
    assert dict(StructuredQuery.from_dict({"tool_needs": [_need()], "extracted_arguments": None}).extracted_arguments) == {}


def test_from_dict_fills_a_missing_need_text_with_empty_string() -> None:
    sq = StructuredQuery.from_dict({"tool_needs": [{"user_intent": "send an email"}]})

    assert sq.tool_needs == (ToolNeed("send an email", "", ""),)


def test_an_argument_with_a_null_description_is_kept_by_name() -> None:
    sq = StructuredQuery.from_dict({"tool_needs": [_need()], "extracted_arguments": {"city": None}})

    assert dict(sq.extracted_arguments) == {"city": ""}
    assert sq.argument_texts() == ["city"]


# --- from_dict: every problem is a BadQueryError naming the field ------------------------------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "'tool_needs' must be a non-empty list"),
        ({"tool_needs": []}, "'tool_needs' must be a non-empty list"),
        ({"tool_needs": "find a tool"}, "'tool_needs' must be a non-empty list"),
        ({"tool_needs": ["find a tool"]}, r"tool_needs\[0\] must be an object"),
        ({"tool_needs": [_need(), {"user_intent": "", "tool_description": "  "}]}, r"tool_needs\[1\] has no text"),
        ({"tool_needs": [_need(ui=5)]}, r"tool_needs\[0\]\.user_intent must be a string, got int"),  # type: ignore[arg-type]
        ({"tool_needs": [_need(er=["a"])]}, r"tool_needs\[0\]\.expected_response must be a string, got list"),  # type: ignore[arg-type]
        (
            {"tool_needs": [_need(td="x" * (MAX_QUERY_CHARS + 1))]},
            rf"tool_needs\[0\]\.tool_description is {MAX_QUERY_CHARS + 1} characters",
        ),
        ({"tool_needs": [_need()], "extracted_arguments": ["city"]}, "'extracted_arguments' must be an object"),
        ({"tool_needs": [_need()], "extracted_arguments": "city"}, "'extracted_arguments' must be an object"),
        ({"tool_needs": [_need()], "extracted_arguments": {"city": 3}}, r"extracted_arguments\.city must be a string"),
        ({"tool_needs": [_need()], "extracted_arguments": {1: "x"}}, "extracted_arguments key must be a string"),
    ],
)
def test_from_dict_rejects_malformed_input_naming_the_field(data: dict[str, Any], message: str) -> None:
    with pytest.raises(BadQueryError, match=message):
        StructuredQuery.from_dict(data)


def test_from_dict_rejects_a_non_object() -> None:
    with pytest.raises(BadQueryError, match="must be a JSON object"):
        StructuredQuery.from_dict(["tool_needs"])  # type: ignore[arg-type]


# --- argument_texts / all_texts -------------------------------------------------------------------------


def test_argument_texts_are_name_colon_description() -> None:
    sq = StructuredQuery.from_dict(
        {"tool_needs": [_need()], "extracted_arguments": {"city": "the city", "units": ""}}
    )

    assert sq.argument_texts() == ["city: the city", "units"]


def test_all_texts_of_the_text_fallback_is_the_request_once() -> None:
    assert StructuredQuery.from_text("weather in Paris").all_texts() == ["weather in Paris"]


def test_all_texts_lists_each_distinct_text_once_in_first_seen_order() -> None:
    sq = StructuredQuery.from_dict(
        {
            "tool_needs": [
                _need(ui="book", td="reserve", er="id"),
                _need(ui="book", td="cancel", er=""),  # "book" repeats; empty text is left out
            ],
            "extracted_arguments": {"date": "the day", "city": ""},
        },
        text="reserve",  # same as a need text: not repeated
    )

    # Per need, in NEED_FIELD_FOR order (description, response, examples), then arguments, then text.
    assert sq.all_texts() == ["reserve", "id", "book", "cancel", "date: the day", "city"]


# --- with_instruction -------------------------------------------------------------------------------------


def test_an_instruction_becomes_one_more_need_matched_on_description_and_examples_only() -> None:
    sq = StructuredQuery.from_dict({"tool_needs": [_need()], "extracted_arguments": {"city": "the city"}}, text="q")

    with_it = sq.with_instruction("  Given a weather task, retrieve forecast tools.  ")

    assert with_it.tool_needs[:-1] == sq.tool_needs and with_it.extracted_arguments == sq.extracted_arguments
    added = with_it.tool_needs[-1]
    assert added.text_for("description") == added.text_for("examples") == "Given a weather task, retrieve forecast tools."
    assert added.text_for("response") == ""


def test_an_empty_instruction_changes_nothing_and_a_huge_one_is_refused() -> None:
    sq = StructuredQuery.from_text("weather in Paris")

    assert sq.with_instruction("   ") is sq
    with pytest.raises(BadQueryError, match="instruction is"):
        sq.with_instruction("x" * 100_000)
