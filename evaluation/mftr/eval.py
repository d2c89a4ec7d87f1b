"""``toolsift eval --method mftr``: MFTR's protocol on real OpenSearch indices, with its ablations.

The protocol of the MFTR paper (§4): 5-fold cross-validation over the queries (the shared folds when
given: train on four folds, test on the fifth, metrics averaged over the five test folds), the
multi-field model trained with the pairwise loss on each training split with the top-64 wrong tools
by BM25 as hard negatives, and Table 3's ablation rows (:mod:`toolsift.evaluation.mftr.ablations`).

Every document variant is its own index (:mod:`toolsift.evaluation.mftr.indices`); the per-field
scores are collected from OpenSearch once per variant and query form
(:mod:`toolsift.evaluation.mftr.signals`), and only the learned model runs in Python.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from toolsift.config import FIELDS, Retriever, Settings
from toolsift.encoders.embedding import Embedder
from toolsift.evaluation.metrics import evaluate
from toolsift.evaluation.mftr.ablations import (
    ABLATIONS,
    CORE_ROWS,
    EXTENSIONS,
    MFTR_MEASURES,
    NEEDS_LLM_STANDARDISATION,
    PAPER_NDCG10,
)
from toolsift.evaluation.mftr.inputs import MFTRInputs
from toolsift.evaluation.mftr.prepare import prepare
from toolsift.evaluation.mftr.reranker import reranker_row
from toolsift.evaluation.mftr.results import AblationRow, MFTREvalResult
from toolsift.evaluation.mftr.signals import (
    QuerySignals,
    collect_signals,
    flat_text,
    mean_metrics,
    ranker_run,
    training_queries,
)
from toolsift.evaluation.rerank import mean
from toolsift.evaluation.runner import latency_summary, ranked_run
from toolsift.query.structured import StructuredQuery
from toolsift.ranker.artifact import WeightsArtifact
from toolsift.ranker.mftr import MFTRRanker, MFTRWeights
from toolsift.ranker.reranker_training import RerankerTrainingConfig
from toolsift.ranker.training import TrainingConfig, train_mftr
from toolsift.records import kinds_for
from toolsift.search import Searcher

__all__ = ["run_mftr_eval", "first_stage_recall"]


def run_mftr_eval(
    client: OpenSearch,
    settings: Settings,
    dataset_dirs: Sequence[Path],
    *,
    retriever: Retriever,
    embedder: Embedder,
    inputs: MFTRInputs = MFTRInputs(),
    ablations: bool = True,
    extensions: bool = False,
    depth: int = 100,
    training: TrainingConfig = TrainingConfig(),
    n_negatives: int = 64,
    reranker: RerankerTrainingConfig | None = None,
    reranker_base: str | Path | None = None,
    reranker_gguf: str | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> MFTREvalResult:
    # Long: MFTR's protocol read top to bottom (prepare, folds, ablations, rows); its docstring documents 15
    # options and each stage is a module of evaluation/mftr/.
    """Run MFTR (and its ablations) with 5-fold cross-validation on one or several ToolRet sets.

    Several folders make the mixed benchmark: one index over all their tools, one query set, and a
    seeded 5-fold split of the merged queries (as the paper partitions its Mixed set).

    Args:
        client, settings: the cluster and base settings (``cache_dir``, ``candidates``).
        dataset_dirs: ToolRet folders (``tools.json`` + ``queries.json``).
        retriever: ``bm25``, ``minilm`` or ``hybrid`` (both signals in one learned model).
        embedder: the embedding model used for ingest and dense scores.
        inputs: rewrites, standardised documents, folds, hard negatives.
        ablations: run every row of Table 3, not only MFTR.
        extensions: also run the rows beyond the paper (:data:`EXTENSIONS`).
        depth: run depth per query; the first stage returns ``max(depth, settings.candidates)``.
        training: the optimisation recipe (MFTR's by default).
        reranker: also train a second-stage reranker per fold on top of that fold's MFTR model and
            report "MFTR + <kind>" (:mod:`toolsift.evaluation.rerank`); ``reranker_base`` is the
            local model it starts from (``reranker_gguf``: a GGUF file name inside it).
    """
    started = time.perf_counter()
    planned = [r for r in ABLATIONS if ablations or r.name in CORE_ROWS] + (list(EXTENSIONS) if extensions else [])
    prep = prepare(client, settings, dataset_dirs, embedder=embedder, inputs=inputs, n_negatives=n_negatives,
                   flat_standardised=any(r.docs == "flat-std" for r in planned))
    name, qids, qrels, queries_text = prep.name, prep.qids, prep.qrels, prep.queries_text
    rewrites, indices, searchers, negatives = prep.rewrites, prep.indices, prep.searchers, prep.negatives
    has_std, has_rw, base = prep.has_std, prep.has_rw, prep.base
    missing_rw = [q for q in qids if q not in rewrites]
    negatives_source = prep.negatives_source
    fold_items = sorted(prep.folds.items())
    structured, wanted = prep.structured, prep.wanted
    kinds = kinds_for(retriever)
    cand_depth = max(depth, settings.candidates)
    rows = [r for r in ABLATIONS if ablations or r.name in CORE_ROWS]
    if extensions:
        rows += [r for r in EXTENSIONS if "instruction" not in r.query or prep.instructions]
    if not has_std:  # the "Stand." rows would repeat their rule-based twins
        rows = [r for r in rows if r.name not in NEEDS_LLM_STANDARDISATION]
    if not has_rw:
        rows = [r for r in rows if not r.query.startswith("rewrite")]

    signal_cache: dict[tuple[str, str], dict[str, QuerySignals]] = {}

    def signals_for(docs: str, form: str) -> dict[str, QuerySignals]:
        key = (indices[docs], form)  # without LLM standardisation "std" is the raw index
        if key not in signal_cache:
            sqs = {q: structured(form, q) for q in qids}
            signal_cache[key] = collect_signals(searchers[docs], sqs, retriever, cand_depth, wanted, progress,
                                                f"{docs}/{form}", documents=reranker is not None)
        return signal_cache[key]

    results: list[AblationRow] = []
    weights_report: dict[str, Any] = {}
    latencies: list[float] = []
    first_stage: dict[str, Any] = {}
    paper = PAPER_NDCG10.get((name, retriever), {})
    mftr_weights: dict[str, MFTRWeights] = {}
    for row in rows:
        per_fold: list[dict[str, float]] = []
        costs: list[float] = []
        if row.scoring == "flat":
            if retriever == "hybrid":
                continue  # Full-Doc has no hybrid form
            flat_kind: Retriever = "bm25" if retriever == "bm25" else "minilm"
            run: dict[str, dict[str, float]] = {}
            for qid in qids:
                sq = structured(row.query, qid)
                text = flat_text(sq) if row.query == "rewrite" else queries_text[qid]
                t0 = time.perf_counter()
                res = searchers[row.docs].search(text, top_k=depth, method="full-doc", retriever=flat_kind)
                if row.name == "Full-Doc":
                    latencies.append((time.perf_counter() - t0) * 1000)
                run[qid] = ranked_run((t.doc_id for t in res.tools), depth)
            for _, fold in fold_items:
                test = [q for q in fold["test"] if q in run]
                per_fold.append(evaluate({q: qrels[q] for q in test}, {q: run[q] for q in test}, MFTR_MEASURES))
            merged_run = run
        else:
            signals = signals_for(row.docs, row.query)
            fold_weights = []
            merged_run = {}
            for fold_name, fold in fold_items:
                test = [q for q in fold["test"] if q in signals]
                if row.scoring == "mean":
                    weights = MFTRWeights.mean_of_fields(kinds)
                elif row.scoring == "fixed":  # exactly the fixed field-weight ranker a search uses untrained
                    weights = MFTRWeights.from_field_weights(settings.field_weights, kinds, settings.derived_weight)
                else:
                    train = training_queries(signals, fold["train"], qrels, negatives, n_negatives)
                    recipe = {**training.__dict__, "penalty": row.scoring == "learned"}
                    if row.features != FIELDS:
                        recipe["features"] = row.features
                    outcome = train_mftr(train, kinds, TrainingConfig(**recipe))
                    weights = outcome.weights
                    fold_weights.append({"fold": fold_name, "pairs": outcome.pairs, "device": outcome.device,
                                         "seconds": round(outcome.seconds, 2), **weights.to_dict()})
                run = ranker_run(MFTRRanker(weights), signals, test, depth, costs)
                if row.name == "MFTR":
                    mftr_weights[fold_name] = weights
                merged_run.update(run)
                per_fold.append(evaluate({q: qrels[q] for q in test}, run, MFTR_MEASURES))
                if row.name == "MFTR":
                    first_stage.setdefault("folds", []).append(
                        first_stage_recall(client, base, indices["std"], embedder, weights, signals,
                                           {q: structured("rewrite", q) for q in test}, qrels, retriever, cand_depth)
                    )
            if fold_weights:
                learned = [MFTRWeights.from_dict(w) for w in fold_weights]
                weights_report[row.name] = {
                    "per_fold": fold_weights,
                    # Unrounded: rounded shares would no longer add up to 1.
                    "field_shares": {
                        k: {f: statistics.fmean(w.field_shares(k)[f] for w in learned) for f in row.features}
                        for k in kinds
                    },
                    "paper_vector_mean": {
                        k: [round(statistics.fmean(w["field_weights"][k][f] for w in fold_weights), 4) for f in row.features]
                        for k in kinds
                    },
                }
        merged = evaluate({q: qrels[q] for q in merged_run}, merged_run, MFTR_MEASURES)
        results.append(
            AblationRow(row.name, merged, mean_metrics(per_fold), per_fold, paper.get(row.name), row.docs, row.query,
                        row.scoring, beyond_paper=row in EXTENSIONS, ms_per_query=mean(costs))
        )
    reranker_report: dict[str, Any] = {}
    if reranker is not None and mftr_weights:
        form = "rewrite" if has_rw else "raw"
        row_result, reranker_report = reranker_row(
            prep, signals_for("std", form), form, fold_items, mftr_weights, reranker, reranker_base, reranker_gguf,
            depth, progress,
        )
        results.append(row_result)
    if first_stage.get("folds"):
        folds_fs = first_stage["folds"]
        first_stage = {
            "measure": f"recall@{cand_depth} of the first stage (test queries, MFTR's documents and rewrites)",
            "default_weights": round(statistics.fmean(f["default"] for f in folds_fs), 4),
            "learned_weights": round(statistics.fmean(f["learned"] for f in folds_fs), 4),
            "folds": folds_fs,
        }
    main = next((r for r in results if r.name == "MFTR"), next((r for r in results if r.name == "Weighting Only"), None))
    return MFTREvalResult(
        dataset=name,
        retriever=retriever,
        n_queries=len(qids),
        metrics=main.metrics if main else {},
        ablations=results,
        weights=weights_report,
        first_stage=first_stage,
        indices=indices,
        embedding_model=embedder.name,
        latency_ms=latency_summary(latencies),
        protocol={
            "folds": str(inputs.folds) if inputs.folds else "seeded 5-fold split (seed 42) of the merged queries",
            "n_folds": len(fold_items),
            "metrics": "every query scored by the model trained without its fold (union of the test folds); "
            "fold_mean: mean over folds; binary relevance",
            "hard_negatives": negatives_source,
            "negatives_per_query": n_negatives,
            "training": {**training.__dict__},
            "first_stage_candidates": cand_depth,
            "rewrites": [str(p) for p in inputs.rewrites] or None,
            "queries_without_rewrite": len(missing_rw) if has_rw else None,
            "standardized": [str(p) for p in inputs.standardized] or "rule-based standardisation (no LLM)",
            "raw_query": "the request as every need text, and as one extracted argument",
            "main_row": main.name if main else None,
            "reranker": reranker_report or None,
            "seconds": round(time.perf_counter() - started, 1),
        },
    )


def first_stage_recall(
    client: OpenSearch,
    settings: Settings,
    alias: str,
    embedder: Embedder,
    weights: MFTRWeights,
    signals: Mapping[str, QuerySignals],
    queries: Mapping[str, StructuredQuery],
    qrels: Mapping[str, Mapping[str, int]],
    retriever: Retriever,
    depth: int,
) -> dict[str, float]:
    """First-stage recall@depth with the default field weights (already collected) and learned ones."""
    def recall(found: Mapping[str, Sequence[str]]) -> float:
        vals = []
        for qid in queries:
            rel = {d for d, g in qrels[qid].items() if g > 0}
            if rel:
                vals.append(len(rel & set(found.get(qid, ()))) / len(rel))
        return statistics.fmean(vals) if vals else 0.0

    default = {q: list(signals[q].first_stage) for q in queries}
    learned_searcher = Searcher(client, settings.with_overrides(index=alias), embedder, artifact=WeightsArtifact(weights))
    learned: dict[str, list[str]] = {}
    for qid, sq in queries.items():
        vectors = learned_searcher.encode(sq, retriever)
        learned[qid] = list(learned_searcher.candidate_signals(sq, vectors, retriever, depth, parameters=False))
    return {"default": round(recall(default), 4), "learned": round(recall(learned), 4)}
