"""``toolsift learn weights``: field weights learned from agents' feedback, behind a guard.

1. Feedback events and the answers they are about are read from OpenSearch
   (:func:`~toolsift.learning.feedback.load_feedback`) and become weighed pairs by
   :func:`~toolsift.learning.feedback_pairs.feedback_pairs` (confirmed events only, position-bias
   correction, per-key and per-tool caps, no key over 1 / ``min_keys`` of the weight). Pairs from
   fewer than ``min_keys`` distinct keys (the ``learn_min_keys`` setting) are refused before anything
   is trained or written (:class:`~toolsift.learning.feedback_pairs.TooFewKeysError`).
2. Requests are split by a hash of their id: ``holdout`` of them are held out (never trained on).
3. The other pairs become MFTR training queries on the current index
   (:func:`~toolsift.learning.training_queries.feedback_training_queries`) and train candidate weights
   (MFTR's pairwise loss, each pair weighed). By default training starts from what serves now — the
   fixed field weights as normalised MFTR weights (:meth:`MFTRWeights.from_field_weights`, which rank
   exactly like them) or the weights in use — and a prior (:data:`WARM_START`'s ``prior``) pulls it back
   there, so a little feedback moves the ranking a little; ``warm_start=False`` learns from zero
   (MFTR's recipe, raw scores).
4. **The guard** compares the candidate with what serves now (the ``weights`` setting, the weights
   pushed to the index, or the fixed field weights) by searching again:
   * on the held-out requests: how high each tool that was called and worked ranks among the tools
     its request was shown, 1 / log2(1 + rank) weighed by inverse propensity (an unbiased estimate
     from logged feedback) — the candidate must beat the current ranking;
   * on each benchmark (``--benchmark`` and the ``learn_benchmarks`` setting; a ToolRet folder, say):
     multi-field NDCG@10 with the same retriever — the candidate may lose at most
     ``learn_benchmark_tolerance`` (0.005) on any. This half is on by default: with no benchmark named
     learning is refused up front, unless it is turned off explicitly (``benchmark_guard=False``,
     ``--no-benchmark-guard``);
   * **plausibility** (:func:`plausibility`): the tenant's logged searches (up to
     :data:`PLAUSIBILITY_SEARCHES` distinct requests, the latest first) are searched with both; a
     search counts as changed when at least :data:`REPLACED` of its top 10 tools are replaced, and a
     candidate that changes more than ``learn_max_changed`` (half) of them is refused as implausible —
     honest feedback reorders answers and swaps a tool or two, a poisoned candidate replaces most of
     them (``toolsift bench feedback``: 7.5 % against 100 %) — unless an admin forces it (``force``,
     ``--force``; the figure is recorded either way).
   The candidate is written as a versioned weights artifact either way (its record holds the guard's
   report); ``passed`` says whether it may be promoted. Nothing is promoted here.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from toolsift.config import Retriever, Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import ConfigError
from toolsift.learning.reembed import Reembedded, reembed_version
from toolsift.mappings.index import IndexManager
from toolsift.query.scope import Scope
from toolsift.ranker.artifact import WeightsArtifact, write_json_atomic
from toolsift.learning.experiments import hash_share
from toolsift.learning.feedback_pairs import FeedbackPair, LearningPolicy, feedback_pairs, require_keys
from toolsift.ranker.mftr import FIELDS_AND_RANK, MFTRWeights
from toolsift.ranker.training import TrainingConfig, train_mftr
from toolsift.records import kinds_for
from toolsift.search import Searcher
from toolsift.learning.feedback import load_feedback
from toolsift.learning.training_queries import feedback_training_queries
from toolsift.learning.querylog import logged_requests

__all__ = ["GuardReport", "LearnOutcome", "ReembedOutcome", "Plausibility", "learn_weights", "reembed_guarded",
           "held_out", "plausibility", "serving_weights", "TOLERANCE", "WARM_START", "FROM_ZERO",
           "PLAUSIBILITY_SEARCHES", "REPLACED", "NO_BENCHMARK"]

#: How much NDCG@10 a candidate may lose on a benchmark (the published figures' own band): the
#: ``learn_benchmark_tolerance`` setting's default.
TOLERANCE = 0.005
#: How many of the tenant's logged searches (distinct requests, the latest first) the plausibility check re-runs.
PLAUSIBILITY_SEARCHES = 200
#: How many of a search's top 10 tools a candidate must replace for the search to count as changed.
REPLACED = 3
#: Why learning is refused when the benchmark guard is on and names no benchmark.
NO_BENCHMARK = ("the benchmark guard is on and names no benchmark: give one with --benchmark DIR (or the "
                "learn_benchmarks setting), or turn the guard off explicitly with --no-benchmark-guard")
#: Learning from the weights serving now: small steps, pulled back to them (λ = 0.1 per Σ(θ − θ₀)²;
#: chosen on held-out feedback of a ToolLens simulation, 1,000 events: 0.1 moved it most, 1 barely).
WARM_START = TrainingConfig(min_steps=200, features=FIELDS_AND_RANK, learning_rate=0.01, prior=0.1)
#: Learning from zero: MFTR's recipe on raw scores, with the shown rank as a feature.
FROM_ZERO = TrainingConfig(min_steps=200, features=FIELDS_AND_RANK)


@dataclass(frozen=True)
class Plausibility:
    """How many of the tenant's logged searches a candidate answers with other top-10 tools.

    Args:
        searches: logged searches re-run (distinct requests).
        changed: those whose top 10 tools the candidate replaces at least :data:`REPLACED` of.
        mean_kept: tools of the current top 10 the candidate keeps there, on average.
        limit: the largest share of ``changed`` allowed (``learn_max_changed``).
        forced: an admin accepted a share over the limit (``--force``).
    """

    searches: int
    changed: int
    mean_kept: float
    limit: float
    forced: bool = False

    @property
    def share(self) -> float:
        """The share of searches changed (0 when none was re-run)."""
        return self.changed / self.searches if self.searches else 0.0

    @property
    def implausible(self) -> bool:
        return self.share > self.limit

    def describe(self) -> str:
        return (f"{self.changed} of {self.searches} logged searches ({self.share:.0%}) get {REPLACED} or more of "
                f"their top-10 tools replaced, {self.mean_kept:.1f} of 10 kept on average")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "share": round(self.share, 4)}


@dataclass(frozen=True)
class GuardReport:
    """Current against candidate, on held-out feedback, on each benchmark, and how many logged searches
    it changes."""

    held_out: dict[str, float]
    benchmarks: dict[str, dict[str, float]]
    passed: bool
    reasons: tuple[str, ...]
    plausibility: Plausibility | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["plausibility"] = None if self.plausibility is None else self.plausibility.to_dict()
        return out


@dataclass(frozen=True)
class LearnOutcome:
    """What was learned, from what, and whether it may be promoted."""

    artifact: WeightsArtifact
    guard: GuardReport
    feedback: dict[str, Any] = field(default_factory=dict)


def held_out(request_id: str, share: float) -> bool:
    """Whether a request is held out: the first bytes of its id's SHA-256, below ``share``."""
    return hash_share(request_id) < share


def _held_out_dcg(searcher: Searcher, requests: dict[str, list[FeedbackPair]], retriever: Retriever) -> float:
    """How high ``searcher`` ranks each held-out successful tool among the tools its request was shown:
    1 / log2(1 + rank), weighed by its pair's inverse propensity (the counterfactual estimate of
    Joachims et al., 2017, unbiased under the examination model the pairs are weighed by).

    Only the shown tools are compared: a tool the agents never saw has no feedback, so counting it as
    irrelevant (plain NDCG of the re-searched answer) would favour whatever ranking produced the logs.
    A shown tool the searcher no longer ranks among its candidates counts as ranked last."""
    num = den = 0.0
    for group in requests.values():
        shown = group[0].shown
        ranked = [t.doc_id for t in searcher.search(group[0].query, top_k=max(len(shown), searcher.settings.candidates),
                                                    method="multi-field", retriever=retriever, copies="all").tools]
        order = [t for t in ranked if t in set(shown)]
        ranked_again = set(order)
        order += [t for t in shown if t not in ranked_again]
        for pair in group:
            rank = order.index(pair.positive) + 1 if pair.positive in order else len(order) + 1
            num += pair.weight / math.log2(1 + rank)
            den += pair.weight
    return num / den if den else 0.0


def _split(pairs: Sequence[FeedbackPair], holdout: float) -> tuple[list[FeedbackPair], dict[str, list[FeedbackPair]]]:
    """The pairs trained on, and the held-out ones by request (:func:`held_out`)."""
    train: list[FeedbackPair] = []
    test: dict[str, list[FeedbackPair]] = defaultdict(list)
    for pair in pairs:
        if held_out(pair.request_id, holdout):
            test[pair.request_id].append(pair)
        else:
            train.append(pair)
    return train, test


def _benchmark_guard(client: OpenSearch, folders: Sequence[Path], arms: Sequence[tuple[Settings, Embedder]],
                     retriever: Retriever, tolerance: float = TOLERANCE) -> tuple[dict[str, dict[str, float]], list[str]]:
    """Multi-field NDCG@10 of the current and the candidate arm (settings, embedder) on each benchmark,
    and a reason for each the candidate loses more than ``tolerance`` on."""
    from toolsift.evaluation.runner import run_eval

    compared: dict[str, dict[str, float]] = {}
    reasons: list[str] = []
    for folder in folders:
        scores = {label: round(run_eval(client, local.with_overrides(query_log=False), folder, method="multi-field",
                                        retriever=retriever, embedder=embedder).metrics["ndcg@10"], 4)
                  for label, (local, embedder) in zip(("current", "candidate"), arms, strict=True)}
        compared[folder.name] = scores
        if scores["candidate"] < scores["current"] - tolerance:
            reasons.append(f"{folder.name}: NDCG@10 {scores['candidate']:.4f} against {scores['current']:.4f} "
                           f"(may lose at most {tolerance:g}, learn_benchmark_tolerance)")
    return compared, reasons


def plausibility(current: Searcher, candidate: Searcher, requests: Sequence[tuple[str, str | None]],
                 retriever: Retriever, *, limit: float, forced: bool = False, depth: int = 10) -> Plausibility:
    """Re-run each logged request (text, the tenant it was answered in: None for every tenant) with
    ``current`` and ``candidate`` and count those whose top ``depth`` tools the candidate replaces at
    least :data:`REPLACED` of."""
    changed = kept = 0
    for text, tenant in requests:
        scope = Scope(tenant=tenant)
        before, after = (
            {t.doc_id for t in s.search(text, top_k=depth, method="multi-field", retriever=retriever, scope=scope,
                                        copies="all").tools}
            for s in (current, candidate))
        changed += len(before - after) >= min(REPLACED, len(before)) and before != after
        kept += len(before & after)
    return Plausibility(len(requests), changed, round(kept / len(requests), 2) if requests else 0.0, limit, forced)


def serving_weights(current: Searcher, settings: Settings, retriever: Retriever) -> MFTRWeights:
    """The weights ``current`` ranks with, as a training start: its learned weights, else the fixed
    field weights on their own scale (normalised, ranking exactly like them)."""
    if current.artifact is not None:
        return current.artifact.weights
    return MFTRWeights.from_field_weights(settings.field_weights, kinds_for(retriever), settings.derived_weight)


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
    training: TrainingConfig | None = None,
    warm_start: bool = True,
    holdout: float = 0.2,
    benchmarks: Sequence[Path] = (),
    benchmark_guard: bool = True,
    force: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
) -> LearnOutcome:
    """Learn candidate weights from the feedback in OpenSearch and guard them (module docstring).

    Raises:
        ConfigError: the benchmark guard is on and no benchmark is named (``benchmarks`` nor the
            ``learn_benchmarks`` setting), or no training pairs.
        TooFewKeysError: the pairs come from fewer than ``policy.min_keys`` distinct keys.
    """
    benchmarks = list(dict.fromkeys([*benchmarks, *settings.learn_benchmarks]))  # named, and always the configured ones
    if benchmark_guard and not benchmarks:
        raise ConfigError(f"learn: {NO_BENCHMARK}")
    answers, events = load_feedback(client, settings, tenant=tenant)
    made = feedback_pairs(answers, events, policy)
    require_keys(made, policy, what=f"learn{f' (tenant {tenant!r})' if tenant else ''}")
    train_pairs, test = _split(made.pairs, holdout)
    current = Searcher(client, settings.with_overrides(query_log=False), embedder, source="learn")
    start = serving_weights(current, settings, retriever) if warm_start else None
    training = training or (WARM_START if warm_start else FROM_ZERO)
    queries = feedback_training_queries(current, train_pairs, retriever, context=bool(start and start.normalise),
                                        progress=progress)
    if not queries:
        raise ConfigError(f"learn: no training pairs in the feedback ({made.events} events, {made.unconfirmed} "
                          "unconfirmed; a pair needs a successful call and a tool shown beside it that was not called)")
    trained = train_mftr(queries, kinds_for(retriever), training, start=start)
    feedback = {"events": made.events, "unconfirmed": made.unconfirmed, "requests": made.requests,
                "pairs": len(made.pairs), "keys": made.keys, "training_queries": len(queries),
                "held_out_requests": len(test),
                "capped_keys": dict(made.capped_keys), "capped_tools": dict(made.capped_tools),
                "policy": asdict(policy), "tenant": tenant}
    staged = WeightsArtifact(trained.weights, config={
        "learned_from": "feedback", "index": settings.index, "retriever": retriever, "embedding_model": embedder.name,
        "training": asdict(training),
        "started_from": None if start is None else current.weights_version or "fixed field weights",
        "pairs": trained.pairs, "epoch_losses": list(trained.epoch_losses), "device": trained.device, "feedback": feedback,
    }).save(out_root, name)
    candidate = Searcher(client, settings.with_overrides(query_log=False), embedder, artifact=staged, source="learn")
    reasons: list[str] = []
    before = _held_out_dcg(current, test, retriever) if test else 0.0
    after = _held_out_dcg(candidate, test, retriever) if test else 0.0
    if not test:
        reasons.append("no held-out feedback to compare on")
    elif after <= before:
        reasons.append(f"held-out feedback IPS-DCG {after:.4f} is not above the current {before:.4f}")
    moved = plausibility(current, candidate, logged_requests(client, settings, tenant=tenant, limit=PLAUSIBILITY_SEARCHES),
                         retriever, limit=settings.learn_max_changed, forced=force)
    if moved.implausible and not force:
        reasons.append(f"implausible: {moved.describe()}, more than learn_max_changed {moved.limit:.0%}; an admin "
                       "who trusts the feedback may force it (--force)")
    compared, lost = _benchmark_guard(client, benchmarks if benchmark_guard else [],
                                      [(settings, embedder), (settings.with_overrides(weights=staged.path), embedder)],
                                      retriever, settings.learn_benchmark_tolerance)
    reasons += lost
    guard = GuardReport({"current": round(before, 4), "candidate": round(after, 4), "requests": float(len(test))},
                        compared, not reasons, tuple(reasons), moved)
    assert staged.path is not None
    saved = WeightsArtifact(staged.weights, staged.config, {"guard": guard.to_dict()}, staged.created, staged.path)
    write_json_atomic(staged.path, saved.to_dict())  # the same version, now with its guard's report
    return LearnOutcome(saved, guard, feedback)


@dataclass(frozen=True)
class ReembedOutcome:
    """A new index version embedded by another model, its guard's report, and whether it now serves."""

    built: Reembedded
    guard: GuardReport
    swapped: bool

    def to_dict(self) -> dict[str, Any]:
        return {"built": asdict(self.built), "guard": self.guard.to_dict(), "swapped": self.swapped}


def reembed_guarded(
    client: OpenSearch,
    settings: Settings,
    current: Embedder,
    candidate: Embedder,
    *,
    retriever: Retriever = "hybrid",
    benchmarks: Sequence[Path] = (),
    holdout: float = 0.2,
    policy: LearningPolicy = LearningPolicy(),
    swap: bool = True,
    benchmark_guard: bool = True,
    progress: Callable[[str, int, int], None] | None = None,
) -> ReembedOutcome:
    """Re-embed ``settings.index`` with ``candidate`` into a new version and swap the alias to it only
    when the guard passes (and ``swap``); a version not swapped in is deleted.

    The guard: on each benchmark (``benchmarks`` and the ``learn_benchmarks`` setting), multi-field
    NDCG@10 with the candidate embedder may lose at most ``learn_benchmark_tolerance`` against the
    current one (each on its own evaluation index); on the alias's feedback, when it comes from at
    least ``policy.min_keys`` distinct keys, the held-out requests' IPS-DCG among the shown tools (as
    :func:`learn_weights` guards) searched on the new version may not fall below the current
    version's. With neither, nothing is compared and the guard fails. The old version is kept after a
    swap (``toolsift index status``).

    Raises:
        ConfigError: the benchmark guard is on (``benchmark_guard``) and no benchmark is named;
            nothing is built.
    """
    benchmarks = list(dict.fromkeys([*benchmarks, *settings.learn_benchmarks]))  # named, and always the configured ones
    if benchmark_guard and not benchmarks:
        raise ConfigError(f"reembed: {NO_BENCHMARK}")
    if not benchmark_guard:
        benchmarks = []
    built = reembed_version(client, settings.index, candidate, progress=progress, compact=settings.ingest_compact)
    manager = IndexManager(client, settings.index)
    probe = f"{settings.index}-reembed-candidate"
    held: dict[str, float] = {"current": 0.0, "candidate": 0.0, "requests": 0.0}
    try:
        compared, reasons = _benchmark_guard(client, benchmarks, [(settings, current), (settings, candidate)],
                                             retriever, settings.learn_benchmark_tolerance)
        test: dict[str, list[FeedbackPair]] = {}
        if settings.feedback_index and client.indices.exists(index=settings.feedback_index):
            made = feedback_pairs(*load_feedback(client, settings), policy)
            if made.keys >= policy.min_keys:  # fewer keys' feedback is no evidence either way
                _, test = _split(made.pairs, holdout)
        if test:
            client.indices.update_aliases(body={"actions": [{"add": {"index": built.index, "alias": probe}}]})
            quiet = settings.with_overrides(query_log=False)
            before = _held_out_dcg(Searcher(client, quiet, current, source="learn"), test, retriever)
            after = _held_out_dcg(Searcher(client, quiet.with_overrides(index=probe), candidate, source="learn"),
                                  test, retriever)
            held = {"current": round(before, 4), "candidate": round(after, 4), "requests": float(len(test))}
            if after < before:
                reasons.append(f"held-out feedback IPS-DCG {after:.4f} is below the current {before:.4f}")
        if not test and not benchmarks:
            reasons.append("nothing to compare on: no benchmark given and no held-out feedback")
    except BaseException:
        client.indices.delete(index=built.index, ignore_unavailable=True)
        raise
    finally:
        client.indices.delete_alias(index=built.index, name=probe, ignore=[404])
    guard = GuardReport(held, compared, not reasons, tuple(reasons))
    swapped = False
    if guard.passed and swap:
        manager.swap(built.index, delete_old=False)
        swapped = True
    else:  # failed, or only asked to compare: nothing half-promoted is left behind
        client.indices.delete(index=built.index, ignore_unavailable=True)
    return ReembedOutcome(built, guard, swapped)
