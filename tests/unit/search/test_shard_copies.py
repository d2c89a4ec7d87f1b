"""Which shard copies a search reads: the same request the same copies, so it gets the same answer."""

from __future__ import annotations

from toolsift.query.structured import StructuredQuery
from toolsift.search.searcher import copies_for


def _sq(intent: str, **arguments: str) -> StructuredQuery:
    return StructuredQuery.from_dict({"tool_needs": [{"user_intent": intent}], "extracted_arguments": arguments})


def test_the_same_request_reads_the_same_copies_and_other_requests_spread() -> None:
    assert copies_for(_sq("send an email")) == copies_for(_sq("send an email"))
    assert copies_for(_sq("send an email")) != copies_for(_sq("send an email", to="bob"))
    assert len({copies_for(_sq(f"request {i}")) for i in range(50)}) == 50


def test_the_preference_is_a_plain_string_opensearch_takes_as_a_custom_key() -> None:
    preference = copies_for(_sq("weather in Paris"))

    assert preference.isalnum() and not preference.startswith("_")  # "_"-prefixed values are OpenSearch's own modes
