"""LLM standardisation + Tool-DE expansion: schemas, checks, required flags, and the judge/refine flow.

No network: a :class:`~tests.fakes.ScriptedLLM` answers each task from its script, and the cache is a
dict behind a patched ``toolsift.llm.cached_output``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import ScriptedLLM
from toolsift.errors import CatalogRecordError, LLMOutputError, LLMUnavailableError
from toolsift.ingest import load_catalog, normalise_tool
from toolsift.ingest.raw_records import RawAgent, RawTool, RejectedRecord
from toolsift.standardise.tasks import EXPAND_SCHEMA, JUDGE_SCHEMA, STANDARDIZE_SCHEMA
from toolsift.standardise.standardiser import LLMStandardiser
from toolsift.standardise.answers import Profile, parse_profile, parse_standardised, parse_verdict
from toolsift.standardise.required import settle_required
from toolsift.standardise.catalog import standardised_records, write_standardised
from toolsift.llm.cache import standardize_subject

MODEL = "test-model"

#: APIBank's GetUserToken as ToolRet documents it, and the MFTR paper's standardisation of it.
RAW_DOC: dict[str, Any] = {
    "parameters": [
        {"name": "username", "in": "query", "schema": {"type": "str", "default": None},
         "description": "The username of the user."},
        {"name": "password", "in": "query", "schema": {"type": "str", "default": None},
         "description": "The password of the user."},
    ],
    "description": "\"Get user token API that takes two parameters - 'username' and 'password'.\"",
    "responses": {"token": {"type": "str", "description": "The token generated upon successful authentication."}},
    "name": "GetUserToken",
}
PAPER_AUGMENTED: dict[str, Any] = {
    "description": "Authenticate a user by verifying their username and password, and generate a secure token.",
    "parameters": {
        "username": {"type": "string", "description": "The username of the user.", "required": True,
                     "example": "john_doe"},
        "password": {"type": "string", "description": "The password of the user.", "required": True,
                     "example": "P@ssw0rd123"},
    },
    "response": "A string token that proves the user is authenticated.",
    "examples": [
        {"user_intent": "I want to log in as Alice to get my access token.",
         "tool_call": {"name": "GetUserToken", "arguments": {"username": "Alice", "password": "x"}}},
    ],
}
PROFILE = {
    "function": "Returns an authentication token for a username and password.",
    "tags": ["authentication", "token", "login"],
    "when_to_use": "When a user needs a token to access protected resources.",
    "limitations": "",
}
PASS = {"faithful": True, "failing_fields": [], "feedback": ""}


def raw_tool(documentation: Mapping[str, Any] = RAW_DOC, **kwargs: Any) -> RawTool:
    return RawTool("test/catalog", "record 0", documentation, kwargs.pop("tool_id", "t0"), None, **kwargs)


def scripted(script: dict[str, list[Any]]) -> ScriptedLLM:
    return ScriptedLLM(script, model=MODEL)


def standardiser(llm: ScriptedLLM | None) -> LLMStandardiser:
    return LLMStandardiser(llm, object(), MODEL)  # type: ignore[arg-type]


# --- the standardize answer ----------------------------------------------------------------------------


def test_the_papers_augmented_object_is_a_valid_standardize_answer() -> None:
    doc = parse_standardised(PAPER_AUGMENTED)

    assert doc["description"] == PAPER_AUGMENTED["description"]
    assert doc["parameters"]["username"] == PAPER_AUGMENTED["parameters"]["username"]
    assert doc["examples"][0]["user_intent"].startswith("I want to log in")
    assert doc["examples"][0]["tool_call"]["name"] == "GetUserToken"


def test_empty_response_and_examples_are_left_out_so_the_raw_documentation_fills_them() -> None:
    doc = parse_standardised({"description": "Adds numbers.", "parameters": {}, "response": " ", "examples": []})

    assert doc == {"description": "Adds numbers.", "parameters": {}}
    assert normalise_tool(raw_tool(standardized=doc)).response.startswith("token (str)")


def test_a_parameter_without_a_required_flag_is_required() -> None:
    doc = parse_standardised({"description": "d", "parameters": {"q": {"type": "string", "description": "x"}}})

    assert doc["parameters"]["q"]["required"] is True


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ({"description": "  "}, "description must not be empty"),
        ({"description": "d", "parameters": ["q"]}, "parameters must be an object"),
        ({"description": "d", "parameters": {"q": {"required": "yes"}}}, "required must be true or false"),
        ({"description": "d", "parameters": {"q": "text"}}, "parameters.q must be an object"),
        ({"description": "d", "examples": [{"tool_call": {}}]}, "user_intent must be a string"),
        ({"description": "d", "response": {"token": "str"}}, "response must be a string"),
        ([PAPER_AUGMENTED], "must be a JSON object"),
    ],
)
def test_a_malformed_standardize_answer_is_rejected_with_the_field(answer: Any, reason: str) -> None:
    with pytest.raises(LLMOutputError, match=reason):
        parse_standardised(answer)


# --- the expand and judge answers ----------------------------------------------------------------------


def test_a_profile_keeps_three_to_five_lowercase_distinct_tags() -> None:
    profile = parse_profile({**PROFILE, "tags": ["Auth", "auth", "Token", "Login"]})

    assert profile.tags == ("auth", "token", "login")
    assert profile.limitations == ""
    assert profile.present() == ("function", "tags", "when_to_use")


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"function": " ".join(["word"] * 20)}, "20 words"),
        ({"function": ""}, "function must not be empty"),
        ({"tags": ["a", "b"]}, "3 to 5 distinct tags"),
        ({"tags": ["a", "b", "c", "d", "e", "f"]}, "3 to 5 distinct tags"),
        ({"tags": ["a", "A", "b"]}, "3 to 5 distinct tags"),
        ({"tags": ["a", "b", "x" * 61]}, "longer than 60"),
        ({"tags": "a, b, c"}, "tags must be a list"),
        ({"when_to_use": ["x"]}, "when_to_use must be a string"),
    ],
)
def test_a_profile_breaking_tool_de_limits_is_rejected(change: dict[str, Any], reason: str) -> None:
    with pytest.raises(LLMOutputError, match=reason):
        parse_profile({**PROFILE, **change})


def test_a_function_of_nineteen_words_is_accepted() -> None:
    assert parse_profile({**PROFILE, "function": " ".join(["word"] * 19)}).function.count("word") == 19


def test_a_verdict_must_be_consistent_with_its_failing_fields() -> None:
    profile = parse_profile(PROFILE)
    parse = parse_verdict(profile)

    assert parse(PASS).faithful
    failing = parse({"faithful": False, "failing_fields": ["tags", "limitations"], "feedback": "tags invent geo"})
    assert failing.failing_fields == ("tags",)  # limitations is empty in this profile: nothing to fail
    with pytest.raises(LLMOutputError, match="faithful is true"):
        parse({"faithful": True, "failing_fields": ["tags"], "feedback": ""})
    with pytest.raises(LLMOutputError, match="names none of the profile's fields"):
        parse({"faithful": False, "failing_fields": ["limitations"], "feedback": "?"})
    with pytest.raises(LLMOutputError, match="unknown field"):
        parse({"faithful": False, "failing_fields": ["colour"], "feedback": ""})


# --- JSON schemas (validated by the LLM layer with jsonschema) -----------------------------------------


def test_the_schemas_are_valid_and_accept_what_the_parsers_accept() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    for schema in (STANDARDIZE_SCHEMA, EXPAND_SCHEMA, JUDGE_SCHEMA):
        jsonschema.Draft202012Validator.check_schema(schema)

    jsonschema.validate(PAPER_AUGMENTED, STANDARDIZE_SCHEMA)
    jsonschema.validate(PROFILE, EXPAND_SCHEMA)
    jsonschema.validate({"faithful": False, "failing_fields": ["tags"], "feedback": "x"}, JUDGE_SCHEMA)


@pytest.mark.parametrize(
    ("answer", "schema"),
    [
        ({**PAPER_AUGMENTED, "function": "extra key"}, STANDARDIZE_SCHEMA),
        ({k: v for k, v in PAPER_AUGMENTED.items() if k != "response"}, STANDARDIZE_SCHEMA),
        ({**PROFILE, "tags": ["a", "b"]}, EXPAND_SCHEMA),
        ({k: v for k, v in PROFILE.items() if k != "limitations"}, EXPAND_SCHEMA),
        ({"faithful": False, "failing_fields": ["colour"], "feedback": ""}, JUDGE_SCHEMA),
    ],
)
def test_the_schemas_reject_answers_outside_the_task(answer: Any, schema: Mapping[str, Any]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(answer, schema)


# --- which parameters are required ---------------------------------------------------------------------


def _flags(documentation: Mapping[str, Any], llm_flags: dict[str, bool]) -> dict[str, bool]:
    doc = parse_standardised(
        {"description": "d", "parameters": {n: {"type": "string", "description": "", "required": r}
                                            for n, r in llm_flags.items()}}
    )
    settled = settle_required(doc, raw_tool(documentation))
    return {name: spec["required"] for name, spec in settled["parameters"].items()}


def _param(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": {"type": "str", "default": None}, "description": description}


def test_an_llm_optional_without_support_in_the_documentation_is_flipped_to_required() -> None:
    # APIBank ModifyHotelBooking: nothing says the new_* fields are optional (MFTR §3.2's rule).
    documentation = {"name": "ModifyHotelBooking", "parameters": [
        _param("order_number", "The order number"), _param("new_room_count", "The new number of rooms")]}

    assert _flags(documentation, {"order_number": True, "new_room_count": False}) == {
        "order_number": True, "new_room_count": True}


def test_a_parameter_whose_own_description_says_if_any_stays_optional() -> None:
    # APIBank SendMessage: "The attachment of the message (if any)."
    documentation = {"name": "SendMessage", "parameters": [
        _param("recipient", "The recipient."), _param("attachment", "The attachment of the message (if any).")]}

    assert _flags(documentation, {"recipient": False, "attachment": False}) == {
        "recipient": True, "attachment": False}


def test_a_sentence_naming_the_parameter_as_optional_keeps_it_optional() -> None:
    # APIBank OnlineCourseSearch: "takes three optional parameters - 'keyword', 'lecturer', and 'type'".
    documentation = {
        "name": "OnlineCourseSearch",
        "description": "Search API that takes three optional parameters - 'keyword', 'lecturer', and 'type'. "
        "The 'keyword' parameter refers to the topic.",
        "parameters": [_param("keyword", "The topic."), _param("lecturer", "The instructor."),
                       _param("level", "The level.")],
    }

    assert _flags(documentation, {"keyword": False, "lecturer": False, "level": False}) == {
        "keyword": False, "lecturer": False, "level": True}


def test_a_json_schema_optional_parameter_is_optional_even_when_the_llm_says_required() -> None:
    documentation = {"name": "search", "inputSchema": {
        "type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["q"]}}

    assert _flags(documentation, {"q": True, "limit": True}) == {"q": True, "limit": False}


def test_a_parameter_the_documentation_does_not_have_is_required() -> None:
    assert _flags({"name": "t", "description": "No parameters documented."}, {"invented": False}) == {"invented": True}


def test_an_optional_key_set_to_false_is_not_read_as_the_word_optional() -> None:
    documentation = {"name": "t", "parameters": [{"name": "q", "optional": False, "description": "Query."}]}

    assert _flags(documentation, {"q": False}) == {"q": True}


# --- the standardiser: cache, LLM, judge and one regeneration ------------------------------------------


def test_without_an_llm_or_a_cached_answer_there_is_no_standardisation(cache: dict[Any, Any]) -> None:
    s = standardiser(None)

    assert s.standardise(raw_tool()) is None
    with pytest.raises(LLMUnavailableError, match="llm_base_url") as caught:
        s.require(raw_tool())
    assert "test/catalog record 0" in str(caught.value) and MODEL in str(caught.value)


def test_without_an_llm_a_cached_standardisation_is_used_without_a_profile(cache: dict[Any, Any]) -> None:
    cache[("standardize", MODEL, standardize_subject(RAW_DOC))] = PAPER_AUGMENTED

    outcome = standardiser(None).run(raw_tool())

    assert outcome.source == "cache"
    assert outcome.expansion == "absent"
    assert outcome.doc == parse_standardised(PAPER_AUGMENTED)


def test_a_cached_profile_without_a_cached_verdict_is_never_used(cache: dict[Any, Any]) -> None:
    subject = standardize_subject(RAW_DOC)
    cache[("standardize", MODEL, subject)] = PAPER_AUGMENTED
    cache[("expand", MODEL, subject)] = PROFILE

    outcome = standardiser(None).run(raw_tool())

    assert outcome.expansion == "absent"
    assert "function" not in outcome.doc  # type: ignore[operator]


def test_the_llm_standardises_expands_and_judges_once_when_the_profile_passes(cache: dict[Any, Any]) -> None:
    llm = scripted({"standardize": [PAPER_AUGMENTED], "expand": [PROFILE], "judge": [PASS]})

    outcome = standardiser(llm).run(raw_tool())

    assert llm.tasks() == ["standardize", "expand", "judge"]
    assert (outcome.source, outcome.expansion) == ("llm", "accepted")
    assert outcome.doc is not None
    assert outcome.doc["function"] == PROFILE["function"]
    assert outcome.doc["tags"] == PROFILE["tags"]
    assert outcome.doc["when_to_use"] == PROFILE["when_to_use"]
    assert "limitations" not in outcome.doc  # unsupported: left out, never invented
    subject = standardize_subject(RAW_DOC)
    assert [c.subject for c in llm.calls[:2]] == [subject, subject]
    assert llm.calls[2].subject.startswith(f"{subject}:judge:")
    documentation = json.loads(llm.calls[0].data["documentation"])
    assert documentation == RAW_DOC  # the raw documentation goes in a data section, as data
    assert json.loads(llm.calls[2].data["tool_profile"])["function"] == PROFILE["function"]


def test_a_failing_profile_is_regenerated_exactly_once_with_the_judges_feedback(cache: dict[Any, Any]) -> None:
    bad = {**PROFILE, "limitations": "Limited to 100 requests per hour."}
    llm = scripted({
        "standardize": [PAPER_AUGMENTED],
        "expand": [bad, PROFILE],
        "judge": [{"faithful": False, "failing_fields": ["limitations"],
                   "feedback": "The documentation states no rate limit."}, PASS],
    })

    outcome = standardiser(llm).run(raw_tool())

    assert llm.tasks() == ["standardize", "expand", "judge", "expand", "judge"]
    regeneration = llm.calls[3]
    assert "no rate limit" in regeneration.data["review"]
    assert json.loads(regeneration.data["rejected_profile"])["limitations"].startswith("Limited")
    assert regeneration.subject != llm.calls[1].subject
    assert outcome.expansion == "regenerated"
    assert outcome.doc is not None and "limitations" not in outcome.doc
    assert outcome.doc["function"] == PROFILE["function"]


def test_fields_failing_after_the_regeneration_are_dropped_and_the_mftr_fields_kept(cache: dict[Any, Any]) -> None:
    fail_tags = {"faithful": False, "failing_fields": ["tags"], "feedback": "tags mention weather"}
    llm = scripted({
        "standardize": [PAPER_AUGMENTED],
        "expand": [{**PROFILE, "tags": ["weather", "token", "login"]}, {**PROFILE, "tags": ["weather", "a", "b"]}],
        "judge": [fail_tags, fail_tags],
    })

    outcome = standardiser(llm).run(raw_tool())

    assert llm.tasks() == ["standardize", "expand", "judge", "expand", "judge"]  # never a second regeneration
    assert outcome.expansion == "partial"
    assert outcome.dropped_fields == ("tags",)
    assert outcome.doc is not None
    assert "tags" not in outcome.doc
    assert outcome.doc["function"] == PROFILE["function"]
    assert outcome.doc["description"] == PAPER_AUGMENTED["description"]


def test_an_expansion_the_llm_cannot_produce_drops_the_profile_only(cache: dict[Any, Any]) -> None:
    llm = scripted({"standardize": [PAPER_AUGMENTED], "expand": [LLMOutputError("not JSON after 3 attempts")]})

    outcome = standardiser(llm).run(raw_tool())

    assert outcome.expansion == "dropped"
    assert outcome.doc == parse_standardised(PAPER_AUGMENTED)
    assert "not JSON" in outcome.notes[0]


def test_a_standardize_answer_that_stays_invalid_rejects_the_record_and_is_not_asked_again(
    cache: dict[Any, Any],
) -> None:
    llm = scripted({"standardize": [LLMOutputError("invalid after 3 attempts")]})
    s = standardiser(llm)

    with pytest.raises(CatalogRecordError) as caught:
        s.require(raw_tool())
    assert caught.value.field == "standardized"
    with pytest.raises(CatalogRecordError):
        s.require(raw_tool())  # the ingest's second pass
    assert llm.tasks() == ["standardize"]


def test_an_unreachable_llm_is_an_error_not_a_fallback(cache: dict[Any, Any]) -> None:
    llm = scripted({"standardize": [LLMUnavailableError("cannot reach http://127.0.0.1:9/v1 (llm_base_url)")]})

    with pytest.raises(LLMUnavailableError):
        standardiser(llm).require(raw_tool())


def test_a_cached_standardisation_is_not_asked_of_the_llm(cache: dict[Any, Any]) -> None:
    cache[("standardize", MODEL, standardize_subject(RAW_DOC))] = PAPER_AUGMENTED
    llm = scripted({"expand": [PROFILE], "judge": [PASS]})

    outcome = standardiser(llm).run(raw_tool())

    assert llm.tasks() == ["expand", "judge"]
    assert (outcome.source, outcome.expansion) == ("cache", "accepted")


def test_a_cached_answer_that_fails_the_check_counts_as_a_miss(cache: dict[Any, Any]) -> None:
    cache[("standardize", MODEL, standardize_subject(RAW_DOC))] = {"description": ""}

    assert standardiser(None).standardise(raw_tool()) is None


def test_the_llms_required_flags_are_settled_against_the_documentation(cache: dict[Any, Any]) -> None:
    answer = copy.deepcopy(PAPER_AUGMENTED)
    answer["parameters"]["password"]["required"] = False
    llm = scripted({"standardize": [answer], "expand": [PROFILE], "judge": [PASS]})

    doc = standardiser(llm).require(raw_tool())

    assert doc["parameters"]["password"]["required"] is True


# --- the record stream ---------------------------------------------------------------------------------


def test_standardised_records_set_each_tools_standardised_document() -> None:
    agent = RawAgent("s", "record 0", "agent:a", "A", "", {})
    given = raw_tool(tool_id="given", standardized={"description": "kept"})
    rejected = RejectedRecord("s", "record 3", "not an object")

    def standardise(raw: RawTool) -> Mapping[str, Any] | None:
        if raw.tool_id == "bad":
            raise CatalogRecordError(raw.source, raw.position, "LLM gave up", record_id="bad", field="standardized")
        return None if raw.tool_id == "none" else {"description": f"std {raw.tool_id}"}

    out = list(standardised_records(
        [agent, raw_tool(tool_id="t1"), given, raw_tool(tool_id="none"), rejected, raw_tool(tool_id="bad")],
        standardise,
    ))

    assert out[0] is agent
    assert isinstance(out[1], RawTool) and out[1].standardized == {"description": "std t1"}
    assert out[2] is given
    assert isinstance(out[3], RawTool) and out[3].standardized is None
    assert out[4] is rejected
    assert isinstance(out[5], RejectedRecord)
    assert (out[5].record_id, out[5].field, out[5].reason) == ("bad", "standardized", "LLM gave up")


# --- the standardised-tools file ------------------------------------------------------------------------


def _catalog(tmp_path: Path, docs: list[dict[str, Any]]) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"id": f"tool_{i}", "documentation": d, "type": "web"} for i, d in enumerate(docs)]))
    return path


def test_the_standardised_file_is_mftrs_format_and_ingests_back(cache: dict[Any, Any], tmp_path: Path) -> None:
    docs = [RAW_DOC, {"name": "Clock", "description": "Current time."}]
    llm = scripted({
        "standardize": [PAPER_AUGMENTED, {"description": "Tells the time.", "parameters": {}, "response": "",
                                          "examples": []}],
        "expand": [PROFILE, {**PROFILE, "function": "Tells the current time."}],
        "judge": [PASS, PASS],
    })
    out = tmp_path / "out" / "standardized.json"

    report = write_standardised(_catalog(tmp_path, docs), out, standardiser(llm))

    assert report.ok and report.tools == 2
    assert report.expansions == {"accepted": 2}
    written = json.loads(out.read_text())
    assert [r["id"] for r in written] == ["tool_0", "tool_1"]
    assert set(written[0]) == {"id", "type", "augmented", "origin_documentation"}
    assert written[0]["origin_documentation"] == RAW_DOC
    assert written[0]["augmented"]["description"] == PAPER_AUGMENTED["description"]
    reloaded = [r for r in load_catalog(out) if isinstance(r, RawTool)]
    tool = normalise_tool(reloaded[1])
    assert (tool.description, tool.function, tool.response) == ("Tells the time.", "Tells the current time.", "")


def test_limit_standardises_only_the_first_tools(cache: dict[Any, Any], tmp_path: Path) -> None:
    cache[("standardize", MODEL, standardize_subject(RAW_DOC))] = PAPER_AUGMENTED
    out = tmp_path / "std.json"

    report = write_standardised(_catalog(tmp_path, [RAW_DOC, {"name": "Other"}]), out, standardiser(None), limit=1)

    assert report.tools == 1
    assert report.sources == {"cache": 1}
    assert len(json.loads(out.read_text())) == 1


def test_a_tool_neither_cached_nor_answerable_stops_the_file_and_writes_nothing(
    cache: dict[Any, Any], tmp_path: Path
) -> None:
    cache[("standardize", MODEL, standardize_subject(RAW_DOC))] = PAPER_AUGMENTED
    out = tmp_path / "std.json"

    with pytest.raises(LLMUnavailableError):
        write_standardised(_catalog(tmp_path, [RAW_DOC, {"name": "Other"}]), out, standardiser(None))

    assert list(tmp_path.iterdir()) == [tmp_path / "tools.json"]


def test_records_normalisation_rejects_are_reported_and_left_out(cache: dict[Any, Any], tmp_path: Path) -> None:
    nameless = {"description": "  ", "parameters": []}  # no text at all: nothing to name or search
    cache[("standardize", MODEL, standardize_subject(RAW_DOC))] = PAPER_AUGMENTED
    cache[("standardize", MODEL, standardize_subject(nameless))] = {"description": "Nameless.", "parameters": {}}
    out = tmp_path / "std.json"

    report = write_standardised(_catalog(tmp_path, [nameless, RAW_DOC]), out, standardiser(None))

    assert not report.ok
    assert [e.record_id for e in report.rejected] == ["tool_0"]
    assert [r["id"] for r in json.loads(out.read_text())] == ["tool_1"]


def test_profile_round_trips_through_its_dict() -> None:
    profile = Profile("f", ("a", "b", "c"), "w", "")
    assert parse_profile(profile.to_dict()) == profile
