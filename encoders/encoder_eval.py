"""``toolsift bench embedder``: every benchmark, once per encoder, in one run.

The rows a trained encoder must move (and must not break), each measured for every model given —
the bundled all-MiniLM-L6-v2 first, as the baseline, then each candidate — on the same node, by the
same code as ``toolsift eval``:

* tool level on APIBank and Toolink (ToolRet) and ToolLens's test split: Full-Doc MiniLM (dense only),
  multi-field MiniLM and multi-field hybrid (the default retriever);
* LiveMCPBench whole questions through the MCP server (``--level request``: the default multi-need,
  hybrid search), tool R@5 and agent R@5;
* LiveMCPBench agent level (``--level agent``, MiniLM: the main Tool-to-Agent row);
* ToolLens sets (``--set``, PTR with history).

Each encoder gets each benchmark's index of its own (``runner.model_alias``: the bundled model's indices
are never rebuilt for another); the JSON holds every row's metrics per model and which
benchmarks share a source with the training data (:data:`TRAINING_OVERLAP`), so a reader can tell a
set the model never saw from one it may have.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from toolsift.config import Settings
from toolsift.encoders.embedding import load_embedder

__all__ = ["EMBEDDER_ROWS", "TRAINING_OVERLAP", "run_embedder_bench", "embedder_table"]

#: Tool-level rows: (benchmark folder under the datasets root, method, retriever).
EMBEDDER_ROWS: tuple[tuple[str, str, str], ...] = (
    ("toolret/apibank", "full-doc", "minilm"),
    ("toolret/apibank", "multi-field", "minilm"),
    ("toolret/apibank", "multi-field", "hybrid"),
    ("toolret/toolink", "full-doc", "minilm"),
    ("toolret/toolink", "multi-field", "minilm"),
    ("toolret/toolink", "multi-field", "hybrid"),
    ("toollens", "full-doc", "minilm"),
    ("toollens", "multi-field", "hybrid"),
)

#: How each shared benchmark relates to ``../shared/datasets/train`` (its README's overlap rules and sources).
TRAINING_OVERLAP: dict[str, str] = {
    "toolret/apibank": "none: API-Bank is excluded from the training mix; queries and same-named tools screened out",
    "toolret/toolink": "none: Toolink is not a training source; queries and same-named tools screened out",
    "livemcpbench": "none: no MCP catalog in the training mix; queries and same-named tools screened out",
    "toollens": "same API pool: ToolLens and StableToolBench (a training source) both come from RapidAPI/ToolBench; "
                "ToolLens's queries and same-named, similar tools were screened out, other tools of the pool remain",
}


def _row(name: str, benchmark: str, metrics: dict[str, float], seconds: float) -> dict[str, Any]:
    return {"row": name, "benchmark": benchmark, "metrics": {k: round(float(v), 4) for k, v in metrics.items()},
            "seconds": round(seconds, 1)}


def _model_rows(client: OpenSearch, settings: Settings, datasets: Path,
                progress: Callable[[str, int, int], None] | None) -> list[dict[str, Any]]:
    from toolsift.agents.agent_eval import run_agent_eval
    from toolsift.evaluation.request_eval import run_request_eval
    from toolsift.evaluation.runner import run_eval
    from toolsift.sets.set_eval import run_set_eval

    embedder = load_embedder(settings)
    rows: list[dict[str, Any]] = []
    for folder, method, retriever in EMBEDDER_ROWS:
        started = time.perf_counter()
        result = run_eval(client, settings, datasets / folder, method=method, retriever=retriever,  # type: ignore[arg-type]
                          embedder=embedder)
        rows.append(_row(f"{method} {retriever}", folder, {k: result.metrics[k] for k in ("ndcg@10", "recall@5")},
                         time.perf_counter() - started))
    started = time.perf_counter()
    requests = run_request_eval(client, settings, datasets / "livemcpbench", embedder=embedder, peer=False,
                                progress=progress)
    main = requests.main.metrics
    rows.append(_row("whole question via MCP (default)", "livemcpbench",
                     {k: main[k] for k in ("tool_R@5", "tool_R@10", "agent_R@5")}, time.perf_counter() - started))
    started = time.perf_counter()
    agents = run_agent_eval(client, settings, datasets / "livemcpbench", retriever="minilm", embedder=embedder,
                            progress=progress)
    rows.append(_row(f"agent level: {agents.main.name}", "livemcpbench",
                     {k: v for k, v in agents.main.metrics.items() if k in ("recall@5", "ndcg@5")},
                     time.perf_counter() - started))
    started = time.perf_counter()
    sets = run_set_eval(client, settings, datasets / "toollens", embedder=embedder, progress=progress)
    main_set = next(r for r in sets.rows if r.main)
    rows.append(_row(f"sets: {main_set.name}", "toollens",
                     {k: main_set.metrics[k] for k in ("tracc", "recall@gt", "ndcg@gt")}, time.perf_counter() - started))
    return rows


def run_embedder_bench(
    client: OpenSearch,
    settings: Settings,
    datasets: Path,
    models: Sequence[str],
    *,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Every row of :data:`EMBEDDER_ROWS` and the LiveMCPBench and ToolLens rows for each of ``models``."""
    results: dict[str, Any] = {"datasets": str(datasets), "training_overlap": TRAINING_OVERLAP, "models": []}
    for model in models:
        local = settings.with_overrides(embedding_model=model)
        embedder = load_embedder(local)
        started = time.perf_counter()
        rows = _model_rows(client, local, datasets, progress)
        results["models"].append({"model": model, "identity": embedder.name, "backend": embedder.backend,
                                  "rows": rows, "seconds": round(time.perf_counter() - started, 1)})
    return results


def embedder_table(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the before/after table: one line per benchmark row and metric, a column per model
    (the first is the baseline; later columns show their difference to it)."""
    models = results["models"]
    header = ["benchmark", "row", "metric", *(m["identity"] for m in models)]
    lines: list[list[str]] = []
    for i, row in enumerate(models[0]["rows"]):
        for metric, base in row["metrics"].items():
            cells = [f"{base:.4f}"]
            for other in models[1:]:
                value = other["rows"][i]["metrics"][metric]
                cells.append(f"{value:.4f} ({value - base:+.4f})")
            lines.append([row["benchmark"], row["row"], metric, *cells])
    return header, lines
