"""Per-tenant A/B tests of candidate weights, kept on the index beside the pushed weights.

A tenant's experiment sends a ``share`` of that tenant's searches to a candidate weights artifact;
the rest rank as every other tenant of the index does (the ``weights`` setting, the pushed weights,
or the fixed field weights). The split is per request: a search goes to the candidate when the
HMAC-SHA-256 of its ``request_id`` under the experiment's own secret falls below ``share``
(:func:`arm_for`), so arms are random, stable for one request, and — the secret being made at
:func:`start_experiment` and kept only with the experiment, never in an answer — not computable by
the client that holds the request id (a client that knew its arm could report success on one arm
only). The query log names the weights each answer ranked with (``weights_version``), which is how
:mod:`toolsift.learning.ab_report` tells the arms apart. An experiment recorded without a secret (by an older
toolsift) sends every search to the control until it is started again.

The experiments live in ``_meta.toolsift.tenant_weights`` of the index the alias points at (like
:mod:`~toolsift.ranker.deploy`'s pushed weights), so every search service of the index — API, MCP,
workbench — follows them within ``weights_check_interval`` seconds.

* :func:`start_experiment` — only a candidate whose learning guard passed (its record's
  ``metrics.guard.passed``) may serve any tenant's traffic;
* :func:`promote` — the candidate takes all of that tenant's traffic (share 1, state ``promoted``);
* :func:`rollback` — the experiment (or the promotion) is removed: the tenant ranks as before.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from opensearchpy import OpenSearch

from toolsift.access import valid_tenant
from toolsift.errors import ConfigError, NotFoundError
from toolsift.mappings.index import IndexInfo, IndexManager
from toolsift.plugin_scripts.pipelines import ensure_pipelines
from toolsift.ranker.artifact import WeightsArtifact

__all__ = ["TenantExperiment", "EXPERIMENTS_KEY", "hash_share", "experiments", "start_experiment", "promote",
           "rollback", "arm_for", "Arm", "experiment_of"]

#: Where the experiments sit in the index's ``_meta.toolsift`` (tenant → record).
EXPERIMENTS_KEY = "tenant_weights"

Arm = Literal["control", "candidate"]


def hash_share(key: str) -> float:
    """Where ``key`` falls in [0, 1): the first eight bytes of its SHA-256 (uniform over random keys)."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2**64


@dataclass(frozen=True)
class TenantExperiment:
    """One tenant's candidate weights and the share of its searches they rank."""

    tenant: str
    candidate: WeightsArtifact
    share: float
    state: Literal["testing", "promoted"]
    started_at: str
    changed_at: str
    #: The split's key (hex), made at the start and kept with the experiment on the index only: never
    #: in an answer, a report or a repr.
    secret: str = field(default="", repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The record kept in the index's ``_meta`` (secret included: it is not for clients)."""
        return {"candidate": {**self.candidate.to_dict(), "path": str(self.candidate.path) if self.candidate.path else None},
                "candidate_version": self.candidate.version, "share": self.share, "state": self.state,
                "started_at": self.started_at, "changed_at": self.changed_at, "secret": self.secret}

    @classmethod
    def from_dict(cls, tenant: str, record: Mapping[str, Any], *, where: str) -> TenantExperiment:
        try:
            raw = dict(record["candidate"])
            path = Path(raw["path"]) if raw.get("path") else None
            share = float(record["share"])
            state = record["state"]
            problem = None if 0.0 < share <= 1.0 and state in ("testing", "promoted") else \
                f"share {share} or state {state!r} out of range"
            if problem is None:
                return cls(tenant, WeightsArtifact.from_dict(raw, path=path), share, state,
                           str(record["started_at"]), str(record.get("changed_at", record["started_at"])),
                           str(record.get("secret") or ""))
        except (ConfigError, ValueError, KeyError, TypeError) as exc:
            problem = str(exc)
        raise ConfigError(f"{where}: _meta.toolsift.{EXPERIMENTS_KEY}.{tenant} is not an experiment ({problem}); "
                          f"roll it back (`toolsift learn ab rollback --tenant {tenant}`)")


def _keyed_share(secret: str, request_id: str) -> float:
    """Where ``request_id`` falls in [0, 1) under ``secret``: the first eight bytes of their HMAC-SHA-256."""
    digest = hmac.new(secret.encode(), request_id.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def arm_for(experiment: TenantExperiment | None, request_id: str | None) -> Arm:
    """The arm a request goes to: the candidate when its id, keyed by the experiment's secret, falls
    below the share (always, once promoted; never while testing without a secret)."""
    if experiment is None or request_id is None:
        return "control"
    if experiment.state == "promoted":
        return "candidate"
    if experiment.secret and _keyed_share(experiment.secret, request_id) < experiment.share:
        return "candidate"
    return "control"


def experiments(info: IndexInfo) -> dict[str, TenantExperiment]:
    """tenant → experiment, as the index records them."""
    records = info.meta.get(EXPERIMENTS_KEY) or {}
    if not isinstance(records, Mapping):
        raise ConfigError(f"index {info.index!r}: _meta.toolsift.{EXPERIMENTS_KEY} is not an object")
    return {tenant: TenantExperiment.from_dict(tenant, record, where=f"index {info.index!r}")
            for tenant, record in records.items()}


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def _write(client: OpenSearch, info: IndexInfo, found: dict[str, TenantExperiment]) -> None:
    IndexManager(client, info.alias).update_meta(info.index, **{EXPERIMENTS_KEY: {t: e.to_dict() for t, e in found.items()}})


def start_experiment(client: OpenSearch, alias: str, tenant: str, candidate: WeightsArtifact, share: float
                     ) -> TenantExperiment:
    """Send ``share`` of ``tenant``'s searches on ``alias`` to ``candidate`` (replacing a running experiment).

    Raises:
        ConfigError: the tenant name is not one, the share is not in (0, 1), the candidate's guard did
            not pass (or it has none), or its weights were trained for another index's retriever kinds.
    """
    valid_tenant(tenant, where="--tenant")
    if not 0.0 < share < 1.0:
        raise ConfigError(f"--share: {share} is not in (0, 1); promote a candidate to give it all of a tenant's traffic")
    guard = candidate.metrics.get("guard") if isinstance(candidate.metrics, Mapping) else None
    if not isinstance(guard, Mapping) or guard.get("passed") is not True:
        where = candidate.path or candidate.version
        raise ConfigError(f"{where}: its learning guard did not pass ({'; '.join(guard.get('reasons', [])) if isinstance(guard, Mapping) else 'no guard report'}); "
                          "only a candidate that beat the current ranking on held-out feedback without losing a "
                          "benchmark may serve a tenant's traffic")
    info = IndexManager(client, alias).require()
    found = experiments(info)
    # the candidate's first stage runs through pipelines of its own, installed before any search needs them
    ensure_pipelines(client, alias, candidate.weights.first_stage_weights(), tag=candidate.tag)
    now = _now()
    found[tenant] = TenantExperiment(tenant, candidate, share, "testing", now, now, secrets.token_hex(32))
    _write(client, info, found)
    return found[tenant]


def _existing(client: OpenSearch, alias: str, tenant: str) -> tuple[IndexInfo, dict[str, TenantExperiment]]:
    info = IndexManager(client, alias).require()
    found = experiments(info)
    if tenant not in found:
        raise NotFoundError(f"--tenant: no experiment for tenant {tenant!r} on {alias!r}")
    return info, found


def experiment_of(client: OpenSearch, alias: str, tenant: str) -> TenantExperiment:
    """``tenant``'s experiment on ``alias``.

    Raises:
        NotFoundError: the tenant has none.
    """
    _, found = _existing(client, alias, tenant)
    return found[tenant]


def promote(client: OpenSearch, alias: str, tenant: str) -> TenantExperiment:
    """Give ``tenant``'s experiment all of its traffic (share 1, state ``promoted``).

    Raises:
        NotFoundError: the tenant has no experiment on ``alias``.
    """
    info, found = _existing(client, alias, tenant)
    old = found[tenant]
    found[tenant] = TenantExperiment(tenant, old.candidate, 1.0, "promoted", old.started_at, _now(), old.secret)
    _write(client, info, found)
    return found[tenant]


def rollback(client: OpenSearch, alias: str, tenant: str) -> TenantExperiment:
    """Remove ``tenant``'s experiment (or promotion): it ranks as the index's other tenants do. Returns what was removed.

    Raises:
        NotFoundError: the tenant has no experiment on ``alias``.
    """
    info, found = _existing(client, alias, tenant)
    removed = found.pop(tenant)
    _write(client, info, found)
    return removed
