"""How a tenant's A/B test is going: its two arms compared on what agents did with the answers.

The query log names the weights every answer ranked with (``weights_version``) and the key it was
given to; an answer of the tenant since the experiment started is the candidate's when that is the
candidate's version, the control's otherwise. The feedback on those answers
(:mod:`toolsift.learning.feedback`: what agents called and whether it worked) gives each arm:

* ``success_rate`` — answers with at least one tool called and successful, over all answers (an
  answer nobody reported on counts as a miss in both arms alike);
* ``mrr`` — the mean reciprocal rank of the first successful tool in the answer (0 without one);
* ``success_at_5`` — answers whose first successful tool was among the first five.

**The verdict rests on keys, each weighing once.** A key that reports only on one arm's answers (or
floods one arm) must not carry the comparison, so the arms are compared key by key: each key with
answers in both arms and some feedback gives its own candidate − control difference of success rate
(and of reciprocal rank), and the report's ``success_rate_diff`` / ``mrr_diff`` are the means of those
differences over the keys — one key's weight is capped at 1 / ``keys`` however many answers it got.
Their p-values are one-sample t-tests of the per-key differences against 0 (SciPy). ``verdict`` says
``candidate better`` or ``candidate worse`` only below ``alpha`` *and* with at least ``min_keys``
distinct keys (the ``ab_min_keys`` setting); with fewer it is ``no verdict`` and says how many keys
there were. ``keys`` says how many distinct keys it rests on. The pooled per-arm figures above are
descriptive. The split is per request (keyed by the experiment's secret:
:func:`toolsift.learning.experiments.arm_for`), so the arms see the same mix of agents and requests.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError as OpenSearchNotFoundError
from opensearchpy.helpers import scan

from toolsift.config import Settings
from toolsift.learning.experiments import Arm, TenantExperiment
from toolsift.learning.feedback import refresh_feedback

__all__ = ["ArmFigures", "ABReport", "ArmAnswer", "ArmComparison", "ab_report", "compare_arms"]


@dataclass(frozen=True)
class ArmFigures:
    """What agents did with one arm's answers."""

    weights_version: str
    answers: int
    reported: int
    successes: int
    success_rate: float
    mrr: float
    success_at_5: float
    #: distinct keys the arm's answers were given to
    keys: int = 0


@dataclass(frozen=True)
class ArmAnswer:
    """One answer of the experiment: its arm, the weights it ranked with, its key and its tools."""

    request_id: str
    arm: Arm
    version: str
    key: str
    answered: tuple[str, ...]


@dataclass(frozen=True)
class ABReport:
    """Both arms of one tenant's experiment, their differences and what they mean."""

    tenant: str
    candidate_version: str
    share: float
    state: str
    started_at: str
    arms: dict[str, ArmFigures]
    success_rate_diff: float
    success_rate_p: float | None
    mrr_diff: float
    mrr_p: float | None
    verdict: str
    #: distinct keys the verdict rests on (answers in both arms and some feedback), each weighing once
    keys: int = 0
    #: the fewest keys a verdict may rest on (``ab_min_keys``)
    min_keys: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "arms": {arm: asdict(f) for arm, f in self.arms.items()}}


def _answers(client: OpenSearch, settings: Settings, experiment: TenantExperiment) -> list[ArmAnswer]:
    """The tenant's answers since the start, each with its arm, weights version, key and tools."""
    query = {"bool": {"filter": [{"term": {"tenant": experiment.tenant}}, {"exists": {"field": "request_id"}},
                                 {"range": {"timestamp": {"gte": experiment.started_at}}}]}}
    found: list[ArmAnswer] = []
    try:
        for hit in scan(client, index=settings.query_log_index, query={"query": query}, size=1000,
                        _source_includes=["request_id", "weights_version", "answered_ids", "key"]):
            doc = hit.get("_source") or {}
            if doc.get("request_id") != hit["_id"]:
                continue  # a tool set's further searches: not an answer of their own
            version = str(doc.get("weights_version") or "")
            arm: Arm = "candidate" if version == experiment.candidate.version else "control"
            found.append(ArmAnswer(hit["_id"], arm, version or "(fixed field weights)", str(doc.get("key") or ""),
                                   tuple(str(t) for t in doc.get("answered_ids") or ())))
    except OpenSearchNotFoundError:
        return []
    return found


def _successes(client: OpenSearch, settings: Settings, experiment: TenantExperiment) -> tuple[dict[str, set[str]], set[str]]:
    """request id → tools called successfully, and the request ids with any feedback, since the start."""
    query = {"bool": {"filter": [{"term": {"tenant": experiment.tenant}},
                                 {"range": {"timestamp": {"gte": experiment.started_at}}}]}}
    worked: dict[str, set[str]] = {}
    reported: set[str] = set()
    try:
        refresh_feedback(client, settings.feedback_index)
        for hit in scan(client, index=settings.feedback_index, query={"query": query}, size=1000,
                        _source_includes=["request_id", "tool_id", "called", "success"]):
            doc = hit.get("_source") or {}
            rid = str(doc.get("request_id", ""))
            reported.add(rid)
            if doc.get("called") and doc.get("success") is True:
                worked.setdefault(rid, set()).add(str(doc.get("tool_id", "")))
    except OpenSearchNotFoundError:
        pass
    return worked, reported


def _one_sample(diffs: Sequence[float]) -> float | None:
    """Two-sided p-value of the one-sample t-test of ``diffs`` against 0 (None when it cannot be computed)."""
    from scipy.stats import ttest_1samp

    if len(diffs) < 2:
        return None
    p = float(ttest_1samp(list(diffs), 0.0).pvalue)
    return None if math.isnan(p) else p


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


@dataclass(frozen=True)
class ArmComparison:
    """The arms' pooled figures, how many keys the comparison rests on, the per-key differences' means,
    their p-values and the verdict."""

    arms: dict[str, ArmFigures]
    keys: int
    success_rate_diff: float
    success_rate_p: float | None
    mrr_diff: float
    mrr_p: float | None
    verdict: str


def compare_arms(answers: Sequence[ArmAnswer], worked: Mapping[str, set[str]], reported: set[str], *,
                 alpha: float = 0.05, min_keys: int = 5) -> ArmComparison:
    """The arms' pooled figures and the key-by-key comparison behind the verdict (module docstring)."""
    ranks: dict[Arm, list[float]] = {"control": [], "candidate": []}
    versions: dict[Arm, set[str]] = {"control": set(), "candidate": set()}
    counts = {arm: {"reported": 0, "successes": 0, "at5": 0} for arm in ranks}
    arm_keys: dict[Arm, set[str]] = {"control": set(), "candidate": set()}
    # key -> arm -> [(success, reciprocal rank)] ; keys that reported anything
    per_key: dict[str, dict[Arm, list[tuple[float, float]]]] = defaultdict(lambda: {"control": [], "candidate": []})
    reporting: set[str] = set()
    for answer in answers:
        arm = answer.arm
        versions[arm].add(answer.version)
        arm_keys[arm].add(answer.key)
        good = worked.get(answer.request_id, set())
        first = next((n for n, tool in enumerate(answer.answered, 1) if tool in good), None)
        rr = 1.0 / first if first else 0.0
        ranks[arm].append(rr)
        counts[arm]["reported"] += answer.request_id in reported
        counts[arm]["successes"] += first is not None
        counts[arm]["at5"] += first is not None and first <= 5
        per_key[answer.key][arm].append((1.0 if first else 0.0, rr))
        if answer.request_id in reported:
            reporting.add(answer.key)
    arms: dict[str, ArmFigures] = {}
    for arm, rr_list in ranks.items():
        n = len(rr_list)
        arms[arm] = ArmFigures(", ".join(sorted(versions[arm])) or "-", n, counts[arm]["reported"], counts[arm]["successes"],
                               round(counts[arm]["successes"] / n, 4) if n else 0.0,
                               round(sum(rr_list) / n, 4) if n else 0.0, round(counts[arm]["at5"] / n, 4) if n else 0.0,
                               len(arm_keys[arm]))
    success_diffs: list[float] = []
    rr_diffs: list[float] = []
    for key, by_arm in sorted(per_key.items()):
        if key not in reporting or not by_arm["candidate"] or not by_arm["control"]:
            continue  # no feedback, or answers in one arm only: nothing to compare for this key
        success_diffs.append(_mean([s for s, _ in by_arm["candidate"]]) - _mean([s for s, _ in by_arm["control"]]))
        rr_diffs.append(_mean([r for _, r in by_arm["candidate"]]) - _mean([r for _, r in by_arm["control"]]))
    keys = len(success_diffs)
    diff, p_success = round(_mean(success_diffs), 4), _one_sample(success_diffs)
    p_mrr = _one_sample(rr_diffs)
    if keys < min_keys:
        verdict = (f"no verdict: the feedback comes from {keys} distinct key{'s' if keys != 1 else ''} with answers in "
                   f"both arms; at least {min_keys} are needed (ab_min_keys), each weighing once")
    elif p_success is not None and p_success < alpha and diff != 0:
        verdict = f"candidate {'better' if diff > 0 else 'worse'} (rests on {keys} keys, each weighing once)"
    else:
        verdict = f"no significant difference (alpha {alpha}, {keys} keys)"
    return ArmComparison(arms, keys, diff, None if p_success is None else round(p_success, 4), round(_mean(rr_diffs), 4),
                     None if p_mrr is None else round(p_mrr, 4), verdict)


def ab_report(client: OpenSearch, settings: Settings, experiment: TenantExperiment, *, alpha: float = 0.05,
              min_keys: int | None = None) -> ABReport:
    """Both arms of ``experiment`` as the query log and the feedback index hold them (module docstring);
    ``min_keys`` defaults to the ``ab_min_keys`` setting."""
    least = settings.ab_min_keys if min_keys is None else min_keys
    worked, reported = _successes(client, settings, experiment)
    found = compare_arms(_answers(client, settings, experiment), worked, reported, alpha=alpha, min_keys=least)
    return ABReport(experiment.tenant, experiment.candidate.version, experiment.share, experiment.state,
                    experiment.started_at, found.arms, found.success_rate_diff, found.success_rate_p, found.mrr_diff,
                    found.mrr_p, found.verdict, found.keys, least)
