"""Trained rerankers as versioned artifacts, and the one place a reranker setting becomes a model.

``<root>/<name>/v<NNN>/reranker.json`` records the kind, the base model, the training recipe, the
learned fusion weight λ and M, and how it scored; next to it ``model/`` (a cross-encoder) or
``adapter/`` (Tool-Rank's LoRA adapter over the base causal LM). The ``reranker`` setting accepts
such a folder (newest version), a version folder, ``reranker.json`` itself, or a model spec:
``tool-rank:smollm2`` (the bundled SmolLM2-135M-Instruct, zero-shot), ``tool-rank:PATH`` or
``cross-encoder:PATH``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from toolsift.errors import ConfigError
from toolsift.ranker.artifact import load_json_record, new_version_dir, resolve_versioned, write_json_atomic
from toolsift.ranker.reranker_training import RerankerTrainingOutcome
from toolsift.ranker.rerankers import CrossEncoderReranker, Reranker, ToolRankReranker

__all__ = ["RERANKER_FORMAT", "RerankerArtifact", "LoadedReranker", "load_reranker", "save_reranker"]

RERANKER_FORMAT = "toolsift-reranker/1"
SMOLLM2 = "smollm2"


@dataclass(frozen=True)
class RerankerArtifact:
    """A trained reranker's record (``reranker.json``)."""

    kind: str
    base_model: str
    gguf_file: str | None
    fusion_weight: float
    rerank_top: int
    max_length: int
    config: Mapping[str, Any] = field(default_factory=dict)
    metrics: Mapping[str, Any] = field(default_factory=dict)
    created: str = ""
    path: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": RERANKER_FORMAT,
            "created": self.created,
            "kind": self.kind,
            "base_model": self.base_model,
            "gguf_file": self.gguf_file,
            "fusion_weight": self.fusion_weight,
            "rerank_top": self.rerank_top,
            "max_length": self.max_length,
            "config": dict(self.config),
            "metrics": dict(self.metrics),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, path: Path | None = None) -> RerankerArtifact:
        """A record from its :meth:`to_dict` form (the reader checks its ``format``); raises ValueError /
        KeyError / TypeError when malformed."""
        return cls(
            kind=str(data["kind"]),
            base_model=str(data["base_model"]),
            gguf_file=data.get("gguf_file"),
            fusion_weight=float(data["fusion_weight"]),
            rerank_top=int(data["rerank_top"]),
            max_length=int(data.get("max_length", 256)),
            config=data.get("config") or {},
            metrics=data.get("metrics") or {},
            created=str(data.get("created", "")),
            path=path,
        )


@dataclass(frozen=True)
class LoadedReranker:
    """A ready reranker plus the fusion weight and M it was trained for (None: not trained here)."""

    reranker: Reranker
    fusion_weight: float | None = None
    rerank_top: int | None = None
    artifact: RerankerArtifact | None = None


def save_reranker(
    outcome: RerankerTrainingOutcome,
    root: Path,
    name: str,
    *,
    base_model: str | Path,
    gguf_file: str | None,
    fusion_weight: float,
    rerank_top: int,
    config: Mapping[str, Any],
    metrics: Mapping[str, Any] | None = None,
) -> RerankerArtifact:
    """Write the trained model (cross-encoder folder or LoRA adapter) and its record as a new version."""
    version = new_version_dir(root, name, setting="reranker name")
    reranker = outcome.reranker
    if isinstance(reranker, CrossEncoderReranker):
        reranker.model.save_pretrained(str(version / "model"))
    else:
        reranker.model.save_pretrained(str(version / "adapter"))  # a peft model saves only its adapter
    artifact = RerankerArtifact(
        kind=reranker.kind,
        base_model=str(base_model),
        gguf_file=gguf_file,
        fusion_weight=float(fusion_weight),
        rerank_top=int(rerank_top),
        max_length=int(getattr(reranker, "max_length", 256)),
        config=dict(config),
        metrics=dict(metrics or {}),
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        path=version / "reranker.json",
    )
    write_json_atomic(version / "reranker.json", artifact.to_dict())
    return artifact


def read_artifact(path: Path) -> RerankerArtifact:
    file = resolve_versioned(path, "reranker.json", hint="reranker: give a `toolsift train reranker` output or a model spec")
    return load_json_record(file, RERANKER_FORMAT, lambda data: RerankerArtifact.from_dict(data, path=file),
                            problem=f"reranker: {file} is not a toolsift reranker artifact")


def load_reranker(spec: str, *, device: str = "auto", batch_size: int = 32) -> LoadedReranker:
    """The reranker a ``reranker`` setting names (see the module docstring for the forms)."""
    kind, sep, rest = spec.partition(":")
    if sep and kind in ("tool-rank", "cross-encoder"):
        if kind == "cross-encoder":
            return LoadedReranker(CrossEncoderReranker(rest, device=device, batch_size=batch_size))
        if rest == SMOLLM2:
            from toolsift.llm.server import bundled_smollm2_path

            return LoadedReranker(ToolRankReranker.load(bundled_smollm2_path(), device=device, batch_size=batch_size,
                                                        name="tool-rank:smollm2-135m"))
        return LoadedReranker(ToolRankReranker.load(rest, device=device, batch_size=batch_size))
    artifact = read_artifact(Path(spec).expanduser())
    assert artifact.path is not None
    folder = artifact.path.parent
    label = f"{artifact.kind}:{folder.parent.name}/{folder.name}"
    reranker: Reranker
    if artifact.kind == "cross-encoder":
        reranker = CrossEncoderReranker(folder / "model", device=device, name=label, max_length=artifact.max_length,
                                        batch_size=batch_size)
    elif artifact.kind == "tool-rank":
        reranker = ToolRankReranker.load(artifact.base_model, gguf_file=artifact.gguf_file, adapter=folder / "adapter",
                                         device=device, name=label, max_length=artifact.max_length,
                                         batch_size=batch_size)
    else:
        raise ConfigError(f"reranker: {artifact.path} has unknown kind {artifact.kind!r}")
    return LoadedReranker(reranker, artifact.fusion_weight, artifact.rerank_top, artifact)
