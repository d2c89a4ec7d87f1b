"""Trained encoders (Tool-Embed) as versioned artifacts.

``<root>/<name>/v<NNN>/`` is a sentence-transformers folder (what ``embedding_model`` loads, on
either backend) with ``toolsift-embedder.json`` beside its files: the identity an index records, the
base model, the training data's SHA-256, the recipe, the losses and the time taken. The identity is
``<name>@<first 12 hex of the weights' SHA-256>``: two indices built with the same weights agree on
it wherever the folder lives, and a retrained model is another model to every index (queries
encoded by it are refused until the index is re-embedded).
"""

from __future__ import annotations

import os
import platform
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from toolsift.encoders.embedding import BUNDLED_MODEL, no_progress_bars
from toolsift.encoders.shipped import MANIFEST, weights_sha256
from toolsift.errors import ConfigError
from toolsift.ranker.artifact import load_json_record, name_problem, new_version_dir, write_json_atomic
from toolsift.encoders.encoder_training import EmbedderTrainingOutcome

__all__ = ["EMBEDDER_FORMAT", "MANIFEST", "EmbedderArtifact", "save_embedder", "read_embedder", "ship_embedder",
           "weights_sha256"]

EMBEDDER_FORMAT = "toolsift-embedder/1"


@dataclass(frozen=True)
class EmbedderArtifact:
    """A trained encoder's record (``toolsift-embedder.json``)."""

    identity: str
    base_model: str
    weights_sha256: str
    training: Mapping[str, Any] = field(default_factory=dict)
    config: Mapping[str, Any] = field(default_factory=dict)
    outcome: Mapping[str, Any] = field(default_factory=dict)
    created: str = ""
    path: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": EMBEDDER_FORMAT,
            "created": self.created,
            "identity": self.identity,
            "base_model": self.base_model,
            "weights_sha256": self.weights_sha256,
            "training": dict(self.training),
            "config": dict(self.config),
            "outcome": dict(self.outcome),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, path: Path | None = None) -> EmbedderArtifact:
        """A record from its :meth:`to_dict` form (the reader checks its ``format``); raises ValueError /
        KeyError / TypeError when malformed."""
        return cls(
            identity=str(data["identity"]),
            base_model=str(data["base_model"]),
            weights_sha256=str(data["weights_sha256"]),
            training=data.get("training") or {},
            config=data.get("config") or {},
            outcome=data.get("outcome") or {},
            created=str(data.get("created", "")),
            path=path,
        )


def save_embedder(
    outcome: EmbedderTrainingOutcome,
    root: Path,
    name: str,
    *,
    base_model: str,
    training: Mapping[str, Any],
    config: Mapping[str, Any],
) -> EmbedderArtifact:
    """Write the trained model and its record as ``root/name/vNNN``."""
    import sentence_transformers
    import torch

    version = new_version_dir(root, name, setting="embedder name")
    with no_progress_bars():
        outcome.model.save(str(version))
    sha = weights_sha256(version)
    extra: dict[str, Any] = {}
    if outcome.adapter_dir is not None:
        shutil.copytree(outcome.adapter_dir, version / "adapter")
        shutil.rmtree(outcome.adapter_dir, ignore_errors=True)
        extra["adapter_sha256"] = weights_sha256(version / "adapter")
    artifact = EmbedderArtifact(
        identity=f"{name}@{sha[:12]}",
        base_model=base_model,
        weights_sha256=sha,
        training=dict(training),
        config=dict(config),
        outcome={
            "examples": outcome.examples,
            "steps": outcome.steps,
            "epoch_losses": [round(x, 6) for x in outcome.epoch_losses],
            "seconds": round(outcome.seconds, 1),
            "device": outcome.device,
            "torch": torch.__version__,
            "sentence_transformers": sentence_transformers.__version__,
            "machine": f"{platform.machine()} {torch.get_num_threads()} threads",
            **extra,
        },
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        path=version / MANIFEST,
    )
    write_json_atomic(version / MANIFEST, artifact.to_dict())
    return artifact


def read_embedder(folder: Path) -> EmbedderArtifact | None:
    """The record of a model folder; None when it has none (a plain sentence-transformers folder)."""
    file = folder / MANIFEST
    if not file.is_file():
        return None
    return load_json_record(file, EMBEDDER_FORMAT, lambda data: EmbedderArtifact.from_dict(data, path=file),
                            problem=f"embedding_model: {file} is not a toolsift embedder record")


def ship_embedder(version: Path, destination: Path, name: str | None = None) -> Path:
    """Write the shippable form of a LoRA-trained version (adapter + record) as ``destination/<name>``.

    ``destination`` is ``encoders/models`` for the package (:mod:`toolsift.encoders.shipped`); the
    folder is replaced whole (written beside it, then renamed). ``name`` (default: the artifact's)
    names the shipped encoder, and its identity becomes ``<name>@<weights hash>``.
    """
    record = read_embedder(version)
    if record is None or not (version / "adapter").is_dir():
        raise ConfigError(f"--ship: {version} was not trained with --lora-rank (no adapter to ship)")
    if record.base_model != BUNDLED_MODEL:
        raise ConfigError(f"--ship: {version} adapts {record.base_model!r}; a shipped adapter is merged into the "
                          f"bundled {BUNDLED_MODEL!r}, so only one trained from it ships")
    name = name or record.identity.split("@", 1)[0]
    problem = name_problem(name, "--ship name")
    if problem:
        raise ConfigError(problem)
    destination.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=destination))
    for file in ("adapter_config.json", "adapter_model.safetensors"):
        shutil.copy2(version / "adapter" / file, work / file)
    write_json_atomic(work / MANIFEST, {**record.to_dict(), "identity": f"{name}@{record.weights_sha256[:12]}"})
    target = destination / name
    if target.exists():
        shutil.rmtree(target)
    os.replace(work, target)
    return target
