"""`toolsift eval --set` on a real node: a small ToolLens slice in BEIR form, history from its train split."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolsift.evaluation.sets import run_set_eval
from toolsift.mappings.index import IndexManager

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _drop_slice_index(client: Any) -> Any:
    yield
    IndexManager(client, "toolsift-eval-toollens-slice").delete_all()


def _slice(source: Path, target: Path, n_test: int = 12, n_train: int = 60) -> None:
    def qrels(split: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for line in (source / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()[1:]:
            qid, doc, _ = line.split("\t")
            out.setdefault(qid, []).append(doc)
        return out

    test = dict(list(qrels("test").items())[:n_test])
    train = dict(list(qrels("train").items())[:n_train])
    wanted_tools = {d for docs in [*test.values(), *train.values()] for d in docs}
    wanted_queries = set(test) | set(train)
    (target / "qrels").mkdir(parents=True)
    with (target / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for line in (source / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
            if json.loads(line)["_id"] in wanted_tools:
                out.write(line + "\n")
    with (target / "queries.jsonl").open("w", encoding="utf-8") as out:
        for line in (source / "queries.jsonl").read_text(encoding="utf-8").splitlines():
            if json.loads(line)["_id"] in wanted_queries:
                out.write(line + "\n")
    for split, rows in (("test", test), ("train", train)):
        lines = ["query-id\tcorpus-id\tscore", *(f"{q}\t{d}\t1" for q, docs in rows.items() for d in docs)]
        (target / "qrels" / f"{split}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_set_eval_scores_the_reference_rows_on_the_test_split(
    client: Any, base_settings: Any, embedder: Any, datasets: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "toollens-slice"
    _slice(datasets / "toollens", folder)

    result = run_set_eval(client, base_settings, folder, embedder=embedder)

    names = [r.name for r in result.rows]
    assert names == ["nearest training query's set", "dense top-3", "dense top-|gold| (oracle size)"]
    assert result.n_queries == 12
    by_name = {r.name: r.metrics for r in result.rows}
    assert by_name["dense top-3"]["set_size"] == 3.0
    assert by_name["dense top-|gold| (oracle size)"]["set_size_error"] == 0.0
    assert all(0.0 <= r.metrics["tracc"] <= 1.0 for r in result.rows)
    assert result.to_dict()["method"] == "set"


def test_without_history_the_history_row_is_left_out(
    client: Any, base_settings: Any, embedder: Any, datasets: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "toollens-slice"
    _slice(datasets / "toollens", folder)

    result = run_set_eval(client, base_settings, folder, embedder=embedder, no_history=True)

    assert [r.uses_history for r in result.rows] == [False, False]
