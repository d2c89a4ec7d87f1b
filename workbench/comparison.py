"""Current vs proposed weights on a query set: NDCG@10 and Recall@10, and the queries that moved.

Each query's candidates are fetched once per query set and kept: on an index whose searches the
multi-need ranking answers, its texts' joint rankings (re-ranked by
:func:`~toolsift.search.planner.rank_planned` with the current and the proposed β, M and λ, the
prerequisites' identities looked up once); otherwise the first stage + exact field signals (re-ranked
by :func:`~toolsift.workbench.tuning.rank_with`). Either way each side is the ranking a search with
those parameters returns, and moving a slider re-scores a whole set in milliseconds. Queries are structured without an LLM rewrite (the
request as one tool need), as ``toolsift eval`` does by default. Measures are ir-measures' through
:func:`toolsift.evaluation.metrics.evaluate_per_query`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolsift.config import Retriever
from toolsift.evaluation.metrics import evaluate_per_query
from toolsift.records import FieldSignals, RankedTool
from toolsift.query.scope import UNSCOPED, Scope
from toolsift.query.structured import StructuredQuery
from toolsift.ranker.mftr import FeatureBatch, MFTRRanker
from toolsift.ranker.ranking_pipeline import RankingPipeline
from toolsift.search.planner import PlannerParams, planned_rankings, rank_planned
from toolsift.search.request import StepRanking
from toolsift.workbench.querysets import QueryCase, QuerySet
from toolsift.workbench.tuning import Proposal, rank_with

if TYPE_CHECKING:
    from toolsift.search import Searcher

__all__ = ["SetCandidates", "Comparison", "gather_candidates", "compare", "per_query"]

MEASURES = ("ndcg@10", "recall@10")
#: How many queries whose NDCG@10 moved most a comparison lists.
MOVERS = 10
#: How many proposals' scores a query set keeps (the current weights' stay warm).
SCORED_KEPT = 16
#: How many texts one joint-ranking round trip takes (a query set's texts go in batches).
TEXTS_PER_BATCH = 64


@dataclass(frozen=True)
class SetCandidates:
    """A query set's queries with their structured form and candidates, fetched once."""

    query_set: QuerySet
    retriever: Retriever
    cases: tuple[tuple[QueryCase, StructuredQuery, tuple[FieldSignals, ...]], ...]
    seconds: float
    #: Multi-need: each query's texts' rankings (by query id); empty when the field ranking answers.
    steps: dict[str, tuple[StepRanking, ...]] = field(default_factory=dict)
    #: Multi-need: the prerequisites' identities looked up so far (by id; None: not visible).
    identities: dict[str, RankedTool | None] = field(default_factory=dict)
    #: Looks up identities the rankings lack (the searcher's, in the comparison's scope).
    lookup: Callable[[Sequence[str]], Mapping[str, RankedTool]] | None = None
    #: Per-query measures of proposals already scored on these candidates (by the proposal's JSON).
    scored: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    #: Each query's prepared features (they do not depend on the weights' values).
    batches: dict[str, FeatureBatch] = field(default_factory=dict)


@dataclass(frozen=True)
class Comparison:
    """Mean measures for both weight sets, their difference, and the queries that moved most."""

    query_set: str
    queries: int
    current: dict[str, float]
    proposed: dict[str, float]
    movers: tuple[dict[str, Any], ...]
    seconds: float

    @property
    def delta(self) -> dict[str, float]:
        return {m: self.proposed[m] - self.current[m] for m in self.current}

    def to_dict(self) -> dict[str, Any]:
        def rounded(d: dict[str, float]) -> dict[str, float]:
            return {k: round(v, 4) for k, v in d.items()}

        return {"query_set": self.query_set, "queries": self.queries, "current": rounded(self.current),
                "proposed": rounded(self.proposed), "delta": rounded(self.delta), "movers": list(self.movers),
                "seconds": round(self.seconds, 3)}


def gather_candidates(searcher: Searcher, query_set: QuerySet, retriever: Retriever, *,
                      scope: Scope = UNSCOPED) -> SetCandidates:
    """Every query's candidates from the index (encoding all query texts in one go first), inside
    ``scope`` (the caller's tenant): the multi-need rankings when those answer the index's searches."""
    started = time.perf_counter()
    if searcher.plans(None, scope):
        return _gather_planned(searcher, query_set, retriever, scope, started)
    structured = [(case, searcher.structure(case.text)) for case in query_set.queries]
    if searcher.embedder is not None and retriever != "bm25":
        searcher.embedder.prime([t for _, sq in structured for t in sq.all_texts()])
    cases = []
    for case, sq in structured:
        vectors = searcher.encode(sq, retriever)
        signals = searcher.candidate_signals(sq, vectors, retriever, searcher.settings.candidates,
                                             documents=searcher.reranks, scope=scope)
        cases.append((case, sq, tuple(signals.values())))
    return SetCandidates(query_set, retriever, tuple(cases), time.perf_counter() - started)


def _gather_planned(searcher: Searcher, query_set: QuerySet, retriever: Retriever, scope: Scope,
                    started: float) -> SetCandidates:
    structured = [(case, StructuredQuery.from_text(case.text)) for case in query_set.queries]
    steps = searcher.steps()
    ranked = planned_rankings(steps, [sq for _, sq in structured], retriever, scope=scope, batch=TEXTS_PER_BATCH)
    return SetCandidates(
        query_set, retriever, tuple((case, sq, ()) for case, sq in structured), time.perf_counter() - started,
        steps={case.query_id: rankings for (case, _), rankings in zip(structured, ranked)},
        lookup=lambda ids: steps.identities(ids, scope),
    )


def _identities(candidates: SetCandidates) -> Callable[[Sequence[str]], Mapping[str, RankedTool]]:
    """The set's lookup of prerequisites, each id looked up once across proposals."""
    def found(ids: Sequence[str]) -> dict[str, RankedTool]:
        missing = [i for i in ids if i not in candidates.identities]
        if missing and candidates.lookup is not None:
            got = candidates.lookup(missing)
            candidates.identities.update({i: got.get(i) for i in missing})
        return {i: t for i in ids if (t := candidates.identities.get(i)) is not None}
    return found


def _scored(candidates: SetCandidates, proposal: Proposal, reranking: RankingPipeline | None,
            depth: int) -> dict[str, dict[str, float]]:
    key = json.dumps(proposal.to_dict(), sort_keys=True)
    if key not in candidates.scored:
        ranker = MFTRRanker(proposal.weights)
        run: dict[str, dict[str, float]] = {}
        for case, sq, signals in candidates.cases:
            if candidates.steps:
                ranked, _ = rank_planned(candidates.steps[case.query_id], top_k=depth,
                                         params=proposal.planner or PlannerParams(), identities=_identities(candidates))
            else:
                batch = candidates.batches.get(case.query_id)
                if batch is None and signals:
                    batch = candidates.batches[case.query_id] = ranker.prepare(signals)
                ranked = rank_with(proposal, sq, signals, top_k=depth, reranking=reranking, ranker=ranker, batch=batch)
            run[case.query_id] = {t.doc_id: float(len(ranked) - i) for i, t in enumerate(ranked)}
        while len(candidates.scored) >= SCORED_KEPT:
            candidates.scored.pop(next(iter(candidates.scored)))
        candidates.scored[key] = evaluate_per_query(candidates.query_set.qrels(), run, MEASURES)
    return candidates.scored[key]


def per_query(candidates: SetCandidates, proposal: Proposal, *, reranking: RankingPipeline | None = None,
              depth: int = 10) -> dict[str, dict[str, float]]:
    """NDCG@10 and Recall@10 of each query of the set ranked with ``proposal`` (by query id; kept, so a
    proposal is scored once per set)."""
    return _scored(candidates, proposal, reranking, depth)


def compare(candidates: SetCandidates, current: Proposal, proposed: Proposal, *,
            reranking: RankingPipeline | None = None, depth: int = 10) -> Comparison:
    """NDCG@10 / Recall@10 of both proposals on the set, and the queries whose NDCG@10 moved most."""
    started = time.perf_counter()
    before = _scored(candidates, current, reranking, depth)
    after = _scored(candidates, proposed, reranking, depth)
    texts = {case.query_id: case.text for case, _, _ in candidates.cases}
    names = list(next(iter(before.values())).keys()) if before else list(MEASURES)

    def mean(table: dict[str, dict[str, float]], measure: str) -> float:
        return sum(v[measure] for v in table.values()) / max(1, len(table))

    moved = sorted(((qid, after[qid][names[0]] - before[qid][names[0]]) for qid in before),
                   key=lambda x: (-abs(x[1]), x[0]))
    movers = tuple({"query_id": qid, "query": texts.get(qid, ""), "current": round(before[qid][names[0]], 4),
                    "proposed": round(after[qid][names[0]], 4), "delta": round(d, 4)}
                   for qid, d in moved[:MOVERS] if abs(d) > 1e-9)
    return Comparison(
        query_set=candidates.query_set.name,
        queries=len(before),
        current={m: mean(before, m) for m in names},
        proposed={m: mean(after, m) for m in names},
        movers=movers,
        seconds=time.perf_counter() - started,
    )
