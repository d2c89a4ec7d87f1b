"""Encoders that ship inside the package: LoRA adapters over the bundled all-MiniLM-L6-v2.

A trained encoder is 87 MB of weights; its LoRA adapter (``toolsift train embedder --lora-rank 16``)
is under 3 MB. ``encoders/models/<name>/`` holds the adapter (peft's ``adapter_config.json`` and
``adapter_model.safetensors``) and the training record (``toolsift-embedder.json``: the training data's
SHA-256, the recipe, the adapter's SHA-256 and the identity indices record). The first use merges the
adapter into the bundled weights and writes a sentence-transformers folder under
``<cache_dir>/embedders/<name>-<adapter hash>/`` (atomically; a few seconds), which every later use
and both backends load as any model folder. Nothing is downloaded.

The shipped adapter is checked against the hash its record pins before it is merged.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from toolsift.errors import ConfigError

__all__ = ["SHIPPED_DIR", "MANIFEST", "shipped_names", "shipped_record", "read_record", "materialise", "weights_sha256"]

#: Where shipped adapters live.
SHIPPED_DIR = Path(__file__).resolve().parent / "models"
#: The record beside a trained encoder's files.
MANIFEST = "toolsift-embedder.json"


def weights_sha256(folder: Path) -> str:
    """SHA-256 over the weight files (``*.safetensors``, ``*.bin``) directly in ``folder``, by name."""
    digest = hashlib.sha256()
    files = sorted(p for p in folder.iterdir() if p.suffix in (".safetensors", ".bin") and p.is_file())
    if not files:
        raise ConfigError(f"embedding model {folder}: no weight files (*.safetensors or *.bin)")
    for f in files:
        digest.update(f.name.encode())
        with f.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def shipped_names() -> list[str]:
    """The names of the encoders shipped in the package."""
    if not SHIPPED_DIR.is_dir():
        return []
    return sorted(p.name for p in SHIPPED_DIR.iterdir() if (p / MANIFEST).is_file())


def read_record(file: Path, setting: str) -> dict[str, Any]:
    """A trained encoder's record (``toolsift-embedder.json``), checked to hold an identity; ``setting``
    opens the error message."""
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{setting}: {file} cannot be read ({exc})") from exc
    if not isinstance(record, dict) or not isinstance(record.get("identity"), str) or not record["identity"]:
        raise ConfigError(f"{setting}: {file} has no identity")
    return record


def shipped_record(name: str) -> dict[str, Any]:
    """The training record of the shipped encoder ``name``."""
    return read_record(SHIPPED_DIR / name / MANIFEST, f"embedding_model={name!r}")


def materialise(name: str, base_folder: Path, cache_dir: Path) -> Path:
    """The model folder of the shipped encoder ``name``: ``base_folder``'s weights with its adapter merged in."""
    source = SHIPPED_DIR / name
    record = shipped_record(name)
    pinned = str(record.get("outcome", {}).get("adapter_sha256", ""))
    actual = weights_sha256(source)
    if actual != pinned:
        raise ConfigError(f"embedding_model={name!r}: the shipped adapter's SHA-256 {actual[:12]}… is not the "
                          f"{pinned[:12] or 'none'}… its record pins; reinstall toolsift")
    target = cache_dir / "embedders" / f"{name}-{actual[:12]}"
    if (target / "modules.json").is_file() and (target / MANIFEST).is_file():
        return target
    from peft import PeftModel
    from sentence_transformers import SentenceTransformer

    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
    try:
        model = SentenceTransformer(str(base_folder), device="cpu", local_files_only=True)
        inner: Any = model[0].model  # the Transformer module's Hugging Face model
        model[0].model = PeftModel.from_pretrained(inner, str(source)).merge_and_unload()
        model.save(str(work))
        shutil.copy2(source / MANIFEST, work / MANIFEST)
        try:
            os.replace(work, target)
        except OSError:  # another process merged it first: theirs is the same model
            if not (target / "modules.json").is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target
