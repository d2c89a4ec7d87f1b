"""The meaning screen's trainer, end to end on a slice: it trains the adapter over the frozen lower
layers, calibrates its threshold on held-apart benign tools, and writes an adapter and description the
ingest screen loads, recording what it read (the full run is `python -m toolsift.screen.adapter_training`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsift.screen import adapter_training as screen_train
from toolsift.screen.adapter_training import Recipe, Row, load_sentences, threshold
from toolsift.screen.meaning import MeaningScreen, load_meaning_model


def test_the_threshold_flags_at_most_the_given_share_of_calibration_tools() -> None:
    scores = [i / 1000 for i in range(1000)]
    cut = threshold(scores, 0.01)
    assert sum(s >= cut for s in scores) <= 10


def test_a_trained_slice_is_an_adapter_the_screen_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        datasets: Path) -> None:
    rows = load_sentences()
    slice_ = ([r for r in rows if r.group == "T2" and r.label == 1][:40] + [r for r in rows if r.group == "T2" and r.label == 0][:40]
              + [r for r in rows if r.group == "TOOLS"][:40] + [r for r in rows if r.group == "N2"][:20])
    monkeypatch.setattr(screen_train, "load_sentences", lambda: slice_)
    calibration = [["Returns the weather for a city."], ["Adds two numbers and returns the sum."]]
    monkeypatch.setattr(screen_train, "calibration_tools", lambda tools, mcp=None: calibration)
    hints = [r for r in screen_train.load_hints() if r.label == 1][:10]
    monkeypatch.setattr(screen_train, "load_hints", lambda: hints)
    recipe = Recipe(epochs=1, tools_kept=40, tool_negatives=20, registry_negatives=10)

    result = screen_train.train(datasets / "train" / "tools.jsonl", tmp_path, recipe=recipe)

    described = load_meaning_model(tmp_path / "screen_model.json")
    assert described.threshold == result["threshold"] and described.agree == pytest.approx(0.2 * described.threshold, abs=1e-6)
    assert described.trained_on["counts"]["T2"] == {"positive": 40, "negative": 40}
    assert described.trained_on["counts"]["H"] == {"positive": 10, "negative": 0}
    assert described.trained_on["recipe"]["epochs"] == 1 and "injection_blind_set_4.json" in described.trained_on["held_out"]
    screen = MeaningScreen(described, adapter=tmp_path / "screen_adapter.safetensors", device="cpu")
    (score,) = screen.scores(["Returns the weather for a city."])
    assert 0.0 <= score < described.threshold + 1e-6  # a calibration tool's sentence is at or under the threshold
    json.loads((tmp_path / "screen_model.json").read_text())  # the description is plain JSON


def test_rows_are_labelled_sentences_of_known_groups() -> None:
    rows = load_sentences()
    assert {r.group for r in rows} >= {"A", "B", "C", "D", "T1", "T2", "T3", "T4", "S", "TR", "N2", "TOOLS"}
    assert all(isinstance(r, Row) and r.label in (0, 1) for r in rows[:1000])


def test_usage_hints_are_sentences_of_both_labels_split_as_the_screen_splits() -> None:
    from toolsift.screen.meaning import sentences

    rows = screen_train.load_hints()
    assert {r.group for r in rows} == {"H"} and {r.label for r in rows} == {0, 1}
    assert all(sentences(r.text) == [r.text] for r in rows[:200])


def test_an_mcp_catalog_is_learnt_from_by_one_quarter_of_its_servers_and_the_others_are_never_read(datasets: Path) -> None:
    from toolsift.screen.screen_bench import catalog_docs, server_quarter
    from toolsift.screen.screening import screened, tool_sentences

    catalog = datasets / "livemcpbench" / "tools.json"
    rows = screen_train.mcp_rows(catalog)
    docs = catalog_docs(catalog)
    by_quarter = {q: {s for d in docs if server_quarter(d) == q for s in tool_sentences(screened(d))} for q in range(4)}
    learnt = {r.text for r in rows}
    assert rows and all(r.label == 0 and r.group == "MCP" for r in rows)
    assert learnt == by_quarter[screen_train.MCP_TRAIN_QUARTER]
    assert {server_quarter(d) for d in docs} == {0, 1, 2, 3}  # every quarter holds servers
