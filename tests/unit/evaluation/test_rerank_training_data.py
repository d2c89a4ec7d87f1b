"""What a reranker learns from: relevant tools, the base ranker's top wrong tools, and a dev slice for λ."""

from __future__ import annotations

from pathlib import Path

from toolsift.evaluation.rerank import FUSION_GRID, RerankQuery, fit_reranker, training_pairs
from toolsift.records import FieldSignals
from toolsift.query.structured import StructuredQuery
from toolsift.ranker.fusion import FieldWeightRanker
from toolsift.ranker.reranker_training import RerankerTrainingConfig

WEIGHTS = {"description": 1.0, "parameters": 0.0, "response": 0.0, "examples": 0.0}


def signals(doc_id: str, score: float, rank: int) -> FieldSignals:
    return FieldSignals(doc_id=doc_id, name=doc_id, entity="tool", agent_id=None, first_stage_score=score,
                        first_stage_rank=rank, fields={"dense": {"description": score}},
                        document=f"name: {doc_id}\ndescription: tool {doc_id}")


def query(qid: str, relevant: str = "c") -> RerankQuery:
    cands = [signals(d, s, i + 1) for i, (d, s) in enumerate([("a", 0.9), ("b", 0.8), ("c", 0.7), ("d", 0.6), ("e", 0.5)])]
    missed = signals("z", 0.1, 0)  # relevant, but not among the first stage's candidates
    rel = {relevant: next(c for c in cands if c.doc_id == relevant), "z": missed}
    return RerankQuery(qid, StructuredQuery.from_text(f"request {qid}"), cands, rel)


def test_pairs_are_the_relevant_tools_and_the_base_rankers_top_wrong_ones() -> None:
    pairs = training_pairs(FieldWeightRanker(WEIGHTS), [query("q1")], negatives=2, depth=10)
    labelled = [(p.document.splitlines()[0], p.label) for p in pairs]
    assert labelled == [("name: c", 1), ("name: z", 1), ("name: a", 0), ("name: b", 0)]
    assert all(p.query == "request q1" for p in pairs)


def test_fit_holds_out_a_dev_slice_and_picks_lambda_from_the_grid(seeded_cross_encoder: Path) -> None:
    queries = [query(f"q{i}", relevant="abcde"[i % 5]) for i in range(10)]
    qrels = {q.qid: {d: 1 for d in q.relevant} for q in queries}
    config = RerankerTrainingConfig(epochs=1, batch_size=8, max_length=32, negatives=2, rerank_top=5, device="cpu")

    fitted = fit_reranker(FieldWeightRanker(WEIGHTS), queries, qrels, config, base_model=seeded_cross_encoder, depth=10)

    assert (fitted.dev_queries, fitted.fit_queries) == (2, 8)  # 15% of 10, rounded
    assert set(fitted.dev_ndcg10) == set(FUSION_GRID)
    best = max(fitted.dev_ndcg10.values())
    assert fitted.fusion_weight == min(w for w, v in fitted.dev_ndcg10.items() if v == best)  # ties: smaller λ
    assert fitted.outcome.pairs == 8 * (2 + 2) and fitted.outcome.positives == 16
