"""Search through the ranker service on a real node: the same answer as in-process, and an answer
still when the service is gone.

The first 30 APIBank tools are ingested once for this module into an alias of its own. The ranking
pipeline is the fixed-weight base ranker plus a real (tiny, seeded) cross-encoder; the service is
that pipeline behind real HTTP (uvicorn on loopback, bearer token on).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.catalogs import benchmark_records, drop_alias, write_catalog
from toolsift.cli.main import cli
from toolsift.ingest.pipeline import ingest_catalog
from toolsift.ranker.fusion import FieldWeightRanker
from toolsift.ranker.ranking_pipeline import RankingPipeline
from toolsift.ranker.rerankers import CrossEncoderReranker
from toolsift.ranker.ranker_service import create_app
from toolsift.search import Searcher

pytestmark = pytest.mark.integration

ALIAS = "toolsift-test-ranker-service"
TOKEN = "integration-token"
#: Real APIBank queries whose labelled tools are among the 30 ingested.
QUERIES = (
    "Can you delete my alarm at 7:00 a.m. on March 16th?",
    "Hi, can you help me delete my account?",
    "Can you please modify my reminder to submit the proposal at 2 pm on March 25th?",
)


def _drop(client: Any) -> None:
    drop_alias(client, ALIAS)


@pytest.fixture(scope="module")
def settings(client: Any, base_settings: Any, embedder: Any, datasets: Path,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    tools = benchmark_records(datasets, "toolret/apibank")
    catalog = write_catalog(tmp_path_factory.mktemp("ranker-service") / "apibank", tools[:30])
    settings = base_settings.with_overrides(index=ALIAS)
    _drop(client)
    assert ingest_catalog(client, settings, embedder, catalog).tools == 30
    yield settings
    _drop(client)


@pytest.fixture(scope="module")
def pipeline(settings: Any, seeded_cross_encoder: Path) -> RankingPipeline:
    reranker = CrossEncoderReranker(seeded_cross_encoder, device="cpu")
    return RankingPipeline(FieldWeightRanker(settings.field_weights), reranker, rerank_top=10, fusion_weight=0.5)


@pytest.fixture()
def served(pipeline: RankingPipeline, serve_app: Callable[[Any], Any]) -> Any:
    return serve_app(create_app(pipeline, token=TOKEN, max_request_bytes=8_000_000, batch_wait_ms=2.0))


def _remote(client: Any, settings: Any, embedder: Any, url: str) -> Searcher:
    return Searcher(client, settings.with_overrides(ranker_url=url, ranker_token=TOKEN, ranker_timeout=30.0), embedder)


@pytest.mark.parametrize("retriever", ["bm25", "hybrid"])
def test_search_through_the_service_ranks_like_search_in_process(
    client: Any, settings: Any, embedder: Any, pipeline: RankingPipeline, served: Any, retriever: str
) -> None:
    local = Searcher(client, settings, embedder, ranking=pipeline)
    remote = _remote(client, settings, embedder, served.url)

    for query in QUERIES:
        here = local.search(query, top_k=8, retriever=retriever)  # type: ignore[arg-type]
        there = remote.search(query, top_k=8, retriever=retriever)  # type: ignore[arg-type]

        assert there.degraded is False and there.degraded_reason is None
        assert (there.ranker, there.reranker) == (here.ranker, here.reranker) == ("field-weights-v0",
                                                                                  pipeline.reranker.name)  # type: ignore[union-attr]
        assert [t.doc_id for t in there.tools] == [t.doc_id for t in here.tools]
        for a, b in zip(there.tools, here.tools):
            assert a.score == pytest.approx(b.score, abs=1e-5)
            assert a.reranker_score == pytest.approx(b.reranker_score, abs=1e-5)
            assert a.base_score == pytest.approx(b.base_score, abs=1e-9)
            assert dict(a.field_scores) == pytest.approx(dict(b.field_scores), abs=1e-9)
        assert sum(t.reranker_score is not None for t in there.tools) == min(8, len(there.tools))
        assert {"rank_base", "rank_rerank"} <= set(there.timings)
    remote.ranking.close()  # type: ignore[attr-defined]


def test_with_the_service_stopped_search_still_answers_marked_degraded(
    client: Any, settings: Any, embedder: Any, served: Any
) -> None:
    remote = _remote(client, settings, embedder, served.url)
    assert remote.search(QUERIES[0], top_k=5, retriever="bm25").degraded is False

    served.stop()
    result = remote.search(QUERIES[0], top_k=5, retriever="bm25")

    assert result.degraded is True
    assert "unreachable" in (result.degraded_reason or "")
    assert result.ranker == "first-stage" and result.reranker is None
    assert 1 <= len(result.tools) <= 5
    assert [t.first_stage_rank for t in result.tools] == list(range(1, len(result.tools) + 1))
    assert result.to_dict()["degraded"] is True
    remote.ranking.close()  # type: ignore[attr-defined]


def test_the_search_command_takes_a_ranker_url_and_says_when_it_degraded(
    settings: Any, served: Any, opensearch_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolsift.config import get_settings

    monkeypatch.setenv("TOOLSIFT_RANKER_TOKEN", TOKEN)
    get_settings.cache_clear()  # the CLI reads the environment once per process
    args = ["--opensearch-url", opensearch_url, "search", QUERIES[1], "--index", ALIAS, "--retriever", "bm25",
            "--no-rewrite", "--top-k", "3", "--ranker-url", served.url]
    ranked = CliRunner().invoke(cli, args, catch_exceptions=False)
    served.stop()
    degraded = CliRunner().invoke(cli, args, catch_exceptions=False)
    get_settings.cache_clear()

    assert ranked.exit_code == 0 and degraded.exit_code == 0, ranked.output + degraded.output
    assert "degraded:" not in ranked.output
    assert f"degraded: ranker service at {served.url} unreachable" in degraded.output
    assert "(first-stage order)" in degraded.output


def test_the_reranker_setting_reranks_the_top_m_with_each_candidates_text(
    client: Any, settings: Any, embedder: Any, seeded_cross_encoder: Path
) -> None:
    configured = settings.with_overrides(reranker=f"cross-encoder:{seeded_cross_encoder}", rerank_top=4,
                                         rerank_weight=0.5)
    searcher = Searcher(client, configured, embedder)
    sq = searcher.structure(QUERIES[0])
    signals = searcher.candidate_signals(sq, searcher.encode(sq, "minilm"), "minilm", 10, documents=True)
    assert signals and all(s.document.startswith("name: ") and "\ndescription: " in s.document for s in signals.values())

    result = searcher.search(QUERIES[0], top_k=6, retriever="minilm")

    assert result.reranker is not None and result.reranker.startswith("cross-encoder:")
    assert [t.reranker_score is not None for t in result.tools] == [True] * 4 + [False] * 2
    head = result.to_dict()["tools"][0]
    assert head["reranker_score"] is not None and head["base_score"] is not None
    assert "reranker" in head["contributions"]
