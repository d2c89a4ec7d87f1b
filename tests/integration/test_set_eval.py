"""Tool sets on a real node: `toolsift eval --set`, `toolsift history load` and `toolsift search --set`, on a small
ToolLens slice in BEIR form (history from its train split) and on LiveMCPBench servers (cold start)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from click.testing import CliRunner

from toolsift.cli.main import cli
from toolsift.sets.set_eval import run_set_eval
from toolsift.mappings.index import IndexManager

pytestmark = pytest.mark.integration


SLICE_ALIAS = "toolsift-eval-toollens-slice"


@pytest.fixture(autouse=True)
def _drop_slice_index(client: Any) -> Any:
    yield
    IndexManager(client, SLICE_ALIAS).delete_all()
    client.indices.delete(index=f"{SLICE_ALIAS}-history-*", ignore_unavailable=True)


def run_cli(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=True)


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


def test_set_eval_scores_ptr_and_the_reference_rows_on_the_test_split(
    client: Any, base_settings: Any, embedder: Any, datasets: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "toollens-slice"
    _slice(datasets / "toollens", folder)

    result = run_set_eval(client, base_settings, folder, embedder=embedder)

    assert [r.name for r in result.rows] == [
        "nearest training query's set", "dense top-3", "dense top-|gold| (oracle size)", "hybrid top-3",
        "PTR cold start (hybrid + score-gap size)", "PTR bundle acquisition only",
        "PTR, coverage + multi-view forced on", "PTR (calibrated: acquisition + coverage + multi-view)",
    ]
    assert result.n_queries == 12
    by_name = {r.name: r.metrics for r in result.rows}
    assert by_name["dense top-3"]["set_size"] == 3.0
    assert by_name["dense top-|gold| (oracle size)"]["set_size_error"] == 0.0
    assert 1.0 <= by_name["PTR cold start (hybrid + score-gap size)"]["set_size"] <= 3.0
    assert all(0.0 <= r.metrics["tracc"] <= 1.0 for r in result.rows)
    history = result.protocol["history"]
    assert history["source"].startswith("qrels/train.tsv")  # the slice has no scene files
    assert history["past_queries"] == 60 and history["calibration"]["held_out_queries"] == 6
    assert result.to_dict()["method"] == "set"
    assert [r.name for r in result.rows if r.main] == ["PTR (calibrated: acquisition + coverage + multi-view)"]


def test_without_history_nothing_of_the_train_split_is_used(
    client: Any, base_settings: Any, embedder: Any, datasets: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "toollens-slice"
    _slice(datasets / "toollens", folder)
    (folder / "qrels" / "train.tsv").unlink()

    result = run_set_eval(client, base_settings, folder, embedder=embedder, no_history=True)

    assert all(not r.uses_history for r in result.rows)
    assert "history" not in result.protocol
    assert [r.name for r in result.rows if r.main] == ["PTR cold start (hybrid + score-gap size)"]


def _scene_slice(folder: Path) -> dict[str, list[str]]:
    """Scene files for the slice: each distinct training set is a scene; returns scene → tools."""
    train = {}
    for line in (folder / "qrels" / "train.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, doc, _ = line.split("\t")
        train.setdefault(qid, []).append(doc)
    scenes: dict[tuple[str, ...], str] = {}
    for docs in train.values():
        scenes.setdefault(tuple(sorted(docs)), f"s{len(scenes)}")
    (folder / "scene_tool.txt").write_text("".join(f"{s}\t{t}\n" for docs, s in scenes.items() for t in docs))
    (folder / "query_scene_train.txt").write_text("".join(f"{q}\t{scenes[tuple(sorted(d))]}\n" for q, d in train.items()))
    return {s: list(docs) for docs, s in scenes.items()}


def test_history_load_then_search_set_starts_from_the_bundle_and_explains_each_tool(
    client: Any, base_settings: Any, embedder: Any, datasets: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "toollens-slice"
    _slice(datasets / "toollens", folder)
    scenes = _scene_slice(folder)
    run_set_eval(client, base_settings, folder, embedder=embedder, no_history=True)  # builds the catalog index
    url = ("--opensearch-url", base_settings.opensearch_url)

    loaded = run_cli(*url, "history", "load", str(folder), "--index", SLICE_ALIAS, "--json", "-q")
    assert loaded.exit_code == 0, loaded.output
    summary = json.loads(loaded.stdout)
    assert summary["source"] == "scene_tool.txt + query_scene_train.txt"
    assert summary["bundles"] == len(scenes) and summary["past_queries"] == 60

    first = next(json.loads(line) for line in (folder / "queries.jsonl").read_text().splitlines())
    scene = dict(line.split("\t") for line in (folder / "query_scene_train.txt").read_text().splitlines())
    answer = run_cli(*url, "search", first["text"], "--set", "--index", SLICE_ALIAS, "--json", "--no-rewrite")
    assert answer.exit_code == 0, answer.output
    chosen = json.loads(answer.stdout)
    if first["_id"] in scene:  # a past query finds its own bundle
        assert chosen["bundle"] == scene[first["_id"]]
    assert chosen["history"] is True and chosen["tools"]
    for tool in chosen["tools"]:
        assert tool["need"] in chosen["needs"]
        assert tool["reason"] in ("kept", "added") and tool["why"]

    shown = run_cli(*url, "search", first["text"], "--set", "--index", SLICE_ALIAS, "--no-rewrite")
    assert shown.exit_code == 0, shown.output
    assert "history bundle" in shown.output and "need covered" in shown.output


def test_a_failed_history_load_names_the_line_and_keeps_the_old_history(
    client: Any, base_settings: Any, embedder: Any, datasets: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "toollens-slice"
    _slice(datasets / "toollens", folder)
    _scene_slice(folder)
    run_set_eval(client, base_settings, folder, embedder=embedder, no_history=True)
    url = ("--opensearch-url", base_settings.opensearch_url)
    assert run_cli(*url, "history", "load", str(folder), "--index", SLICE_ALIAS, "-q").exit_code == 0
    before = set(client.indices.get_alias(name=f"{SLICE_ALIAS}-history"))

    with (folder / "query_scene_train.txt").open("a") as out:
        out.write("99999999\tno-such-scene\n")
    failed = run_cli(*url, "history", "load", str(folder), "--index", SLICE_ALIAS, "-q")

    assert failed.exit_code != 0
    assert "query_scene_train.txt: line 61" in failed.output and "no-such-scene" in failed.output
    assert set(client.indices.get_alias(name=f"{SLICE_ALIAS}-history")) == before


def test_search_set_without_history_is_a_cold_start_on_livemcpbench(
    client: Any, base_settings: Any, embedder: Any, datasets: Path, tmp_path: Path
) -> None:
    from toolsift.ingest.pipeline import ingest_catalog

    servers = json.loads((datasets / "livemcpbench" / "tools.json").read_text(encoding="utf-8"))
    catalog = tmp_path / "tools.json"
    catalog.write_text(json.dumps(servers[:8], ensure_ascii=False), encoding="utf-8")
    alias = "toolsift-test-sets-mcp"
    IndexManager(client, alias).delete_all()
    try:
        assert ingest_catalog(client, base_settings.with_overrides(index=alias), embedder, catalog).ok
        answer = run_cli("--opensearch-url", base_settings.opensearch_url, "search",
                         "Read the PDF report and then convert it to a Word document", "--set", "--index", alias, "--json")
        assert answer.exit_code == 0, answer.output
        chosen = json.loads(answer.stdout)
        assert chosen["history"] is False and chosen["bundle"] is None
        assert chosen["needs"] == ["Read the PDF report", "convert it to a Word document"]
        assert 1 <= len(chosen["tools"]) <= chosen["ptr"]["max_size"]
        assert {t["reason"] for t in chosen["tools"]} <= {"retrieved", "added"}
        assert "cold start" in chosen["size_rule"]
    finally:
        IndexManager(client, alias).delete_all()
