"""The rows of ``toolsift eval --method mftr``: the MFTR paper's Table 3 ablations, the rows beyond the
paper, the measures reported and the paper's own NDCG@10 beside them.

==========================  =================  =================  ==========================
row                         documents          query              scoring
==========================  =================  =================  ==========================
Full-Doc                    raw, one text      raw request        BM25 / cosine
Stand. Only                 standardised, flat raw request        BM25 / cosine
Rewrite Only                raw, one text      rewrite, flattened BM25 / cosine
Stand. + Rewrite            standardised, flat rewrite, flattened BM25 / cosine
Weighting Only              rule-based fields  raw request        learned weights + penalty
Weighting + Stand.          standardised       raw request        learned weights + penalty
Weighting + Rewrite         rule-based fields  rewrite            learned weights + penalty
w/o Adaptive Weighting      standardised       rewrite            mean of the field scores
w/o Missing Penalty         standardised       rewrite            learned weights
MFTR                        standardised       rewrite            learned weights + penalty
==========================  =================  =================  ==========================

"Raw request" rows match the request against every field, and against the parameters as one
extracted argument.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolsift.config import FIELDS
from toolsift.ranker.mftr import FIELDS_AND_RANK

__all__ = [
    "MFTR_MEASURES",
    "PAPER_NDCG10",
    "AblationSpec",
    "ABLATIONS",
    "EXTENSIONS",
    "CORE_ROWS",
    "NEEDS_LLM_STANDARDISATION",
]

MFTR_MEASURES: tuple[str, ...] = (
    "ndcg@5",
    "ndcg@10",
    "recall@5",
    "recall@10",
    "completeness@5",
    "completeness@10",
)

#: NDCG@10 the MFTR paper reports (Table 2: Full-Doc and MFTR; Table 3: the MiniLM ablations on APIBank).
PAPER_NDCG10: dict[tuple[str, str], dict[str, float]] = {
    ("apibank", "bm25"): {"Full-Doc": 0.5167, "MFTR": 0.6704},
    ("apibank", "minilm"): {
        "Full-Doc": 0.6112,
        "Stand. Only": 0.5774,
        "Rewrite Only": 0.6842,
        "Stand. + Rewrite": 0.6622,
        "Weighting Only": 0.5926,
        "Weighting + Stand.": 0.6012,
        "Weighting + Rewrite": 0.6549,
        "w/o Adaptive Weighting": 0.7138,
        "w/o Missing Penalty": 0.7072,
        "MFTR": 0.7237,
    },
    ("toolink", "bm25"): {"Full-Doc": 0.3828, "MFTR": 0.5497},
    ("toolink", "minilm"): {"Full-Doc": 0.3818, "MFTR": 0.5334},
}


@dataclass(frozen=True)
class AblationSpec:
    """How one row is run: which documents, which query form, which scoring, which features."""

    name: str
    docs: str  # "raw" (rule-based fields) | "std" (standardised fields) | "flat-raw" | "flat-std"
    query: str  # "raw" | "rewrite", optionally "+instruction"
    scoring: str  # "flat" | "learned" | "no-penalty" | "mean" | "fixed" (the field_weights setting, untrained)
    features: tuple[str, ...] = FIELDS


ABLATIONS: tuple[AblationSpec, ...] = (
    AblationSpec("Full-Doc", "flat-raw", "raw", "flat"),
    AblationSpec("Stand. Only", "flat-std", "raw", "flat"),
    AblationSpec("Rewrite Only", "flat-raw", "rewrite", "flat"),
    AblationSpec("Stand. + Rewrite", "flat-std", "rewrite", "flat"),
    AblationSpec("Weighting Only", "raw", "raw", "learned"),
    AblationSpec("Weighting + Stand.", "std", "raw", "learned"),
    AblationSpec("Weighting + Rewrite", "raw", "rewrite", "learned"),
    AblationSpec("w/o Adaptive Weighting", "std", "rewrite", "mean"),
    AblationSpec("w/o Missing Penalty", "std", "rewrite", "no-penalty"),
    AblationSpec("MFTR", "std", "rewrite", "learned"),
)

#: Beyond the paper (``--extensions``): what toolsift's default ranking (the fixed ``field_weights``,
#: nothing trained) gives on the same documents and rewrites; the first stage's rank as a learned
#: feature (a learned fusion of the first stage with the field scores); and the task instruction
#: ToolRet ships with each query as one more tool need (its text matched against description and
#: examples).
EXTENSIONS: tuple[AblationSpec, ...] = (
    AblationSpec("Fixed field weights (no training)", "std", "rewrite", "fixed"),
    AblationSpec("MFTR + first-stage rank", "std", "rewrite", "learned", FIELDS_AND_RANK),
    AblationSpec("MFTR + instruction", "std", "rewrite+instruction", "learned"),
    AblationSpec("MFTR + instruction + rank", "std", "rewrite+instruction", "learned", FIELDS_AND_RANK),
    AblationSpec("Weighting Only + instruction + rank", "raw", "raw+instruction", "learned", FIELDS_AND_RANK),
)

#: The rows of a run without ablations: the flat baseline, no LLM at all, and MFTR.
CORE_ROWS = frozenset({"Full-Doc", "Weighting Only", "MFTR"})

#: The rows that differ from their rule-based twins only with LLM-standardised documents.
NEEDS_LLM_STANDARDISATION = frozenset({"Stand. Only", "Stand. + Rewrite", "Weighting + Stand.", "Weighting + Rewrite"})
