"""Learned MFTR weights as a versioned artifact on disk.

``<root>/<name>/v<NNN>/weights.json`` holds the weights, the configuration they were learned with
(index, retriever, embedding model, dataset, folds, training recipe) and how they scored. A path to
a name folder resolves to its newest version; ``toolsift search --weights PATH`` and the
``weights`` setting accept any of the three forms.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from toolsift.errors import ConfigError
from toolsift.ranker.mftr import MFTRWeights

__all__ = ["WeightsArtifact", "load_artifact", "FORMAT", "new_version_dir", "name_problem", "resolve_versioned",
           "write_json_atomic", "check_format", "load_json_record"]

FORMAT = "toolsift-mftr-weights/1"
_VERSION = re.compile(r"^v(\d+)$")
T = TypeVar("T")


@dataclass(frozen=True)
class WeightsArtifact:
    """Learned weights plus their provenance.

    Args:
        weights: the MFTR model's parameters.
        config: what they were learned on and how (index, retriever, embedding_model, dataset,
            folds, fold, query_form, training recipe).
        metrics: evaluation figures measured with them, if any.
        path: the ``weights.json`` file once saved or loaded.
    """

    weights: MFTRWeights
    config: Mapping[str, Any] = field(default_factory=dict)
    metrics: Mapping[str, Any] = field(default_factory=dict)
    created: str = ""
    path: Path | None = None

    @property
    def digest(self) -> str:
        """A short content hash of the weights (names the first-stage pipelines they feed)."""
        blob = json.dumps(self.weights.to_dict(), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:10]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "created": self.created,
            "digest": self.digest,
            "config": dict(self.config),
            "weights": self.weights.to_dict(),
            "metrics": dict(self.metrics),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, path: Path | None = None) -> WeightsArtifact:
        """An artifact from its :meth:`to_dict` form; raises ConfigError / ValueError / KeyError when malformed."""
        check_format(data, FORMAT)
        return cls(
            weights=MFTRWeights.from_dict(data["weights"]),
            config=data.get("config") or {},
            metrics=data.get("metrics") or {},
            created=str(data.get("created", "")),
            path=path,
        )

    @property
    def tag(self) -> str:
        """``w<digest>``: what names this weight set's search pipelines and ranking pipeline."""
        return f"w{self.digest}"

    @property
    def version(self) -> str:
        """``<name>/vNNN`` once saved, else :attr:`tag`."""
        if self.path is None:
            return self.tag
        return f"{self.path.parent.parent.name}/{self.path.parent.name}"

    def save(self, root: Path, name: str) -> WeightsArtifact:
        """Write a new version under ``root/name``; returns the artifact with its path set."""
        version = new_version_dir(root, name, setting="weights name")
        created = self.created or datetime.now(timezone.utc).isoformat(timespec="seconds")
        saved = WeightsArtifact(self.weights, self.config, self.metrics, created, version / "weights.json")
        write_json_atomic(version / "weights.json", saved.to_dict())
        return saved


def name_problem(name: str, what: str) -> str | None:
    """Why ``name`` cannot name a versioned artifact (``what``: how the message calls it); None: it can."""
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        return None
    return f"{what} {name!r}: use letters, digits, '.', '_' and '-'"


def new_version_dir(root: Path, name: str, *, setting: str) -> Path:
    """Create and return ``root/name/vNNN`` with NNN one above the highest existing version."""
    problem = name_problem(name, setting)
    if problem:
        raise ConfigError(problem)
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    taken = [int(m.group(1)) for p in folder.iterdir() if (m := _VERSION.match(p.name))]
    version = folder / f"v{max(taken, default=0) + 1:03d}"
    version.mkdir()
    return version


def check_format(data: Mapping[str, Any], expected: str) -> None:
    """Raise ConfigError unless the record ``data`` names the format ``expected``."""
    if data.get("format") != expected:
        raise ConfigError(f"format is {data.get('format')!r}, expected {expected!r}")


def load_json_record(file: Path, expected: str, build: Callable[[dict[str, Any]], T], *, problem: str) -> T:
    """``build`` of the JSON record in ``file``, which must name the format ``expected``.

    Raises:
        ConfigError: ``"<problem> (<why>)"`` when the file cannot be read, is not JSON, names another
            format, or ``build`` finds it malformed (a ConfigError, ValueError, KeyError or TypeError).
    """
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        check_format(data, expected)
        return build(data)
    except (OSError, ConfigError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{problem} ({exc})") from exc


def write_json_atomic(path: Path, data: Mapping[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=2)
    os.replace(tmp, path)


def resolve_versioned(path: Path, filename: str, *, hint: str) -> Path:
    """``path`` as a file, a version folder holding ``filename``, or a name folder (its newest version)."""
    if path.is_file():
        return path
    if (path / filename).is_file():
        return path / filename
    if path.is_dir():
        versions = sorted(
            (int(m.group(1)), p) for p in path.iterdir() if (m := _VERSION.match(p.name)) and (p / filename).is_file()
        )
        if versions:
            return versions[-1][1] / filename
    raise ConfigError(f"no {filename} at {path} ({hint})")


def load_artifact(path: str | Path) -> WeightsArtifact:
    """Read a weights artifact from a ``weights.json``, its version folder, or a name folder (newest).

    Raises:
        ConfigError: naming the ``weights`` setting when the file is missing or malformed.
    """
    file = resolve_versioned(Path(path).expanduser(), "weights.json", hint="weights: give a `toolsift train` output folder or file")
    return load_json_record(file, FORMAT, lambda data: WeightsArtifact.from_dict(data, path=file),
                            problem=f"weights: {file} is not a toolsift weights artifact")
