"""Score a run against qrels with named measures: ir_measures for the standard ones, toolsift's own
module for Completeness@K.

Measure names are toolsift's lowercase form, each with a cutoff K ≥ 1:

* ``ndcg@K``: ir_measures ``nDCG@K``, binary nDCG with the log2 discount;
* ``recall@K``: ir_measures ``R@K``, the share of the relevant tools found in the top K;
* ``precision@K``: ir_measures ``P@K``, the share of the top K that is relevant;
* ``map@K``: ir_measures ``AP@K``, average precision cut at K;
* ``mrr@K``: ir_measures ``RR@K``, reciprocal rank of the first relevant tool within the top K;
* ``completeness@K``: :func:`toolsift.ranker.metrics.completeness_at_k`, 1 when every relevant
  tool is in the top K (Tool-DE §3.1).

Three conventions change the numbers, so they are fixed here and stated once:

* **Binary relevance.** A tool is relevant when its grade is at least ``rel_threshold`` (default 1,
  ir_measures' ``rel=1``); grades are turned into 0/1 before any measure sees them, so nDCG uses
  gain 1 for every relevant tool whatever its grade, as the tool-retrieval papers report it.
* **Which queries count.** Every query of the qrels with at least one relevant tool, and only those.
  A query absent from the run (or with an empty ranking) scores 0 on every measure; queries of the
  run that the qrels lack are ignored; queries with no relevant tool are excluded from the mean.
* **One ranking.** Each query's tools are ordered once by
  :func:`~toolsift.ranker.metrics.rank_tools` (score descending, ties by tool id descending, as
  trec_eval does), and ir_measures receives rank-derived scores, so every measure, whichever
  ir_measures provider computes it, sees exactly the ranking Completeness@K sees. Without this,
  tied scores would be ordered two ways: ir_measures 0.4 computes ``RR@K`` with its msmarco
  provider (ties by id ascending) and the other measures with pytrec_eval (ties by id descending).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from toolsift.errors import BadQueryError
from toolsift.ranker.metrics.completeness import completeness_at_k, rank_tools

__all__ = [
    "DEFAULT_MEASURES",
    "KNOWN_MEASURES",
    "normalise_measures",
    "evaluate",
    "evaluate_per_query",
]

#: The measures ``toolsift eval`` reports unless told otherwise (MFTR and Tool-DE report @10,
#: Tool-to-Agent Retrieval @5).
DEFAULT_MEASURES: tuple[str, ...] = (
    "ndcg@10",
    "recall@10",
    "completeness@10",
    "ndcg@5",
    "recall@5",
)

#: Measure families understood by :func:`evaluate`, each written ``family@K``.
KNOWN_MEASURES: tuple[str, ...] = (
    "ndcg@K",
    "recall@K",
    "precision@K",
    "map@K",
    "mrr@K",
    "completeness@K",
)

_IR_MEASURES_NAME = {
    "ndcg": "nDCG",
    "recall": "R",
    "precision": "P",
    "map": "AP",
    "mrr": "RR",
}
_MEASURE_RE = re.compile(r"(ndcg|recall|precision|map|mrr|completeness)@([1-9][0-9]*)")


@dataclass(frozen=True)
class _MeasureSpec:
    name: str
    family: str
    cutoff: int


def _parse(name: str) -> _MeasureSpec:
    match = _MEASURE_RE.fullmatch(name.strip().lower())
    if match is None:
        raise BadQueryError(
            f"unknown measure {name!r}; known measures: {', '.join(KNOWN_MEASURES)} "
            "(K a positive integer, e.g. 'ndcg@10')"
        )
    family, cutoff = match.group(1), int(match.group(2))
    return _MeasureSpec(name=f"{family}@{cutoff}", family=family, cutoff=cutoff)


def _parse_all(measures: Sequence[str]) -> list[_MeasureSpec]:
    if isinstance(measures, str):
        raise BadQueryError("measures must be a sequence of names, not a single string")
    specs: dict[str, _MeasureSpec] = {}
    for name in measures:
        spec = _parse(name)
        specs.setdefault(spec.name, spec)
    if not specs:
        raise BadQueryError("no measure requested")
    return list(specs.values())


def normalise_measures(measures: Sequence[str]) -> tuple[str, ...]:
    """Check measure names and return them in toolsift's canonical form.

    Args:
        measures: names such as ``"nDCG@10"`` or ``"recall@5"`` (case-insensitive).

    Returns:
        The canonical lowercase names (``"ndcg@10"``), duplicates removed, order kept.

    Raises:
        BadQueryError: a name is not ``family@K`` for a family of :data:`KNOWN_MEASURES`, the
            sequence is empty, or it is a single string.
    """
    return tuple(spec.name for spec in _parse_all(measures))


def evaluate_per_query(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    measures: Sequence[str] = DEFAULT_MEASURES,
    *,
    rel_threshold: int = 1,
) -> dict[str, dict[str, float]]:
    """Per-query values of the named measures.

    Args:
        qrels: query id → tool id → relevance grade.
        run: query id → tool id → score.
        measures: toolsift measure names (see :data:`KNOWN_MEASURES`), case-insensitive.
        rel_threshold: binary relevance threshold: grade ≥ this is relevant (ir_measures'
            ``rel``; default 1).

    Returns:
        Query id → canonical measure name → value, for every query of ``qrels`` with at least one
        relevant tool (in ``qrels`` order). A query absent from ``run`` scores 0.0 everywhere.

    Raises:
        BadQueryError: an unknown measure name (the message lists the known ones), or no query
            with a relevant tool.
        ValueError: a NaN score (from :func:`~toolsift.ranker.metrics.rank_tools`).

    References:
        Completeness@K: Tool-DE (Lu et al.), §3.1. The others: ir_measures (MacAvaney et al.,
        ECIR 2022) over pytrec_eval / trec_eval definitions.
    """
    import ir_measures  # deferred: it pulls in its providers, which the CLI's start-up can skip

    specs = _parse_all(measures)
    judged = {
        qid: {tool_id: int(grade >= rel_threshold) for tool_id, grade in grades.items()}
        for qid, grades in qrels.items()
        if any(grade >= rel_threshold for grade in grades.values())
    }
    if not judged:
        raise BadQueryError(f"no query in qrels has a tool with grade >= {rel_threshold}")

    ranked_run: dict[str, dict[str, float]] = {}
    for qid in judged:
        ranking = rank_tools(run.get(qid, {}))
        if ranking:
            n = len(ranking)
            ranked_run[qid] = {tool_id: float(n - i) for i, tool_id in enumerate(ranking)}

    # Filled with 0.0 first so that a query missing from the run scores 0 on every measure
    # without depending on how a given ir_measures version or provider treats it.
    results = {qid: dict.fromkeys((spec.name for spec in specs), 0.0) for qid in judged}

    by_measure = {
        ir_measures.parse_measure(f"{_IR_MEASURES_NAME[spec.family]}@{spec.cutoff}"): spec.name
        for spec in specs
        if spec.family != "completeness"
    }
    if by_measure and ranked_run:
        for metric in ir_measures.iter_calc(list(by_measure), judged, ranked_run):
            if metric.query_id in results:
                results[metric.query_id][by_measure[metric.measure]] = float(metric.value)

    for spec in specs:
        if spec.family == "completeness":
            for qid, value in completeness_at_k(judged, ranked_run, spec.cutoff).items():
                results[qid][spec.name] = value
    return results


def evaluate(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    measures: Sequence[str] = DEFAULT_MEASURES,
    *,
    rel_threshold: int = 1,
) -> dict[str, float]:
    """Mean of each named measure over the queries of ``qrels`` that have a relevant tool.

    Relevance is binary: a tool is relevant when its grade is ≥ ``rel_threshold`` (default 1, i.e.
    ir_measures' ``rel=1``). A query of ``qrels`` absent from ``run`` counts as 0, not skipped;
    queries with no relevant tool are excluded. See the module docstring for the ranking rule.

    Args:
        qrels: query id → tool id → relevance grade.
        run: query id → tool id → score.
        measures: toolsift measure names: ``ndcg@K``, ``recall@K``, ``precision@K``, ``map@K``,
            ``mrr@K``, ``completeness@K`` (case-insensitive).
        rel_threshold: binary relevance threshold (grade ≥ this is relevant).

    Returns:
        Canonical measure name → mean value, in the order requested.

    Raises and references: as :func:`evaluate_per_query`.

    Example:
        >>> evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 0.9, "b": 0.1}}, ["recall@1"])
        {'recall@1': 0.5}
    """
    per_query = evaluate_per_query(qrels, run, measures, rel_threshold=rel_threshold)
    names = normalise_measures(measures)
    return {
        name: sum(values[name] for values in per_query.values()) / len(per_query) for name in names
    }
