"""Per-field scores of the MFTR evaluation, collected once and ranked many times.

Scores come from OpenSearch: the first stage returns the candidates, named clauses give each
candidate's exact per-field scores, and only the learned model runs in Python. Every row, fold and
training run ranks the same collected :class:`QuerySignals`.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from toolsift.config import Retriever
from toolsift.evaluation.runner import ranked_run
from toolsift.query.structured import StructuredQuery
from toolsift.ranker.mftr import MFTRRanker
from toolsift.ranker.training import TrainingQuery
from toolsift.records import FieldSignals
from toolsift.search import Searcher

__all__ = ["QuerySignals", "flat_text", "collect_signals", "training_queries", "ranker_run", "mean_metrics"]


@dataclass
class QuerySignals:
    """One query's signals: its first-stage candidates, and the wanted tools the first stage missed
    (relevant tools and hard negatives, scored for training)."""

    first_stage: dict[str, FieldSignals]
    extra: dict[str, FieldSignals] = field(default_factory=dict)

    def get(self, doc_id: str) -> FieldSignals | None:
        return self.first_stage.get(doc_id) or self.extra.get(doc_id)


def flat_text(sq: StructuredQuery) -> str:
    """A rewrite as one text for the Full-Doc rows: every need's texts and every argument."""
    parts = [t for n in sq.tool_needs for t in (n.user_intent, n.tool_description, n.expected_response)]
    return " ".join([*parts, *sq.argument_texts()])


def collect_signals(
    searcher: Searcher,
    queries: Mapping[str, StructuredQuery],
    retriever: Retriever,
    depth: int,
    wanted: Mapping[str, Sequence[str]],
    progress: Callable[[str, int, int], None] | None,
    label: str,
    documents: bool = False,
) -> dict[str, QuerySignals]:
    """Each query's first-stage candidates (``depth`` of them) and the ``wanted`` tools they lack."""
    out: dict[str, QuerySignals] = {}
    for done, (qid, sq) in enumerate(queries.items(), start=1):
        vectors = searcher.encode(sq, retriever)
        first = searcher.candidate_signals(sq, vectors, retriever, depth, parameters=True, documents=documents)
        extra_ids = [d for d in wanted.get(qid, ()) if d not in first]
        extra = searcher.signals_for(sq, vectors, retriever, extra_ids, parameters=True, documents=documents)
        out[qid] = QuerySignals(first, extra)
        if progress:
            progress(label, done, len(queries))
    return out


def training_queries(
    signals: Mapping[str, QuerySignals],
    qids: Sequence[str],
    qrels: Mapping[str, Mapping[str, int]],
    negatives: Mapping[str, Sequence[str]],
    n_negatives: int,
) -> list[TrainingQuery]:
    """The pairwise training queries: relevant tools against the top ``n_negatives`` wrong ones."""
    out = []
    for qid in qids:
        sig = signals.get(qid)
        if sig is None:
            continue
        relevant = {d for d, g in qrels.get(qid, {}).items() if g > 0}
        pos = [s for d in sorted(relevant) if (s := sig.get(d)) is not None]
        wrong = [d for d in negatives.get(qid, ()) if d not in relevant][:n_negatives]
        neg = [s for d in wrong if (s := sig.get(d)) is not None]
        if pos and neg:
            out.append(TrainingQuery(qid, tuple(pos), tuple(neg)))
    return out


def ranker_run(
    ranker: MFTRRanker,
    signals: Mapping[str, QuerySignals],
    qids: Sequence[str],
    depth: int,
    costs: list[float] | None = None,
) -> dict[str, dict[str, float]]:
    """The run of ``ranker`` over the queries' first-stage candidates; ``costs`` gets ms per query."""
    run = {}
    for qid in qids:
        cands = list(signals[qid].first_stage.values())
        t0 = time.perf_counter()
        ranked = ranker.rank(cands, depth)
        if costs is not None:
            costs.append((time.perf_counter() - t0) * 1000)
        run[qid] = ranked_run((t.doc_id for t in ranked), depth)
    return run


def mean_metrics(dicts: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The mean of each measure over the folds' metrics."""
    keys = list(dicts[0]) if dicts else []
    return {k: statistics.fmean(d[k] for d in dicts) for k in keys}
