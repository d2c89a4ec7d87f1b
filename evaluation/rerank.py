"""Training and evaluating a second-stage reranker on top of MFTR, inside the 5-fold protocol.

Per fold (``toolsift eval --method mftr --reranker …``) and for ``toolsift train reranker``:

1. the fold's MFTR model ranks every training query's candidates;
2. 15 % of the training queries (seeded) are held out as a dev set; on the rest, the pairs are each
   query's relevant tools (label 1) and the top-ranked wrong tools of MFTR's list (label 0): the
   hard negatives the reranker will face;
3. the reranker is trained on those pairs (:mod:`toolsift.ranker.reranker_training`);
4. the fusion weight λ is the grid value (0, 0.1, …, 1) with the best NDCG@10 on the dev queries
   (ties: the smaller λ, so an uninformative reranker leaves MFTR's order alone);
5. test queries run through :class:`~toolsift.ranker.ranking_pipeline.RankingPipeline` exactly as a search
   would, timed per query.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolsift.evaluation.metrics import evaluate
from toolsift.evaluation.runner import ranked_run
from toolsift.records import FieldSignals
from toolsift.query.structured import StructuredQuery
from toolsift.ranker.ranking_pipeline import RankingPipeline, candidate_text
from toolsift.ranker.protocol import RankRequest
from toolsift.ranker.reranker_training import (
    RerankerTrainingConfig,
    RerankerTrainingOutcome,
    RerankPair,
    train_cross_encoder,
    train_tool_rank,
)
from toolsift.ranker.types import Ranker

__all__ = ["RerankQuery", "FittedReranker", "training_pairs", "fit_reranker", "rerank_run", "FUSION_GRID", "DEV_SHARE"]

#: λ values tried on the dev queries.
FUSION_GRID: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(11))
#: Share of the training queries held out to choose λ.
DEV_SHARE = 0.15


@dataclass(frozen=True)
class RerankQuery:
    """One query as the reranker sees it: its structured form, first-stage candidates (with their
    texts) and the signals of its relevant tools (also those the first stage missed)."""

    qid: str
    query: StructuredQuery
    candidates: Sequence[FieldSignals]
    relevant: Mapping[str, FieldSignals]

    def request(self, top_k: int) -> RankRequest:
        return RankRequest.build(self.query, self.candidates, top_k=top_k)


@dataclass(frozen=True)
class FittedReranker:
    """A trained reranker, the λ chosen on the dev queries and what the choice was based on."""

    outcome: RerankerTrainingOutcome
    fusion_weight: float
    dev_ndcg10: Mapping[float, float]
    dev_queries: int
    fit_queries: int

    def report(self) -> dict[str, Any]:
        return {
            "fusion_weight": self.fusion_weight,
            "dev_ndcg@10": {str(k): round(v, 4) for k, v in self.dev_ndcg10.items()},
            "dev_queries": self.dev_queries,
            "fit_queries": self.fit_queries,
            "pairs": self.outcome.pairs,
            "positives": self.outcome.positives,
            "epoch_losses": [round(x, 5) for x in self.outcome.epoch_losses],
            "train_seconds": round(self.outcome.seconds, 1),
            "device": self.outcome.device,
        }


def training_pairs(ranker: Ranker, queries: Sequence[RerankQuery], *, negatives: int, depth: int) -> list[RerankPair]:
    """Relevant tools (1) and the base ranker's top wrong tools (0) of every query."""
    pairs: list[RerankPair] = []
    for q in queries:
        text = q.request(1).query_text
        for doc_id, sig in sorted(q.relevant.items()):
            pairs.append(RerankPair(text, candidate_text(sig.document, sig.name), 1))
        wrong = [t for t in ranker.rank(list(q.candidates), depth) if t.doc_id not in q.relevant]
        documents = {c.doc_id: c.document for c in q.candidates}
        for t in wrong[:negatives]:
            pairs.append(RerankPair(text, candidate_text(documents.get(t.doc_id, ""), t.name), 0))
    return pairs


def _ndcg10(runs: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]]) -> float:
    if not runs:
        return 0.0
    return evaluate({q: qrels[q] for q in runs}, runs, ("ndcg@10",))["ndcg@10"]


def fit_reranker(
    ranker: Ranker,
    queries: Sequence[RerankQuery],
    qrels: Mapping[str, Mapping[str, int]],
    config: RerankerTrainingConfig,
    *,
    base_model: str | Path,
    gguf_file: str | None = None,
    depth: int = 100,
    progress: Callable[[str, int, int], None] | None = None,
) -> FittedReranker:
    """Train a reranker on ``queries`` (minus a dev slice) and choose λ on the dev slice."""
    order = sorted(queries, key=lambda q: q.qid)
    random.Random(config.seed).shuffle(order)
    n_dev = max(1, round(len(order) * DEV_SHARE)) if len(order) > 4 else 0
    dev, fit = order[:n_dev], order[n_dev:]
    pairs = training_pairs(ranker, fit, negatives=config.negatives, depth=max(config.rerank_top, config.negatives + 1))
    if config.kind == "cross-encoder":
        outcome = train_cross_encoder(base_model, pairs, config, progress=progress)
    else:
        outcome = train_tool_rank(base_model, pairs, config, gguf_file=gguf_file, progress=progress)
    pipeline = RankingPipeline(ranker, outcome.reranker, rerank_top=config.rerank_top)
    scored = []
    for q in dev:
        request = q.request(depth)
        ranked, pairs_q = pipeline.base_pass(request)
        scored.append((q.qid, request, ranked, outcome.reranker.score_pairs(pairs_q)))
    by_weight: dict[float, float] = {}
    for weight in FUSION_GRID:
        pipeline.fusion_weight = weight
        runs = {qid: ranked_run((r.doc_id for r in pipeline.fuse(req, ranked, s).results), depth)
                for qid, req, ranked, s in scored}
        by_weight[weight] = _ndcg10(runs, qrels)
    best = max(by_weight.values()) if by_weight else 0.0
    chosen = min(w for w, v in by_weight.items() if v >= best - 1e-12) if dev else 0.5
    return FittedReranker(outcome, chosen, by_weight, len(dev), len(fit))


def rerank_run(
    pipeline: RankingPipeline, queries: Sequence[RerankQuery], depth: int, costs: list[float] | None = None
) -> dict[str, dict[str, float]]:
    """Every query through the pipeline as a search would send it; ``costs`` gets ms per query."""
    run = {}
    for q in queries:
        request = q.request(depth)
        t0 = time.perf_counter()
        answer = pipeline.rank(request)
        if costs is not None:
            costs.append((time.perf_counter() - t0) * 1000)
        run[q.qid] = ranked_run((r.doc_id for r in answer.results), depth)
    return run


def mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None
