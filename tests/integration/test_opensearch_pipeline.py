"""toolsift's ranking inside OpenSearch's own search pipeline, on the real node with ml-commons.

The first 30 APIBank tools are ingested once into an alias of this module. ``toolsift serve ranker`` runs
as its own process (with a real, tiny, seeded cross-encoder as its reranker and a bearer token), and
``toolsift deploy opensearch`` installs the ml-commons remote models, the search pipeline and the stored
search template. A plain HTTP client then searches OpenSearch itself, as a search team's service would.

Needs the node with ml-commons (``make test`` starts it so: ``toolsift node start --ml-commons``); without
it these tests are skipped, and under CI that is a failure.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from toolsift.cli.main import cli
from toolsift.config import get_settings
from toolsift.errors import ConfigError, RankerUnavailableError
from toolsift.bench.failover import RankerProcess
from toolsift.ingest.pipeline import ingest_catalog
from toolsift.mappings.index import IndexManager
from toolsift.plugin_scripts.native import native_names, require_ml_commons
from toolsift.query.structured import StructuredQuery
from toolsift.ranker.ranker_service import build_pipeline, create_app
from toolsift.search import Searcher
from toolsift.search.native_stages import NativeStages, deploy_native, installed_models, remove_native, template_params

pytestmark = pytest.mark.integration

ALIAS = "toolsift-test-native-tools"
TOKEN = "native-integration-token"
#: Real APIBank requests whose labelled tools are among the 30 ingested.
QUERIES = (
    "Can you delete my alarm at 7:00 a.m. on March 16th?",
    "Hi, can you help me delete my account?",
    "Can you please modify my reminder to submit the proposal at 2 pm on March 25th?",
    "I need to check my upcoming meetings and then register a new account",
)
STRUCTURED = StructuredQuery.from_dict(
    {"tool_needs": [{"user_intent": "remove the alarm I set for tomorrow morning",
                     "tool_description": "delete an alarm at a given time",
                     "expected_response": "whether the alarm was deleted"},
                    {"user_intent": "sign me up", "tool_description": "register a new user account",
                     "expected_response": ""}],
     "extracted_arguments": {"time": "the alarm's time", "username": "the new account's name"}},
    text="remove my 7am alarm and sign me up",
)


def _drop(client: Any) -> None:
    remove_native(client, _settings_for_names())
    IndexManager(client, ALIAS).delete_all()
    for pipeline_id in client.search_pipeline.get(ignore=404):
        if pipeline_id.startswith(f"{ALIAS}-"):
            client.search_pipeline.delete(id=pipeline_id)


def _settings_for_names() -> Any:
    from toolsift.config import Settings

    return Settings(index=ALIAS)


@pytest.fixture(scope="module")
def settings(client: Any, base_settings: Any, embedder: Any, datasets: Path, seeded_cross_encoder: Path,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    try:
        require_ml_commons(client)
    except ConfigError as exc:
        pytest.skip(f"the node has no ml-commons ({exc})")
    tools = json.loads((datasets / "toolret" / "apibank" / "tools.json").read_text(encoding="utf-8"))
    folder = tmp_path_factory.mktemp("native") / "apibank"
    folder.mkdir()
    (folder / "tools.json").write_text(json.dumps(tools[:30], ensure_ascii=False), encoding="utf-8")
    settings = base_settings.with_overrides(index=ALIAS, reranker=f"cross-encoder:{seeded_cross_encoder}",
                                            rerank_top=10, rerank_weight=0.5, ranker_timeout=10.0)
    _drop(client)
    assert ingest_catalog(client, settings, embedder, folder / "tools.json").tools == 30
    yield settings
    _drop(client)


@pytest.fixture(scope="module")
def service(settings: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RankerProcess]:
    """``toolsift serve ranker`` as its own process, with the module's reranker and token."""
    process = RankerProcess(settings.with_overrides(ranker_token=TOKEN), tmp_path_factory.mktemp("ranker") / "log")
    process.start()
    try:
        process.wait_healthy(300)
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module")
def deployed(client: Any, settings: Any, service: RankerProcess) -> Any:
    return deploy_native(client, settings, ranker_url=service.url, token=TOKEN, timeout_s=10.0)


def _curl(opensearch_url: str, params: Mapping[str, Any], *, pipeline: str | None = "toolsift-test-native"
          ) -> list[dict[str, Any]]:
    """What a search team sends: the stored template, through the pipeline, with a plain HTTP client."""
    names = native_names(ALIAS)
    query = {"search_pipeline": pipeline} if pipeline else {}
    answer = httpx.post(f"{opensearch_url}/{ALIAS}/_search/template", params=query, timeout=60,
                        json={"id": names.template, "params": dict(params)})
    assert answer.status_code == 200, answer.text
    hits: list[dict[str, Any]] = answer.json()["hits"]["hits"]
    return hits


def _ids(hits: Sequence[Mapping[str, Any]], k: int = 10) -> list[str]:
    return [str(h["_id"]) for h in hits[:k]]


def test_deploy_names_the_pipeline_and_template_after_the_alias(deployed: Any) -> None:
    assert (deployed.pipeline, deployed.template) == ("toolsift-test-native", "toolsift-test-native-tools")
    assert deployed.checked
    assert any(c.startswith("search pipeline") for c in deployed.changed)


def test_opensearch_returns_toolsift_search_top_10_for_text_and_structured_requests(
    client: Any, settings: Any, embedder: Any, deployed: Any, opensearch_url: str
) -> None:
    searcher = Searcher(client, settings, embedder)
    for request in (*QUERIES, STRUCTURED):
        expected = searcher.search(request, top_k=10)
        hits = _curl(opensearch_url, template_params(request))
        assert _ids(hits) == [t.doc_id for t in expected.tools], request
        # each hit says where toolsift put it, and the reranker's fused score
        assert [h["_source"]["toolsift_rank"] for h in hits[:10]] == list(range(1, 11))
        assert [h["_source"]["toolsift_score"] for h in hits[:3]] == pytest.approx(
            [t.score for t in expected.tools[:3]], abs=1e-4)
    assert expected.reranker is not None  # the comparison included the cross-encoder on the top M


def test_deploying_again_changes_nothing(client: Any, settings: Any, service: RankerProcess, deployed: Any) -> None:
    again = deploy_native(client, settings, ranker_url=service.url, token=TOKEN, timeout_s=10.0)
    assert again.changed == ()
    assert again.models == deployed.models


def test_a_wrong_token_is_an_error_naming_it_and_the_pipeline_stays(
    client: Any, settings: Any, service: RankerProcess, deployed: Any
) -> None:
    with pytest.raises(RankerUnavailableError, match=r"refused the connector's credential \(the token\)"):
        deploy_native(client, settings, ranker_url=service.url, token="not-the-token", timeout_s=10.0)
    names = native_names(ALIAS)
    models = installed_models(client, names)
    assert (models.first_stage, models.ranking) == (deployed.models["first_stage"], deployed.models["ranking"])


class _SlowStages:
    """The real stages, answering only after ``delay`` seconds."""

    def __init__(self, inner: NativeStages, delay: float) -> None:
        self.inner, self.delay = inner, delay

    def first_stage(self, index: str, request: Mapping[str, Any]) -> dict[str, Any]:
        time.sleep(self.delay)
        return self.inner.first_stage(index, request)

    def rank_hits(self, index: str, ids: Sequence[str], request: Mapping[str, Any]) -> dict[str, Any]:
        time.sleep(self.delay)
        return self.inner.rank_hits(index, ids, request)


def test_a_slow_or_stopped_ranker_leaves_the_first_stage_order(
    client: Any, settings: Any, embedder: Any, opensearch_url: str, serve_app: Callable[[Any], Any], deployed: Any
) -> None:
    """ignore_failure on toolsift's processors: the template's own (BM25) first stage, in its order."""
    stages = NativeStages(settings.with_overrides(reranker=None), lambda: client, embedder)
    slow = serve_app(create_app(build_pipeline(settings.with_overrides(reranker=None)), token=TOKEN,
                                max_request_bytes=8_000_000, batch_wait_ms=1.0, stages=_SlowStages(stages, 30.0)))
    try:
        deploy_native(client, settings, ranker_url=slow.url, token=TOKEN, timeout_s=1.0, check=False)
        first_stage = _ids(_curl(opensearch_url, {"text": QUERIES[0]}, pipeline=None))
        started = time.monotonic()
        hits = _curl(opensearch_url, {"text": QUERIES[0]})
        assert time.monotonic() - started < 15  # answered at the connectors' 1 s timeout, not the service's 30 s
        assert _ids(hits) == first_stage
        assert "toolsift_rank" not in hits[0]["_source"]

        slow.stop()  # now nothing listens there at all
        hits = _curl(opensearch_url, {"text": QUERIES[0]})
        assert _ids(hits) == first_stage
        with pytest.raises(RankerUnavailableError, match="could not reach the ranker service"):
            deploy_native(client, settings, ranker_url=slow.url, token=TOKEN, timeout_s=1.0)
    finally:
        deploy_native(client, settings, ranker_url=deployed.ranker_url, token=TOKEN, timeout_s=10.0)


@pytest.fixture()
def fresh_cli_settings() -> Iterator[None]:
    """The CLI builds its settings from the environment once per process: these tests set it."""
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.mark.usefixtures("fresh_cli_settings")
def test_the_cli_checks_and_removes_the_deployment(client: Any, settings: Any, service: RankerProcess,
                                                   deployed: Any, opensearch_url: str) -> None:
    env = {"TOOLSIFT_OPENSEARCH_URL": opensearch_url, "TOOLSIFT_INDEX": ALIAS, "TOOLSIFT_RANKER_TOKEN": TOKEN}
    runner = CliRunner()
    checked = runner.invoke(cli, ["deploy", "opensearch", "--ranker-url", service.url, "--check"], env=env)
    assert checked.exit_code == 0, checked.output
    assert "come back ranked by" in checked.output
    removed = runner.invoke(cli, ["deploy", "opensearch", "--remove", "--json"], env=env)
    assert removed.exit_code == 0, removed.output
    gone = json.loads(removed.output)["removed"]
    assert "search pipeline toolsift-test-native" in gone and "search template toolsift-test-native-tools" in gone
    assert "toolsift-test-native" not in client.search_pipeline.get(ignore=404)
    redeployed = runner.invoke(cli, ["deploy", "opensearch", "--ranker-url", service.url, "--timeout", "10"], env=env)
    assert redeployed.exit_code == 0, redeployed.output


@pytest.mark.usefixtures("fresh_cli_settings")
def test_bench_opensearch_measures_equivalence_and_added_latency(
    settings: Any, datasets: Path, opensearch_url: str, tmp_path: Path
) -> None:
    out = tmp_path / "bench.json"
    env = {"TOOLSIFT_OPENSEARCH_URL": opensearch_url}
    result = CliRunner().invoke(cli, ["bench", "opensearch", str(datasets / "toolret" / "apibank"),
                                      "--max-queries", "8", "--json", str(out)], env=env)
    assert result.exit_code == 0, result.output
    figures = json.loads(out.read_text())
    row = figures["datasets"][0]
    assert row["n_queries"] == 8 and row["identical_top10"] == 8
    assert figures["equivalent"] and row["ndcg@10_difference"] == 0.0
    assert set(row["latency_ms"]) == {"toolsift", "plain", "opensearch"} and row["added_ms"]["n"] == 8
