"""How a tenant's A/B test is going: its two arms compared on what agents did with the answers.

The query log names the weights every answer ranked with (``weights_version``); an answer of the
tenant since the experiment started is the candidate's when that is the candidate's version, the
control's otherwise. The feedback on those answers (:mod:`toolsift.search.feedback`: what agents
called and whether it worked) gives each arm:

* ``success_rate`` — answers with at least one tool called and successful, over all answers (an
  answer nobody reported on counts as a miss in both arms alike);
* ``mrr`` — the mean reciprocal rank of the first successful tool in the answer (0 without one);
* ``success_at_5`` — answers whose first successful tool was among the first five.

The success rates are compared by a two-sided two-proportion z-test and the reciprocal ranks by
Welch's t-test (SciPy); ``verdict`` says ``candidate better`` or ``candidate worse`` only below
``alpha``, else ``no significant difference``. The split is per request, so the arms see the same
mix of agents and requests.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError as OpenSearchNotFoundError
from opensearchpy.helpers import scan

from toolsift.config import Settings
from toolsift.ranker.experiments import Arm, TenantExperiment
from toolsift.search.feedback import refresh_feedback

__all__ = ["ArmFigures", "ABReport", "ab_report"]


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

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "arms": {arm: asdict(f) for arm, f in self.arms.items()}}


def _answers(client: OpenSearch, settings: Settings, experiment: TenantExperiment) -> dict[str, tuple[Arm, str, list[str]]]:
    """request id → (arm, weights version, answered tools) of the tenant's answers since the start."""
    query = {"bool": {"filter": [{"term": {"tenant": experiment.tenant}}, {"exists": {"field": "request_id"}},
                                 {"range": {"timestamp": {"gte": experiment.started_at}}}]}}
    found: dict[str, tuple[Arm, str, list[str]]] = {}
    try:
        for hit in scan(client, index=settings.query_log_index, query={"query": query}, size=1000,
                        _source_includes=["request_id", "weights_version", "answered_ids"]):
            doc = hit.get("_source") or {}
            if doc.get("request_id") != hit["_id"]:
                continue  # a tool set's further searches: not an answer of their own
            version = str(doc.get("weights_version") or "")
            arm: Arm = "candidate" if version == experiment.candidate.version else "control"
            found[hit["_id"]] = (arm, version or "(fixed field weights)", [str(t) for t in doc.get("answered_ids") or ()])
    except OpenSearchNotFoundError:
        return {}
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


def _two_proportions(s1: int, n1: int, s2: int, n2: int) -> float | None:
    """Two-sided p-value of the two-proportion z-test (None when it cannot be computed)."""
    from scipy.stats import norm

    if min(n1, n2) == 0:
        return None
    pooled = (s1 + s2) / (n1 + n2)
    spread = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if spread == 0:
        return None
    return float(2 * norm.sf(abs(s1 / n1 - s2 / n2) / spread))


def _welch(a: list[float], b: list[float]) -> float | None:
    from scipy.stats import ttest_ind

    if min(len(a), len(b)) < 2:
        return None
    p = float(ttest_ind(a, b, equal_var=False).pvalue)
    return None if math.isnan(p) else p


def ab_report(client: OpenSearch, settings: Settings, experiment: TenantExperiment, *, alpha: float = 0.05) -> ABReport:
    """Both arms of ``experiment`` as the query log and the feedback index hold them (module docstring)."""
    answers = _answers(client, settings, experiment)
    worked, reported = _successes(client, settings, experiment)
    ranks: dict[Arm, list[float]] = {"control": [], "candidate": []}
    versions: dict[Arm, set[str]] = {"control": set(), "candidate": set()}
    counts = {arm: {"reported": 0, "successes": 0, "at5": 0} for arm in ranks}
    for rid, (arm, version, answered) in answers.items():
        versions[arm].add(version)
        good = worked.get(rid, set())
        first = next((n for n, tool in enumerate(answered, 1) if tool in good), None)
        ranks[arm].append(1.0 / first if first else 0.0)
        counts[arm]["reported"] += rid in reported
        counts[arm]["successes"] += first is not None
        counts[arm]["at5"] += first is not None and first <= 5
    arms: dict[str, ArmFigures] = {}
    for arm, rr in ranks.items():
        n = len(rr)
        arms[arm] = ArmFigures(", ".join(sorted(versions[arm])) or "-", n, counts[arm]["reported"], counts[arm]["successes"],
                               round(counts[arm]["successes"] / n, 4) if n else 0.0,
                               round(sum(rr) / n, 4) if n else 0.0, round(counts[arm]["at5"] / n, 4) if n else 0.0)
    a, b = arms["candidate"], arms["control"]
    p_success = _two_proportions(a.successes, a.answers, b.successes, b.answers)
    p_mrr = _welch(ranks["candidate"], ranks["control"])
    diff = round(a.success_rate - b.success_rate, 4)
    if p_success is not None and p_success < alpha and diff != 0:
        verdict = "candidate better" if diff > 0 else "candidate worse"
    else:
        verdict = f"no significant difference (alpha {alpha})"
    return ABReport(experiment.tenant, experiment.candidate.version, experiment.share, experiment.state,
                    experiment.started_at, arms, diff, None if p_success is None else round(p_success, 4),
                    round(a.mrr - b.mrr, 4), None if p_mrr is None else round(p_mrr, 4), verdict)
