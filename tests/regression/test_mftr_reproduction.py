"""MFTR on a real OpenSearch index meets the paper's NDCG@10 with the paper's own LLM outputs.

Inputs are the published GPT-4o-mini standardised APIBank documents and rewrites, the shared 5-fold
split and BM25 hard negatives (shared/datasets/mftr). Each document variant is its own
``toolsift-eval-apibank-<variant>`` index, reused while unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolsift.evaluation.mftr import MFTRInputs, run_mftr_eval

pytestmark = pytest.mark.integration


def _inputs(datasets: Path, name: str, *, standardized: bool) -> MFTRInputs:
    folder = datasets / "mftr" / name
    return MFTRInputs(
        rewrites=(folder / "rewritten_queries.gpt-4o-mini.json",),
        standardized=(folder / "standardized_tools.gpt-4o-mini.json",) if standardized else (),
        folds=folder / "folds.json",
        hard_negatives=(folder / "hard_negatives.bm25.json",),
    )


def test_apibank_mftr_with_bm25_reaches_the_paper(client: Any, base_settings: Any, embedder: Any, datasets: Path) -> None:
    result = run_mftr_eval(
        client, base_settings, [datasets / "toolret" / "apibank"], retriever="bm25", embedder=embedder,
        inputs=_inputs(datasets, "apibank", standardized=True), ablations=False, extensions=True,
    )

    rows = {row.name: row for row in result.ablations}
    assert list(rows)[:3] == ["Full-Doc", "Weighting Only", "MFTR"]
    assert rows["Full-Doc"].metrics["ndcg@10"] == pytest.approx(0.5167, abs=0.01)
    assert rows["Weighting Only"].metrics["ndcg@10"] < result.metrics["ndcg@10"]
    assert result.n_queries == 101
    assert result.metrics["ndcg@10"] >= 0.6704  # MFTR Table 2, BM25 on APIBank
    fold_weights = result.weights["MFTR"]["per_fold"]
    assert len(fold_weights) == 5 and all(w["kinds"] == ["bm25"] for w in fold_weights)
    assert sum(result.weights["MFTR"]["field_shares"]["bm25"].values()) == pytest.approx(1.0)
    assert 0.0 <= result.first_stage["learned_weights"] <= 1.0
    assert result.to_dict()["method"] == "mftr"
    # Beyond the paper: ToolRet's task instruction as one more need lifts MFTR (0.6848 → 0.7110 measured).
    assert rows["MFTR + instruction"].beyond_paper and not rows["MFTR"].beyond_paper
    assert rows["MFTR + instruction"].metrics["ndcg@10"] > rows["MFTR"].metrics["ndcg@10"]


@pytest.mark.slow
def test_apibank_mftr_with_minilm_reaches_the_paper_with_every_ablation(
    client: Any, base_settings: Any, embedder: Any, datasets: Path
) -> None:
    result = run_mftr_eval(
        client, base_settings, [datasets / "toolret" / "apibank"], retriever="minilm", embedder=embedder,
        inputs=_inputs(datasets, "apibank", standardized=True),
    )

    rows = {row.name: row for row in result.ablations}
    assert len(rows) == 10
    assert rows["MFTR"].metrics["ndcg@10"] >= 0.7237
    assert rows["Full-Doc"].metrics["ndcg@10"] == pytest.approx(0.6112, abs=0.02)


@pytest.mark.slow
def test_toolink_mftr_with_rule_based_documents(client: Any, base_settings: Any, embedder: Any, datasets: Path) -> None:
    result = run_mftr_eval(
        client, base_settings, [datasets / "toolret" / "toolink"], retriever="bm25", embedder=embedder,
        inputs=_inputs(datasets, "toolink", standardized=False), ablations=False, extensions=True,
    )

    rows = {row.name: row.metrics["ndcg@10"] for row in result.ablations}
    assert result.n_queries == 497
    # Without LLM-standardised documents MFTR stays short of the paper's 0.5497 (0.4397 measured) …
    assert rows["MFTR"] > rows["Full-Doc"] + 0.04
    # … and the task instruction, with the first-stage rank, passes it without any LLM (0.6218 measured).
    assert rows["Weighting Only + instruction + rank"] >= 0.5497
