"""A tenant experiment's record and its per-request split."""

from __future__ import annotations

import uuid

import pytest

from toolsift.errors import ConfigError
from toolsift.mappings.index import IndexInfo
from toolsift.ranker.artifact import WeightsArtifact
from toolsift.ranker.deploy import weights_stamp
from toolsift.ranker.experiments import EXPERIMENTS_KEY, TenantExperiment, arm_for, experiments, hash_share
from toolsift.ranker.mftr import MFTRWeights


def _experiment(share: float = 0.25, state: str = "testing") -> TenantExperiment:
    candidate = WeightsArtifact(MFTRWeights.initial(("bm25",), field_weight=1.0), metrics={"guard": {"passed": True}})
    return TenantExperiment("acme", candidate, share, state, "2026-11-27T10:00:00+00:00", "2026-11-27T10:00:00+00:00")  # type: ignore[arg-type]


def _info(records: object) -> IndexInfo:
    return IndexInfo("tools", "tools-v1", "m", 384, "f", meta={EXPERIMENTS_KEY: records})


def test_the_candidate_gets_about_its_share_of_random_request_ids() -> None:
    experiment = _experiment(0.25)
    arms = [arm_for(experiment, uuid.uuid4().hex) for _ in range(4000)]
    assert arms.count("candidate") / len(arms) == pytest.approx(0.25, abs=0.03)


def test_one_request_always_falls_in_the_same_arm_and_a_promoted_candidate_takes_every_request() -> None:
    rid = uuid.uuid4().hex
    assert len({arm_for(_experiment(0.5), rid) for _ in range(5)}) == 1
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
