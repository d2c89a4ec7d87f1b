"""What the tests on a real node that write their own catalogs share: slices of the benchmark data as catalog
files, and the cleanup of a test's own index alias. Not a test module: the tests import from it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolsift.mappings.index import IndexManager

__all__ = ["benchmark_records", "write_catalog", "drop_alias"]


def benchmark_records(datasets: Path, name: str) -> list[dict[str, Any]]:
    """The records of a benchmark's catalog, ``<datasets>/<name>/tools.json`` (``toolret/apibank``,
    ``livemcpbench``), as the file has them."""
    return list(json.loads((datasets / name / "tools.json").read_text(encoding="utf-8")))


def write_catalog(folder: Path, data: Any) -> Path:
    """``<folder>/tools.json``: the loaders name the catalog after the folder (``toolret/apibank``)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tools.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def drop_alias(client: Any, alias: str) -> None:
    """Every index version behind ``alias`` and the search pipelines named after it (``<alias>-...``)."""
    IndexManager(client, alias).delete_all()
    for pipeline_id in client.search_pipeline.get(ignore=404):
        if pipeline_id.startswith(f"{alias}-"):
            client.search_pipeline.delete(id=pipeline_id)
