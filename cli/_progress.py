"""Progress bars (tqdm on stderr) that stay silent in quiet and JSON modes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["progress_bars"]


@contextmanager
def progress_bars(enabled: bool) -> Iterator[Callable[[str, int, int], None]]:
    """A ``(stage, done, total)`` callback that drives one tqdm bar per stage."""
    bars: dict[str, Any] = {}

    def update(stage: str, done: int, total: int) -> None:
        if not enabled:
            return
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
