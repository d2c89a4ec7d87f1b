"""``toolsift learn weights``: field weights learned from agents' feedback, behind a guard.

1. Feedback events and the answers they are about are read from OpenSearch
   (:func:`~toolsift.search.feedback.load_feedback`) and become weighed pairs by
   :func:`~toolsift.ranker.feedback_pairs.feedback_pairs` (confirmed events only, position-bias
   correction, per-key and per-tool caps).
2. Requests are split by a hash of their id: ``holdout`` of them are held out (never trained on).
3. The other pairs become MFTR training queries on the current index
   (:func:`~toolsift.search.learning.feedback_training_queries`) and train candidate weights
   (MFTR's pairwise loss, each pair weighed).
4. **The guard** compares the candidate with what serves now (the ``weights`` setting, the weights
   pushed to the index, or the fixed field weights) by searching again:
   * on the held-out requests: NDCG@10 of the tools that were called and worked, weighed like their
     pairs — the candidate must beat the current ranking;
   * on each benchmark given (a ToolRet folder, say): multi-field NDCG@10 with the same retriever —
     the candidate may lose at most ``tolerance`` on any.
   The candidate is written as a versioned weights artifact either way (its record holds the guard's
   report); ``passed`` says whether it may be promoted. Nothing is promoted here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from toolsift.config import Retriever, Settings
from toolsift.embedding import Embedder
from toolsift.errors import ConfigError
from toolsift.ranker.artifact import WeightsArtifact, write_json_atomic
from toolsift.ranker.experiments import hash_share
from toolsift.ranker.feedback_pairs import FeedbackPair, LearningPolicy, feedback_pairs
from toolsift.ranker.mftr import FIELDS_AND_RANK
from toolsift.ranker.training import TrainingConfig, train_mftr
from toolsift.records import kinds_for
from toolsift.search import Searcher
from toolsift.search.feedback import load_feedback
from toolsift.search.learning import feedback_training_queries

__all__ = ["GuardReport", "LearnOutcome", "learn_weights", "held_out", "TOLERANCE"]

#: How much NDCG@10 a candidate may lose on a benchmark (the published figures' own band).
TOLERANCE = 0.005


@dataclass(frozen=True)
class GuardReport:
    """Current against candidate, on held-out feedback and on each benchmark."""

    held_out: dict[str, float]
    benchmarks: dict[str, dict[str, float]]
    passed: bool
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class LearnOutcome:
    """What was learned, from what, and whether it may be promoted."""

    artifact: WeightsArtifact
    guard: GuardReport
    feedback: dict[str, Any] = field(default_factory=dict)


def held_out(request_id: str, share: float) -> bool:
    """Whether a request is held out: the first bytes of its id's SHA-256, below ``share``."""
    return hash_share(request_id) < share


def _held_out_ndcg(searcher: Searcher, requests: dict[str, list[FeedbackPair]], retriever: Retriever) -> float:
    """NDCG@10 of each held-out request's successful tools, searched again, weighed like its pairs."""
    from toolsift.evaluation.metrics import evaluate_per_query
    from toolsift.evaluation.runner import ranked_run

    qrels = {rid: {p.positive: 1 for p in group} for rid, group in requests.items()}
    run = {rid: ranked_run((t.doc_id for t in searcher.search(group[0].query, top_k=10, method="multi-field",
                                                                retriever=retriever).tools), 10)
           for rid, group in requests.items()}
    per_query = evaluate_per_query(qrels, run, ["ndcg@10"])
    weights = {rid: sum(p.weight for p in group) / len(group) for rid, group in requests.items()}
    total = sum(weights.values())
    return sum(w * per_query.get(rid, {}).get("ndcg@10", 0.0) for rid, w in weights.items()) / total if total else 0.0


def learn_weights(
    client: OpenSearch,
    settings: Settings,
    embedder: Embedder,
    *,
    out_root: Path,
    name: str,
    tenant: str | None = None,
    retriever: Retriever = "hybrid",
    policy: LearningPolicy = LearningPolicy(),
    training: TrainingConfig = TrainingConfig(min_steps=200, features=FIELDS_AND_RANK),
    holdout: float = 0.2,
    benchmarks: Sequence[Path] = (),
    progress: Callable[[str, int, int], None] | None = None,
) -> LearnOutcome:
    """Learn candidate weights from the feedback in OpenSearch and guard them (module docstring)."""
    from toolsift.evaluation.runner import run_eval

    answers, events = load_feedback(client, settings, tenant=tenant)
    made = feedback_pairs(answers, events, policy)
    train_pairs: list[FeedbackPair] = []
    test: dict[str, list[FeedbackPair]] = defaultdict(list)
    for pair in made.pairs:
        if held_out(pair.request_id, holdout):
            test[pair.request_id].append(pair)
        else:
            train_pairs.append(pair)
    current = Searcher(client, settings.with_overrides(query_log=False), embedder, source="learn")
    queries = feedback_training_queries(current, train_pairs, retriever, progress=progress)
    if not queries:
        raise ConfigError(f"learn: no training pairs in the feedback ({made.events} events, {made.unconfirmed} "
                          "unconfirmed; a pair needs a successful call and a tool shown beside it that was not called)")
    trained = train_mftr(queries, kinds_for(retriever), training)
    feedback = {"events": made.events, "unconfirmed": made.unconfirmed, "requests": made.requests,
                "pairs": len(made.pairs), "training_queries": len(queries), "held_out_requests": len(test),
                "capped_keys": dict(made.capped_keys), "capped_tools": dict(made.capped_tools),
                "policy": asdict(policy), "tenant": tenant}
    staged = WeightsArtifact(trained.weights, config={
        "learned_from": "feedback", "index": settings.index, "retriever": retriever, "embedding_model": embedder.name,
        "training": asdict(training), "pairs": trained.pairs, "epoch_losses": list(trained.epoch_losses),
        "device": trained.device, "feedback": feedback,
    }).save(out_root, name)
    candidate = Searcher(client, settings.with_overrides(query_log=False), embedder, artifact=staged, source="learn")
    reasons: list[str] = []
    before = _held_out_ndcg(current, test, retriever) if test else 0.0
    after = _held_out_ndcg(candidate, test, retriever) if test else 0.0
    if not test:
        reasons.append("no held-out feedback to compare on")
    elif after <= before:
        reasons.append(f"held-out feedback NDCG@10 {after:.4f} is not above the current {before:.4f}")
    compared: dict[str, dict[str, float]] = {}
    for folder in benchmarks:
        scores = {}
        for label, weights in (("current", settings.weights), ("candidate", staged.path)):
            local = settings.with_overrides(weights=weights, query_log=False)
            result = run_eval(client, local, folder, method="multi-field", retriever=retriever, embedder=embedder)
            scores[label] = round(result.metrics["ndcg@10"], 4)
        compared[folder.name] = scores
        if scores["candidate"] < scores["current"] - TOLERANCE:
            reasons.append(f"{folder.name}: NDCG@10 {scores['candidate']:.4f} against {scores['current']:.4f}")
    guard = GuardReport({"current": round(before, 4), "candidate": round(after, 4), "requests": float(len(test))},
                        compared, not reasons, tuple(reasons))
    assert staged.path is not None
    saved = WeightsArtifact(staged.weights, staged.config, {"guard": guard.to_dict()}, staged.created, staged.path)
    write_json_atomic(staged.path, saved.to_dict())  # the same version, now with its guard's report
    return LearnOutcome(saved, guard, feedback)
