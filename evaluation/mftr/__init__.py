"""MFTR's evaluation protocol (multi-field tool retrieval: the paper's Tables 3 and 5), one module a stage.

- :mod:`.inputs` — what a run reads beside the benchmark: rewrites, standardised documents, hard
  negatives and folds;
- :mod:`.indices` — the document variants, each its own index;
- :mod:`.prepare` — a benchmark (or a mixed set) made ready: queries, qrels, indices, folds, negatives;
- :mod:`.signals` — per-field scores collected once from OpenSearch and ranked many times;
- :mod:`.train` — ``toolsift train weights`` / ``train reranker`` outside the cross-validation;
- :mod:`.reranker` — the "MFTR + <reranker>" row, a reranker trained inside each fold;
- :mod:`.ablations` — Table 3's rows, the rows beyond the paper and the paper's NDCG@10 beside them;
- :mod:`.results` — what a run returns (the ``--json`` contract);
- :mod:`.eval` — :func:`~toolsift.evaluation.mftr.eval.run_mftr_eval`: the 5-fold protocol end to end.
"""

from __future__ import annotations

from toolsift.evaluation.mftr.eval import run_mftr_eval
from toolsift.evaluation.mftr.inputs import MFTRInputs
from toolsift.evaluation.mftr.results import MFTREvalResult

__all__ = ["run_mftr_eval", "MFTRInputs", "MFTREvalResult"]
