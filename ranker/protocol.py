"""The ranker's request and response: one typed contract for the in-process and the HTTP transport.

A :class:`RankRequest` carries the structured query, the first-stage candidates with their exact
field signals (and, for a second-stage reranker, each candidate's text), and what to return. A
:class:`RankResponse` carries the ranked list with a per-result explanation: the field scores and
their weighted contributions, missing required parameters, the first-stage (MFTR) score and the
reranker's score. Both are pydantic models, so the service validates the same schema the library
builds, and size limits live in one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from collections.abc import Mapping
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from toolsift.config import FIELDS
from toolsift.ingest.prerequisites import MAX_PREREQUISITES
from toolsift.screen.screening import MAX_RISK_REASONS
from toolsift.records import FieldSignals, ParameterMatch
from toolsift.query.structured import StructuredQuery
from toolsift.records import RankedTool

__all__ = [
    "MAX_CANDIDATES",
    "MAX_DOCUMENT_CHARS",
    "ParameterMatchModel",
    "Candidate",
    "RankRequest",
    "RankedResult",
    "RankResponse",
    "RankingService",
    "PipelineQueryRequest",
    "PipelineRankRequest",
    "PipelineStages",
]

#: Most candidates one request may carry (the first stage returns at most 1000).
MAX_CANDIDATES = 1000
#: Longest candidate text a request may carry (:func:`~toolsift.mappings.rerank_text` caps at 4000).
MAX_DOCUMENT_CHARS = 20_000

_STRICT = ConfigDict(extra="forbid", frozen=True)
#: What a client sends: no field the schema lacks, no value of another type ("10" is no count, "yes" no
#: boolean; a JSON integer still fills a float). Parsed from JSON (the service's ``model_validate_json``).
_REQUEST = ConfigDict(extra="forbid", frozen=True, strict=True)


class ParameterMatchModel(BaseModel):
    """s_pj of one parameter (MFTR Eq. 4)."""

    model_config = _REQUEST
    name: str = Field(max_length=1000)
    required: bool
    score: float


class Candidate(BaseModel):
    """One first-stage candidate and its exact field signals (:class:`FieldSignals` on the wire)."""

    model_config = _REQUEST
    doc_id: str = Field(min_length=1, max_length=512)
    name: str = Field(max_length=1000)
    entity: str = "tool"
    agent_id: str | None = None
    first_stage_score: float = 0.0
    first_stage_rank: int = Field(0, ge=0)
    fields: dict[str, dict[str, float]] = Field(default_factory=dict)
    parameters: dict[str, list[ParameterMatchModel]] = Field(default_factory=dict)
    parameter_names: list[tuple[str, bool]] = Field(default_factory=list)
    arguments: int = Field(0, ge=0)
    document: str = Field("", max_length=MAX_DOCUMENT_CHARS)
    derived: list[str] = Field(default_factory=list, max_length=len(FIELDS))
    risk: list[str] = Field(default_factory=list, max_length=MAX_RISK_REASONS)

    @classmethod
    def from_signals(cls, s: FieldSignals) -> Candidate:
        """The wire form of signals the search path computed itself: built without validation (a
        ranker service validates what it receives), as ~100 candidates a request made deep copies
        and validation a fifth of an in-process search's time."""
        return cls.model_construct(
            doc_id=s.doc_id, name=s.name, entity=s.entity, agent_id=s.agent_id,
            first_stage_score=s.first_stage_score, first_stage_rank=s.first_stage_rank,
            fields={k: dict(v) for k, v in s.fields.items()},
            parameters={k: [ParameterMatchModel.model_construct(name=m.name, required=m.required, score=m.score)
                            for m in v] for k, v in s.parameters.items()},
            parameter_names=list(s.parameter_names), arguments=s.arguments, document=s.document,
            derived=list(s.derived), risk=list(s.risk),
        )

    def signals(self) -> FieldSignals:
        return FieldSignals(
            doc_id=self.doc_id,
            name=self.name,
            entity=self.entity,
            agent_id=self.agent_id,
            first_stage_score=self.first_stage_score,
            first_stage_rank=self.first_stage_rank,
            fields=self.fields,
            parameters={
                k: tuple(ParameterMatch(m.name, m.required, m.score) for m in v) for k, v in self.parameters.items()
            },
            parameter_names=tuple((str(n), bool(r)) for n, r in self.parameter_names),
            arguments=self.arguments,
            document=self.document,
            derived=tuple(self.derived),
            risk=tuple(self.risk),
        )


class RankRequest(BaseModel):
    """What to rank.

    Args:
        query: the structured query (``text``, ``tool_needs``, ``extracted_arguments``).
        candidates: the first stage's candidates with their signals.
        top_k: how many results to return.
        rerank: run the second-stage reranker when the ranker has one (False: MFTR only).
    """

    model_config = _REQUEST
    query: dict[str, Any]
    candidates: list[Candidate] = Field(max_length=MAX_CANDIDATES)
    top_k: int = Field(10, ge=1, le=MAX_CANDIDATES)
    rerank: bool = True

    @classmethod
    def build(
        cls, query: StructuredQuery, candidates: Sequence[FieldSignals], *, top_k: int = 10, rerank: bool = True
    ) -> RankRequest:
        return cls(
            query={**query.to_dict(), "text": query.text},
            candidates=[Candidate.from_signals(c) for c in candidates],
            top_k=top_k,
            rerank=rerank,
        )

    def structured_query(self) -> StructuredQuery:
        """The query back as a :class:`StructuredQuery` (raises ``BadQueryError`` naming the field)."""
        return StructuredQuery.from_dict(self.query, text=str(self.query.get("text") or ""))

    def signals(self) -> list[FieldSignals]:
        return [c.signals() for c in self.candidates]

    @property
    def query_text(self) -> str:
        """The request as the reranker reads it: the original text, else the first need's intent."""
        text = str(self.query.get("text") or "").strip()
        if text:
            return text
        needs = self.query.get("tool_needs") or [{}]
        return str(needs[0].get("user_intent") or needs[0].get("tool_description") or "")


class RankedResult(BaseModel):
    """One ranked candidate with the evidence for its place (:class:`RankedTool` on the wire)."""

    model_config = _STRICT
    doc_id: str
    name: str
    entity: str
    agent_id: str | None
    score: float
    base_score: float | None = None
    reranker_score: float | None = None
    field_scores: dict[str, float] = Field(default_factory=dict)
    contributions: dict[str, float] = Field(default_factory=dict)
    raw_scores: dict[str, dict[str, float]] = Field(default_factory=dict)
    missing_required: list[str] = Field(default_factory=list)
    first_stage_rank: int = 0
    derived: list[str] = Field(default_factory=list, max_length=len(FIELDS))
    prerequisites: list[str] = Field(default_factory=list, max_length=MAX_PREREQUISITES)
    prerequisite_of: str | None = None
    risk: list[str] = Field(default_factory=list, max_length=MAX_RISK_REASONS)
    via_need: str = Field("", max_length=MAX_DOCUMENT_CHARS)

    @classmethod
    def from_tool(cls, t: RankedTool) -> RankedResult:
        # The same field names, on purpose; ``also_on`` is the search's (copies collapse after ranking).
        return cls.model_validate({k: v for k, v in asdict(t).items() if k != "also_on"})

    def tool(self) -> RankedTool:
        return RankedTool(
            doc_id=self.doc_id,
            name=self.name,
            entity=self.entity,
            agent_id=self.agent_id,
            score=self.score,
            field_scores=self.field_scores,
            contributions=self.contributions,
            raw_scores=self.raw_scores,
            missing_required=tuple(self.missing_required),
            first_stage_rank=self.first_stage_rank,
            base_score=self.base_score,
            reranker_score=self.reranker_score,
            derived=tuple(self.derived),
            prerequisites=tuple(self.prerequisites),
            prerequisite_of=self.prerequisite_of,
            risk=tuple(self.risk),
            via_need=self.via_need,
        )


class RankResponse(BaseModel):
    """The ranked list and how it was produced.

    Args:
        ranker: the base ranker (``mftr``, ``field-weights-v0``).
        reranker: the second-stage reranker that scored the top ``reranked`` results, if any.
        degraded: True when the ranker could not answer and the list is the first stage's order.
        degraded_reason: why, in words.
        timings_ms: ``base`` (MFTR scoring), ``rerank`` (model), ``total``; server-side for the service.
    """

    model_config = ConfigDict(extra="forbid")
    results: list[RankedResult]
    ranker: str
    reranker: str | None = None
    reranked: int = 0
    fusion_weight: float | None = None
    weights_version: str | None = None
    degraded: bool = False
    degraded_reason: str | None = None
    timings_ms: dict[str, float] = Field(default_factory=dict)

    def tools(self) -> list[RankedTool]:
        return [r.tool() for r in self.results]

    @staticmethod
    def first_stage_order(request: RankRequest, reason: str) -> RankResponse:
        """The degraded answer: the candidates in first-stage order, marked as such."""
        ordered = sorted(request.candidates, key=lambda c: (c.first_stage_rank or 1 << 30, c.doc_id))
        results = [
            RankedResult(
                doc_id=c.doc_id,
                name=c.name,
                entity=c.entity,
                agent_id=c.agent_id,
                score=c.first_stage_score,
                raw_scores=c.fields,
                first_stage_rank=c.first_stage_rank,
            )
            for c in ordered[: request.top_k]
        ]
        return RankResponse(results=results, ranker="first-stage", degraded=True, degraded_reason=reason)


class RankingService(Protocol):
    """The one ranker the search path calls: in-process (:class:`~toolsift.ranker.ranking_pipeline.RankingPipeline`)
    or over HTTP (:class:`~toolsift.ranker.ranker_client.RemoteRanker`), with the same request and answer."""

    @property
    def name(self) -> str: ...

    def rank(self, request: RankRequest) -> RankResponse: ...


#: An index alias, as the ``index`` setting allows.
_ALIAS = r"^[a-z0-9][a-z0-9_\-]*$"


class PipelineQueryRequest(BaseModel):
    """What OpenSearch's ``ml_inference`` request processor sends: the alias and the toolsift request."""

    model_config = _REQUEST
    index: str = Field(min_length=1, max_length=255, pattern=_ALIAS)
    request: dict[str, Any]


class PipelineRankRequest(BaseModel):
    """What OpenSearch's ``ml_inference`` response processor sends: the hits' tool ids in first-stage order."""

    model_config = _REQUEST
    index: str = Field(min_length=1, max_length=255, pattern=_ALIAS)
    ids: list[str] = Field(max_length=MAX_CANDIDATES)
    request: dict[str, Any]


class PipelineStages(Protocol):
    """toolsift's stages as OpenSearch's search pipeline calls them (:class:`toolsift.search.native_stages.NativeStages`)."""

    def first_stage(self, index: str, request: Mapping[str, Any]) -> dict[str, Any]: ...

    def rank_hits(self, index: str, ids: Sequence[str], request: Mapping[str, Any]) -> dict[str, Any]: ...
