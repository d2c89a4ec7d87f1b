"""How the ranker service reads the request OpenSearch's pipeline forwards (``ext.ml_inference.toolsift``)."""

from __future__ import annotations

from typing import Any

import pytest

from toolsift.errors import BadQueryError
from toolsift.query.structured import StructuredQuery
from toolsift.search.native_stages import request_query, request_scope, template_params


class _Searcher:
    """Structures a plain text as a searcher with learned weights does: the text is also an argument."""

    def structure(self, text: str) -> StructuredQuery:
        return StructuredQuery.from_text(text, as_argument=True)


SEARCHER: Any = _Searcher()


def test_a_plain_text_is_structured_as_the_searcher_does() -> None:
    sq = request_query(SEARCHER, {"text": " book a room ", "tool_needs": []})
    assert sq == StructuredQuery.from_text("book a room", as_argument=True)


def test_a_structured_request_round_trips_through_the_template_params() -> None:
    sq = StructuredQuery.from_dict({"tool_needs": [{"user_intent": "a", "tool_description": "b",
                                                    "expected_response": ""}],
                                    "extracted_arguments": {"city": "where"}}, text="a in b")
    params = template_params(sq, tenant="acme", candidates=50)
    assert params["tenant"] == "acme" and params["candidates"] == 50
    assert request_query(SEARCHER, params) == sq


def test_text_with_arguments_keeps_the_given_arguments() -> None:
    sq = request_query(SEARCHER, {"text": "weather", "extracted_arguments": {"city": "Paris"}})
    assert dict(sq.extracted_arguments) == {"city": "Paris"}


@pytest.mark.parametrize(("request_", "message"), [
    ({}, "neither text nor tool_needs"),
    ({"text": 3}, "text must be a string"),
    ({"tool_needs": [{"user_intent": 5}]}, r"tool_needs\[0\].user_intent"),
    ({"text": "x", "extracted_arguments": ["a"]}, "extracted_arguments"),
])
def test_a_bad_request_names_its_field(request_: dict[str, Any], message: str) -> None:
    with pytest.raises(BadQueryError, match=message):
        request_query(SEARCHER, request_)


def test_the_scope_comes_from_tenant_agents_and_tags() -> None:
    scope = request_scope({"tenant": "acme", "agents": ["agent:x"], "tags": []})
    assert (scope.tenant, scope.agents, scope.tags) == ("acme", ("agent:x",), ())
    assert request_scope({"tenant": ""}).tenant is None
    with pytest.raises(BadQueryError, match="agents must be a list of strings"):
        request_scope({"agents": "agent:x"})
