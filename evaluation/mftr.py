"""``toolsift eval --method mftr``: MFTR's protocol on real OpenSearch indices, with its ablations.

The protocol of the MFTR paper (§4): 5-fold cross-validation over the queries (the shared folds when
given: train on four folds, test on the fifth, metrics averaged over the five test folds), the
multi-field model trained with the pairwise loss on each training split with the top-64 wrong tools
by BM25 as hard negatives, and Table 3's ablation rows:

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
extracted argument. Every document variant is its own index (``toolsift-eval-<set>-<variant>``),
built from a catalog file materialised under ``<cache_dir>/eval-catalogs`` and reused while
unchanged. Scores come from OpenSearch: the first stage returns the candidates, named clauses give
each candidate's exact per-field scores, and only the learned model runs in Python.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from toolsift.config import FIELDS, Retriever, Settings
from toolsift.embedding import Embedder
from toolsift.errors import BadQueryError, CatalogError
from toolsift.ingest.benchmarks import Benchmark, load_benchmark, load_folds
from toolsift.evaluation.metrics import evaluate
from toolsift.evaluation.rerank import FittedReranker, RerankQuery, fit_reranker, mean, rerank_run
from toolsift.evaluation.runner import ensure_eval_index, latency_summary, ranked_run
from toolsift.query.builder import FieldSignals, kinds_for
from toolsift.query.structured import StructuredQuery
from toolsift.ranker.artifact import WeightsArtifact
from toolsift.ranker.mftr import FIELDS_AND_RANK, MFTRRanker, MFTRWeights
from toolsift.ranker.pipeline import RankingPipeline
from toolsift.ranker.reranker_training import RerankerTrainingConfig
from toolsift.ranker.training import TrainingConfig, TrainingQuery, train_mftr
from toolsift.search import Searcher

__all__ = [
    "MFTR_MEASURES",
    "PAPER_NDCG10",
    "ABLATIONS",
    "EXTENSIONS",
    "MFTRInputs",
    "AblationRow",
    "MFTREvalResult",
    "run_mftr_eval",
    "load_rewrites",
    "load_standardized",
    "load_hard_negatives",
    "make_folds",
    "train_weights",
    "train_reranker",
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
class _Row:
    name: str
    docs: str  # "raw" (rule-based fields) | "std" (standardised fields) | "flat-raw" | "flat-std"
    query: str  # "raw" | "rewrite", optionally "+instruction"
    scoring: str  # "flat" | "learned" | "no-penalty" | "mean" | "fixed" (the field_weights setting, untrained)
    features: tuple[str, ...] = FIELDS


ABLATIONS: tuple[_Row, ...] = (
    _Row("Full-Doc", "flat-raw", "raw", "flat"),
    _Row("Stand. Only", "flat-std", "raw", "flat"),
    _Row("Rewrite Only", "flat-raw", "rewrite", "flat"),
    _Row("Stand. + Rewrite", "flat-std", "rewrite", "flat"),
    _Row("Weighting Only", "raw", "raw", "learned"),
    _Row("Weighting + Stand.", "std", "raw", "learned"),
    _Row("Weighting + Rewrite", "raw", "rewrite", "learned"),
    _Row("w/o Adaptive Weighting", "std", "rewrite", "mean"),
    _Row("w/o Missing Penalty", "std", "rewrite", "no-penalty"),
    _Row("MFTR", "std", "rewrite", "learned"),
)

#: Beyond the paper (``--extensions``): what toolsift's default ranking (the fixed ``field_weights``,
#: nothing trained) gives on the same documents and rewrites; the first stage's rank as a learned
#: feature (a learned fusion of the first stage with the field scores); and the task instruction
#: ToolRet ships with each query as one more tool need (its text matched against description and
#: examples).
EXTENSIONS: tuple[_Row, ...] = (
    _Row("Fixed field weights (no training)", "std", "rewrite", "fixed"),
    _Row("MFTR + first-stage rank", "std", "rewrite", "learned", FIELDS_AND_RANK),
    _Row("MFTR + instruction", "std", "rewrite+instruction", "learned"),
    _Row("MFTR + instruction + rank", "std", "rewrite+instruction", "learned", FIELDS_AND_RANK),
    _Row("Weighting Only + instruction + rank", "raw", "raw+instruction", "learned", FIELDS_AND_RANK),
)


# --- inputs -----------------------------------------------------------------------------------------
def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CatalogError(f"{what} {path}: cannot read JSON ({exc})") from exc


def load_rewrites(paths: Sequence[Path], queries: Mapping[str, str]) -> dict[str, StructuredQuery]:
    """Rewritten queries by query id (``{qid: {tool_needs, extracted_arguments}}`` files, merged)."""
    out: dict[str, StructuredQuery] = {}
    for path in paths:
        data = _read_json(path, "rewrites")
        if not isinstance(data, dict):
            raise CatalogError(f"rewrites {path}: expected an object of query id → rewrite")
        for qid, rewrite in data.items():
            try:
                out[str(qid)] = StructuredQuery.from_dict(rewrite, text=queries.get(str(qid), ""))
            except BadQueryError as exc:
                raise CatalogError(f"rewrites {path}: query {qid}: {exc}") from exc
    return out


def load_standardized(paths: Sequence[Path]) -> dict[str, dict[str, Any]]:
    """Standardised documents (MFTR's ``augmented`` objects) by tool id."""
    out: dict[str, dict[str, Any]] = {}
    for path in paths:
        data = _read_json(path, "standardized")
        if not isinstance(data, list):
            raise CatalogError(f"standardized {path}: expected a list of {{id, augmented, ...}}")
        for i, record in enumerate(data):
            if not isinstance(record, dict) or not isinstance(record.get("augmented"), dict) or "id" not in record:
                raise CatalogError(f"standardized {path}: record {i} lacks 'id' or an 'augmented' object")
            out[str(record["id"])] = record["augmented"]
    return out


def load_hard_negatives(paths: Sequence[Path]) -> dict[str, list[str]]:
    """``{query id: [[tool id, score], ...]}`` files → tool ids in rank order."""
    out: dict[str, list[str]] = {}
    for path in paths:
        data = _read_json(path, "hard negatives")
        if not isinstance(data, dict):
            raise CatalogError(f"hard negatives {path}: expected an object of query id → [[tool id, score]]")
        for qid, ranked in data.items():
            out[str(qid)] = [str(entry[0]) if isinstance(entry, list) else str(entry) for entry in ranked]
    return out


def make_folds(query_ids: Sequence[str], k: int = 5, seed: int = 42) -> dict[str, dict[str, list[str]]]:
    """A seeded k-fold split (for sets without published folds, e.g. the mixed benchmark)."""
    ids = sorted(query_ids)
    random.Random(seed).shuffle(ids)
    parts = [ids[i::k] for i in range(k)]
    return {
        f"fold_{i}": {"train": sorted(q for j, p in enumerate(parts) if j != i for q in p), "test": sorted(parts[i])}
        for i in range(k)
    }


@dataclass(frozen=True)
class MFTRInputs:
    """What the MFTR evaluation reads besides the benchmark folders.

    Args:
        rewrites: rewrite files (query id → structured query); without them the rewrite rows are skipped.
        standardized: standardised-document files (tool id → ``augmented``); without them the
            rule-based standardisation stands in and the "Stand." rows are skipped.
        folds: the folds file; default: a seeded 5-fold split. Only the queries it names are used, so
            a file with one fold over part of the queries is a quick slice of the benchmark.
        hard_negatives: hard-negative files; default: mined from the index (BM25 over the raw document).
    """

    rewrites: tuple[Path, ...] = ()
    standardized: tuple[Path, ...] = ()
    folds: Path | None = None
    hard_negatives: tuple[Path, ...] = ()


# --- results ----------------------------------------------------------------------------------------
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


# --- catalogs and indices ---------------------------------------------------------------------------
def _raw_tools(benchmark: Benchmark) -> list[dict[str, Any]]:
    data = _read_json(benchmark.catalog_path, "catalog")
    if benchmark.catalog_format != "toolret" or not isinstance(data, list):
        raise CatalogError(
            f"{benchmark.path}: --method mftr reads ToolRet catalogs (tools.json with id + documentation)"
        )
    return [t for t in data if isinstance(t, dict)]


def _variant_catalog(
    tools: Sequence[Mapping[str, Any]], standardized: Mapping[str, Any], variant: str
) -> list[dict[str, Any]]:
    """MFTR-format records (``mftr`` loader) for one document variant."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        tid = str(tool["id"])
        raw = tool.get("documentation", {})
        std = standardized.get(tid)
        if variant == "raw":
            out.append({"id": tid, "type": tool.get("type", ""), "origin_documentation": raw})
        elif variant == "std":
            record: dict[str, Any] = {"id": tid, "type": tool.get("type", ""), "origin_documentation": raw}
            if std is not None:
                record["augmented"] = std
            out.append(record)
        elif variant == "flat-std":
            # Full-Doc over the standardised document: it becomes the documentation itself.
            flat = {"name": raw.get("name", tid), **std} if std is not None else raw
            out.append({"id": tid, "type": tool.get("type", ""), "origin_documentation": flat})
        else:
            raise ValueError(variant)
    return out


def _ensure_variant_index(
    client: OpenSearch,
    settings: Settings,
    embedder: Embedder,
    name: str,
    variant: str,
    records: list[dict[str, Any]],
) -> str:
    # Key order kept: Full-Doc is the documentation's JSON in its own order (the paper's json.dumps),
    # and the order changes what a dense model reads within its 256-token window.
    payload = json.dumps(records, ensure_ascii=False).encode()
    digest = hashlib.sha256(payload).hexdigest()[:12]
    folder = settings.cache_dir / "eval-catalogs"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{variant}-{digest}.json"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(payload)
        tmp.replace(path)
    alias = f"toolsift-eval-{name}-{variant}"
    report = ensure_eval_index(client, settings, embedder, alias, path, "mftr", prune=True)
    if not report.ok:
        raise CatalogError(f"{name}/{variant}: {len(report.rejected)} record(s) rejected while building {alias}")
    return alias


# --- signals ----------------------------------------------------------------------------------------
@dataclass
class _QuerySignals:
    first_stage: dict[str, FieldSignals]
    extra: dict[str, FieldSignals] = field(default_factory=dict)

    def get(self, doc_id: str) -> FieldSignals | None:
        return self.first_stage.get(doc_id) or self.extra.get(doc_id)


def _flat_text(sq: StructuredQuery) -> str:
    """A rewrite as one text for the Full-Doc rows: every need's texts and every argument."""
    parts = [t for n in sq.tool_needs for t in (n.user_intent, n.tool_description, n.expected_response)]
    return " ".join([*parts, *sq.argument_texts()])


def _collect(
    searcher: Searcher,
    queries: Mapping[str, StructuredQuery],
    retriever: Retriever,
    depth: int,
    wanted: Mapping[str, Sequence[str]],
    progress: Callable[[str, int, int], None] | None,
    label: str,
    documents: bool = False,
) -> dict[str, _QuerySignals]:
    out: dict[str, _QuerySignals] = {}
    for done, (qid, sq) in enumerate(queries.items(), start=1):
        vectors = searcher.encode(sq, retriever)
        first = searcher.candidate_signals(sq, vectors, retriever, depth, parameters=True, documents=documents)
        extra_ids = [d for d in wanted.get(qid, ()) if d not in first]
        extra = searcher.signals_for(sq, vectors, retriever, extra_ids, parameters=True, documents=documents)
        out[qid] = _QuerySignals(first, extra)
        if progress:
            progress(label, done, len(queries))
    return out


def _training_queries(
    signals: Mapping[str, _QuerySignals],
    qids: Sequence[str],
    qrels: Mapping[str, Mapping[str, int]],
    negatives: Mapping[str, Sequence[str]],
    n_negatives: int,
) -> list[TrainingQuery]:
    out = []
    for qid in qids:
        sig = signals.get(qid)
        if sig is None:
            continue
        relevant = {d for d, g in qrels.get(qid, {}).items() if g > 0}
        pos = [s for d in sorted(relevant) if (s := sig.get(d)) is not None]
        wrong = [d for d in negatives.get(qid, ()) if d not in relevant][:n_negatives]
        neg = [s for d in wrong if (s := sig.get(d)) is not None]
        if pos and neg:
            out.append(TrainingQuery(qid, tuple(pos), tuple(neg)))
    return out


def _run_of(
    ranker: MFTRRanker,
    signals: Mapping[str, _QuerySignals],
    qids: Sequence[str],
    depth: int,
    costs: list[float] | None = None,
) -> dict[str, dict[str, float]]:
    run = {}
    for qid in qids:
        cands = list(signals[qid].first_stage.values())
        t0 = time.perf_counter()
        ranked = ranker.rank(cands, depth)
        if costs is not None:
            costs.append((time.perf_counter() - t0) * 1000)
        run[qid] = ranked_run((t.doc_id for t in ranked), depth)
    return run


def _mean(dicts: Sequence[Mapping[str, float]]) -> dict[str, float]:
    keys = list(dicts[0]) if dicts else []
    return {k: statistics.fmean(d[k] for d in dicts) for k in keys}


#: The rows of a run without ablations: the flat baseline, no LLM at all, and MFTR.
CORE_ROWS = frozenset({"Full-Doc", "Weighting Only", "MFTR"})

_NEEDS_LLM_STANDARDISATION = frozenset({"Stand. Only", "Stand. + Rewrite", "Weighting + Stand.", "Weighting + Rewrite"})


@dataclass
class _Prepared:
    name: str
    qids: list[str]
    qrels: dict[str, dict[str, int]]
    queries_text: dict[str, str]
    instructions: dict[str, str]
    rewrites: dict[str, StructuredQuery]
    has_std: bool
    has_rw: bool
    indices: dict[str, str]
    base: Settings
    searchers: dict[str, Searcher]
    folds: dict[str, dict[str, list[str]]]
    negatives: dict[str, list[str]]
    negatives_source: Any
    wanted: dict[str, list[str]]

    def structured(self, form: str, qid: str) -> StructuredQuery:
        """The query of ``qid`` as a row asks for it: its rewrite, or the raw request; a form ending
        in ``+instruction`` adds ToolRet's task instruction as one more need (description and
        examples are matched against it; it says nothing of the tool's response)."""
        base, _, extra = form.partition("+")
        if base == "rewrite" and qid in self.rewrites:
            sq = self.rewrites[qid]
        else:
            sq = StructuredQuery.from_text(self.queries_text[qid], as_argument=True)
        return sq.with_instruction(self.instructions.get(qid, "")) if extra == "instruction" else sq


def _prepare(
    client: OpenSearch,
    settings: Settings,
    dataset_dirs: Sequence[Path],
    *,
    embedder: Embedder,
    inputs: MFTRInputs,
    n_negatives: int,
    flat_standardised: bool = False,
) -> _Prepared:
    """Read the benchmark(s) and inputs, build the document-variant indices, folds and negatives.

    The Full-Doc index over the standardised documents (``flat-std``) is built only when a row reads
    it (``flat_standardised``: the "Stand." ablations); without it that variant is the raw index.
    """
    benchmarks = [load_benchmark(Path(d)) for d in dataset_dirs]
    name = "-".join(re.sub(r"[^a-z0-9]+", "-", b.name.lower()) for b in benchmarks)
    if len(benchmarks) > 1:
        name = f"mixed-{name}"
    queries_text: dict[str, str] = {}
    instructions: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    tools: list[dict[str, Any]] = []
    for b in benchmarks:
        queries_text.update(b.queries)
        instructions.update(b.extra.get("instructions", {}))
        qrels.update({q: dict(r) for q, r in b.qrels.items()})
        tools.extend(_raw_tools(b))
    qids = [q for q in qrels if q in queries_text]
    standardized = load_standardized(inputs.standardized)
    rewrites = load_rewrites(inputs.rewrites, queries_text)
    has_std = bool(standardized)
    variants = ["raw", *(["std"] if has_std else []), *(["flat-std"] if has_std and flat_standardised else [])]
    indices = {v: _ensure_variant_index(client, settings, embedder, name, v, _variant_catalog(tools, standardized, v))
               for v in variants}
    indices["flat-raw"] = indices["raw"]  # the Full-Doc field of the raw index is the raw document
    indices.setdefault("std", indices["raw"])
    base = settings.model_copy(update={"weights": None})  # the harness trains its own weights
    searchers = {v: Searcher(client, base.with_overrides(index=a), embedder) for v, a in indices.items()}
    folds = load_folds(inputs.folds) if inputs.folds else make_folds(qids)
    if inputs.folds:  # a split over part of the queries (a quick slice) evaluates and trains on that part only
        in_folds = {q for fold in folds.values() for part in ("train", "test") for q in fold[part]}
        qids = [q for q in qids if q in in_folds]
    if inputs.hard_negatives:
        negatives = load_hard_negatives(inputs.hard_negatives)
        source: Any = [str(p) for p in inputs.hard_negatives]
    else:
        negatives = _mine_negatives(searchers["raw"], queries_text, qids, qrels, n_negatives)
        source = "mined: BM25 over the raw document, top wrong tools"
    wanted = {q: [*qrels[q], *negatives.get(q, [])[: n_negatives + len(qrels[q])]] for q in qids}
    return _Prepared(name, qids, qrels, queries_text, instructions, rewrites, has_std, bool(rewrites), indices, base,
                     searchers, folds, negatives, source, wanted)


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
    prep = _prepare(client, settings, dataset_dirs, embedder=embedder, inputs=inputs, n_negatives=n_negatives)
    if fold is not None and fold not in prep.folds:
        raise BadQueryError(f"fold {fold!r} is not in the folds ({', '.join(sorted(prep.folds))})")
    train_ids = prep.folds[fold]["train"] if fold is not None else prep.qids
    form = "rewrite" if prep.has_rw else "raw"
    queries = {q: prep.structured(form, q) for q in train_ids if q in prep.qrels}
    signals = _collect(prep.searchers["std"], queries, retriever, max(100, settings.candidates), prep.wanted,
                       progress, "training queries")
    outcome = train_mftr(_training_queries(signals, list(queries), prep.qrels, prep.negatives, n_negatives),
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
    prep = _prepare(client, settings, dataset_dirs, embedder=embedder, inputs=inputs, n_negatives=n_negatives)
    if fold is not None and fold not in prep.folds:
        raise BadQueryError(f"fold {fold!r} is not in the folds ({', '.join(sorted(prep.folds))})")
    train_ids = [q for q in (prep.folds[fold]["train"] if fold is not None else prep.qids) if q in prep.qrels]
    form = "rewrite" if prep.has_rw else "raw"
    queries = {q: prep.structured(form, q) for q in train_ids}
    signals = _collect(prep.searchers["std"], queries, retriever, max(100, settings.candidates), prep.wanted,
                       progress, "training queries", documents=True)
    if weights is None:
        mftr = train_mftr(_training_queries(signals, train_ids, prep.qrels, prep.negatives, n_negatives),
                          kinds_for(retriever), training).weights
    else:
        mftr = weights.weights
    fitted = fit_reranker(MFTRRanker(mftr), _rerank_queries(prep, signals, form, train_ids), prep.qrels, config,
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


# --- the evaluation ---------------------------------------------------------------------------------
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
    prep = _prepare(client, settings, dataset_dirs, embedder=embedder, inputs=inputs, n_negatives=n_negatives,
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
        rows = [r for r in rows if r.name not in _NEEDS_LLM_STANDARDISATION]
    if not has_rw:
        rows = [r for r in rows if not r.query.startswith("rewrite")]

    signal_cache: dict[tuple[str, str], dict[str, _QuerySignals]] = {}

    def signals_for(docs: str, form: str) -> dict[str, _QuerySignals]:
        key = (indices[docs], form)  # without LLM standardisation "std" is the raw index
        if key not in signal_cache:
            sqs = {q: structured(form, q) for q in qids}
            signal_cache[key] = _collect(searchers[docs], sqs, retriever, cand_depth, wanted, progress, f"{docs}/{form}",
                                         documents=reranker is not None)
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
                text = _flat_text(sq) if row.query == "rewrite" else queries_text[qid]
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
                    weights = MFTRWeights.from_field_weights(settings.field_weights, kinds)
                else:
                    train = _training_queries(signals, fold["train"], qrels, negatives, n_negatives)
                    recipe = {**training.__dict__, "penalty": row.scoring == "learned"}
                    if row.features != FIELDS:
                        recipe["features"] = row.features
                    outcome = train_mftr(train, kinds, TrainingConfig(**recipe))
                    weights = outcome.weights
                    fold_weights.append({"fold": fold_name, "pairs": outcome.pairs, "device": outcome.device,
                                         "seconds": round(outcome.seconds, 2), **weights.to_dict()})
                run = _run_of(MFTRRanker(weights), signals, test, depth, costs)
                if row.name == "MFTR":
                    mftr_weights[fold_name] = weights
                merged_run.update(run)
                per_fold.append(evaluate({q: qrels[q] for q in test}, run, MFTR_MEASURES))
                if row.name == "MFTR":
                    first_stage.setdefault("folds", []).append(
                        _first_stage_recall(client, base, indices["std"], embedder, weights, signals,
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
            AblationRow(row.name, merged, _mean(per_fold), per_fold, paper.get(row.name), row.docs, row.query,
                        row.scoring, beyond_paper=row in EXTENSIONS, ms_per_query=mean(costs))
        )
    reranker_report: dict[str, Any] = {}
    if reranker is not None and mftr_weights:
        form = "rewrite" if has_rw else "raw"
        row_result, reranker_report = _reranker_row(
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


def _rerank_queries(prep: _Prepared, signals: Mapping[str, _QuerySignals], form: str,
                    qids: Sequence[str]) -> list[RerankQuery]:
    out = []
    for qid in qids:
        sig = signals.get(qid)
        if sig is None:
            continue
        relevant = {d: s for d, g in prep.qrels.get(qid, {}).items() if g > 0 and (s := sig.get(d)) is not None}
        out.append(RerankQuery(qid, prep.structured(form, qid), list(sig.first_stage.values()), relevant))
    return out


def _reranker_row(
    prep: _Prepared,
    signals: Mapping[str, _QuerySignals],
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
        fitted = fit_reranker(ranker, _rerank_queries(prep, signals, form, fold["train"]), prep.qrels, config,
                              base_model=base_model, gguf_file=gguf_file, depth=depth, progress=progress)
        pipeline = RankingPipeline(ranker, fitted.outcome.reranker, rerank_top=config.rerank_top,
                                   fusion_weight=fitted.fusion_weight)
        test = _rerank_queries(prep, signals, form, fold["test"])
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
    row = AblationRow(f"MFTR + {label}", merged, _mean(per_fold), per_fold, None, "std", form,
                      f"learned + {config.kind} on the top {config.rerank_top}", beyond_paper=False,
                      ms_per_query=mean(costs))
    report = {"kind": config.kind, "base_model": str(base_model), "gguf_file": gguf_file,
              "training": config.to_dict(), "folds": folds_report,
              "protocol": "per fold: trained on the training queries minus a 15% dev slice (relevant tools + "
                          "MFTR's top wrong tools), λ chosen on the dev slice, test queries through RankingPipeline"}
    return row, report


def _mine_negatives(
    searcher: Searcher,
    queries: Mapping[str, str],
    qids: Sequence[str],
    qrels: Mapping[str, Mapping[str, int]],
    k: int,
) -> dict[str, list[str]]:
    out = {}
    for qid in qids:
        res = searcher.search(queries[qid], top_k=k + len(qrels[qid]), method="full-doc", retriever="bm25")
        out[qid] = [t.doc_id for t in res.tools if t.doc_id not in qrels[qid]][:k]
    return out


def _first_stage_recall(
    client: OpenSearch,
    settings: Settings,
    alias: str,
    embedder: Embedder,
    weights: MFTRWeights,
    signals: Mapping[str, _QuerySignals],
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
