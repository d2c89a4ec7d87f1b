"""Progress: tqdm bars on a terminal, one plain line per stage in a log; silent in quiet and JSON modes."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["progress_bars"]


@contextmanager
def progress_bars(enabled: bool) -> Iterator[Callable[[str, int, int], None]]:
    """A ``(stage, done, total)`` callback that drives one tqdm bar per stage on stderr.

    When stderr is not a terminal (redirected to a file, a CI log) bars would leave carriage returns
    and cursor-up escapes in it: each stage is then one line, ``stage: done of total``, written when
    the stage ends (reaches its total, or when the next stage starts or the block ends).
    """
    if not enabled:
        yield lambda stage, done, total: None
        return
    if not sys.stderr.isatty():
        with _stage_lines() as lines:
            yield lines
        return
    bars: dict[str, Any] = {}

    def update(stage: str, done: int, total: int) -> None:
        from tqdm import tqdm

        bar = bars.get(stage)
        if bar is None:
            bar = bars[stage] = tqdm(total=total or None, desc=stage, unit="doc", leave=False)
        if total and bar.total != total:
            bar.total = total
        bar.n = done
        bar.refresh()

    try:
        yield update
    finally:
        for bar in bars.values():
            bar.close()


@contextmanager
def _stage_lines() -> Iterator[Callable[[str, int, int], None]]:
    last: dict[str, tuple[int, int]] = {}
    written: set[str] = set()

    def write(stage: str) -> None:
        if stage not in written:
            written.add(stage)
            done, total = last[stage]
            print(f"{stage}: {done} of {total}" if total else f"{stage}: {done}", file=sys.stderr, flush=True)

    def update(stage: str, done: int, total: int) -> None:
        for other in last:
            if other != stage:
                write(other)
        last[stage] = (done, total)
        if total and done >= total:
            write(stage)

    try:
        yield update
    finally:
        for stage in last:
            write(stage)
