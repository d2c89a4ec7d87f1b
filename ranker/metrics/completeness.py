"""Completeness@K: did the top K hold *every* tool the query needs?

A tool-retrieval answer missing one required tool can make the agent fail however well the other
tools are ranked, so Completeness@K scores a query 1 only when all of its relevant tools are in the
top K, else 0.

Ranking rule (shared with :func:`toolsift.evaluation.evaluate`): tools are ordered by score
descending, ties by tool id *descending* (plain string comparison). That is trec_eval's rule, which
ir_measures inherits from pytrec_eval, so Completeness@K and nDCG@K / Recall@K computed on the same
run always see the same ranking.

References:
    Tool-DE (Lu et al., "Tools are under-documented: simple document expansion boosts tool
    retrieval"), §3.1 "Metrics": C@K = 1 if all target tools are included in the top-K results
    and 0 otherwise; after Qu et al., "Towards Completeness-Oriented Tool Retrieval for Large
    Language Models", CIKM 2024.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from toolsift.errors import BadQueryError, CatalogError, ConfigError

__all__ = ["rank_tools", "completeness_at_k", "mean_completeness_at_k"]


def rank_tools(scores: Mapping[str, float]) -> list[str]:
    """Order one query's tools the way trec_eval (and so ir_measures) does.

    Args:
        scores: tool id → retrieval score for one query.

    Returns:
        The tool ids, best first: score descending, ties broken by tool id descending.

    Raises:
        ValueError: a score is NaN (it has no place in an order).
    """
    for tool_id, score in scores.items():
        if math.isnan(score):
            raise BadQueryError(f"score of tool {tool_id!r} is NaN")
    ranked = sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)
    return [tool_id for tool_id, _ in ranked]


def completeness_at_k(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    k: int,
    *,
    rel_threshold: int = 1,
) -> dict[str, float]:
    """Completeness@K of every query that has at least one relevant tool.

    Args:
        qrels: query id → tool id → relevance grade.
        run: query id → tool id → score. Queries of ``qrels`` absent from ``run`` score 0.
        k: the cutoff, at least 1.
        rel_threshold: a tool is relevant when its grade is at least this (default 1, i.e. any
            grade > 0 for integer grades).

    Returns:
        Query id → 1.0 when every relevant tool of the query is among the run's top ``k`` (ranked
        by :func:`rank_tools`), else 0.0. Queries with no relevant tool are left out: "all of
        none" would score 1 whatever the run returns.

    Raises:
        ValueError: ``k`` < 1, or a score is NaN.

    References:
        Tool-DE (Lu et al.), §3.1; Qu et al., CIKM 2024.

    Example:
        >>> completeness_at_k({"q": {"a": 1, "b": 1}}, {"q": {"a": 0.9, "x": 0.8, "b": 0.7}}, 2)
        {'q': 0.0}
    """
    if k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")
    result: dict[str, float] = {}
    for qid, grades in qrels.items():
        relevant = {tool_id for tool_id, grade in grades.items() if grade >= rel_threshold}
        if not relevant:
            continue
        top_k = set(rank_tools(run.get(qid, {}))[:k])
        result[qid] = 1.0 if relevant <= top_k else 0.0
    return result


def mean_completeness_at_k(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    k: int,
    *,
    rel_threshold: int = 1,
) -> float:
    """Mean Completeness@K over the queries of ``qrels`` that have at least one relevant tool.

    Args:
        qrels: query id → tool id → relevance grade.
        run: query id → tool id → score; a query absent from it scores 0.
        k: the cutoff, at least 1.
        rel_threshold: a tool is relevant when its grade is at least this.

    Returns:
        The mean of :func:`completeness_at_k` over the queries with a relevant tool. Queries without
        one are excluded from the mean, not counted as 0 or 1.

    Raises:
        ValueError: ``k`` < 1, a score is NaN, or no query has a relevant tool (the mean is
            undefined).

    References:
        Tool-DE (Lu et al.), §3.1; Qu et al., CIKM 2024.
    """
    per_query = completeness_at_k(qrels, run, k, rel_threshold=rel_threshold)
    if not per_query:
        raise CatalogError(f"no query in qrels has a tool with grade >= {rel_threshold}")
    return sum(per_query.values()) / len(per_query)
