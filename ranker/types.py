"""The ranker's records and protocol, shared by every ranking stage and transport."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from toolsift.query.builder import FieldSignals

if TYPE_CHECKING:
    from toolsift.ranker.protocol import RankRequest, RankResponse

__all__ = ["RankedTool", "RankedAgent", "Ranker", "RankingService"]


@dataclass(frozen=True)
class RankedTool:
    """One ranked tool (or agent document) with the evidence for its score.

    Args:
        score: the final score the list is sorted by.
        field_scores: per MFTR field, the score the ranker used (normalised to [0, 1] in v0).
        contributions: per field, its weighted contribution to ``score``.
        raw_scores: kind (bm25 / dense) → field → raw score, as OpenSearch computed it.
        missing_required: required parameters that no extracted argument covers.
        first_stage_rank: 1-based rank in OpenSearch's candidate list (0: not from the first stage).
        base_score: the base ranker's (MFTR's) score when a reranker changed ``score``.
        reranker_score: the second-stage reranker's score (P(true) for Tool-Rank), when it ran.
    """

    doc_id: str
    name: str
    entity: str
    agent_id: str | None
    score: float
    field_scores: Mapping[str, float] = field(default_factory=dict)
    contributions: Mapping[str, float] = field(default_factory=dict)
    raw_scores: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    missing_required: tuple[str, ...] = ()
    first_stage_rank: int = 0
    base_score: float | None = None
    reranker_score: float | None = None

    @classmethod
    def from_signals(
        cls,
        cand: FieldSignals,
        *,
        score: float,
        field_scores: Mapping[str, float],
        contributions: Mapping[str, float],
        missing_required: tuple[str, ...],
    ) -> RankedTool:
        """A ranked candidate: identity, raw scores and first-stage rank come from its signals."""
        return cls(
            doc_id=cand.doc_id,
            name=cand.name,
            entity=cand.entity,
            agent_id=cand.agent_id,
            score=score,
            field_scores=field_scores,
            contributions=contributions,
            raw_scores={k: dict(v) for k, v in cand.fields.items()},
            missing_required=missing_required,
            first_stage_rank=cand.first_stage_rank,
        )


@dataclass(frozen=True)
class RankedAgent:
    """An agent chosen by owner aggregation, with the entities that led to it.

    Args:
        via: the ranked entities (its tools, or its own agent document) that mapped to it.
        steps: step-wise querying: the 1-based steps whose ranking reached it, in step order.
        step_scores: its score in each of ``steps`` (same order).
    """

    agent_id: str
    name: str
    score: float
    rank: int
    via: tuple[str, ...] = ()
    steps: tuple[int, ...] = ()
    step_scores: tuple[float, ...] = ()


class Ranker(Protocol):
    """A base scorer: orders first-stage candidates by their field signals (MFTR, fixed weights)."""

    name: str

    def rank(self, candidates: Sequence[FieldSignals], top_k: int) -> list[RankedTool]: ...


class RankingService(Protocol):
    """The one ranker the search path calls: in-process (:class:`~toolsift.ranker.pipeline.RankingPipeline`)
    or over HTTP (:class:`~toolsift.ranker.client.RemoteRanker`), with the same request and answer."""

    @property
    def name(self) -> str: ...

    def rank(self, request: RankRequest) -> RankResponse: ...
