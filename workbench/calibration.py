"""Calibrating the multi-need ranking on a judged query set: choose on one half, report the other.

The multi-need search's parameters (:class:`~toolsift.search.planner.PlannerParams`) were chosen on
half of LiveMCPBench's requests, and one of them depends on how a catalog's requests are worded: λ,
the weight of the whole request's words as a need, helps requests that name what a tool does
("search the web …") and hurts requests that are instances of a procedure (Toolink's word problems,
whose words find tools about their topic). :func:`calibrate_planner` measures a grid of λ (and β when
asked) on the caller's own judged queries, as the workbench's sliders would, and picks one:

1. the set's candidates are fetched once (:func:`~toolsift.workbench.comparison.gather_candidates`:
   each query's texts' rankings, the request's words among them);
2. every grid point re-ranks them as a search with those parameters would
   (:func:`~toolsift.search.planner.rank_planned`), NDCG@10 and Recall@10 per query;
3. the point with the best mean ``measure`` on **half A** (queries at even positions) is chosen, ties
   going to the smaller λ, then the smaller β (no words' query at λ = 0); **half B** (odd positions)
   is reported beside it, never used to choose.

``toolsift train planner`` writes the choice as a weights artifact (``planner`` in its config, the
index's current field weights) and pushes it with ``--push``: every searcher of the index then
plans with it, as after a push from the workbench.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolsift.errors import BadQueryError
from toolsift.query.scope import UNSCOPED, Scope
from toolsift.ranker.artifact import WeightsArtifact
from toolsift.search.planner import PlannerParams
from toolsift.workbench.comparison import MEASURES, gather_candidates, per_query
from toolsift.workbench.querysets import QuerySet, from_benchmark, indexed_tool_ids
from toolsift.workbench.tuning import Proposal, current_weights, tuned_artifact

if TYPE_CHECKING:
    from toolsift.search import Searcher

__all__ = ["DEFAULT_LEXICAL_GRID", "GridPoint", "PlannerCalibration", "benchmark_query_set", "calibrate_planner",
           "choose", "save_calibration"]

#: The λ values ``train planner`` measures unless told others.
DEFAULT_LEXICAL_GRID: tuple[float, ...] = (0.0, 0.3, 0.6, 0.9, 1.2)


@dataclass(frozen=True)
class GridPoint:
    """One parameter setting's mean measures on each half of the set."""

    params: PlannerParams
    half_a: Mapping[str, float]
    half_b: Mapping[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {"params": self.params.to_dict(), "half_a": {k: round(v, 4) for k, v in self.half_a.items()},
                "half_b": {k: round(v, 4) for k, v in self.half_b.items()}}


@dataclass(frozen=True)
class PlannerCalibration:
    """What was measured, what the index plans with now, and the chosen parameters."""

    query_set: str
    index: str
    queries: tuple[int, int]
    measure: str
    current: GridPoint
    chosen: GridPoint
    points: tuple[GridPoint, ...]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"query_set": self.query_set, "index": self.index, "queries": {"half_a": self.queries[0],
                "half_b": self.queries[1]}, "measure": self.measure, "current": self.current.to_dict(),
                "chosen": self.chosen.to_dict(), "points": [p.to_dict() for p in self.points],
                "seconds": round(self.seconds, 2),
                "protocol": "half A = queries at even positions (chooses), half B = odd positions (reported only); "
                            "ties: the smaller lexical_weight, then the smaller server_weight"}


def choose(points: Sequence[GridPoint], measure: str) -> GridPoint:
    """The point with the best mean ``measure`` on half A; ties to the smaller λ, then the smaller β.

    Example:
        >>> a = GridPoint(PlannerParams(0.4, 1, 0.0), {"ndcg@10": 0.5}, {"ndcg@10": 0.4})
        >>> b = GridPoint(PlannerParams(0.4, 1, 0.9), {"ndcg@10": 0.5}, {"ndcg@10": 0.6})
        >>> choose([b, a], "ndcg@10").params.lexical_weight
        0.0
    """
    if not points:
        raise BadQueryError("no parameters to choose from")
    return min(points, key=lambda p: (-round(p.half_a[measure], 9), p.params.lexical_weight, p.params.server_weight))


def calibrate_planner(searcher: Searcher, query_set: QuerySet, *, lexical_weights: Sequence[float] = DEFAULT_LEXICAL_GRID,
                      server_weights: Sequence[float] | None = None, measure: str = "ndcg@10",
                      scope: Scope = UNSCOPED) -> PlannerCalibration:
    """Measure every (λ, β) of the grid on ``query_set`` over ``searcher``'s index and choose on half A.

    ``server_weights`` None: the index's current β only. M stays the index's.

    Raises:
        BadQueryError: the index's searches are not multi-need ones (no servers, or learned MFTR weights
            rank them), a set of fewer than two judged queries, an empty grid, an unknown measure, or a
            value the parameters refuse (named).
    """
    started = time.perf_counter()
    if measure not in MEASURES:
        raise BadQueryError(f"measure must be one of {', '.join(MEASURES)}, got {measure!r}")
    if not searcher.plans(None, scope):
        raise BadQueryError(f"index {searcher.settings.index!r}: its searches are not ranked by the multi-need "
                            "search (it holds no servers, or learned weights rank it): there is no planner to calibrate")
    judged = [case for case in query_set.queries if case.relevant]
    if len(judged) < 2:
        raise BadQueryError(f"query set {query_set.name!r}: at least two judged queries are needed (one per half)")
    if not lexical_weights:
        raise BadQueryError("give at least one lexical_weight to measure")
    judged_set = replace(query_set, queries=tuple(judged))
    half_a = {case.query_id for case in judged[0::2]}
    candidates = gather_candidates(searcher, judged_set, searcher.settings.retriever, scope=scope)
    weights = current_weights(searcher)
    base = searcher.planner

    def point(params: PlannerParams) -> GridPoint:
        scored = per_query(candidates, Proposal(weights, None, params))

        def mean(ids: list[str]) -> dict[str, float]:
            return {m: sum(scored[q][m] for q in ids) / len(ids) for m in MEASURES}

        return GridPoint(params, mean([q for q in scored if q in half_a]), mean([q for q in scored if q not in half_a]))

    grid = [PlannerParams(beta, base.prerequisite_tools, lam)
            for beta in (server_weights if server_weights else (base.server_weight,)) for lam in lexical_weights]
    points = tuple(point(p) for p in dict.fromkeys(grid))
    return PlannerCalibration(query_set.name, searcher.settings.index, (len(half_a), len(judged) - len(half_a)),
                              measure, point(base), choose(points, measure), points, time.perf_counter() - started)


def benchmark_query_set(searcher: Searcher, folder: Path, *, split: str = "test") -> QuerySet:
    """A benchmark folder's judged queries (ToolRet, BEIR, LiveMCPBench, a `bench catalog` folder's
    needles) as a query set of ``searcher``'s index: the relevant tools the index holds (as the
    workbench imports one).

    Raises:
        CatalogError: the folder is not a benchmark, or none of its relevant tools is in the index.
    """
    from toolsift.bench.scale_catalog import CATALOG_FILE, MANIFEST_FILE, load_scale_catalog

    index = searcher.settings.index
    ids = indexed_tool_ids(searcher.client, index)
    needles = (folder / MANIFEST_FILE).is_file() and (folder / CATALOG_FILE).is_file()
    return from_benchmark(folder, index, ids, split=split,
                          loaded=load_scale_catalog(folder).benchmark() if needles else None)


def save_calibration(calibration: PlannerCalibration, searcher: Searcher, root: Path, name: str) -> WeightsArtifact:
    """The chosen parameters as a new version of the weights artifact ``name`` under ``root``: the
    index's current field weights with ``planner`` in its config (what the workbench saves), the
    calibration in its metrics."""
    proposal = Proposal(current_weights(searcher), None, calibration.chosen.params)
    return tuned_artifact(searcher, proposal, tuned_in="train planner",
                          metrics={"train_planner": calibration.to_dict()}).save(root, name)
