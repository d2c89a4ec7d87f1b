"""Feedback pairs as MFTR training queries: the field signals of each pair's tools, read now.

A feedback pair (:mod:`toolsift.learning.feedback_pairs`) names a request, the tool that served it and
the tools shown and not called. Learning field weights needs each of those tools' per-field scores
for that request, so the request is structured and encoded again and the tools' signals are fetched
from the current index (``Searcher.signals_for``: the exact scores the first stage would give them).
A tool no longer in the index drops out of its pair; a pair left without a negative teaches nothing
pairwise and is skipped. Each training query carries its pair's weight.

With ``context`` (learning warm-started from weights on the fixed ranker's scale, which normalise each
field over a query's candidates), the request's first stage runs again as serving runs it and every
candidate travels with each training query, with its first-stage rank: the features are then the ones
the serving ranker normalises (:func:`~toolsift.ranker.mftr.prepared_features`). Without it, each tool's
rank in the answer the agent saw stands for its first-stage rank.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from toolsift.config import Retriever
from toolsift.learning.feedback_pairs import FeedbackPair
from toolsift.ranker.training import TrainingQuery
from toolsift.records import FieldSignals
from toolsift.search.searcher import Searcher

__all__ = ["feedback_training_queries"]


def feedback_training_queries(
    searcher: Searcher,
    pairs: Sequence[FeedbackPair],
    retriever: Retriever,
    *,
    context: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[TrainingQuery]:
    """One training query per pair that still has its tool and a passed-over tool in the index."""
    by_request: dict[str, list[FeedbackPair]] = defaultdict(list)
    for pair in pairs:
        if pair.negatives:
            by_request[pair.request_id].append(pair)
    out: list[TrainingQuery] = []
    for done, (request_id, group) in enumerate(by_request.items(), start=1):
        sq = searcher.structure(group[0].query)
        vectors = searcher.encode(sq, retriever)
        wanted = sorted({p.positive for p in group} | {n for p in group for n in p.negatives})
        seen: tuple[FieldSignals, ...] = ()
        if context:
            candidates = searcher.candidate_signals(sq, vectors, retriever, len(group[0].shown), parameters=True)
            seen = tuple(candidates.values())
            missing = [t for t in wanted if t not in candidates]
            signals = {**candidates, **searcher.signals_for(sq, vectors, retriever, missing, parameters=True)}
        else:
            # each tool's rank in the answer the agent saw: the first-stage rank feature, when the weights read it
            shown = {tool: (0.0, n) for n, tool in enumerate(group[0].shown, 1)}
            signals = searcher.signals_for(sq, vectors, retriever, wanted, shown, parameters=True)
        for pair in group:
            positive = signals.get(pair.positive)
            negatives = tuple(s for n in pair.negatives if (s := signals.get(n)) is not None)
            if positive is not None and negatives:
                out.append(TrainingQuery(f"{request_id}:{pair.positive}", (positive,), negatives, pair.weight, seen))
        if progress:
            progress("feedback requests", done, len(by_request))
    return out
