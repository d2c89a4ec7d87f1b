"""MFTR's adaptive weighting (§3.4): learned field weights and the missing-parameter penalty.

For a query q and a tool t, with per-field scores from the retriever's own φ (BM25 score or cosine)::

    S_f     = max over tool needs of φ(need_f, doc_f)          f ∈ {description, response, examples}
    s_pj    = max over extracted arguments a of φ(p_j, a)       for each parameter p_j of t
    S_param = mean_j s_pj
    L(p_j)  = σ(α · (τ − s_pj)) · (w_req if p_j is required else w_opt)
    S(q, t) = Σ_f w_f · S_f + b − Σ_j L(p_j)

The per-field maxima and s_pj arrive from OpenSearch as :class:`~toolsift.query.builder.FieldSignals`
(the ranker never recomputes a score). One torch module computes S for training and for ranking, so
the two cannot drift. With both BM25 and dense signals (the ``hybrid`` retriever) every score kind
gets its own field weights, τ and penalty weights in the same linear model.

Tools without parameters get neither S_param nor a penalty. A query without extracted arguments
gets no penalty either: nothing says which parameters it covers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from toolsift.config import FIELDS
from toolsift.records import FieldSignals, ParameterMatch
from toolsift.records import RankedTool

__all__ = ["MFTRWeights", "FeatureBatch", "MFTRModel", "MFTRRanker", "features", "prepared_features", "normalise_columns", "ALPHA"]

#: The penalty's sharpness, fixed as in the paper.
ALPHA = 15.0


@dataclass(frozen=True)
class MFTRWeights:
    """The learned parameters of MFTR's relevance model, per score kind (``bm25`` / ``dense``).

    Args:
        kinds: the score kinds the model reads, in order.
        field_weights: kind → field → w_f (fields: description, parameters, response, examples).
        bias: b.
        tau: kind → τ, the score below which a parameter counts as missing.
        w_req, w_opt: kind → penalty weight of a missing required / optional parameter.
        alpha: the sigmoid's sharpness.
        penalty: False for the "w/o missing penalty" ablation (L ≡ 0).
        normalise: min-max normalise each field score per kind over a query's candidates before
            weighting — the fixed-weight ranker's scale (:meth:`from_field_weights`); learned MFTR
            weights read raw scores.
        derived_weight: with ``normalise``, a field rule-based expansion derived for a candidate
            (:attr:`~toolsift.records.FieldSignals.derived`) counts at this share, as in the
            fixed-weight ranker; learned weights read derived fields like any other.
    """

    kinds: tuple[str, ...]
    field_weights: Mapping[str, Mapping[str, float]]
    bias: float = 0.0
    tau: Mapping[str, float] = field(default_factory=dict)
    w_req: Mapping[str, float] = field(default_factory=dict)
    w_opt: Mapping[str, float] = field(default_factory=dict)
    alpha: float = ALPHA
    penalty: bool = True
    features: tuple[str, ...] = FIELDS
    normalise: bool = False
    derived_weight: float = 1.0

    @classmethod
    def initial(
        cls,
        kinds: Sequence[str],
        *,
        penalty: bool = True,
        features: Sequence[str] = FIELDS,
        field_weight: float = 0.0,
        tau: float = 0.3,
        w_req: float = 0.2,
        w_opt: float = 0.1,
        alpha: float = ALPHA,
    ) -> MFTRWeights:
        """A training start; the defaults are MFTR's code's (τ 0.3, w_req 0.2, w_opt 0.1)."""
        return cls(
            kinds=tuple(kinds),
            field_weights={k: {f: field_weight for f in features} for k in kinds},
            tau={k: tau for k in kinds},
            w_req={k: w_req for k in kinds},
            w_opt={k: w_opt for k in kinds},
            alpha=alpha,
            penalty=penalty,
            features=tuple(features),
        )

    @classmethod
    def mean_of_fields(cls, kinds: Sequence[str]) -> MFTRWeights:
        """The "w/o adaptive weighting" ablation: the plain mean of the field scores, no penalty."""
        share = 1.0 / (len(FIELDS) * len(kinds))
        return replace(
            cls.initial(kinds, penalty=False, field_weight=share),
            field_weights={k: {f: share for f in FIELDS} for k in kinds},
        )

    @classmethod
    def from_field_weights(
        cls, field_weights: Mapping[str, float], kinds: Sequence[str], derived_weight: float = 1.0
    ) -> MFTRWeights:
        """The fixed-weight ranker (:class:`~toolsift.ranker.fusion.FieldWeightRanker`) as tunable weights.

        That ranker scores Σ_f w_f · mean_k minmax_k(S_f); with each kind weighted w_f / K over
        normalised scores this model ranks identically. τ starts at the ranker's missing-parameter
        thresholds and the penalty weights at 0 (it has no penalty), so tuning can switch one on.
        """
        from toolsift.ranker.fusion import MISSING_PARAMETER_THRESHOLD

        share = 1.0 / max(1, len(kinds))
        return cls(
            kinds=tuple(kinds),
            field_weights={k: {f: float(field_weights.get(f, 0.0)) * share for f in FIELDS} for k in kinds},
            # BM25 scores are 0 when no term matches and well above 0.05 when one does; the gate
            # σ(α(τ − s)) needs τ above 0 to flag "no term matched" (the fixed ranker's s ≤ 0).
            tau={k: max(MISSING_PARAMETER_THRESHOLD.get(k, 0.0), 0.05) for k in kinds},
            w_req={k: 0.0 for k in kinds},
            w_opt={k: 0.0 for k in kinds},
            normalise=True,
            derived_weight=float(derived_weight),
        )

    def with_features(self, names: Sequence[str]) -> MFTRWeights:
        """These weights reading ``names``: a feature they lack weighs 0 (ranks the same), one not
        named is dropped."""
        return replace(self, features=tuple(names), field_weights={
            k: {f: float(self.field_weights[k].get(f, 0.0)) for f in names} for k in self.kinds})

    def field_shares(self, kind: str) -> dict[str, float]:
        """Each field's share of Σ|w_f| (MFTR's Table 5 reports learned weights this way)."""
        weights = self.field_weights[kind]
        total = sum(abs(w) for w in weights.values()) or 1.0
        return {f: abs(weights[f]) / total for f in self.features}

    def first_stage_weights(self) -> dict[str, float]:
        """Non-negative field weights for the first-stage query (boosts or pipeline weights).

        Lucene boosts and the normalisation processor's weights cannot be negative, so a field the
        model weighs negatively gets 0; the dense kind's weights win when both kinds are present
        (the BM25 clause is one sub-query of the hybrid query). Scaled so the largest is 1.
        """
        kind = "dense" if "dense" in self.kinds else self.kinds[0]
        clipped = {f: max(0.0, float(self.field_weights[kind][f])) for f in FIELDS}
        top = max(clipped.values()) or 1.0
        return {f: w / top for f, w in clipped.items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "kinds": list(self.kinds),
            "field_weights": {k: dict(v) for k, v in self.field_weights.items()},
            "bias": self.bias,
            "tau": dict(self.tau),
            "w_req": dict(self.w_req),
            "w_opt": dict(self.w_opt),
            "alpha": self.alpha,
            "penalty": self.penalty,
            "features": list(self.features),
            "normalise": self.normalise,
            "derived_weight": self.derived_weight,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MFTRWeights:
        kinds = tuple(str(k) for k in data["kinds"])
        names = tuple(str(f) for f in data.get("features", FIELDS))
        return cls(
            kinds=kinds,
            features=names,
            field_weights={k: {f: float(data["field_weights"][k][f]) for f in names} for k in kinds},
            bias=float(data.get("bias", 0.0)),
            tau={k: float(data["tau"][k]) for k in kinds},
            w_req={k: float(data["w_req"][k]) for k in kinds},
            w_opt={k: float(data["w_opt"][k]) for k in kinds},
            alpha=float(data.get("alpha", ALPHA)),
            penalty=bool(data.get("penalty", True)),
            normalise=bool(data.get("normalise", False)),
            derived_weight=float(data.get("derived_weight", 1.0)),
        )


#: A feature beyond MFTR's fields: the candidate's first-stage rank as a DCG-style discount,
#: 1 / log2(1 + rank) (0 when the first stage did not return it), so a learned weight fuses the
#: first stage's ordering into the score. Only the first kind carries it (one rank per candidate).
FIRST_STAGE_RANK = "first_stage_rank"

#: MFTR's four fields plus the first-stage rank: the feature set of ``toolsift train --first-stage-rank``.
FIELDS_AND_RANK: tuple[str, ...] = (*FIELDS, FIRST_STAGE_RANK)


def rank_discount(rank: int) -> float:
    """1 / log2(1 + rank) for a 1-based rank; 0 for rank 0 (not from the first stage)."""
    return 1.0 / math.log2(1 + rank) if rank > 0 else 0.0


#: Parameter slots padded to the batch's widest tool get this score: far above any τ, no penalty.
_PADDING_SCORE = 100.0


@dataclass(frozen=True)
class FeatureBatch:
    """Candidates as tensors: ``fields`` [N, K, 4]; ``params`` [N, K, P] (s_pj); masks [N, P]."""

    fields: torch.Tensor
    params: torch.Tensor
    required: torch.Tensor
    present: torch.Tensor

    def to(self, device: torch.device | str) -> FeatureBatch:
        return FeatureBatch(*(t.to(device) for t in (self.fields, self.params, self.required, self.present)))

    def select(self, index: torch.Tensor) -> FeatureBatch:
        return FeatureBatch(self.fields[index], self.params[index], self.required[index], self.present[index])


def normalise_columns(fields: torch.Tensor) -> torch.Tensor:
    """Min-max normalise ``fields`` [N, K, F] over the candidates (axis 0), like
    :func:`~toolsift.ranker.fusion.min_max`: a constant column maps to 1 when positive, else 0."""
    low = fields.min(dim=0).values
    high = fields.max(dim=0).values
    span = high - low
    scaled = (fields - low) / span.clamp_min(1e-12)
    constant = (high > 0).to(fields.dtype).expand_as(fields)
    return torch.where((span < 1e-12)[None], constant, scaled)


def features(
    candidates: Sequence[FieldSignals],
    kinds: Sequence[str],
    width: int | None = None,
    names: Sequence[str] = FIELDS,
) -> FeatureBatch:
    """The model's input for ``candidates``; ``width`` pads the parameter axis (default: the widest).

    ``names`` are the per-field scores read from each candidate's signals (MFTR's four fields), plus
    optionally :data:`FIRST_STAGE_RANK`.
    """
    n, k = len(candidates), len(kinds)
    counts = [max((len(c.parameters.get(kind, ())) for kind in kinds), default=0) for c in candidates]
    p = max(1, width if width is not None else max(counts, default=0))
    fields_t = torch.zeros((n, k, len(names)), dtype=torch.float32)
    params_t = torch.full((n, k, p), _PADDING_SCORE, dtype=torch.float32)
    required = torch.zeros((n, p), dtype=torch.float32)
    present = torch.zeros((n, p), dtype=torch.float32)
    for i, cand in enumerate(candidates):
        for j, kind in enumerate(kinds):
            scores = cand.fields.get(kind, {})
            for f, name in enumerate(names):
                if name == FIRST_STAGE_RANK:
                    fields_t[i, j, f] = rank_discount(cand.first_stage_rank) if j == 0 else 0.0
                else:
                    fields_t[i, j, f] = float(scores.get(name, 0.0))
            for m, match in enumerate(cand.parameters.get(kind, ())[:p]):
                params_t[i, j, m] = float(match.score)
                required[i, m] = 1.0 if match.required else 0.0
                present[i, m] = 1.0
    return FeatureBatch(fields_t, params_t, required, present)


def prepared_features(candidates: Sequence[FieldSignals], weights: MFTRWeights, width: int | None = None) -> FeatureBatch:
    """What ``weights`` score ``candidates`` on: :func:`features`, min-max normalised over the candidates
    (and derived fields at their share) when the weights are on the fixed ranker's scale. Training
    warm-started from such weights builds its pairs with this, so it learns on what serving ranks."""
    batch = features(candidates, weights.kinds, width=width, names=weights.features)
    if not weights.normalise:
        return batch
    fields_t = normalise_columns(batch.fields)
    if weights.derived_weight != 1.0 and any(c.derived for c in candidates):
        share = torch.tensor(
            [[c.field_share(f, weights.derived_weight) for f in weights.features] for c in candidates],
            dtype=fields_t.dtype,
        )
        fields_t = fields_t * share[:, None, :]
    return replace(batch, fields=fields_t)


class MFTRModel(torch.nn.Module):
    """S(q, t) of MFTR Eq. 7 for a batch of candidates; trainable end to end."""

    def __init__(self, weights: MFTRWeights) -> None:
        super().__init__()
        kinds = weights.kinds
        self.kinds = kinds
        self.names = weights.features
        self.alpha = float(weights.alpha)
        self.penalty = weights.penalty
        self.w = torch.nn.Parameter(
            torch.tensor([[weights.field_weights[k][f] for f in self.names] for k in kinds], dtype=torch.float32)
        )
        self.b = torch.nn.Parameter(torch.tensor(float(weights.bias)))
        self.tau = torch.nn.Parameter(torch.tensor([weights.tau.get(k, 0.5) for k in kinds]))
        self.w_req = torch.nn.Parameter(torch.tensor([weights.w_req.get(k, 1.0) for k in kinds]))
        self.w_opt = torch.nn.Parameter(torch.tensor([weights.w_opt.get(k, 1.0) for k in kinds]))

    def missing_gates(self, batch: FeatureBatch) -> torch.Tensor:
        """σ(α(τ − s_pj)) per candidate, kind and parameter: [N, K, P]; above 0.5 means missing."""
        return torch.sigmoid(self.alpha * (self.tau[None, :, None] - batch.params))

    def parameter_penalties(self, batch: FeatureBatch) -> torch.Tensor:
        """L(p_j) per candidate, kind and parameter: [N, K, P].

        MFTR's Eq. 5 prints σ as 1 / (1 + exp(α(τ − s))), which is near 1 when s is *above* τ; its
        own text says the penalty activates when the alignment score falls *below* τ. This follows
        the text: σ(α(τ − s)) = 1 / (1 + exp(−α(τ − s))).
        """
        if not self.penalty:
            return torch.zeros_like(batch.params)
        gate = self.missing_gates(batch)
        cost = self.w_req[None, :, None] * batch.required[:, None, :] + self.w_opt[None, :, None] * (
            1.0 - batch.required[:, None, :]
        )
        return gate * cost * batch.present[:, None, :]

    def forward(self, batch: FeatureBatch) -> torch.Tensor:
        base = (batch.fields * self.w[None]).sum(dim=(1, 2)) + self.b
        return base - self.parameter_penalties(batch).sum(dim=(1, 2))

    @torch.no_grad()
    def constrain(self) -> None:
        """Keep τ in [0, 1] and the penalty weights non-negative (a penalty never rewards).

        τ ∈ [0, 1] covers cosine similarity; for BM25 it makes the penalty an "(almost) no term
        matched" indicator — the paper's own learned BM25 τ values sit at 0 and 1.
        """
        self.tau.clamp_(0.0, 1.0)
        self.w_req.clamp_(min=0.0)
        self.w_opt.clamp_(min=0.0)

    def to_weights(self) -> MFTRWeights:
        w = self.w.detach().cpu().tolist()
        return MFTRWeights(
            kinds=self.kinds,
            field_weights={k: {f: float(w[i][j]) for j, f in enumerate(self.names)} for i, k in enumerate(self.kinds)},
            bias=float(self.b.detach().cpu()),
            tau={k: float(self.tau[i].detach().cpu()) for i, k in enumerate(self.kinds)},
            w_req={k: float(self.w_req[i].detach().cpu()) for i, k in enumerate(self.kinds)},
            w_opt={k: float(self.w_opt[i].detach().cpu()) for i, k in enumerate(self.kinds)},
            alpha=self.alpha,
            penalty=self.penalty,
            features=self.names,
        )


class MFTRRanker:
    """Orders candidates by the learned MFTR score, with per-field contributions and penalties.

    Args:
        weights: learned (``toolsift train``) or given weights.

    Each result's ``field_scores`` are the raw S_f (the dense kind's when both are present),
    ``contributions`` the weighted terms w_f·S_f summed over kinds plus ``bias`` and ``penalty``
    (−Σ L), and ``missing_required`` the required parameters whose score is below τ.
    """

    def __init__(self, weights: MFTRWeights) -> None:
        self.weights = weights
        self.model = MFTRModel(weights).eval()
        #: ``mftr``, or ``field-weights-tuned`` for fixed-scale weights tuned in the workbench.
        self.name = "field-weights-tuned" if weights.normalise else "mftr"

    def prepare(self, candidates: Sequence[FieldSignals]) -> FeatureBatch:
        """The model's input for ``candidates`` (normalised when the weights say so); it depends
        only on the candidates and the weights' kinds and features, so callers ranking the same
        candidates with several weights can pass it back to :meth:`rank`."""
        kinds = self.weights.kinds
        missing_kind = [k for k in kinds if not any(k in c.fields for c in candidates)]
        if missing_kind:
            from toolsift.errors import BadQueryError

            raise BadQueryError(
                f"the MFTR weights read {list(kinds)} scores but the candidates lack {missing_kind}; "
                "search with the retriever the weights were trained for"
            )
        return prepared_features(candidates, self.weights)

    def rank(self, candidates: Sequence[FieldSignals], top_k: int, batch: FeatureBatch | None = None) -> list[RankedTool]:
        if not candidates:
            return []
        kinds = self.weights.kinds
        batch = batch if batch is not None else self.prepare(candidates)
        with torch.no_grad():
            scores = self.model(batch).tolist()
            terms = (batch.fields * self.model.w[None]).sum(dim=1).tolist()  # [N, features]
            penalties = self.model.parameter_penalties(batch).sum(dim=(1, 2)).tolist()
            gates = self.model.missing_gates(batch).tolist()
            bias = float(self.model.b)
        shown_kind = kinds.index("dense") if "dense" in kinds else 0
        shown = batch.fields[:, shown_kind, :].tolist()
        order = sorted(range(len(candidates)),
                       key=lambda i: (-scores[i], candidates[i].first_stage_rank or 1 << 30, candidates[i].doc_id))
        def below_tau(i: int) -> Callable[[str, int, ParameterMatch], bool]:
            return lambda kind, j, _: gates[i][kinds.index(kind)][j] > 0.5  # s_pj below τ

        ranked = []
        for i in order[:top_k]:
            cand = candidates[i]
            contributions = {f: terms[i][j] for j, f in enumerate(self.weights.features)}
            contributions["bias"] = bias
            contributions["penalty"] = -float(penalties[i])
            ranked.append(
                RankedTool.from_signals(
                    cand,
                    score=float(scores[i]),
                    field_scores={f: float(shown[i][j]) for j, f in enumerate(self.weights.features)},
                    contributions=contributions,
                    missing_required=cand.missing_required(kinds, below_tau(i)),
                )
            )
        return ranked
