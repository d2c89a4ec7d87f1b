"""TRACC: how well a recommended tool *set* matches the gold set, in size and in content.

Recall and nDCG at a fixed K ignore how many tools were recommended; TRACC multiplies the set's
accuracy by a factor that shrinks as the recommended set's size departs from the gold set's, so
padding a set with extra tools is penalised as much as leaving needed ones out.

References:
    PTR: Precision-Driven Tool Recommendation for Large Language Models (Gao and Zhang, 2024), §4,
    the TRACC equation: TRACC = (1 − |n₂ − n₁| / |A ∪ B|) · ACC, ACC = |A ∩ B| / n₁, where A is the
    ground-truth tool set (n₁ tools) and B the recommended set (n₂ tools).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from toolsift.errors import BadQueryError, CatalogError

__all__ = ["tracc", "mean_tracc"]


def _as_set(tools: Collection[str], what: str) -> frozenset[str]:
    # A bare string is a Collection[str] of characters; accepting it would score letters.
    if isinstance(tools, str):
        raise BadQueryError(f"{what} must be a collection of tool ids, not a string")
    return frozenset(tools)


def tracc(gold: Collection[str], recommended: Collection[str]) -> float:
    """TRACC of one recommended tool set against the gold set.

    Both arguments are treated as sets (the paper's A and B): duplicates count once and order is
    ignored.

    Args:
        gold: the ground-truth tool ids (A, n₁ = |A|); must not be empty.
        recommended: the recommended tool ids (B, n₂ = |B|).

    Returns:
        (1 − |n₂ − n₁| / |A ∪ B|) · |A ∩ B| / n₁, in [0, 1]; 0.0 for an empty recommended set.

    Raises:
        ValueError: ``gold`` is empty (ACC = |A ∩ B| / n₁ is undefined).
        TypeError: an argument is a string rather than a collection of ids.

    References:
        PTR (Gao and Zhang, 2024), §4, TRACC equation.

    Example:
        >>> tracc({"a", "b"}, {"a", "c", "d"})  # (1 - 1/4) * 1/2
        0.375
    """
    gold_set = _as_set(gold, "gold")
    recommended_set = _as_set(recommended, "recommended")
    if not gold_set:
        raise CatalogError("TRACC is undefined for an empty gold set")
    if not recommended_set:
        return 0.0
    n1, n2 = len(gold_set), len(recommended_set)
    size_factor = 1.0 - abs(n2 - n1) / len(gold_set | recommended_set)
    return size_factor * len(gold_set & recommended_set) / n1


def mean_tracc(
    gold_sets: Mapping[str, Collection[str]],
    recommended_sets: Mapping[str, Collection[str]],
) -> float:
    """Mean TRACC over the queries of ``gold_sets``.

    Args:
        gold_sets: query id → ground-truth tool ids. Queries with an empty gold set are excluded
            from the mean (their TRACC is undefined).
        recommended_sets: query id → recommended tool ids. A query absent from it is scored as an
            empty recommendation (TRACC 0); queries absent from ``gold_sets`` are ignored.

    Returns:
        The mean TRACC over the queries with a non-empty gold set.

    Raises:
        ValueError: no query has a non-empty gold set.
        TypeError: a set is given as a string.

    References:
        PTR (Gao and Zhang, 2024), §4, TRACC equation.
    """
    scores = [
        tracc(gold, recommended_sets.get(qid, ()))
        for qid, gold in gold_sets.items()
        if _as_set(gold, f"gold set of {qid!r}")
    ]
    if not scores:
        raise CatalogError("no query has a non-empty gold set")
    return sum(scores) / len(scores)
