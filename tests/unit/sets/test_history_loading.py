"""Where PTR's history comes from: scene files first, else one bundle per distinct relevant set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsift.errors import CatalogError
from toolsift.sets.history_import import load_history


def beir_folder(root: Path, train: dict[str, list[str]]) -> Path:
    (root / "qrels").mkdir(parents=True)
    tools = sorted({t for docs in train.values() for t in docs})
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": t, "text": f"tool {t}"}) + "\n" for t in tools))
    (root / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": f"request {q}"}) + "\n" for q in train))
    rows = ["query-id\tcorpus-id\tscore", *(f"{q}\t{t}\t1" for q, docs in train.items() for t in docs)]
    (root / "qrels" / "train.tsv").write_text("\n".join(rows) + "\n")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n")
    return root


def test_without_scene_files_each_distinct_relevant_set_is_a_bundle(tmp_path: Path) -> None:
    folder = beir_folder(tmp_path / "b", {"q1": ["a", "b"], "q2": ["b", "a"], "q3": ["c"]})

    history = load_history(folder)

    assert sorted(b.tools for b in history.bundles.values()) == [("a", "b"), ("c",)]
    by_query = {q.query_id: history.bundles[q.bundle_id].tools for q in history.queries}
    assert by_query == {"q1": ("a", "b"), "q2": ("a", "b"), "q3": ("c",)}
    assert history.source.startswith("qrels/train.tsv")


def test_scene_files_give_the_bundles_and_their_ids(tmp_path: Path) -> None:
    folder = beir_folder(tmp_path / "b", {"q1": ["a", "b"], "q2": ["c"]})
    (folder / "scene_tool.txt").write_text("7\ta\n7\tb\n8\tc\n")
    (folder / "query_scene_train.txt").write_text("q1\t7\nq2\t8\n")

    history = load_history(folder)

    assert {b: bundle.tools for b, bundle in history.bundles.items()} == {"7": ("a", "b"), "8": ("c",)}
    assert [(q.query_id, q.text, q.bundle_id) for q in history.queries] == [("q1", "request q1", "7"), ("q2", "request q2", "8")]
    assert history.queries_of() == {"7": ["request q1"], "8": ["request q2"]}
    assert [q.query_id for q in history.without({"q1"}).queries] == ["q2"]


@pytest.mark.parametrize(("line", "message"), [
    ("q1\t99\n", "line 1: bundle '99' is not in scene_tool.txt"),
    ("q9\t7\n", "line 1: query 'q9' is not in queries.jsonl"),
    ("q1 7 extra\n", "line 1: expected two whitespace-separated ids"),
])
def test_a_bad_scene_line_is_named(tmp_path: Path, line: str, message: str) -> None:
    folder = beir_folder(tmp_path / "b", {"q1": ["a"]})
    (folder / "scene_tool.txt").write_text("7\ta\n")
    (folder / "query_scene_train.txt").write_text(line)

    with pytest.raises(CatalogError, match="query_scene_train.txt: " + message.replace("(", r"\(")):
        load_history(folder)


def test_a_bundle_is_seen_only_by_the_tenants_that_may_see_every_one_of_its_tools() -> None:
    from toolsift.sets.history_import import NO_TENANT, bundle_tenants

    tenants = {"a1": ("acme",), "a2": ("acme", "globex"), "g1": ("globex",)}
    assert bundle_tenants(["p1", "p2"], tenants) == ()  # public tools only: public
    assert bundle_tenants(["a1", "p1"], tenants) == ("acme",)
    assert bundle_tenants(["a1", "a2"], tenants) == ("acme",)
    assert bundle_tenants(["a1", "g1"], tenants) == (NO_TENANT,)  # no tenant sees it whole
