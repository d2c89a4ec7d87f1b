"""The base ranker's protocol: what MFTR and the fixed-weight ranker both are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from toolsift.records import FieldSignals, RankedTool

__all__ = ["Ranker"]


class Ranker(Protocol):
    """A base scorer: orders first-stage candidates by their field signals (MFTR, fixed weights)."""

    name: str

    def rank(self, candidates: Sequence[FieldSignals], top_k: int) -> list[RankedTool]: ...
