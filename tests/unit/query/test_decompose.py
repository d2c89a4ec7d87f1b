"""Rule-based decomposition: a request into tool needs without an LLM (``--decompose``, the eval's own row)."""

from __future__ import annotations

import pytest

from toolsift.errors import BadQueryError
from toolsift.query.decompose import decompose, split_needs


def test_sentences_are_needs() -> None:
    assert split_needs("Run a full reconnaissance on www.baidu.com. Give me a markdown report with whois data.") == [
        "Run a full reconnaissance on www.baidu.com.", "Give me a markdown report with whois data."]


def test_and_before_an_action_verb_starts_a_new_need_but_and_between_nouns_does_not() -> None:
    assert split_needs("Generate a deep report of bitcoin and save it in /root/markdown/bitcoin.md") == [
        "Generate a deep report of bitcoin", "save it in /root/markdown/bitcoin.md"]
    assert split_needs("Find the prices of apples and pears in Paris") == ["Find the prices of apples and pears in Paris"]


def test_then_splits_and_a_connective_opening_a_sentence_is_dropped() -> None:
    assert split_needs("Find the trending repositories. Then, draft an intro for the top one in /root/a.md.") == [
        "Find the trending repositories.", "draft an intro for the top one in /root/a.md."]
    assert split_needs("Recommend dishes for a potluck and then tell me what ingredients I need") == [
        "Recommend dishes for a potluck", "tell me what ingredients I need"]


def test_abbreviations_file_names_and_urls_keep_their_dots() -> None:
    assert split_needs("Find Mr. Lu's resume at https://a.github.io/x.html") == ["Find Mr. Lu's resume at https://a.github.io/x.html"]


def test_short_fragments_join_the_need_before_them_and_the_count_is_capped() -> None:
    assert split_needs("Get the weather in Paris, tell me.") == ["Get the weather in Paris tell me."]
    many = " ".join(f"Get item number {i}." for i in range(8))
    needs = split_needs(many, max_needs=3)
    assert len(needs) == 3
    assert needs[-1].startswith("Get item number 2.") and needs[-1].endswith("Get item number 7.")


def test_a_request_with_one_need_stays_whole() -> None:
    assert split_needs("Show me today's trending topics in gaming.") == ["Show me today's trending topics in gaming."]


def test_decompose_gives_one_tool_need_per_fragment_and_keeps_the_request() -> None:
    sq = decompose("  Read the data in /root/a.xlsx   and plot it by month ")

    assert [n.user_intent for n in sq.tool_needs] == ["Read the data in /root/a.xlsx", "plot it by month"]
    assert all(n.tool_description == n.user_intent == n.expected_response for n in sq.tool_needs)
    assert sq.text == "Read the data in /root/a.xlsx   and plot it by month"  # the request, stripped


def test_an_empty_request_is_a_bad_query() -> None:
    with pytest.raises(BadQueryError):
        decompose("   ")
