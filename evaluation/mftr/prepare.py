"""One benchmark (or a mixed set of them) made ready for MFTR: its queries and qrels, the rewrites,
one index per document variant, the folds and the hard negatives (:func:`prepare`)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from toolsift.config import Settings
from toolsift.encoders.embedding import Embedder
from toolsift.evaluation.mftr.indices import ensure_variant_index, raw_tools, variant_catalog
from toolsift.evaluation.mftr.inputs import MFTRInputs, load_hard_negatives, load_rewrites, load_standardized, make_folds
from toolsift.ingest.benchmarks import load_benchmark, load_folds
from toolsift.query.structured import StructuredQuery
from toolsift.search import Searcher

__all__ = ["Prepared", "prepare", "mine_negatives"]


@dataclass
class Prepared:
    """What :func:`prepare` read and built; ``indices`` and ``searchers`` are keyed by variant."""

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


def prepare(
    client: OpenSearch,
    settings: Settings,
    dataset_dirs: Sequence[Path],
    *,
    embedder: Embedder,
    inputs: MFTRInputs,
    n_negatives: int,
    flat_standardised: bool = False,
) -> Prepared:
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
        tools.extend(raw_tools(b))
    qids = [q for q in qrels if q in queries_text]
    standardized = load_standardized(inputs.standardized)
    rewrites = load_rewrites(inputs.rewrites, queries_text)
    has_std = bool(standardized)
    variants = ["raw", *(["std"] if has_std else []), *(["flat-std"] if has_std and flat_standardised else [])]
    indices = {v: ensure_variant_index(client, settings, embedder, name, v, variant_catalog(tools, standardized, v))
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
        negatives = mine_negatives(searchers["raw"], queries_text, qids, qrels, n_negatives)
        source = "mined: BM25 over the raw document, top wrong tools"
    wanted = {q: [*qrels[q], *negatives.get(q, [])[: n_negatives + len(qrels[q])]] for q in qids}
    return Prepared(name, qids, qrels, queries_text, instructions, rewrites, has_std, bool(rewrites), indices, base,
                    searchers, folds, negatives, source, wanted)


def mine_negatives(
    searcher: Searcher,
    queries: Mapping[str, str],
    qids: Sequence[str],
    qrels: Mapping[str, Mapping[str, int]],
    k: int,
) -> dict[str, list[str]]:
    """Hard negatives by BM25 over the raw document: each query's top ``k`` wrong tools."""
    out = {}
    for qid in qids:
        res = searcher.search(queries[qid], top_k=k + len(qrels[qid]), method="full-doc", retriever="bm25")
        out[qid] = [t.doc_id for t in res.tools if t.doc_id not in qrels[qid]][:k]
    return out
