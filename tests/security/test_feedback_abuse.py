"""One search key against its tenant's learning and A/B test (issue 44, findings 2 and 3).

The attack as it was reported, against the running search API and the operator's own commands:

* **Flooding feedback.** One tenant's search key asks 100 searches and sends 2,000 feedback reports on
  them (each report twenty times), every one marking the answer's rank-10 tool as the call that worked.
  The API stores each report once; `toolsift learn weights --tenant acme`, run as the operator runs it,
  learns nothing and writes nothing: with no benchmark named the benchmark guard refuses, and with one
  the feedback is refused for coming from too few distinct keys (``learn_min_keys``), naming the counts.
* **Steering an A/B test.** With an experiment running on the tenant (`toolsift learn ab start`), a
  client that computes its arm from the ``request_id`` it received — the SHA-256 split the arms used to
  follow — guesses no better than chance, and the split's secret never reaches a client. A key that
  reports success only on the candidate's answers (its arms read from the query log here: the worst
  case, a client that learned them anyway) does not decide `toolsift learn ab report`: the verdict
  rests on distinct keys, each weighing once, and one key is too few.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.security.conftest import SEC_PREFIX, TOOLSIFT, Deployment

pytestmark = [pytest.mark.integration, pytest.mark.security]

SEARCHES = 100
REPEATS = 20


def _texts(dep: Deployment, n: int) -> list[str]:
    """``n`` requests of tenant acme: its own tools' descriptions, cycled."""
    found = [description[:300] for _, description in dep.tools["acme"] if description.strip()]
    return [found[i % len(found)] for i in range(n)]


def _search(http: httpx.Client, dep: Deployment, key: str, text: str) -> tuple[str, list[str]]:
    answer = http.post("/v1/search", headers=dep.header(key), json={"query": text, "top_k": 10})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    return body["request_id"], [t["id"] for t in body["tools"]]


def _run(dep: Deployment, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TOOLSIFT, *args], capture_output=True, text=True, timeout=900, env=dep.environment())


@pytest.fixture(scope="module")
def flood(deployment: Deployment) -> dict[str, list[dict[str, Any]]]:
    """100 searches by acme's search key and 20 identical reports on each: the rank-10 tool "worked"."""
    sent: dict[str, list[dict[str, Any]]] = {}
    with httpx.Client(base_url=deployment.url("api"), timeout=120) as http:
        for text in _texts(deployment, SEARCHES):
            request_id, shown = _search(http, deployment, "acme", text)
            assert len(shown) == 10
            call = {"request_id": request_id, "calls": [{"tool_id": shown[-1], "called": True, "success": True}]}
            answers = [http.post("/v1/feedback", headers=deployment.header("acme"), json=call) for _ in range(REPEATS)]
            assert all(a.status_code == 200 for a in answers), answers[0].text
            sent[request_id] = [a.json() for a in answers]
    return sent


def test_the_same_report_sent_again_is_stored_once(flood: dict[str, list[dict[str, Any]]], client: Any,
                                                    deployment: Deployment) -> None:
    for answers in flood.values():
        first, *again = answers
        assert (first["stored"], first["already_recorded"]) == (1, 0)
        assert all((a["stored"], a["already_recorded"]) == (0, 1) for a in again)
    index = deployment.settings.feedback_index
    client.indices.refresh(index=index)
    held = client.count(index=index, body={"query": {"terms": {"request_id": list(flood)}}})["count"]
    assert held == SEARCHES  # not 2,000


def test_one_key_flooding_feedback_teaches_its_tenant_nothing(flood: dict[str, list[dict[str, Any]]],
                                                             deployment: Deployment, datasets: Path) -> None:
    weights = deployment.folder / "data" / "weights"
    as_reported = _run(deployment, "learn", "weights", "--tenant", "acme", "--name", "flooded")
    assert as_reported.returncode == 3, as_reported.stdout + as_reported.stderr
    assert "benchmark guard is on and names no benchmark" in as_reported.stderr
    guarded = _run(deployment, "learn", "weights", "--tenant", "acme", "--name", "flooded",
                   "--benchmark", str(datasets / "toolret" / "apibank"))
    assert guarded.returncode == 3, guarded.stdout + guarded.stderr
    refusal = guarded.stderr
    assert "distinct key" in refusal and "'acme': " in refusal and "at least 5 distinct keys" in refusal
    assert "learn_min_keys" in refusal and "nothing was learned or written" in refusal
    for done in (as_reported, guarded):
        assert "Traceback" not in done.stdout + done.stderr
    assert not (weights / "flooded").exists()


# --- the A/B test -----------------------------------------------------------------------------------


def _sha256_arm(request_id: str, share: float) -> str:
    """The arm as any client could compute it before: ``sha256("ab:" + request_id) < share``."""
    digest = hashlib.sha256(f"ab:{request_id}".encode()).digest()
    return "candidate" if int.from_bytes(digest[:8], "big") / 2**64 < share else "control"


@pytest.fixture(scope="module")
def experiment(deployment: Deployment, client: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A candidate whose guard passed, started on half of acme's searches with the operator's command; rolled back."""
    from toolsift.ranker.artifact import WeightsArtifact
    from toolsift.ranker.mftr import MFTRWeights
    from toolsift.records import kinds_for

    candidate = WeightsArtifact(MFTRWeights.initial(kinds_for("hybrid"), field_weight=1.0), {"retriever": "hybrid"},
                                {"guard": {"passed": True, "reasons": []}}).save(tmp_path_factory.mktemp("ab"), "probe")
    started = _run(deployment, "learn", "ab", "start", str(candidate.path), "--tenant", "acme", "--share", "0.5")
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        time.sleep(deployment.settings.weights_check_interval + 2)  # the running API follows the index this often
        yield candidate, started
    finally:
        _run(deployment, "learn", "ab", "rollback", "--tenant", "acme")


def _arms(client: Any, dep: Deployment, request_ids: list[str], version: str) -> dict[str, str]:
    """The arm each answer was really given in, as the query log (the operator's view) records it."""
    client.indices.refresh(index=dep.settings.query_log_index)
    docs = client.mget(index=dep.settings.query_log_index, body={"ids": request_ids})["docs"]
    return {d["_id"]: "candidate" if d["_source"].get("weights_version") == version else "control" for d in docs}


def _secret(client: Any, dep: Deployment) -> str:
    mapping = client.indices.get_mapping(index=dep.settings.index)
    (body,) = mapping.values()
    return str(body["mappings"]["_meta"]["toolsift"]["tenant_weights"]["acme"]["secret"])


def test_a_client_cannot_compute_its_a_b_arm_from_the_request_id(experiment: Any, client: Any,
                                                                 deployment: Deployment) -> None:
    candidate, started = experiment
    texts = _texts(deployment, 60)
    with httpx.Client(base_url=deployment.url("api"), timeout=120) as http:
        bodies = [http.post("/v1/search", headers=deployment.header("acme"), json={"query": t, "top_k": 10})
                  for t in texts]
    assert all(b.status_code == 200 for b in bodies)
    ids = [b.json()["request_id"] for b in bodies]
    real = _arms(client, deployment, ids, candidate.version)
    assert set(real.values()) == {"candidate", "control"}  # the experiment is running on this tenant
    guessed = sum(_sha256_arm(rid, 0.5) == real[rid] for rid in ids) / len(ids)
    assert guessed < 0.8, f"a client predicts its arm for {guessed:.0%} of its requests"
    secret = _secret(client, deployment)
    assert len(secret) == 64
    report = _run(deployment, "learn", "ab", "report", "--tenant", "acme", "--json")
    for shown in (*(b.text for b in bodies), started.stdout, started.stderr, report.stdout, report.stderr):
        assert secret not in shown


def test_one_key_reporting_success_only_on_the_candidate_s_answers_decides_nothing(
        experiment: Any, client: Any, deployment: Deployment) -> None:
    candidate, _ = experiment
    with httpx.Client(base_url=deployment.url("api"), timeout=120) as http:
        shown = dict(_search(http, deployment, "acme", t) for t in _texts(deployment, 120))
        real = _arms(client, deployment, list(shown), candidate.version)
        for request_id, arm in real.items():
            if arm == "candidate":
                call = {"request_id": request_id, "calls": [{"tool_id": shown[request_id][0], "called": True,
                                                             "success": True}]}
                assert http.post("/v1/feedback", headers=deployment.header("acme"), json=call).status_code == 200
    done = _run(deployment, "learn", "ab", "report", "--tenant", "acme", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["arms"]["candidate"]["success_rate"] > report["arms"]["control"]["success_rate"]
    assert report["verdict"].startswith("no verdict: the feedback comes from 1 distinct key"), report["verdict"]
    assert report["keys"] == 1 and report["min_keys"] == 5
    assert SEC_PREFIX in deployment.settings.index  # the suite's own index, rolled back after
