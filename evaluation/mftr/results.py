"""What ``toolsift eval --method mftr`` returns: one :class:`AblationRow` per row of the table, in one
:class:`MFTREvalResult` (the ``--json`` contract)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["AblationRow", "MFTREvalResult"]


@dataclass(frozen=True)
class AblationRow:
    """One row of the table and the paper's NDCG@10 where it reports one.

    ``metrics`` score every query with the model of the fold that held it out (the union of the
    five test folds, as MFTR's code reports "All"); ``fold_mean`` is the mean of the five folds.
    """

    name: str
    metrics: dict[str, float]
    fold_mean: dict[str, float]
    per_fold: list[dict[str, float]]
    paper_ndcg10: float | None
    docs: str
    query: str
    scoring: str
    beyond_paper: bool = False
    #: Mean ranking cost per query in ms (the learned model; plus the reranker on reranker rows).
    ms_per_query: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "row": self.name,
            "beyond_paper": self.beyond_paper,
            "ms_per_query": None if self.ms_per_query is None else round(self.ms_per_query, 2),
            "metrics": {k: round(v, 4) for k, v in self.metrics.items()},
            "fold_mean": {k: round(v, 4) for k, v in self.fold_mean.items()},
            "paper_ndcg@10": self.paper_ndcg10,
            "documents": self.docs,
            "query": self.query,
            "scoring": self.scoring,
            "per_fold": [{k: round(v, 4) for k, v in m.items()} for m in self.per_fold],
        }


@dataclass(frozen=True)
class MFTREvalResult:
    """``--json`` contract of the foundation (dataset, method, retriever, metrics …) plus
    ``ablations``, ``weights`` (per fold and Table 5's shares) and ``first_stage``."""

    dataset: str
    retriever: str
    n_queries: int
    metrics: dict[str, float]
    ablations: list[AblationRow]
    weights: dict[str, Any]
    first_stage: dict[str, Any]
    indices: dict[str, str]
    embedding_model: str | None
    latency_ms: dict[str, float]
    protocol: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "method": "mftr",
            "retriever": self.retriever,
            "n_queries": self.n_queries,
            "metrics": {k: round(v, 4) for k, v in self.metrics.items()},
            "index": self.indices.get("std") or self.indices.get("raw", ""),
            "indices": self.indices,
            "embedding_model": self.embedding_model,
            "latency_ms": self.latency_ms,
            "protocol": self.protocol,
            "ablations": [row.to_dict() for row in self.ablations],
            "weights": self.weights,
            "first_stage": self.first_stage,
        }
