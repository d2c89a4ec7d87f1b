"""Publish re-measured rows: copy runs' rows from ``build/figures/`` into ``published.json``.

``test_published_figures`` writes every run it executes to ``build/figures/<run>.json``. After an
intended change of a figure (a new method, a fixed bug), re-run the run's tests, then::

    python tests/regression/record_figures.py mftr/apibank/bm25 [RUN_ID ...]

rewrites those runs' entries in ``published.json`` (``published.FIGURES``; rounded to 4 decimals, as
the docs print them; only the metrics a run holds, ``runs.Run.held``) and leaves the others as they
are. Update the docs and ``docs/figures/`` in the same commit; ``test_docs_publish_only_guarded_figures``
then finds any number the docs still show from before.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEASURED = HERE.parents[1] / "build" / "figures"
RECORDED = HERE / "published.json"


def render(figures: dict[str, dict[str, dict[str, float]]], order: list[str]) -> str:
    """``published.json``'s text: one line per row, runs in ``order`` (diffs show the rows that moved)."""
    runs = []
    for run_id in order:
        rows = ",\n".join(f"    {json.dumps(row, ensure_ascii=False)}: {json.dumps(metrics, ensure_ascii=False)}"
                          for row, metrics in figures[run_id].items())
        runs.append(f"  {json.dumps(run_id)}: {{\n{rows}\n  }}")
    return "{\n" + ",\n".join(runs) + "\n}\n"


def main(run_ids: list[str]) -> int:
    sys.path.insert(0, str(HERE))
    from published import FIGURES
    from runs import RUNS

    figures = dict(FIGURES)
    for run_id in run_ids:
        if run_id not in RUNS:
            print(f"unknown run {run_id!r} (runs.RUNS has {', '.join(RUNS)})", file=sys.stderr)
            return 2
        path = MEASURED / f"{run_id.replace('/', '__')}.json"
        if not path.is_file():
            print(f"{path} is missing: run the run's tests first", file=sys.stderr)
            return 2
        rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
        held = {row: {k: round(v, 4) for k, v in metrics.items() if RUNS[run_id].holds(row, k)}
                for row, metrics in rows.items()}
        figures[run_id] = {row: metrics for row, metrics in held.items() if metrics}
    order = [run_id for run_id in RUNS if run_id in figures]
    RECORDED.write_text(render(figures, order), encoding="utf-8")
    print(f"recorded {len(run_ids)} run(s) in {RECORDED}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
