"""The "MFTR + <reranker>" row of the MFTR evaluation: per fold, a second-stage reranker trained over
that fold's MFTR ranking (:mod:`toolsift.evaluation.rerank`) and run on the fold's test queries."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from toolsift.errors import BadQueryError
from toolsift.evaluation.metrics import evaluate
from toolsift.evaluation.mftr.ablations import MFTR_MEASURES
from toolsift.evaluation.mftr.prepare import Prepared
from toolsift.evaluation.mftr.results import AblationRow
from toolsift.evaluation.mftr.signals import QuerySignals, mean_metrics
from toolsift.evaluation.rerank import RerankQuery, fit_reranker, mean, rerank_run
from toolsift.ranker.mftr import MFTRRanker, MFTRWeights
from toolsift.ranker.ranking_pipeline import RankingPipeline
from toolsift.ranker.reranker_training import RerankerTrainingConfig

__all__ = ["rerank_queries", "reranker_row"]


def rerank_queries(prep: Prepared, signals: Mapping[str, QuerySignals], form: str,
                   qids: Sequence[str]) -> list[RerankQuery]:
    """The queries as the reranker sees them: the query, its first-stage candidates, its relevant tools."""
    out = []
    for qid in qids:
        sig = signals.get(qid)
        if sig is None:
            continue
        relevant = {d: s for d, g in prep.qrels.get(qid, {}).items() if g > 0 and (s := sig.get(d)) is not None}
        out.append(RerankQuery(qid, prep.structured(form, qid), list(sig.first_stage.values()), relevant))
    return out


def reranker_row(
    prep: Prepared,
    signals: Mapping[str, QuerySignals],
    form: str,
    fold_items: Sequence[tuple[str, Mapping[str, list[str]]]],
    mftr_weights: Mapping[str, MFTRWeights],
    config: RerankerTrainingConfig,
    base_model: str | Path | None,
    gguf_file: str | None,
    depth: int,
    progress: Callable[[str, int, int], None] | None,
) -> tuple[AblationRow, dict[str, Any]]:
    """"MFTR + <reranker>": per fold, a reranker trained on the fold's training queries over that
    fold's MFTR ranking, λ chosen on a dev slice, applied to the test queries."""
    if base_model is None:
        raise BadQueryError("a reranker row needs the base model it is trained from (reranker_base)")
    per_fold: list[dict[str, float]] = []
    merged_run: dict[str, dict[str, float]] = {}
    costs: list[float] = []
    folds_report = []
    for fold_name, fold in fold_items:
        ranker = MFTRRanker(mftr_weights[fold_name])
        fitted = fit_reranker(ranker, rerank_queries(prep, signals, form, fold["train"]), prep.qrels, config,
                              base_model=base_model, gguf_file=gguf_file, depth=depth, progress=progress)
        pipeline = RankingPipeline(ranker, fitted.outcome.reranker, rerank_top=config.rerank_top,
                                   fusion_weight=fitted.fusion_weight)
        test = rerank_queries(prep, signals, form, fold["test"])
        fold_costs: list[float] = []
        run = rerank_run(pipeline, test, depth, fold_costs)
        costs += fold_costs
        merged_run.update(run)
        per_fold.append(evaluate({q: prep.qrels[q] for q in run}, run, MFTR_MEASURES))
        folds_report.append({"fold": fold_name, **fitted.report(), "test_ms_per_query": round(mean(fold_costs) or 0, 2),
                             "test_ndcg@10": round(per_fold[-1]["ndcg@10"], 4)})
        del pipeline, fitted  # free the model before the next fold trains its own
    label = "cross-encoder" if config.kind == "cross-encoder" else "Tool-Rank"
    merged = evaluate({q: prep.qrels[q] for q in merged_run}, merged_run, MFTR_MEASURES)
    row = AblationRow(f"MFTR + {label}", merged, mean_metrics(per_fold), per_fold, None, "std", form,
                      f"learned + {config.kind} on the top {config.rerank_top}", beyond_paper=False,
                      ms_per_query=mean(costs))
    report = {"kind": config.kind, "base_model": str(base_model), "gguf_file": gguf_file,
              "training": config.to_dict(), "folds": folds_report,
              "protocol": "per fold: trained on the training queries minus a 15% dev slice (relevant tools + "
                          "MFTR's top wrong tools), λ chosen on the dev slice, test queries through RankingPipeline"}
    return row, report
