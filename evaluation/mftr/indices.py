"""The document variants of the MFTR evaluation, each its own index.

Every variant (``raw``: the rule-based fields, ``std``: the LLM-standardised fields, ``flat-std``: the
standardised document as one Full-Doc text) is an index ``toolsift-eval-<set>-<variant>``, built from
a catalog file materialised under ``<cache_dir>/eval-catalogs`` and reused while unchanged.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from opensearchpy import OpenSearch

from toolsift.config import Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import CatalogError, ConfigError
from toolsift.evaluation.mftr.inputs import read_json
from toolsift.evaluation.runner import ensure_eval_index, model_alias
from toolsift.ingest.benchmarks import Benchmark

__all__ = ["VARIANTS", "raw_tools", "variant_catalog", "ensure_variant_index"]

#: The document variants :func:`variant_catalog` writes.
VARIANTS = ("raw", "std", "flat-std")


def raw_tools(benchmark: Benchmark) -> list[dict[str, Any]]:
    """The tools of a ToolRet catalog (``tools.json``: id + documentation), as read."""
    data = read_json(benchmark.catalog_path, "catalog")
    if benchmark.catalog_format != "toolret" or not isinstance(data, list):
        raise CatalogError(
            f"{benchmark.path}: --method mftr reads ToolRet catalogs (tools.json with id + documentation)"
        )
    return [t for t in data if isinstance(t, dict)]


def variant_catalog(
    tools: Sequence[Mapping[str, Any]], standardized: Mapping[str, Any], variant: str
) -> list[dict[str, Any]]:
    """MFTR-format records (``mftr`` loader) for one document variant."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        tid = str(tool["id"])
        raw = tool.get("documentation", {})
        std = standardized.get(tid)
        if variant == "raw":
            out.append({"id": tid, "type": tool.get("type", ""), "origin_documentation": raw})
        elif variant == "std":
            record: dict[str, Any] = {"id": tid, "type": tool.get("type", ""), "origin_documentation": raw}
            if std is not None:
                record["augmented"] = std
            out.append(record)
        elif variant == "flat-std":
            # Full-Doc over the standardised document: it becomes the documentation itself.
            flat = {"name": raw.get("name", tid), **std} if std is not None else raw
            out.append({"id": tid, "type": tool.get("type", ""), "origin_documentation": flat})
        else:
            raise ConfigError(f"unknown document variant {variant!r} (known: {', '.join(VARIANTS)})")
    return out


def ensure_variant_index(
    client: OpenSearch,
    settings: Settings,
    embedder: Embedder,
    name: str,
    variant: str,
    records: list[dict[str, Any]],
) -> str:
    """The alias of the index of ``records`` (built unless an index of the same records exists)."""
    # Key order kept: Full-Doc is the documentation's JSON in its own order (the paper's json.dumps),
    # and the order changes what a dense model reads within its 256-token window.
    payload = json.dumps(records, ensure_ascii=False).encode()
    digest = hashlib.sha256(payload).hexdigest()[:12]
    folder = settings.cache_dir / "eval-catalogs"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{variant}-{digest}.json"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(payload)
        tmp.replace(path)
    alias = model_alias(f"toolsift-eval-{name}-{variant}", embedder.name)
    report = ensure_eval_index(client, settings, embedder, alias, path, "mftr", prune=True)
    if not report.ok:
        raise CatalogError(f"{name}/{variant}: {len(report.rejected)} record(s) rejected while building {alias}")
    return alias
