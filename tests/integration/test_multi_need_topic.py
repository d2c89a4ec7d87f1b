"""A request's topic must not bury the tool its action names (issue 31, finding 12), on a real node.

"search the web for recent news about electric cars": all-MiniLM-L6-v2 reads the sentence as being
about electric cars (cosine 0.46 with the EV-charging finder, 0.16 with DuckDuckGo's web search),
while the request's words single out the web search. Five real LiveMCPBench servers are ingested
into their own alias (deleted at the module's end).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.catalogs import benchmark_records, drop_alias, write_catalog
from toolsift.ingest.pipeline import ingest_catalog
from toolsift.search import Searcher
from toolsift.search.planner import LEXICAL_NEED
from toolsift.search.request import explanation

pytestmark = pytest.mark.integration

ALIAS = "toolsift-test-mcp-topic"
#: LiveMCPBench servers (positions in tools.json): Trends Hub, DuckDuckGo search, OpenStreetMap,
#: Yahoo Finance, Hacker News.
SERVERS = (11, 8, 12, 21, 34)
REQUEST = "search the web for recent news about electric cars"


def _drop(client: Any) -> None:
    drop_alias(client, ALIAS)
    client.indices.delete(index=f"{ALIAS}-approvals", ignore=404)


@pytest.fixture(scope="module")
def topic_index(client: Any, base_settings: Any, embedder: Any, datasets: Path,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    servers = benchmark_records(datasets, "livemcpbench")
    catalog = write_catalog(tmp_path_factory.mktemp("topic"), [servers[i] for i in SERVERS])
    settings = base_settings.with_overrides(index=ALIAS, query_log=False)
    _drop(client)
    report = ingest_catalog(client, settings, embedder, catalog)
    assert report.ok and report.agents == len(SERVERS)
    yield settings
    _drop(client)


def test_the_web_search_a_request_asks_for_is_not_buried_under_the_tools_its_topic_points_at(
    client: Any, embedder: Any, topic_index: Any
) -> None:
    searcher = Searcher(client, topic_index, embedder)

    result = searcher.search(REQUEST, top_k=5, retriever="hybrid")

    names = [t.name for t in result.tools]
    assert result.ranker.startswith("multi-need")
    assert "duckduckgo_web_search" in names[:3], names
    web = result.tools[names.index("duckduckgo_web_search")]
    # what ranked it is said: the request's words, not the whole request's meaning
    assert explanation(web)["need"]["text"] == LEXICAL_NEED
    assert LEXICAL_NEED in [step.text for step in result.steps]


def test_a_bm25_or_minilm_search_has_no_separate_need_for_the_requests_words(
    client: Any, embedder: Any, topic_index: Any
) -> None:
    searcher = Searcher(client, topic_index, embedder)

    for retriever in ("bm25", "minilm"):
        result = searcher.search(REQUEST, top_k=5, retriever=retriever)  # type: ignore[arg-type]
        assert [step.text for step in result.steps] == [REQUEST], retriever
