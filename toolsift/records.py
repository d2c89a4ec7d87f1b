"""Records shared by the stages: what a hit is, the signals a candidate carries, a ranked answer, a
tool-use history. Plain frozen dataclasses with no I/O (as ir_measures' ``util.py`` holds ``Qrel`` and
``ScoredDoc``): the query builder fills :class:`FieldSignals`, the ranker turns them into
:class:`RankedTool` s, the search backend and every front end read those.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from toolsift.config import Retriever
from toolsift.errors import BadQueryError

__all__ = [
    "Kind",
    "kinds_for",
    "HitIdentity",
    "ParameterMatch",
    "FieldSignals",
    "ToolCopy",
    "RankedTool",
    "RankedAgent",
    "Bundle",
    "PastQuery",
    "History",
]

#: A score kind: BM25 or dense cosine.
Kind = Literal["bm25", "dense"]


def kinds_for(retriever: Retriever) -> tuple[Kind, ...]:
    """The score kinds a retriever setting uses: BM25, dense cosine, or both."""
    if retriever == "bm25":
        return ("bm25",)
    if retriever == "minilm":
        return ("dense",)
    if retriever == "hybrid":
        return ("bm25", "dense")
    raise BadQueryError(f"unknown retriever {retriever!r}; use bm25, minilm or hybrid")


@dataclass(frozen=True)
class HitIdentity:
    """Who a hit is: its document id, name, entity kind and owning agent."""

    doc_id: str
    name: str
    entity: str
    agent_id: str | None
    #: The fields rule-based expansion filled (``ToolDoc.derived``).
    derived: tuple[str, ...] = ()
    #: The tools of its server it needs called first (``ToolDoc.prerequisites``).
    prerequisites: tuple[str, ...] = ()
    #: What the screen of hostile tool text found (``ToolDoc.risk_reasons``); empty: not flagged.
    risk: tuple[str, ...] = ()


@dataclass(frozen=True)
class ParameterMatch:
    """How well one tool parameter is covered by the request's extracted arguments.

    ``score`` is s_pj of MFTR Eq. 4: the best score of this parameter against any argument.
    """

    name: str
    required: bool
    score: float


@dataclass(frozen=True)
class FieldSignals:
    """Everything the ranker needs about one candidate.

    Args:
        fields: kind → field → raw score (BM25 score, or cosine in [-1, 1]); for a field, the best
            over tool needs. ``parameters`` is the mean of the per-parameter scores (MFTR Eq. 4).
        parameters: kind → per-parameter matches, when the parameter list was fetched. With no
            extracted arguments every parameter scores 0: nothing in the request covers it.
        arguments: how many extracted arguments the query had.
        document: the tool's text for a second-stage reranker (:func:`~toolsift.mappings.rerank_text`),
            when it was fetched; empty otherwise.
        derived: the fields of the tool that rule-based expansion filled (``ToolDoc.derived``).
        risk: what the screen of hostile tool text found (``ToolDoc.risk_reasons``).
    """

    doc_id: str
    name: str
    entity: str
    agent_id: str | None
    first_stage_score: float
    first_stage_rank: int
    fields: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    parameters: Mapping[str, tuple[ParameterMatch, ...]] = field(default_factory=dict)
    parameter_names: tuple[tuple[str, bool], ...] = ()
    arguments: int = 0
    document: str = ""
    derived: tuple[str, ...] = ()
    risk: tuple[str, ...] = ()

    def field_share(self, field_name: str, derived_weight: float) -> float:
        """The share of its weight ``field_name`` counts with under fixed field weights:
        ``derived_weight`` where rule-based expansion derived it for this tool, else 1."""
        return derived_weight if field_name in self.derived else 1.0

    def missing_required(
        self, kinds: Iterable[str], is_missing: Callable[[str, int, ParameterMatch], bool]
    ) -> tuple[str, ...]:
        """Required parameters that ``is_missing(kind, position, match)`` flags for every kind, sorted.

        Nothing is reported when a kind has no parameter matches (the list was not fetched).
        """
        missing: set[str] | None = None
        for kind in kinds:
            matches = self.parameters.get(kind, ())
            if not matches:
                return ()
            names = {m.name for j, m in enumerate(matches) if m.required and is_missing(kind, j, m)}
            missing = names if missing is None else missing & names
        return tuple(sorted(missing or ()))


@dataclass(frozen=True)
class ToolCopy:
    """A copy of a ranked tool on another server (:mod:`toolsift.ranker.copies`), named in its ``also_on``."""

    doc_id: str
    name: str
    agent_id: str | None


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
        derived: the tool's fields rule-based expansion filled; the fixed-weight ranker counts their
            contributions at ``derived_weight`` of the field weight.
        prerequisites: ids of the tools of its server it needs called first (``ToolDoc.prerequisites``).
        prerequisite_of: the id of the tool this one was placed after as its prerequisite (multi-need
            search), else None.
        via_need: multi-need search: the text (the whole request or one of its needs) whose joint
            ranking gave the tool its ``need`` score; empty otherwise.
        risk: what the screen of hostile tool text found (``ToolDoc.risk_reasons``); empty: not flagged.
        also_on: the copies of this tool on other servers that the answer left out for it (one
            capability once, :mod:`toolsift.ranker.copies`), best-ranked first.
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
    derived: tuple[str, ...] = ()
    prerequisites: tuple[str, ...] = ()
    prerequisite_of: str | None = None
    risk: tuple[str, ...] = ()
    via_need: str = ""
    also_on: tuple[ToolCopy, ...] = ()

    def rescored(self, score: float) -> RankedTool:
        """This tool with ``score`` instead of its own, everything else shared.

        The same as ``dataclasses.replace(self, score=score)`` at about a sixth of the cost (1.8
        against 11.5 µs): ranking stages rescore hundreds of tools a request, and ``replace``
        re-reads every field's definition.
        """
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.__dict__["score"] = score
        return twin

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
            derived=cand.derived,
            risk=cand.risk,
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


@dataclass(frozen=True)
class Bundle:
    """A historical tool bundle: tools that were used together (a ToolLens scene, a logged answer)."""

    bundle_id: str
    tools: tuple[str, ...]


@dataclass(frozen=True)
class PastQuery:
    """A past request and the bundle it was answered with."""

    query_id: str
    text: str
    bundle_id: str


@dataclass(frozen=True)
class History:
    """Bundles and past queries, as read from a query log or a benchmark's train split."""

    bundles: dict[str, Bundle]
    queries: tuple[PastQuery, ...]
    source: str = ""

    def without(self, query_ids: set[str]) -> History:
        """The same history minus some past queries (held out for calibration)."""
        return History(self.bundles, tuple(q for q in self.queries if q.query_id not in query_ids), self.source)

    def queries_of(self) -> dict[str, list[str]]:
        """bundle id → its past query texts, in log order."""
        out: dict[str, list[str]] = defaultdict(list)
        for q in self.queries:
            out[q.bundle_id].append(q.text)
        return out
