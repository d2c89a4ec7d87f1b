"""``toolsift eval --set``: tool-*set* recommendation scored as PTR scores it.

A set method answers each test query with an ordered set of tools whose size it decides. Scores,
averaged over the test queries (K = the size of that query's gold set, as PTR reports):

* ``tracc`` — (1 − |n₂ − n₁| / |A ∪ B|) · |A ∩ B| / n₁ (:func:`~toolsift.ranker.metrics.tracc.tracc`);
* ``recall@gt`` — |A ∩ B[:K]| / K;
* ``ndcg@gt`` — nDCG of B's order cut at K, binary gains;
* ``set_size_error`` — |n₂ − n₁|, and ``set_size`` — n₂.

Rows, measured in the same run on the same index (the test split only; history — bundles, past
queries, calibration — from the train split only, and nothing of it with ``no_history``):

* ``PTR (calibrated …)`` — :func:`~toolsift.sets.ptr.recommend_set` with the parameters calibrated
  on held-out training queries (:func:`~toolsift.sets.recommender.build_history`);
* ``PTR bundle acquisition only`` — the acquired bundle as is (no trimming, no additions);
* ``PTR, coverage + multi-view forced on`` — the same with mid-grid thresholds
  (:data:`FORCED_COVERAGE`), whatever the calibration chose;
* ``PTR cold start`` — no history: Full-Doc hybrid retrieval and the score-gap size rule;
* references: ``nearest training query's set`` (the gold set of the most similar training query —
  history alone), ``dense top-3`` and ``dense top-|gold| (oracle size)`` (Full-Doc k-NN; the latter
  is told the size, so it is labelled an oracle), ``hybrid top-3`` (PTR's retrieval, fixed size).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from opensearchpy import OpenSearch

from toolsift.config import Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import CatalogError
from toolsift.ingest.benchmarks import load_benchmark
from toolsift.evaluation.runner import ensure_eval_index, eval_index_name
from toolsift.ranker.metrics.tracc import tracc
from toolsift.sets.history_import import load_history
from toolsift.sets.history_store import HistoryStore
from toolsift.sets.ptr import PTRConfig, recommend_set
from toolsift.search import Searcher
from toolsift.sets.recommender import DEFAULT_CALIBRATION_QUERIES, SetRecommender, build_history, encode_past_queries

__all__ = ["SET_MEASURES", "set_scores", "SetRow", "SetEvalResult", "run_set_eval"]

SET_MEASURES: tuple[str, ...] = ("tracc", "recall@gt", "ndcg@gt", "set_size_error", "set_size")

#: The "forced on" row's thresholds: mid-grid values, to show what trimming and additions do when
#: the calibration would not choose them.
FORCED_COVERAGE = PTRConfig(keep_threshold=0.2, solve_threshold=0.3, min_votes=2)


def set_scores(gold: Sequence[str] | set[str], recommended: Sequence[str]) -> dict[str, float]:
    """The per-query scores of one recommended, ordered set against the gold set."""
    gold_set = set(gold)
    ordered = list(dict.fromkeys(recommended))
    k = len(gold_set)
    head = ordered[:k]
    hits = [1.0 if t in gold_set else 0.0 for t in head]
    dcg = sum(h / math.log2(i + 2) for i, h in enumerate(hits))
    idcg = sum(1.0 / math.log2(i + 2) for i in range(k))
    return {
        "tracc": tracc(gold_set, ordered),
        "recall@gt": sum(hits) / k,
        "ndcg@gt": dcg / idcg,
        "set_size_error": float(abs(len(ordered) - k)),
        "set_size": float(len(ordered)),
    }


@dataclass(frozen=True)
class SetRow:
    """One method's mean scores over the test queries."""

    name: str
    metrics: dict[str, float]
    uses_history: bool
    oracle: bool = False
    note: str = ""
    #: The row the command is about: PTR calibrated with history, else PTR cold start.
    main: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"row": self.name, "main": self.main, "metrics": {k: round(v, 4) for k, v in self.metrics.items()},
                "uses_history": self.uses_history, "oracle": self.oracle, "note": self.note}


@dataclass(frozen=True)
class SetEvalResult:
    """``--json`` contract: dataset, method ``set``, retriever, the rows and the protocol."""

    dataset: str
    retriever: str
    n_queries: int
    rows: list[SetRow]
    index: str
    embedding_model: str
    protocol: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "method": "set", "retriever": self.retriever, "n_queries": self.n_queries,
                "index": self.index, "embedding_model": self.embedding_model,
                "rows": [r.to_dict() for r in self.rows], "protocol": self.protocol}


def _mean(per_query: Sequence[Mapping[str, float]]) -> dict[str, float]:
    return {m: statistics.fmean(q[m] for q in per_query) for m in SET_MEASURES} if per_query else {}


def _gold_sets(qrels: Mapping[str, Mapping[str, int]]) -> dict[str, list[str]]:
    return {q: sorted(d for d, g in rel.items() if g > 0) for q, rel in qrels.items() if any(g > 0 for g in rel.values())}


def nearest_history_sets(
    embedder: Embedder,
    train: Mapping[str, str],
    train_sets: Mapping[str, Sequence[str]],
    test: Mapping[str, str],
    train_vectors: Mapping[str, np.ndarray] | None = None,
) -> dict[str, list[str]]:
    """For each test query, the tool set of its most similar training query (cosine of query vectors).

    ``train_vectors``: training query vectors already encoded (the history's); the rest are encoded here.
    """
    train_ids = [q for q in train if q in train_sets]
    if not train_ids:
        raise CatalogError("no training queries with tools: the history rows need qrels/train.tsv")
    known = train_vectors or {}
    missing = [q for q in train_ids if q not in known]
    encoded = dict(zip(missing, embedder.encode_query([train[q] for q in missing]))) if missing else {}
    train_m = np.asarray([known[q] if q in known else encoded[q] for q in train_ids], dtype=np.float32)
    test_ids = list(test)
    test_m = np.asarray(embedder.encode_query([test[q] for q in test_ids]), dtype=np.float32)
    train_m /= np.linalg.norm(train_m, axis=1, keepdims=True) + 1e-12
    test_m /= np.linalg.norm(test_m, axis=1, keepdims=True) + 1e-12
    best = (test_m @ train_m.T).argmax(axis=1)
    return {qid: list(train_sets[train_ids[int(j)]]) for qid, j in zip(test_ids, best)}


def run_set_eval(
    client: OpenSearch,
    settings: Settings,
    dataset_dir: Path,
    *,
    embedder: Embedder,
    no_history: bool = False,
    calibration_queries: int = DEFAULT_CALIBRATION_QUERIES,
    progress: Callable[[str, int, int], None] | None = None,
) -> SetEvalResult:
    """PTR's rows and the reference rows on a BEIR folder with ``qrels/test.tsv`` (and ``qrels/train.tsv``).

    With history, the train split becomes the history index (scene files when present, else one
    bundle per distinct relevant set), PTR's parameters are calibrated on held-out training queries,
    and the test queries are answered from it. With ``no_history`` nothing of the train split is read.
    """
    started = time.perf_counter()
    test = load_benchmark(dataset_dir, split="test")
    if "train" not in test.splits and not no_history:
        raise CatalogError(f"{dataset_dir}: --set needs qrels/train.tsv for history (or --no-history)")
    alias = eval_index_name(test, embedder.name)
    ensure_eval_index(client, settings, embedder, alias, test.catalog_path, test.catalog_format)
    searcher = Searcher(client, settings.with_overrides(index=alias), embedder)
    gold = {q: s for q, s in _gold_sets(test.qrels).items() if q in test.queries}
    ids = list(gold)
    rows: list[SetRow] = []
    dense: dict[str, list[str]] = {}
    for done, qid in enumerate(ids, start=1):
        result = searcher.search(test.queries[qid], top_k=max(3, len(gold[qid])), method="full-doc", retriever="minilm")
        dense[qid] = [t.doc_id for t in result.tools]
        if progress:
            progress("dense reference", done, len(ids))
    protocol: dict[str, Any] = {}
    history_store: HistoryStore | None = None
    config = PTRConfig()
    if not no_history:
        train = load_benchmark(dataset_dir, split="train")
        history = load_history(dataset_dir, split="train")
        past_vectors = encode_past_queries(embedder, history, progress)
        config, calibration = build_history(searcher, history, calibration_queries=calibration_queries,
                                            query_vectors=past_vectors, progress=progress)
        history_store = HistoryStore(client, alias)
        protocol["history"] = {"source": history.source, "bundles": len(history.bundles),
                               "past_queries": len(history.queries), "calibration": calibration,
                               "calibrated": config.to_dict()}
        nearest = nearest_history_sets(embedder, train.queries, _gold_sets(train.qrels), {q: test.queries[q] for q in gold},
                                       train_vectors=past_vectors)
        rows.append(SetRow("nearest training query's set", _mean([set_scores(gold[q], nearest[q]) for q in ids]),
                           uses_history=True))
    recommender = SetRecommender(searcher, history_store, config)
    evidence = recommender.gather_many([test.queries[q] for q in ids], progress, label="test queries")
    hybrid_top3 = [[c.tool_id for c in ev.candidates[:3]] for ev in evidence]
    rows.append(SetRow("dense top-3", _mean([set_scores(gold[q], dense[q][:3]) for q in ids]), uses_history=False))
    rows.append(SetRow("dense top-|gold| (oracle size)", _mean([set_scores(gold[q], dense[q][: len(gold[q])]) for q in ids]),
                       uses_history=False, oracle=True, note="told the gold set's size"))
    rows.append(SetRow("hybrid top-3", _mean([set_scores(gold[q], t) for q, t in zip(ids, hybrid_top3)]),
                       uses_history=False, note="Full-Doc BM25 + k-NN, fixed size"))
    cold = [recommend_set(ev.without_history(), config) for ev in evidence]
    rows.append(SetRow("PTR cold start (hybrid + score-gap size)", _mean([set_scores(gold[q], s.tool_ids) for q, s in zip(ids, cold)]),
                       uses_history=False, note=f"cold_ratio {config.cold_ratio}, max_size {config.max_size}",
                       main=history_store is None))
    if history_store is not None:
        plain = replace(config, keep_threshold=-1.0, solve_threshold=-1.0)
        rows.append(SetRow("PTR bundle acquisition only", _mean([
            set_scores(gold[q], recommend_set(ev, plain).tool_ids) for q, ev in zip(ids, evidence)]),
            uses_history=True, note=f"vote + BM25 (w {config.bm25_weight}), no trimming or additions"))
        forced = replace(config, keep_threshold=FORCED_COVERAGE.keep_threshold,
                         solve_threshold=FORCED_COVERAGE.solve_threshold, min_votes=FORCED_COVERAGE.min_votes)
        forced_sets = [recommend_set(ev, forced) for ev in evidence]
        rows.append(SetRow("PTR, coverage + multi-view forced on", _mean([
            set_scores(gold[q], s.tool_ids) for q, s in zip(ids, forced_sets)]), uses_history=True,
            note=f"keep {forced.keep_threshold}, solve {forced.solve_threshold}, {forced.min_votes} votes: dropped "
                 f"{sum(len(s.dropped) for s in forced_sets)}, added "
                 f"{sum(1 for s in forced_sets for m in s.members if m.reason == 'added')}"))
        full = [recommend_set(ev, config) for ev in evidence]
        rows.append(SetRow("PTR (calibrated: acquisition + coverage + multi-view)", _mean([
            set_scores(gold[q], s.tool_ids) for q, s in zip(ids, full)]), uses_history=True,
            note=f"dropped {sum(len(s.dropped) for s in full)}, added "
                 f"{sum(1 for s in full for m in s.members if m.reason == 'added')} tools over {len(ids)} queries",
            main=True))
    return SetEvalResult(
        dataset=test.name,
        retriever="minilm",
        n_queries=len(gold),
        rows=rows,
        index=alias,
        embedding_model=embedder.name,
        protocol={
            "split": "test queries scored; history (bundles, past queries, calibration) from the train split only",
            "k": "the size of each query's gold set (PTR's recall@gt / ndcg@gt)",
            "no_history": no_history,
            "dense": "Full-Doc k-NN search over the index, the embedding model's cosine",
            "hybrid": "Full-Doc hybrid query (BM25 + k-NN, min-max normalised, equal weights): PTR's retrieval",
            "nearest": "the training query with the highest cosine to the test query; its gold set as the answer",
            "needs": "rule-based split of the request (no LLM)",
            **protocol,
            "seconds": round(time.perf_counter() - started, 1),
        },
    )
