"""A tenant experiment's record and its per-request split."""

from __future__ import annotations

import hashlib
import secrets
import uuid

import pytest

from toolsift.errors import ConfigError
from toolsift.mappings.index import IndexInfo
from toolsift.ranker.artifact import WeightsArtifact
from toolsift.ranker.deploy import weights_stamp
from toolsift.learning.experiments import EXPERIMENTS_KEY, TenantExperiment, arm_for, experiments, hash_share
from toolsift.ranker.mftr import MFTRWeights


def _experiment(share: float = 0.25, state: str = "testing", secret: str | None = None) -> TenantExperiment:
    candidate = WeightsArtifact(MFTRWeights.initial(("bm25",), field_weight=1.0), metrics={"guard": {"passed": True}})
    return TenantExperiment("acme", candidate, share, state, "2026-11-27T10:00:00+00:00", "2026-11-27T10:00:00+00:00",  # type: ignore[arg-type]
                            secrets.token_hex(32) if secret is None else secret)


def _info(records: object) -> IndexInfo:
    return IndexInfo("tools", "tools-v1", "m", 384, "f", meta={EXPERIMENTS_KEY: records})


def test_the_candidate_gets_about_its_share_of_random_request_ids() -> None:
    experiment = _experiment(0.25)
    arms = [arm_for(experiment, uuid.uuid4().hex) for _ in range(4000)]
    assert arms.count("candidate") / len(arms) == pytest.approx(0.25, abs=0.03)


def test_one_request_always_falls_in_the_same_arm_and_a_promoted_candidate_takes_every_request() -> None:
    rid = uuid.uuid4().hex
    experiment = _experiment(0.5)
    assert len({arm_for(experiment, rid) for _ in range(5)}) == 1
    assert arm_for(_experiment(1.0, "promoted"), rid) == "candidate"
    assert arm_for(None, rid) == "control" and arm_for(_experiment(0.99), None) == "control"
    assert 0.0 <= hash_share(rid) < 1.0


def test_an_experiment_survives_the_round_trip_through_the_index_meta() -> None:
    experiment = _experiment()
    found = experiments(_info({"acme": experiment.to_dict()}))
    assert found["acme"].candidate.weights == experiment.candidate.weights
    assert (found["acme"].share, found["acme"].state) == (0.25, "testing")


def test_a_change_of_experiment_changes_the_weights_stamp() -> None:
    before = weights_stamp(_info({}))
    started = weights_stamp(_info({"acme": _experiment().to_dict()}))
    promoted = {**_experiment().to_dict(), "changed_at": "2026-11-27T11:00:00+00:00"}
    assert len({before, started, weights_stamp(_info({"acme": promoted}))}) == 3


@pytest.mark.parametrize("record", [{"share": 0.5}, {**_experiment().to_dict(), "share": 2.0},
                                    {**_experiment().to_dict(), "state": "live"}])
def test_a_malformed_record_names_the_tenant_and_the_way_out(record: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match=r"tenant_weights\.acme is not an experiment.*rollback --tenant acme"):
        experiments(_info({"acme": record}))


# --- the arm is not computable by the client holding the request id (issue 44, finding 3) -------------

def _sha256_arm(request_id: str, share: float) -> str:
    """The arm as the split used to be computed, from the request id alone: what any client could do."""
    digest = hashlib.sha256(f"ab:{request_id}".encode()).digest()
    return "candidate" if int.from_bytes(digest[:8], "big") / 2**64 < share else "control"


def test_a_client_computing_the_arm_from_the_request_id_guesses_no_better_than_chance() -> None:
    experiment = _experiment(0.5)
    ids = [uuid.uuid4().hex for _ in range(2000)]
    agree = sum(arm_for(experiment, rid) == _sha256_arm(rid, 0.5) for rid in ids) / len(ids)
    assert agree == pytest.approx(0.5, abs=0.05)


def test_the_split_is_keyed_by_the_experiment_s_own_secret() -> None:
    one, other = _experiment(0.5), _experiment(0.5)
    ids = [uuid.uuid4().hex for _ in range(1000)]
    same = sum(arm_for(one, rid) == arm_for(other, rid) for rid in ids) / len(ids)
    assert same == pytest.approx(0.5, abs=0.06)  # another secret: another, independent split
    assert [arm_for(one, rid) for rid in ids[:50]] == [arm_for(one, rid) for rid in ids[:50]]  # stable per request


def test_the_secret_is_kept_in_the_index_record_and_never_shown() -> None:
    experiment = _experiment(0.5)
    found = experiments(_info({"acme": experiment.to_dict()}))["acme"]
    assert found.secret == experiment.secret and len(experiment.secret) == 64
    assert experiment.secret not in repr(experiment) and experiment.secret not in repr(found)


def test_an_experiment_recorded_without_a_secret_sends_every_search_to_the_control() -> None:
    legacy = {k: v for k, v in _experiment(0.9).to_dict().items() if k != "secret"}
    found = experiments(_info({"acme": legacy}))["acme"]
    assert {arm_for(found, uuid.uuid4().hex) for _ in range(200)} == {"control"}
    assert arm_for(_experiment(1.0, "promoted", secret=""), uuid.uuid4().hex) == "candidate"
