"""A generated scale catalog in a real index: every tool and server lands as a tool or an agent of the
join field, and the needle queries find their tools among the distractors with the evaluation code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolsift.evaluation.metrics import evaluate
from toolsift.evaluation.runner import ranked_run
from toolsift.bench.scale_catalog import generate_catalog
from toolsift.ingest.pipeline import ingest_catalog
from toolsift.mappings.model import F
from toolsift.search import Searcher

pytestmark = pytest.mark.integration


def test_a_generated_catalog_ingests_and_its_needle_queries_find_their_tools(
    client: Any, settings: Any, model: Any, datasets: Path, tmp_path: Path
) -> None:
    scale = generate_catalog(tmp_path, tools=30, needles="toolink", queries=3, seed=0, datasets=datasets)
    benchmark = scale.benchmark()

    report = ingest_catalog(client, settings, model, scale.catalog_path, fmt="mcp", approvals=False)

    assert report.ok and (report.tools, report.agents) == (30, scale.servers)
    client.indices.refresh(index=settings.index)
    relevant = sorted({t for grades in benchmark.qrels.values() for t in grades})
    found = client.mget(index=settings.index, body={"ids": relevant}, _source=[F.relation])["docs"]
    assert all(doc["found"] for doc in found)
    # each needle is the child of its server's agent document (the join field)
    assert all(doc["_source"][F.relation]["name"] == "tool" and doc["_source"][F.relation]["parent"].startswith("agent:")
               for doc in found)

    searcher = Searcher(client, settings, model)
    run = {qid: ranked_run((t.doc_id for t in searcher.search(text, top_k=10).tools), 10)
           for qid, text in benchmark.queries.items()}
    assert evaluate(benchmark.qrels, run, ["recall@10"])["recall@10"] >= 0.5
    # a needle query whose first answer is its own tool, though a near-duplicate of it may be there too
    assert any(next(iter(run[qid]), None) in grades for qid, grades in benchmark.qrels.items())
