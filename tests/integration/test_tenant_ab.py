"""A/B per tenant: a share of one tenant's searches is ranked by candidate weights, the rest and every
other tenant rank as before; the report compares the arms on the feedback; promote and roll back by command.

Agents search APIBank's tools through the search service (the API's own object, in-process), so
every answer is logged under its request id with the weights it ranked with.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolsift.access import Principal
from toolsift.api.search_service import ToolSearchService
from toolsift.search.request import SearchRequest
from toolsift.cli.main import cli
from toolsift.errors import ConfigError, NotFoundError
from toolsift.evaluation.runner import ensure_eval_index
from toolsift.ingest.benchmarks import load_benchmark
from toolsift.mappings.index import IndexManager
from toolsift.ranker.artifact import WeightsArtifact
from toolsift.learning.experiments import arm_for, experiments, promote, rollback, start_experiment
from toolsift.ranker.mftr import MFTRWeights
from toolsift.records import kinds_for
from toolsift.learning.ab_report import ab_report
from toolsift.learning.feedback import ToolOutcome

pytestmark = pytest.mark.integration

ALIAS = "toolsift-test-ab"
ACME, OTHER = Principal("acme-agent", "acme", "search"), Principal("other-agent", "other", "search")


def _candidate(tmp: Path, passed: bool) -> WeightsArtifact:
    weights = MFTRWeights.initial(kinds_for("hybrid"), field_weight=1.0)
    guard = {"passed": passed, "reasons": [] if passed else ["held-out feedback NDCG@10 0.40 is not above the current 0.41"]}
    return WeightsArtifact(weights, {"retriever": "hybrid"}, {"guard": guard}).save(tmp, "passed" if passed else "failed")


@pytest.fixture(scope="module")
def setup(client: Any, base_settings: Any, embedder: Any, datasets: Path, tmp_path_factory: Any) -> Any:
    apibank = datasets / "toolret" / "apibank"
    for index in (f"{ALIAS}-querylog", f"{ALIAS}-feedback"):
        client.indices.delete(index=index, ignore_unavailable=True)
    settings = base_settings.with_overrides(index=ALIAS, query_log=True, query_log_index=f"{ALIAS}-querylog",
                                            feedback_index=f"{ALIAS}-feedback", multi_need="off",
                                            weights_check_interval=0.0)
    ensure_eval_index(client, settings, embedder, ALIAS, apibank / "tools.json", "toolret")
    for tenant in experiments(IndexManager(client, ALIAS).require()):
        rollback(client, ALIAS, tenant)
    benchmark = load_benchmark(apibank)
    queries = [(benchmark.queries[q], {t for t, g in benchmark.qrels[q].items() if g > 0})
               for q in benchmark.qrels if q in benchmark.queries][:60]
    return settings, ToolSearchService(client, settings, embedder), queries, tmp_path_factory.mktemp("ab")


def _logged(client: Any, settings: Any, request_ids: list[str]) -> dict[str, str | None]:
    client.indices.refresh(index=settings.query_log_index)
    found = client.mget(index=settings.query_log_index, body={"ids": request_ids})
    return {d["_id"]: d["_source"].get("weights_version") for d in found["docs"]}


def test_a_candidate_whose_guard_failed_serves_no_traffic(client: Any, setup: Any) -> None:
    _, _, _, tmp = setup
    failed = _candidate(tmp, passed=False)
    with pytest.raises(ConfigError, match="guard did not pass.*held-out feedback"):
        start_experiment(client, ALIAS, "acme", failed, 0.5)
    with pytest.raises(ConfigError, match="share"):
        start_experiment(client, ALIAS, "acme", _candidate(tmp, passed=True), 1.0)
    assert experiments(IndexManager(client, ALIAS).require()) == {}


def test_the_tenant_s_share_goes_to_the_candidate_and_the_report_compares_the_arms(
        client: Any, base_settings: Any, setup: Any) -> None:
    settings, service, queries, tmp = setup
    candidate = _candidate(tmp, passed=True)
    started = start_experiment(client, ALIAS, "acme", candidate, 0.5)
    acme_ids, other_ids, successes = [], [], {"control": 0, "candidate": 0}
    for text, gold in queries:
        answer = service.search(ACME, SearchRequest(query=text, top_k=10))
        acme_ids.append(answer["request_id"])
        worked = [t["id"] for t in answer["tools"] if t["id"] in gold]
        if worked:
            service.feedback(ACME, answer["request_id"], [ToolOutcome(worked[0], called=True, success=True)])
            successes[arm_for(started, answer["request_id"])] += 1
        other_ids.append(service.search(OTHER, SearchRequest(query=text, top_k=10))["request_id"])
    logged = _logged(client, settings, acme_ids)
    # each request's arm is the hash of its id: exactly the candidate's share of them carry its version
    for rid in acme_ids:
        assert (logged[rid] == candidate.version) == (arm_for(started, rid) == "candidate")
    on_candidate = sum(v == candidate.version for v in logged.values())
    assert 0 < on_candidate < len(acme_ids)
    assert candidate.version not in _logged(client, settings, other_ids).values()  # other tenants: untouched

    client.indices.refresh(index=settings.feedback_index)
    report = ab_report(client, settings, started)
    assert report.arms["candidate"].answers == on_candidate
    assert report.arms["control"].answers == len(acme_ids) - on_candidate
    assert {arm: f.successes for arm, f in report.arms.items()} == successes
    assert report.arms["candidate"].weights_version == candidate.version
    assert report.success_rate_p is None or 0.0 <= report.success_rate_p <= 1.0

    printed = CliRunner().invoke(cli, ["--opensearch-url", base_settings.opensearch_url, "--index", ALIAS,
                                       "learn", "ab", "report", "--tenant", "acme", "--json"],
                                 env={"TOOLSIFT_QUERY_LOG_INDEX": settings.query_log_index,
                                      "TOOLSIFT_FEEDBACK_INDEX": settings.feedback_index})
    assert printed.exit_code == 0, printed.output
    assert json.loads(printed.output)["arms"]["candidate"]["answers"] == on_candidate


def test_promote_gives_the_candidate_all_of_the_tenant_s_traffic_and_rollback_none(client: Any, setup: Any) -> None:
    settings, service, queries, tmp = setup
    candidate = _candidate(tmp, passed=True)
    start_experiment(client, ALIAS, "acme", candidate, 0.3)
    promote(client, ALIAS, "acme")
    promoted = [service.search(ACME, SearchRequest(query=text, top_k=5))["request_id"] for text, _ in queries[:8]]
    assert set(_logged(client, settings, promoted).values()) == {candidate.version}
    rollback(client, ALIAS, "acme")
    back = [service.search(ACME, SearchRequest(query=text, top_k=5))["request_id"] for text, _ in queries[:8]]
    assert candidate.version not in _logged(client, settings, back).values()
    with pytest.raises(NotFoundError, match="no experiment for tenant 'acme'"):
        rollback(client, ALIAS, "acme")
