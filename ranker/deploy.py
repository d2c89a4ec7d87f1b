"""Putting weights live on an index: its search pipelines and the active weights in its ``_meta``.

:func:`push_weights` installs the weights' first-stage field weights into the index's search
pipelines — both the plain ``<alias>-<template>`` pipelines that anyone querying OpenSearch directly
uses, and the ``<alias>-<template>-<digest>`` ones a searcher with these weights uses — and records
the whole artifact as ``_meta.toolsift.active_weights`` of the index the alias points at. From then
on every :class:`~toolsift.search.Searcher` of that alias without an explicit ``weights`` setting
ranks with them (CLI, API, ranker clients, the workbench), and the query log names their version.

Precedence: the ``weights`` setting (or ``--weights``) > the pushed weights > the fixed
``field_weights``. The active weights live on the concrete index: a ``--rebuild`` starts without
them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from toolsift.config import DEFAULT_FIELD_WEIGHTS
from toolsift.errors import ConfigError
from toolsift.mappings.index import IndexInfo, IndexManager
from toolsift.plugin_scripts.pipelines import ensure_pipelines
from toolsift.ranker.artifact import WeightsArtifact
from toolsift.learning.experiments import EXPERIMENTS_KEY

__all__ = ["PushReport", "push_weights", "clear_weights", "active_weights", "ACTIVE_WEIGHTS_KEY", "weights_stamp",
           "current_weights_stamp"]

#: Where the pushed artifact sits in the index's ``_meta.toolsift``.
ACTIVE_WEIGHTS_KEY = "active_weights"


@dataclass(frozen=True)
class PushReport:
    """What a push changed: the index, the weights' version, the pipelines written."""

    index: str
    version: str
    pipelines: tuple[str, ...]
    pushed_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "version": self.version, "pipelines": list(self.pipelines),
                "pushed_at": self.pushed_at}


def push_weights(client: OpenSearch, alias: str, artifact: WeightsArtifact) -> PushReport:
    """Make ``artifact`` the weights of ``alias``: its pipelines and ``_meta`` (see the module)."""
    manager = IndexManager(client, alias)
    info = manager.require()
    first_stage = artifact.weights.first_stage_weights()
    plain = ensure_pipelines(client, alias, first_stage)
    tagged = ensure_pipelines(client, alias, first_stage, tag=artifact.digest)
    pushed_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    record = {**artifact.to_dict(), "path": str(artifact.path) if artifact.path else None,
              "version": artifact.version, "pushed_at": pushed_at}
    manager.update_meta(info.index, **{ACTIVE_WEIGHTS_KEY: record})
    return PushReport(info.index, artifact.version, tuple(sorted({*plain.values(), *tagged.values()})), pushed_at)


def clear_weights(client: OpenSearch, alias: str, field_weights: dict[str, float] | None = None) -> None:
    """Back to the fixed field weights: the plain pipelines re-rendered with them, ``_meta`` cleared."""
    manager = IndexManager(client, alias)
    info = manager.require()
    ensure_pipelines(client, alias, field_weights or dict(DEFAULT_FIELD_WEIGHTS))
    manager.update_meta(info.index, **{ACTIVE_WEIGHTS_KEY: None})


def active_weights(info: IndexInfo) -> WeightsArtifact | None:
    """The weights pushed to this index, if any.

    Raises:
        ConfigError: naming the index when the recorded weights are malformed.
    """
    record = info.meta.get(ACTIVE_WEIGHTS_KEY)
    if not record:
        return None
    try:
        path = Path(record["path"]) if record.get("path") else None
        return WeightsArtifact.from_dict(record, path=path)
    except (ConfigError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(
            f"index {info.index!r}: _meta.toolsift.{ACTIVE_WEIGHTS_KEY} is not a weights artifact ({exc}); "
            "push weights again from the workbench or clear them"
        ) from exc


def _stamp(index: str, meta: Mapping[str, Any]) -> str:
    pushed = meta.get(ACTIVE_WEIGHTS_KEY) or {}
    tested = meta.get(EXPERIMENTS_KEY) or {}
    trials = ",".join(f"{tenant}:{(record.get('candidate') or {}).get('digest', '')}:{record.get('changed_at', '')}"
                      for tenant, record in sorted(tested.items()) if isinstance(record, Mapping))
    return f"{index}|{pushed.get('digest', '')}|{pushed.get('pushed_at', '')}|{trials}"


def weights_stamp(info: IndexInfo) -> str:
    """What identifies the weights an index ranks with: its concrete name, the pushed weights' digest
    and push time (empty when none are pushed), and each tenant experiment's candidate and last change
    (:mod:`toolsift.learning.experiments`)."""
    return _stamp(info.index, info.meta)


def current_weights_stamp(client: OpenSearch, alias: str) -> str | None:
    """:func:`weights_stamp` of the index ``alias`` points at now, read in one small request (None:
    no such index)."""
    found = client.indices.get_mapping(
        index=alias, ignore=404,
        filter_path=[f"*.mappings._meta.toolsift.{ACTIVE_WEIGHTS_KEY}.digest",
                     f"*.mappings._meta.toolsift.{ACTIVE_WEIGHTS_KEY}.pushed_at",
                     f"*.mappings._meta.toolsift.{EXPERIMENTS_KEY}.*.candidate.digest",
                     f"*.mappings._meta.toolsift.{EXPERIMENTS_KEY}.*.changed_at",
                     "*.mappings._meta.toolsift.schema_version"],
    )
    if not isinstance(found, dict) or not found or "error" in found or "status" in found:
        return None
    index, body = sorted(found.items())[-1]
    return _stamp(index, (((body or {}).get("mappings") or {}).get("_meta") or {}).get("toolsift", {}))
