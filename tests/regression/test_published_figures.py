"""Every figure docs/evaluation.md publishes holds: each published row is re-measured and compared.

One test per published row. The run behind it (``runs.RUNS``: the same library call as the command
the docs print) is executed once per session; the row's metrics must equal the recorded values of
``published.FIGURES`` within ``published.TOLERANCE`` (±0.005: the runs are deterministic on this
machine kind, so a wider band would only hide regressions). Rows of runs too slow for every CI run
are ``slow`` (``make test-slow``); their slices run in CI with values of their own. Every measured
row is written to ``build/figures/<run>.json``, so a failing row can be compared by hand. A run
``measured_by`` another is that run's execution, read for its own rows.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from published import FIGURES, TOLERANCE, tolerance_for
from runs import RUNS, Context, rows_of

pytestmark = pytest.mark.integration

MEASURED = Path(__file__).resolve().parents[2] / "build" / "figures"


def _params() -> list[Any]:
    params = []
    for run_id, run in RUNS.items():
        marks = [pytest.mark.slow] if run.slow else []
        rows = FIGURES.get(run_id) or {None: {}}  # a run nothing is recorded for: measured, then failed
        params += [pytest.param(run_id, row, id=f"{run_id} :: {row or '(nothing recorded)'}", marks=marks)
                   for row in rows]
    return params


@pytest.fixture(scope="session")
def measured(client: Any, base_settings: Any, embedder: Any, datasets: Path,
             tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``measured(run_id) -> rows``: each run executed once per session, its rows written to build/figures."""
    context = Context(client, base_settings, embedder, datasets, tmp_path_factory.mktemp("runs"))
    done: dict[str, dict[str, dict[str, float]]] = {}

    def get(run_id: str) -> dict[str, dict[str, float]]:
        by = RUNS[run_id].measured_by or run_id
        if by not in done:
            started = time.perf_counter()
            result = RUNS[by].execute(context)
            seconds = round(time.perf_counter() - started, 1)
            done[by] = rows_of(result)
            MEASURED.mkdir(parents=True, exist_ok=True)
            for ran in [by, *(r for r, run in RUNS.items() if run.measured_by == by)]:
                (MEASURED / f"{ran.replace('/', '__')}.json").write_text(
                    json.dumps({"run": ran, "command": RUNS[by].command, "seconds": seconds, "rows": done[by],
                                "result": result},
                               indent=1, ensure_ascii=False, default=str), encoding="utf-8")
        return done[by]

    return get


@pytest.mark.parametrize(("run_id", "row"), _params())
def test_a_published_row_is_what_the_code_measures(measured: Any, run_id: str, row: str | None) -> None:
    rows = measured(run_id)

    assert row is not None, (f"{RUNS[run_id].command}: no published figures; record them with "
                             f"`python tests/regression/record_figures.py {run_id}` (rows in build/figures)")
    assert row in rows, f"{RUNS[run_id].command} no longer prints the row {row!r} (it prints {sorted(rows)})"
    published = FIGURES[run_id][row]
    got = {metric: rows[row].get(metric) for metric in published}
    tol = tolerance_for(run_id, row)
    assert got == pytest.approx(published, abs=tol), (
        f"{RUNS[run_id].command}: row {row!r} moved beyond ±{tol} of the published figures"
    )


def test_every_run_with_published_rows_is_a_known_command() -> None:
    assert set(FIGURES) <= set(RUNS)
    assert TOLERANCE == 0.005
    assert all(f"{run_id}/slice" in FIGURES for run_id, run in RUNS.items() if run.slow and run_id in FIGURES)


def test_a_run_records_only_the_metrics_it_holds() -> None:
    recorded = [(run_id, row, metric) for run_id, rows in FIGURES.items() for row, metrics in rows.items()
                for metric in metrics]
    assert [r for r in recorded if not RUNS[r[0]].holds(r[1], r[2])] == []
