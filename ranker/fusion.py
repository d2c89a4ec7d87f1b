"""Ranking v0: normalise each field's scores over the candidates and add them up with fixed weights.

For every field f and score kind k (BM25, dense cosine) the candidates' raw scores are min-max
normalised to [0, 1]; a field's score is the mean over the kinds in use; a tool's score is
Σ_f w_f · S_f, where a field rule-based expansion derived for that tool (``derived``, e.g. examples
that are its name as words) counts at ``derived_weight`` · w_f: text the catalog did not write is
weaker evidence, and a few words normalised over the candidates would otherwise weigh as much as a
catalog's own examples. Every result carries its per-field scores and weighted contributions, so a
person can see why it ranked where it did. The learned MFTR scorer (penalties, bias, trained weights) replaces
this stage behind the same :class:`~toolsift.ranker.types.Ranker` protocol.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from toolsift.config import FIELDS
from toolsift.records import FieldSignals
from toolsift.records import RankedTool

__all__ = ["FieldWeightRanker", "min_max"]

#: Below this best-argument score a required parameter counts as missing (per score kind).
MISSING_PARAMETER_THRESHOLD: Mapping[str, float] = {"bm25": 0.0, "dense": 0.35}


def min_max(values: Sequence[float]) -> list[float]:
    """Min-max normalise to [0, 1]; a constant list maps to 1.0 when positive, else 0.0."""
    if not values:
        return []
    low, high = min(values), max(values)
    if high - low < 1e-12:
        return [1.0 if high > 0 else 0.0 for _ in values]
    return [(v - low) / (high - low) for v in values]


class FieldWeightRanker:
    """Weighted sum of min-max normalised field scores.

    Args:
        field_weights: weight per MFTR field (description, parameters, response, examples).
        derived_weight: the share of its weight a field counts with where the tool's field was
            derived by rules (:attr:`~toolsift.records.FieldSignals.derived`).

    Example:
        >>> ranker = FieldWeightRanker({"description": 1.0, "parameters": 0.0, "response": 0.0, "examples": 0.0})
        >>> [r.doc_id for r in ranker.rank(signals, top_k=3)]  # doctest: +SKIP
    """

    name = "field-weights-v0"

    def __init__(self, field_weights: Mapping[str, float], derived_weight: float = 1.0) -> None:
        self.field_weights = {f: float(field_weights.get(f, 0.0)) for f in FIELDS}
        self.derived_weight = float(derived_weight)

    def rank(self, candidates: Sequence[FieldSignals], top_k: int) -> list[RankedTool]:
        if not candidates:
            return []
        kinds = sorted({k for c in candidates for k in c.fields})
        normalised: dict[str, list[float]] = {}
        for f in FIELDS:
            per_kind = [min_max([c.fields.get(k, {}).get(f, 0.0) for c in candidates]) for k in kinds]
            # no candidate with a field score (a client's bare candidates): every field scores 0
            normalised[f] = [sum(col) / len(kinds) for col in zip(*per_kind)] if kinds else [0.0] * len(candidates)
        ranked: list[RankedTool] = []
        for i, cand in enumerate(candidates):
            field_scores = {f: normalised[f][i] for f in FIELDS}
            contributions = {
                f: self.field_weights[f] * field_scores[f] * cand.field_share(f, self.derived_weight) for f in FIELDS
            }
            ranked.append(
                RankedTool.from_signals(
                    cand,
                    score=sum(contributions.values()),
                    field_scores=field_scores,
                    contributions=contributions,
                    missing_required=_missing_required(cand),
                )
            )
        ranked.sort(key=lambda r: (-r.score, r.first_stage_rank, r.doc_id))
        return ranked[:top_k]


def _missing_required(cand: FieldSignals) -> tuple[str, ...]:
    """Required parameters no extracted argument covers (by every score kind in use)."""
    if not cand.arguments:  # a plain request names no arguments: nothing to report as missing
        return ()
    return cand.missing_required(
        list(cand.parameters), lambda kind, _, m: m.score <= MISSING_PARAMETER_THRESHOLD.get(kind, 0.0)
    )
