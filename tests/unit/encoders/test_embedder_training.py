"""Tool-Embed training: the contrastive loss, the batches, the pairs a folder gives, and the artifact.

Quality is a benchmark figure (``toolsift bench embedder``); these pin the behaviour: what counts as a
negative, that a request never meets itself in a batch, that a bad training file is refused naming its
line, and that a trained model is a model folder every backend loads under its own identity.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from toolsift.encoders.embedding import Embedder, model_identity, model_path
from toolsift.errors import ConfigError
from toolsift.encoders.encoder_artifact import read_embedder, save_embedder, ship_embedder
from toolsift.encoders.encoder_pairs import load_training_pairs
from toolsift.encoders.encoder_training import (
    EmbedderTrainingConfig,
    EmbedExample,
    _batches,
    batch_mask,
    infonce_loss,
    train_embedder,
)

TOOLS = [
    {"id": "t/weather", "name": "get_weather", "description": "Current weather for a city",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
    {"id": "t/forecast", "name": "get_forecast", "description": "Seven-day weather forecast for a city"},
    {"id": "t/convert", "name": "convert_pdf", "description": "Convert a Word document to PDF"},
    {"id": "t/translate", "name": "translate", "description": "Translate text between languages"},
    {"id": "t/stock", "name": "stock_price", "description": "Latest price of a stock ticker", "response": None},
]
PAIRS = [
    {"query_id": "q1", "query": "is it raining in Paris", "tool_id": "t/weather", "hard_negative_ids": ["t/forecast"]},
    {"query_id": "q2", "query": "turn my report.docx into a pdf", "tool_id": "t/convert", "hard_negative_ids": []},
    {"query_id": "q3", "query": "say hello in German", "tool_id": "t/translate", "hard_negative_ids": []},
    {"query_id": "q4", "query": "weather now and this week in Rome", "tool_id": "t/weather", "hard_negative_ids": []},
    {"query_id": "q4", "query": "weather now and this week in Rome", "tool_id": "t/forecast", "hard_negative_ids": []},
    {"query_id": "q5", "query": "how is AAPL trading", "tool_id": "t/stock", "hard_negative_ids": []},
]


def _write(folder: Path, tools: list[dict] = TOOLS, pairs: list[dict] = PAIRS, splits: dict | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tools.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tools), encoding="utf-8")
    (folder / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8")
    if splits is not None:
        (folder / "splits.json").write_text(json.dumps(splits), encoding="utf-8")
    return folder


def _example(query: str, tool: str, negative: str, gold: set[str]) -> EmbedExample:
    return EmbedExample(query, f"text of {tool}", tool, f"text of {negative}", negative, frozenset(gold))


def test_infonce_prefers_the_own_tool_and_ignores_masked_columns() -> None:
    q = torch.eye(3, 4)
    docs = torch.cat([torch.eye(3, 4), torch.tensor([[1.0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 1]])])
    none = torch.zeros(3, 6, dtype=torch.bool)
    # row 0's negative (column 3) is a copy of its own tool: a real negative that costs loss ...
    unmasked = infonce_loss(q, docs, none, 20.0)
    # ... unless it is gold for that request, when it is not a negative at all
    mask = none.clone()
    mask[0, 3] = True
    masked = infonce_loss(q, docs, mask, 20.0)
    assert masked < unmasked
    assert float(masked) < 1e-3  # every remaining negative is orthogonal to its request
    # the positive column is never dropped, even when marked
    assert torch.isfinite(infonce_loss(q, docs, torch.ones(3, 6, dtype=torch.bool), 20.0))


def test_a_batch_column_is_masked_exactly_when_it_is_gold_for_the_row() -> None:
    batch = [_example("a", "t1", "t2", {"t1", "t2"}), _example("b", "t2", "t3", {"t2"})]
    # columns: t1, t2 (positives), t2, t3 (negatives)
    assert batch_mask(batch).tolist() == [[True, True, True, False], [False, True, True, False]]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=60), st.integers(1, 9), st.integers(0, 1000))
def test_batches_hold_every_example_once_and_never_one_request_twice(queries: list[int], size: int, seed: int) -> None:
    import random

    examples = [_example(f"q{q}", f"t{i}", "n", {f"t{i}"}) for i, q in enumerate(queries)]
    batches = _batches(examples, size, random.Random(seed))
    assert sorted(e.tool_id for b in batches for e in b) == sorted(e.tool_id for e in examples)
    for b in batches:
        assert 1 <= len(b) <= size
        assert len({e.query for e in b}) == len(b)


def test_a_training_folder_gives_served_texts_and_negatives_that_are_never_gold(tmp_path: Path) -> None:
    pairs = load_training_pairs(_write(tmp_path / "d", splits={"train": ["q1", "q2", "q3", "q4"], "dev": ["q5"]}))
    examples = pairs.examples("train", seed=1)
    assert [e.query for e in examples].count("weather now and this week in Rome") == 2
    assert all(e.negative_id not in e.gold for e in examples)
    assert {e.tool_id for e in examples} == {"t/weather", "t/convert", "t/translate", "t/forecast"}
    weather = next(e for e in examples if e.query == "is it raining in Paris")
    assert weather.negative_id == "t/forecast"  # the pair's hard negative, when it has one
    assert weather.positive in ('{"name": "get_weather", "description": "Current weather for a city", "parameters": '
                                '{"type": "object", "properties": {"city": {"type": "string"}}}}',
                                "Current weather for a city")
    assert pairs.queries("dev") == ["q5"]
    assert pairs.sha256 == load_training_pairs(tmp_path / "d").sha256
    with pytest.raises(ConfigError, match="no split 'test'"):
        pairs.examples("test")


@pytest.mark.parametrize(
    ("tools", "pairs", "message"),
    [
        (TOOLS, [*PAIRS, {"query_id": "q9", "query": "x", "tool_id": "t/missing"}],
         "pairs.jsonl line 7: tool 't/missing' is not in tools.jsonl"),
        (TOOLS, [{**PAIRS[0], "hard_negative_ids": ["t/nope"]}], "pairs.jsonl line 1: hard negative 't/nope'"),
        (TOOLS, [{**PAIRS[0], "query": ""}], "pairs.jsonl line 1: field 'query' must be a non-empty string"),
        ([*TOOLS, TOOLS[0]], PAIRS, "tools.jsonl line 6: tool id 't/weather' appears twice"),
        ([{"id": "t/empty"}], PAIRS, "tools.jsonl line 1: .*no text"),
    ],
)
def test_a_bad_training_file_is_refused_naming_its_line(tmp_path: Path, tools: list[dict], pairs: list[dict],
                                                        message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_training_pairs(_write(tmp_path / "d", tools, pairs))


def test_a_line_that_is_not_json_is_named(tmp_path: Path) -> None:
    folder = _write(tmp_path / "d")
    with (folder / "pairs.jsonl").open("a", encoding="utf-8") as f:
        f.write("{not json\n")
    with pytest.raises(ConfigError, match="pairs.jsonl line 7: not JSON"):
        load_training_pairs(folder)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = _write(tmp_path_factory.mktemp("pairs") / "d")
    pairs = load_training_pairs(folder)
    outcome = train_embedder(model_path("all-MiniLM-L6-v2"), pairs.examples(None),
                             EmbedderTrainingConfig(batch_size=3, max_length=32, device="cpu"))
    assert outcome.steps == 2 and len(outcome.epoch_losses) == 1  # q4's two tools in two batches of three
    root = tmp_path_factory.mktemp("embedders")
    saved = save_embedder(outcome, root, "tiny", base_model="all-MiniLM-L6-v2",
                          training={"sha256": pairs.sha256}, config={})
    assert saved.path is not None
    return root / "tiny"


def test_a_trained_model_is_a_versioned_folder_named_by_its_weights(trained: Path) -> None:
    record = read_embedder(trained / "v001")
    assert record is not None and record.identity == f"tiny@{record.weights_sha256[:12]}"
    assert model_path(str(trained)) == trained / "v001"  # a name folder means its newest version
    assert model_identity(trained / "v001", "whatever") == record.identity
    assert model_identity(model_path("all-MiniLM-L6-v2"), "all-MiniLM-L6-v2") == "all-MiniLM-L6-v2"


def test_a_trained_model_serves_at_the_base_model_s_length_on_both_backends(trained: Path, tmp_path: Path) -> None:
    texts = ["convert a word file to pdf " * 60, "weather in Paris"]
    on_torch = Embedder(str(trained), device="cpu", backend="torch")
    on_onnx = Embedder(str(trained), device="cpu", backend="onnx", cache_dir=tmp_path)
    base = Embedder("all-MiniLM-L6-v2", device="cpu", backend="torch")
    assert on_torch.name == on_onnx.name == read_embedder(trained / "v001").identity  # type: ignore[union-attr]
    assert on_torch._model is not None and on_torch._model.max_seq_length == 256  # not training's 32
    a, b = on_torch.encode_document(texts), on_onnx.encode_document(texts)
    assert np.min(np.sum(a * b, axis=1)) > 0.9999
    assert not np.allclose(a, base.encode_document(texts), atol=1e-4)  # it did learn something


@pytest.fixture(scope="module")
def lora_trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = _write(tmp_path_factory.mktemp("pairs") / "d")
    outcome = train_embedder(model_path("all-MiniLM-L6-v2"), load_training_pairs(folder).examples(None),
                             EmbedderTrainingConfig(batch_size=3, max_length=32, device="cpu", lora_rank=4))
    saved = save_embedder(outcome, tmp_path_factory.mktemp("embedders"), "tiny-lora", base_model="all-MiniLM-L6-v2",
                          training={}, config={})
    assert saved.path is not None
    return saved.path.parent


def test_a_lora_adapter_ships_small_and_merges_into_the_bundled_model_as_the_same_weights(
        lora_trained: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolsift.encoders import shipped as shipped_embedders

    record = read_embedder(lora_trained)
    assert record is not None and record.outcome["adapter_sha256"]
    assert (lora_trained / "adapter" / "adapter_model.safetensors").stat().st_size < 1_000_000
    monkeypatch.setattr(shipped_embedders, "SHIPPED_DIR", tmp_path / "models")
    ship_embedder(lora_trained, tmp_path / "models")
    merged = model_path("tiny-lora", tmp_path / "cache")
    assert merged.parent == tmp_path / "cache" / "embedders"
    # the merge at first use reproduces the trained weights bit for bit, so the identity is true
    assert shipped_embedders.weights_sha256(merged) == record.weights_sha256
    shipped = Embedder("tiny-lora", device="cpu", backend="torch", cache_dir=tmp_path / "cache")
    assert shipped.name == record.identity
    assert model_path("tiny-lora", tmp_path / "cache") == merged  # merged once, then reused


def test_a_shipped_adapter_that_is_not_the_pinned_one_is_refused(
        lora_trained: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolsift.encoders import shipped as shipped_embedders

    monkeypatch.setattr(shipped_embedders, "SHIPPED_DIR", tmp_path / "models")
    target = ship_embedder(lora_trained, tmp_path / "models", name="tampered")
    with (target / "adapter_model.safetensors").open("r+b") as f:
        f.seek(-4, 2)
        f.write(b"\x00\x00\x80\x7f")
    with pytest.raises(ConfigError, match="embedding_model='tampered': the shipped adapter's SHA-256"):
        model_path("tampered", tmp_path / "cache")


def test_train_embedder_writes_a_version_and_ships_only_an_adapter(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from toolsift.cli.main import cli

    pairs = _write(tmp_path / "pairs")
    runner = CliRunner()
    refused = runner.invoke(cli, ["train", "embedder", str(pairs), "--ship", str(tmp_path / "ship")])
    assert refused.exit_code == 2 and "--ship needs --lora-rank" in refused.output
    done = runner.invoke(cli, ["train", "embedder", str(pairs), "--split", "all", "--batch-size", "4", "--lora-rank", "2",
                               "--max-length", "32", "--device", "cpu", "--name", "mini", "--out", str(tmp_path / "out"),
                               "--ship", str(tmp_path / "ship"), "--quiet", "--json"])
    assert done.exit_code == 0, done.output
    record = json.loads(done.output)
    assert record["identity"].startswith("mini@") and record["training"]["pairs"] == len(PAIRS)
    assert sorted(p.name for p in (tmp_path / "ship" / "mini").iterdir()) == [
        "adapter_config.json", "adapter_model.safetensors", "toolsift-embedder.json"]
