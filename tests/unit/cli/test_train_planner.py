"""`toolsift train planner`: what it refuses before it reads the index."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from toolsift.cli.main import cli
from toolsift.search.planner import PlannerParams
from toolsift.workbench.calibration import GridPoint, choose


@pytest.mark.parametrize(("option", "value"), [("--lexical-weights", "0,abc"), ("--lexical-weights", ","),
                                               ("--server-weights", "x")])
def test_a_grid_that_is_not_numbers_is_refused_naming_the_option(tmp_path, option: str, value: str) -> None:  # type: ignore[no-untyped-def]
    answer = CliRunner().invoke(cli, ["train", "planner", str(tmp_path), option, value])

    assert answer.exit_code == 2 and option in answer.output and "Traceback" not in answer.output


def test_half_a_chooses_and_a_tie_goes_to_the_smaller_lambda_then_the_smaller_beta() -> None:
    def point(beta: float, lam: float, a: float, b: float) -> GridPoint:
        return GridPoint(PlannerParams(beta, 1, lam), {"ndcg@10": a}, {"ndcg@10": b})

    best_on_b = point(0.4, 0.9, 0.50, 0.70)
    tied = [point(0.4, 0.6, 0.55, 0.40), point(0.4, 0.3, 0.55, 0.30), point(0.8, 0.3, 0.55, 0.90), best_on_b]

    assert choose(tied, "ndcg@10").params == PlannerParams(0.4, 1, 0.3)  # half B never chooses
