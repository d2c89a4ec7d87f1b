"""``toolsift bench embedder``: the before/after table, and the MCP server measured with the model under test."""

from __future__ import annotations

from toolsift.config import Settings
from toolsift.encoders.encoder_eval import EMBEDDER_ROWS, TRAINING_OVERLAP, embedder_table
from toolsift.evaluation.request_eval import _toolsift_mcp_env


def _model(identity: str, ndcg: float, recall: float) -> dict:
    return {"identity": identity, "rows": [
        {"row": "full-doc minilm", "benchmark": "toolret/apibank", "metrics": {"ndcg@10": ndcg, "recall@5": recall}},
    ]}


def test_the_table_has_a_line_per_row_and_metric_with_each_candidate_s_change_to_the_baseline() -> None:
    header, lines = embedder_table({"models": [_model("all-MiniLM-L6-v2", 0.6, 0.7), _model("te@abc", 0.65, 0.68)]})
    assert header == ["benchmark", "row", "metric", "all-MiniLM-L6-v2", "te@abc"]
    assert lines == [
        ["toolret/apibank", "full-doc minilm", "ndcg@10", "0.6000", "0.6500 (+0.0500)"],
        ["toolret/apibank", "full-doc minilm", "recall@5", "0.7000", "0.6800 (-0.0200)"],
    ]


def test_every_benchmark_measured_says_how_it_relates_to_the_training_data() -> None:
    assert {folder for folder, _, _ in EMBEDDER_ROWS} | {"livemcpbench"} <= set(TRAINING_OVERLAP)


def test_the_mcp_server_under_test_encodes_with_the_model_its_index_was_built_with(monkeypatch) -> None:
    monkeypatch.setenv("TOOLSIFT_EMBEDDING_MODEL", "something-else")
    settings = Settings(embedding_model="/models/tool-embed/v001", embedding_backend="onnx")
    env = _toolsift_mcp_env(settings, "toolsift-eval-x", "auto")  # type: ignore[arg-type]
    assert env["TOOLSIFT_EMBEDDING_MODEL"] == "/models/tool-embed/v001"
    assert env["TOOLSIFT_EMBEDDING_BACKEND"] == "onnx"
    assert env["TOOLSIFT_INDEX"] == "toolsift-eval-x"
