"""Search pipelines kept as JSON beside this module and applied idempotently through the client.

Each ``search-pipelines/<name>.json`` is a template; :func:`ensure_pipelines` installs it as
``<alias>-<name>`` with the min-max combination weights filled from the field weights (so the first
stage already ranks by them), and writes only when the stored body differs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError

__all__ = ["pipeline_templates", "render_pipeline", "ensure_pipelines", "put_pipeline", "pipeline_id", "layout_weights",
           "HYBRID_LAYOUT"]

_LEXICAL_SHARE = 0.5  # hybrid: the BM25 sub-query's share; the dense fields split the rest


def pipeline_templates() -> dict[str, dict[str, Any]]:
    """Every pipeline template shipped with toolsift, by name."""
    folder = resources.files("toolsift.plugin_scripts") / "search-pipelines"
    out = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            out[entry.name[: -len(".json")]] = json.loads(entry.read_text(encoding="utf-8"))
    return out


#: Sub-queries of the candidate ``hybrid`` query (built by :mod:`toolsift.query.builder`), in order;
#: the pipelines' weights follow this order.
HYBRID_LAYOUT: dict[str, tuple[str, ...]] = {
    "hybrid": ("lexical", "description", "response", "examples", "parameters"),
    "minilm": ("description", "response", "examples", "parameters", "full_doc"),
}


def pipeline_id(alias: str, name: str, tag: str = "") -> str:
    """``<alias>-<name>``, or ``<alias>-<name>-<tag>`` for pipelines of one learned weight set."""
    return f"{alias}-{name}-{tag}" if tag else f"{alias}-{name}"


def layout_weights(name: str, field_weights: Mapping[str, float]) -> list[float] | None:
    """Sub-query weights for a min-max template, in the order of the builder's hybrid layout."""
    retriever = name.split("-", 1)[0]
    layout = HYBRID_LAYOUT.get(retriever)
    if layout is None or not name.endswith("minmax"):
        return None
    raw = [field_weights.get(part, 0.0) for part in layout if part != "lexical"]
    if "full_doc" in layout:  # dense only: the flat vector as a recall safety net, small weight
        raw[layout.index("full_doc")] = 0.1 * max(sum(raw), 1e-6)
    total = sum(raw) or 1.0
    dense = [w / total for w in raw]
    if "lexical" in layout:
        dense = [_LEXICAL_SHARE] + [w * (1 - _LEXICAL_SHARE) for w in dense]
    # The processor wants the weights to sum to 1; keep every sub-query above 0.
    floored = [max(w, 0.001) for w in dense]
    total = sum(floored)
    return [round(w / total, 6) for w in floored]


def render_pipeline(name: str, template: Mapping[str, Any], field_weights: Mapping[str, float]) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(json.dumps(template))
    weights = layout_weights(name, field_weights)
    if weights is not None:
        for proc in body.get("phase_results_processors", []):
            norm = proc.get("normalization-processor")
            if norm:
                norm["combination"]["parameters"]["weights"] = weights
    return body


def ensure_pipelines(
    client: OpenSearch, alias: str, field_weights: Mapping[str, float], *, tag: str = ""
) -> dict[str, str]:
    """Install every template for ``alias`` with these weights; returns template name → pipeline id.

    ``tag`` (a learned weight set's digest) gives those weights pipelines of their own, so searches
    with and without them never overwrite each other's pipeline.
    """
    ids = {}
    for name, template in pipeline_templates().items():
        pid = pipeline_id(alias, name, tag)
        put_pipeline(client, pid, render_pipeline(name, template, field_weights))
        ids[name] = pid
    return ids


def put_pipeline(client: OpenSearch, pid: str, body: Mapping[str, Any]) -> bool:
    """Store the search pipeline ``pid`` unless it already holds ``body``; True when it wrote."""
    try:
        current = client.search_pipeline.get(id=pid).get(pid)
    except NotFoundError:
        current = None
    if current == body:
        return False
    client.search_pipeline.put(id=pid, body=body)
    return True
