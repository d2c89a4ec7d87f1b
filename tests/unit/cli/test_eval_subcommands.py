"""`toolsift eval` is five subcommands, and every command line from before them still runs the one its
flags name."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from toolsift.cli.eval import legacy_args
from toolsift.cli.main import cli

DIR = "../shared/datasets/toolret/apibank"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ([DIR], ["tools", DIR]),
        ([DIR, "--method", "full-doc", "--retriever", "bm25"], ["tools", DIR, "--method", "full-doc", "--retriever", "bm25"]),
        ([DIR, "--level", "tool", "--json", "e.json"], ["tools", DIR, "--json", "e.json"]),
        ([DIR, "--method", "mftr", "--rewrites", "r.json"], ["mftr", DIR, "--rewrites", "r.json"]),
        ([DIR, DIR, "--method=mftr", "--no-ablations"], ["mftr", DIR, DIR, "--no-ablations"]),
        (["live", "--level", "agent", "--limit", "5"], ["agents", "live", "--limit", "5"]),
        (["live", "--level=request", "--llm-rewrite"], ["requests", "live", "--llm-rewrite"]),
        (["lens", "--set", "--no-history"], ["sets", "lens", "--no-history"]),
    ],
)
def test_a_command_line_from_before_the_subcommands_names_its_subcommand(old: list[str], new: list[str]) -> None:
    assert legacy_args(old) == new


def test_an_unknown_level_is_a_usage_error_naming_the_option() -> None:
    with pytest.raises(click.BadParameter, match="'agnt' is not one of"):
        legacy_args([DIR, "--level", "agnt"])


@pytest.mark.parametrize(
    ("line", "usage"),
    [
        ([DIR, "--method", "mftr", "--help"], "Usage: toolsift eval mftr [OPTIONS] DATASET_DIRS..."),
        (["mftr", DIR, "--help"], "Usage: toolsift eval mftr [OPTIONS] DATASET_DIRS..."),
        ([DIR, "--set", "--help"], "Usage: toolsift eval sets [OPTIONS] DATASET_DIR"),
        ([DIR, "--help"], "Usage: toolsift eval tools [OPTIONS] DATASET_DIR"),
    ],
)
def test_old_and_new_lines_reach_the_same_subcommand(line: list[str], usage: str) -> None:
    result = CliRunner().invoke(cli, ["eval", *line], prog_name="toolsift")

    assert result.exit_code == 0, result.output
    assert usage in result.output


def test_an_option_of_another_kind_of_evaluation_is_refused_by_name() -> None:
    result = CliRunner().invoke(cli, ["eval", "sets", DIR, "--split", "dev"])

    assert result.exit_code == 2 and "No such option '--split'" in result.output
