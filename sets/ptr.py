"""PTR: recommend a precise tool *set* — the tools a request needs, and about as many as it needs.

The decision is a pure function of the evidence gathered for one request (:class:`SetEvidence`, see
:class:`toolsift.sets.recommender.SetRecommender` for how it is gathered from OpenSearch) and a few parameters
(:class:`PTRConfig`) calibrated on training data (:func:`calibrate`):

1. **Bundle acquisition** (§3.1): each historical bundle the request reached scores
   ``(1 − w)·minmax(vote) + w·minmax(bm25)`` — the nearest past queries' cosine vote and BM25 over
   the bundle's text; the best bundle is the starting set.
2. **Functional coverage mapping** (§3.2): the request is split into needs; each bundle tool is
   matched to the need it covers best (cosine of need and tool vectors). A tool whose best coverage
   is below ``keep_threshold`` covers no need and is dropped; a need no kept tool reaches with
   ``solve_threshold`` is unsolved.
3. **Multi-view re-ranking** (§3.3), per unsolved need: three views rank tools — *direct semantic
   alignment* (cosine of the need and the retrieved tools), *historical query correlation* (tools
   of the past queries nearest to the need), *contextual tool expansion* (tools that share bundles
   with the kept ones); a frequency vote over their top ``view_depth`` picks one tool, added when at
   least ``min_votes`` views agree.
4. **Cold start** (no history): when the request splits into several needs, each first gets the
   tool closest to it; then the head of the retrieval ranking whose scores stay within ``cold_ratio``
   of the top score (a score-gap rule) fills the set to ``max_size`` tools (or one per need).

References:
    PTR: Precision-Driven Tool Recommendation for Large Language Models (Gao and Zhang, 2024), §3.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

import numpy as np

from toolsift.errors import ConfigError
from toolsift.ranker.fusion import min_max
from toolsift.sets.history_store import AcquiredBundle
from toolsift.ranker.metrics.tracc import tracc

__all__ = [
    "PTRConfig",
    "SetCandidate",
    "SetEvidence",
    "SetMember",
    "ToolSet",
    "recommend_set",
    "calibrate",
    "calibrate_cold",
    "CALIBRATION_GRID",
    "COLD_RATIO_GRID",
]

@dataclass(frozen=True)
class PTRConfig:
    """The set decision's parameters; :func:`calibrate` learns the history ones on training data.

    Args:
        bm25_weight: w, BM25's share in bundle acquisition (the nearest-query vote has 1 − w).
        keep_threshold: a bundle tool whose best need cosine is below it is dropped (−1: never).
        solve_threshold: a need is solved when a kept tool reaches this cosine (−1: always).
        min_votes: views that must agree to add a tool for an unsolved need (4: never add).
        view_depth: how deep each view's list is read in the frequency vote.
        cold_ratio: cold start: keep retrieved tools scoring at least this share of the top score.
            The default 0.3 is the best of {0, 0.2, 0.25, 0.3, 0.5} on 600 ToolLens training queries
            (Full-Doc hybrid, 100 candidates); :func:`calibrate_cold` learns it on a history.
        max_size: cold start: the largest set.
    """

    bm25_weight: float = 0.5
    keep_threshold: float = -1.0
    solve_threshold: float = -1.0
    min_votes: int = 2
    view_depth: int = 5
    cold_ratio: float = 0.3
    max_size: int = 3

    def __post_init__(self) -> None:
        if not 0.0 <= self.bm25_weight <= 1.0:
            raise ConfigError(f"PTR bm25_weight must be in [0, 1], got {self.bm25_weight}")
        if not 0.0 < self.cold_ratio <= 1.0:
            raise ConfigError(f"PTR cold_ratio must be in (0, 1], got {self.cold_ratio}")
        if self.max_size < 1 or self.view_depth < 1 or self.min_votes < 1:
            raise ConfigError("PTR max_size, view_depth and min_votes must be at least 1")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PTRConfig:
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass(frozen=True)
class SetCandidate:
    """A tool the request's retrieval returned: its first-stage score, best first."""

    tool_id: str
    name: str
    score: float


@dataclass(frozen=True)
class SetEvidence:
    """Everything the decision reads for one request; gathering it is the only part that searches.

    Args:
        needs: the request's tool needs (rewrite, LLM, or :func:`toolsift.query.decompose.split_needs`).
        candidates: the request's retrieval, best first.
        coverage_of: tool id → the cosine of each need with the tool, for every candidate, bundle
            tool and view tool (computed in OpenSearch by the k-NN scoring script).
        names: tool id → display name.
        bundles: acquired bundles (empty: cold start).
        need_votes: per need, the historical view (tool → summed neighbour cosine).
        cooccurrence: tool → tools sharing a bundle with it → number of such bundles.
    """

    request: str
    needs: tuple[str, ...]
    candidates: tuple[SetCandidate, ...]
    coverage_of: Mapping[str, np.ndarray]
    names: Mapping[str, str] = field(default_factory=dict)
    bundles: tuple[AcquiredBundle, ...] = ()
    need_votes: tuple[Mapping[str, float], ...] = ()
    cooccurrence: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def without_history(self) -> SetEvidence:
        """The same request as a catalog without history sees it (cold start)."""
        return replace(self, bundles=(), need_votes=(), cooccurrence={})

    def coverage(self, tool_id: str) -> np.ndarray:
        """Cosine of each need with the tool (−1 where the tool has no vector)."""
        cover = self.coverage_of.get(tool_id)
        return np.full(len(self.needs), -1.0) if cover is None else cover


Reason = Literal["kept", "added", "retrieved"]


@dataclass(frozen=True)
class SetMember:
    """One tool of the set: the need it covers, and why it is in the set."""

    tool_id: str
    name: str
    need: str
    reason: Reason
    why: str
    coverage: float


@dataclass(frozen=True)
class ToolSet:
    """The recommended set, in order, with the evidence for each member and for what was left out."""

    members: tuple[SetMember, ...]
    needs: tuple[str, ...]
    unsolved: tuple[str, ...]
    bundle_id: str | None
    dropped: tuple[tuple[str, str], ...] = ()
    size_rule: str = ""

    @property
    def tool_ids(self) -> list[str]:
        return [m.tool_id for m in self.members]

    def to_dict(self) -> dict[str, Any]:
        return {
            "tools": [asdict(m) for m in self.members],
            "needs": list(self.needs),
            "unsolved_needs": list(self.unsolved),
            "bundle": self.bundle_id,
            "dropped": [{"tool_id": t, "why": w} for t, w in self.dropped],
            "size_rule": self.size_rule,
        }


def _best_bundle(bundles: Sequence[AcquiredBundle], w: float) -> tuple[AcquiredBundle, float]:
    scores = [(1 - w) * v + w * b for v, b in zip(min_max([x.vote for x in bundles]), min_max([x.bm25 for x in bundles]))]
    best = max(range(len(bundles)), key=lambda i: (scores[i], bundles[i].vote))
    return bundles[best], scores[best]


def _top(scores: Mapping[str, float], depth: int, exclude: set[str]) -> list[str]:
    return [t for t, _ in sorted(((t, s) for t, s in scores.items() if t not in exclude), key=lambda x: -x[1])][:depth]


def _add_for_need(ev: SetEvidence, need_index: int, chosen: list[str], cfg: PTRConfig) -> tuple[str, str] | None:
    """Multi-view re-ranking for one unsolved need: (tool, why) or None when the views disagree."""
    exclude = set(chosen)
    direct = {t: float(c[need_index]) for t, c in ev.coverage_of.items()}
    history = ev.need_votes[need_index] if need_index < len(ev.need_votes) else {}
    context: dict[str, float] = {}
    for kept in chosen:
        for t, n in ev.cooccurrence.get(kept, {}).items():
            context[t] = context.get(t, 0.0) + n
    views = {"direct": _top(direct, cfg.view_depth, exclude), "history": _top(history, cfg.view_depth, exclude),
             "context": _top(context, cfg.view_depth, exclude)}
    tally: dict[str, tuple[int, float]] = {}
    for ranked in views.values():
        for rank, t in enumerate(ranked, start=1):
            votes, rr = tally.get(t, (0, 0.0))
            tally[t] = (votes + 1, rr + 1.0 / rank)
    if not tally:
        return None
    tool, (votes, _) = max(tally.items(), key=lambda kv: kv[1])
    if votes < cfg.min_votes:
        return None
    ranks = ", ".join(f"{v} #{views[v].index(tool) + 1}" for v in views if tool in views[v])
    return tool, f"added for an unsolved need: {votes} of 3 views agree ({ranks})"


def recommend_set(ev: SetEvidence, cfg: PTRConfig) -> ToolSet:
    """PTR's set for one request: bundle → coverage trimming → one addition per unsolved need; or cold start."""
    if not ev.bundles:
        return _cold_set(ev, cfg)
    bundle, score = _best_bundle(ev.bundles, cfg.bm25_weight)
    members: list[SetMember] = []
    dropped: list[tuple[str, str]] = []
    for tool in bundle.bundle.tools:
        cover = ev.coverage(tool)
        best = int(cover.argmax())
        if float(cover[best]) < cfg.keep_threshold:
            dropped.append((tool, f"covers no need (best cosine {cover[best]:.3f} < {cfg.keep_threshold})"))
            continue
        members.append(SetMember(tool, ev.names.get(tool, tool), ev.needs[best], "kept",
                                 f"in bundle {bundle.bundle.bundle_id} (acquisition {score:.3f}: vote {bundle.vote:.3f}, "
                                 f"bm25 {bundle.bm25:.2f}); covers this need (cosine {cover[best]:.3f})", float(cover[best])))
    if not members and bundle.bundle.tools:  # never hand back an empty set: keep the best-covering tool
        tool = max(bundle.bundle.tools, key=lambda t: float(ev.coverage(t).max()))
        cover = ev.coverage(tool)
        dropped = [d for d in dropped if d[0] != tool]
        members.append(SetMember(tool, ev.names.get(tool, tool), ev.needs[int(cover.argmax())], "kept",
                                 f"in bundle {bundle.bundle.bundle_id}; the best-covering tool, kept so the set is not empty",
                                 float(cover.max())))
    unsolved: list[str] = []
    for i, need in enumerate(ev.needs):
        reached = max((float(ev.coverage(m.tool_id)[i]) for m in members), default=-1.0)
        if reached >= cfg.solve_threshold:
            continue
        added = _add_for_need(ev, i, [m.tool_id for m in members], cfg)
        if added is None:
            unsolved.append(need)
            continue
        tool, why = added
        members.append(SetMember(tool, ev.names.get(tool, tool), need, "added", why, float(ev.coverage(tool)[i])))
    return ToolSet(tuple(members), ev.needs, tuple(unsolved), bundle.bundle.bundle_id, tuple(dropped),
                   size_rule="the acquired bundle, trimmed by coverage, plus one tool per unsolved need")


def _cold_set(ev: SetEvidence, cfg: PTRConfig) -> ToolSet:
    if not ev.candidates:
        return ToolSet((), ev.needs, ev.needs, None, size_rule="no candidates")
    top = ev.candidates[0].score
    head = [c for c in ev.candidates[: cfg.max_size] if top <= 0 or c.score >= cfg.cold_ratio * top]
    members: list[SetMember] = []
    unsolved: list[str] = []
    if len(ev.needs) > 1:
        # Several needs: each first gets the tool closest to it (from the request's and the need's own
        # retrieval), so one need with many similar tools cannot fill the set alone.
        retrieved = {c.tool_id for c in ev.candidates}
        for i, need in enumerate(ev.needs):
            pool = [t for t in ev.coverage_of if t not in {m.tool_id for m in members}]
            if not pool:
                unsolved.append(need)
                continue
            best = max(pool, key=lambda t: float(ev.coverage(t)[i]))
            cos = float(ev.coverage(best)[i])
            members.append(SetMember(best, ev.names.get(best, best), need, "retrieved" if best in retrieved else "added",
                                     f"the tool closest to this need (cosine {cos:.3f})", cos))
    cap = max(cfg.max_size, len(members))
    for c in head:
        if len(members) >= cap:
            break
        if any(m.tool_id == c.tool_id for m in members):
            continue
        cover = ev.coverage(c.tool_id)
        members.append(SetMember(c.tool_id, c.name, ev.needs[int(cover.argmax())], "retrieved",
                                 f"retrieval score {c.score:.3f} ≥ {cfg.cold_ratio} × top {top:.3f}", float(cover.max())))
    return ToolSet(tuple(members), ev.needs, tuple(unsolved), None,
                   size_rule=f"cold start: the closest tool of each need when there are several, then retrieved "
                             f"tools within {cfg.cold_ratio} of the top score (at most {cfg.max_size}, or one per need)")


#: The grid :func:`calibrate` searches (history parameters).
CALIBRATION_GRID: dict[str, tuple[Any, ...]] = {
    "bm25_weight": (0.0, 0.25, 0.5, 0.75, 1.0),
    "keep_threshold": (-1.0, 0.1, 0.2, 0.3),
    "solve_threshold": (-1.0, 0.2, 0.3, 0.4),
    "min_votes": (2, 3, 4),
}


def _best_config(
    configs: Iterable[PTRConfig], evidence: Sequence[SetEvidence], gold: Sequence[Iterable[str]]
) -> tuple[PTRConfig, float]:
    """The config with the best mean TRACC over ``evidence``; ties go to the earlier config."""
    if not evidence or len(evidence) != len(gold):
        raise ConfigError("calibration needs one gold set per evidence record, and at least one")
    gold_sets = [set(g) for g in gold]
    best: tuple[float, PTRConfig] | None = None
    for cfg in configs:
        score = float(np.mean([tracc(g, recommend_set(ev, cfg).tool_ids) for ev, g in zip(evidence, gold_sets)]))
        if best is None or score > best[0] + 1e-12:
            best = (score, cfg)
    assert best is not None
    return best[1], best[0]


def calibrate(
    evidence: Sequence[SetEvidence], gold: Sequence[Iterable[str]], base: PTRConfig | None = None
) -> tuple[PTRConfig, float]:
    """The grid point of :data:`CALIBRATION_GRID` with the best mean TRACC on held-out training queries.

    Ties go to the earlier grid point (the grid lists the most conservative values first: never drop,
    never add). Returns the config and its mean TRACC.
    """
    base = base or PTRConfig()
    keys = list(CALIBRATION_GRID)
    grid = (replace(base, **dict(zip(keys, values))) for values in itertools.product(*CALIBRATION_GRID.values()))
    return _best_config(grid, evidence, gold)


#: The cold-start score ratios :func:`calibrate_cold` tries.
COLD_RATIO_GRID: tuple[float, ...] = (0.2, 0.3, 0.4, 0.5, 0.6)


def calibrate_cold(
    evidence: Sequence[SetEvidence], gold: Sequence[Iterable[str]], base: PTRConfig | None = None
) -> tuple[PTRConfig, float]:
    """The cold-start ``cold_ratio`` with the best mean TRACC on held-out training queries, their
    bundles withheld (so the requests are decided as a catalog without history would decide them)."""
    base = base or PTRConfig()
    grid = (replace(base, cold_ratio=ratio) for ratio in COLD_RATIO_GRID)
    return _best_config(grid, [ev.without_history() for ev in evidence], gold)
