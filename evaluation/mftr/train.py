"""``toolsift train weights`` and ``toolsift train reranker``: MFTR's training on a benchmark's
queries (all of them, or one fold's training split), outside the cross-validation."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from toolsift.config import Retriever, Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import BadQueryError
from toolsift.evaluation.mftr.inputs import MFTRInputs
from toolsift.evaluation.mftr.prepare import Prepared, prepare
from toolsift.evaluation.mftr.reranker import rerank_queries
from toolsift.evaluation.mftr.signals import collect_signals, training_queries
from toolsift.evaluation.rerank import FittedReranker, fit_reranker
from toolsift.ranker.artifact import WeightsArtifact
from toolsift.ranker.mftr import MFTRRanker
from toolsift.ranker.reranker_training import RerankerTrainingConfig
from toolsift.ranker.training import TrainingConfig, train_mftr
from toolsift.records import kinds_for

__all__ = ["train_weights", "train_reranker"]


def _check_fold(prep: Prepared, fold: str | None) -> None:
    if fold is not None and fold not in prep.folds:
        raise BadQueryError(f"fold {fold!r} is not in the folds ({', '.join(sorted(prep.folds))})")


def train_weights(
    client: OpenSearch,
    settings: Settings,
    dataset_dirs: Sequence[Path],
    *,
    retriever: Retriever,
    embedder: Embedder,
    inputs: MFTRInputs = MFTRInputs(),
    fold: str | None = None,
    training: TrainingConfig = TrainingConfig(),
    n_negatives: int = 64,
    progress: Callable[[str, int, int], None] | None = None,
) -> WeightsArtifact:
    """Learn MFTR weights on a benchmark's queries (all of them, or one fold's training split).

    The documents are the standardised ones when given, the query forms the rewrites when given
    (else the raw request). The artifact's config records what it was learned on.
    """
    prep = prepare(client, settings, dataset_dirs, embedder=embedder, inputs=inputs, n_negatives=n_negatives)
    _check_fold(prep, fold)
    train_ids = prep.folds[fold]["train"] if fold is not None else prep.qids
    form = "rewrite" if prep.has_rw else "raw"
    queries = {q: prep.structured(form, q) for q in train_ids if q in prep.qrels}
    signals = collect_signals(prep.searchers["std"], queries, retriever, max(100, settings.candidates), prep.wanted,
                              progress, "training queries")
    outcome = train_mftr(training_queries(signals, list(queries), prep.qrels, prep.negatives, n_negatives),
                         kinds_for(retriever), training)
    return WeightsArtifact(
        weights=outcome.weights,
        config={
            "dataset": prep.name,
            "index": prep.indices["std"],
            "retriever": retriever,
            "embedding_model": embedder.name,
            "documents": [str(p) for p in inputs.standardized] or "rule-based standardisation",
            "queries": "rewrites" if prep.has_rw else "raw request (also matched as one argument)",
            "rewrites": [str(p) for p in inputs.rewrites],
            "folds": str(inputs.folds) if inputs.folds else None,
            "fold": fold,
            "training_queries": len(queries),
            "pairs": outcome.pairs,
            "hard_negatives": prep.negatives_source,
            "training": {**training.__dict__, "features": list(training.features)},
            "device": outcome.device,
            "epoch_losses": [round(x, 5) for x in outcome.epoch_losses],
        },
    )


def train_reranker(
    client: OpenSearch,
    settings: Settings,
    dataset_dirs: Sequence[Path],
    *,
    retriever: Retriever,
    embedder: Embedder,
    config: RerankerTrainingConfig,
    base_model: str | Path,
    gguf_file: str | None = None,
    inputs: MFTRInputs = MFTRInputs(),
    fold: str | None = None,
    weights: WeightsArtifact | None = None,
    training: TrainingConfig = TrainingConfig(),
    n_negatives: int = 64,
    progress: Callable[[str, int, int], None] | None = None,
) -> tuple[FittedReranker, dict[str, Any]]:
    """Train a reranker on a benchmark's queries (all, or one fold's training split) over MFTR.

    MFTR's ranking supplies the hard negatives: ``weights`` when given, else weights learned here on
    the same queries. Returns the fitted reranker and the configuration its artifact records.
    """
    prep = prepare(client, settings, dataset_dirs, embedder=embedder, inputs=inputs, n_negatives=n_negatives)
    _check_fold(prep, fold)
    train_ids = [q for q in (prep.folds[fold]["train"] if fold is not None else prep.qids) if q in prep.qrels]
    form = "rewrite" if prep.has_rw else "raw"
    queries = {q: prep.structured(form, q) for q in train_ids}
    signals = collect_signals(prep.searchers["std"], queries, retriever, max(100, settings.candidates), prep.wanted,
                              progress, "training queries", documents=True)
    if weights is None:
        mftr = train_mftr(training_queries(signals, train_ids, prep.qrels, prep.negatives, n_negatives),
                          kinds_for(retriever), training).weights
    else:
        mftr = weights.weights
    fitted = fit_reranker(MFTRRanker(mftr), rerank_queries(prep, signals, form, train_ids), prep.qrels, config,
                          base_model=base_model, gguf_file=gguf_file, progress=progress)
    record = {
        "dataset": prep.name,
        "index": prep.indices["std"],
        "retriever": retriever,
        "embedding_model": embedder.name,
        "fold": fold,
        "training_queries": len(train_ids),
        "mftr_weights": str(weights.path) if weights is not None and weights.path else mftr.to_dict(),
        "training": config.to_dict(),
        **fitted.report(),
    }
    return fitted, record
