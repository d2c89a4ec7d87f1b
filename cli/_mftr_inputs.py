"""The MFTR input options shared by ``toolsift eval --method mftr`` and ``toolsift train``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

__all__ = ["mftr_input_options"]

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)

_OPTIONS = (
    click.option("--rewrites", type=_FILE, multiple=True,
                 help="Rewritten queries by query id (repeatable). Without: raw requests only."),
    click.option("--standardized", type=_FILE, multiple=True,
                 help="Standardised documents by tool id (repeatable). Without: rule-based standardisation."),
    click.option("--hard-negatives", "hard_negatives", type=_FILE, multiple=True,
                 help="BM25 hard negatives by query id (default: mined from the index)."),
    click.option("--folds", type=_FILE, help="The 5-fold split (default: a seeded 5-fold split)."),
)


def mftr_input_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add --rewrites, --standardized, --hard-negatives and --folds; the command gets one ``inputs``."""

    @functools.wraps(command)
    def wrapper(
        *args: Any,
        rewrites: tuple[Path, ...],
        standardized: tuple[Path, ...],
        hard_negatives: tuple[Path, ...],
        folds: Path | None,
        **kwargs: Any,
    ) -> Any:
        from toolsift.evaluation.mftr.inputs import MFTRInputs  # lazily: keeps torch out of --help

        inputs = MFTRInputs(rewrites=rewrites, standardized=standardized, folds=folds, hard_negatives=hard_negatives)
        return command(*args, inputs=inputs, **kwargs)

    for option in reversed(_OPTIONS):
        wrapper = option(wrapper)
    return wrapper
