"""Tool-Rank and the cross-encoder: prompts, P(true), batching, training, artifacts (tiny models)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from toolsift.errors import ConfigError
from toolsift.ranker.reranker_artifact import load_reranker, save_reranker
from toolsift.ranker.reranker_training import (
    RerankerTrainingConfig,
    RerankPair,
    train_cross_encoder,
    train_tool_rank,
)
from toolsift.ranker.rerankers import TOOL_RANK_SYSTEM, CrossEncoderReranker, ToolRankReranker

PAIRS = [
    RerankPair("today date", "name today description date", 1),
    RerankPair("today date", "name alarm description alarm", 0),
    RerankPair("weather today", "name weather description weather today", 1),
    RerankPair("weather today", "name date description date", 0),
] * 4


def test_the_prompt_is_tool_des_judging_template() -> None:
    assert TOOL_RANK_SYSTEM.startswith("Judge whether the Tool Document meets the requirements based on the Query")
    assert '"true" or "false"' in TOOL_RANK_SYSTEM


def test_tool_rank_scores_p_true_from_the_two_answer_logits(tiny_causal_lm: Path) -> None:
    reranker = ToolRankReranker.load(tiny_causal_lm, device="cpu", max_length=64, batch_size=2)
    pairs = [(p.query, p.document) for p in PAIRS[:4]]
    encoded = reranker.encode(pairs[:1])
    with torch.no_grad():
        logits = reranker.model(input_ids=encoded.input_ids).logits[0, -1]
    expected = torch.softmax(torch.stack([logits[reranker.false_id], logits[reranker.true_id]]), 0)[1]
    scores = reranker.score_pairs(pairs)
    assert scores[0] == pytest.approx(float(expected), abs=1e-5)
    assert all(0.0 < s < 1.0 for s in scores)
    # left padding: a pair scores the same alone and in a batch with longer ones
    assert reranker.score_pairs(pairs[1:2])[0] == pytest.approx(scores[1], abs=1e-5)


def test_tool_rank_cuts_the_document_to_the_token_budget(tiny_causal_lm: Path) -> None:
    reranker = ToolRankReranker.load(tiny_causal_lm, device="cpu", max_length=48)
    encoded = reranker.encode([("today", "date " * 500)])
    assert encoded.input_ids.shape[1] == 48
    assert encoded.input_ids[0, -1].item() == reranker._suffix[-1]  # the answer position ends the prompt


def test_a_tokenizer_without_single_true_false_tokens_is_refused(tiny_causal_lm: Path) -> None:
    from transformers import AutoTokenizer

    model = ToolRankReranker.load(tiny_causal_lm, device="cpu").model
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_causal_lm))
    with pytest.raises(ConfigError, match="true"):
        ToolRankReranker(model, _SplittingTokenizer(tokenizer))


class _SplittingTokenizer:
    """Wraps a tokenizer so that ``true`` becomes two tokens."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.pad_token_id = 0
        self.eos_token_id = 2

    def __call__(self, text: str, add_special_tokens: bool = False) -> object:
        result = self.inner(text, add_special_tokens=add_special_tokens)  # type: ignore[operator]
        if text == "true":
            result["input_ids"] = [3, 4]
        return result


def _train_and_check_it_learns(train: Any, base_model: Path, config: RerankerTrainingConfig) -> tuple[Any, list[float]]:
    """``train(base_model, PAIRS, config)``: its loss falls, and each relevant pair of the first four scores above
    the irrelevant one after it. The outcome, and those four scores."""
    outcome = train(base_model, PAIRS, config)
    assert outcome.epoch_losses[-1] < outcome.epoch_losses[0]
    scores = outcome.reranker.score_pairs([(p.query, p.document) for p in PAIRS[:4]])
    assert scores[0] > scores[1] and scores[2] > scores[3]
    return outcome, scores


def test_lora_training_moves_p_true_towards_the_labels_and_round_trips(tiny_causal_lm: Path, tmp_path: Path) -> None:
    config = RerankerTrainingConfig(kind="tool-rank", epochs=8, learning_rate=5e-3, batch_size=4, max_length=64,
                                    device="cpu")
    outcome, scores = _train_and_check_it_learns(train_tool_rank, tiny_causal_lm, config)
    artifact = save_reranker(outcome, tmp_path, "tiny", base_model=tiny_causal_lm, gguf_file=None, fusion_weight=0.3,
                             rerank_top=10, config=config.to_dict())
    assert (tmp_path / "tiny" / "v001" / "adapter").is_dir()
    loaded = load_reranker(str(tmp_path / "tiny"), device="cpu")
    assert loaded.fusion_weight == 0.3 and loaded.rerank_top == 10 and loaded.artifact == artifact
    again = loaded.reranker.score_pairs([(p.query, p.document) for p in PAIRS[:4]])
    assert again == pytest.approx(scores, abs=1e-4)  # the adapter, merged into the base weights


def test_cross_encoder_training_separates_the_labels_and_round_trips(seeded_cross_encoder: Path, tmp_path: Path) -> None:
    config = RerankerTrainingConfig(kind="cross-encoder", epochs=10, learning_rate=2e-3, batch_size=4, max_length=32,
                                    device="cpu")
    outcome, scores = _train_and_check_it_learns(train_cross_encoder, seeded_cross_encoder, config)
    assert all(0.0 <= s <= 1.0 for s in scores)
    save_reranker(outcome, tmp_path, "ce", base_model=seeded_cross_encoder, gguf_file=None, fusion_weight=0.5,
                  rerank_top=20, config=config.to_dict())
    loaded = load_reranker(str(tmp_path / "ce" / "v001" / "reranker.json"), device="cpu")
    assert isinstance(loaded.reranker, CrossEncoderReranker)
    assert loaded.reranker.score_pairs([(p.query, p.document) for p in PAIRS[:4]]) == pytest.approx(scores, abs=1e-5)


@pytest.fixture(scope="module")
def headless_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny BERT encoder without a classification head (as the bundled MiniLM is): training adds one."""
    import shutil

    from transformers import BertConfig, BertModel

    from toolsift.ranker.rerankers import bundled_minilm_path

    folder = tmp_path_factory.mktemp("headless-encoder")
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64)).save_pretrained(str(folder))
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(bundled_minilm_path() / name, folder / name)
    return folder


@pytest.mark.parametrize("kind", ["cross-encoder", "tool-rank"])
def test_training_is_reproducible_whatever_ran_before_it(kind: str, headless_encoder: Path,
                                                          tiny_causal_lm: Path) -> None:
    """The new head (cross-encoder) and LoRA's matrices (Tool-Rank) start from the configured seed,
    not from whatever state earlier work left torch's global RNG in: published figures depend on it."""
    config = RerankerTrainingConfig(kind=kind, epochs=2, learning_rate=2e-3, batch_size=4, max_length=32,
                                    device="cpu")
    train = train_cross_encoder if kind == "cross-encoder" else train_tool_rank
    base = headless_encoder if kind == "cross-encoder" else tiny_causal_lm
    scores = []
    for earlier_work in (1, 2):
        torch.manual_seed(earlier_work)
        torch.rand(1000)
        outcome = train(base, PAIRS, config)
        scores.append(outcome.reranker.score_pairs([(p.query, p.document) for p in PAIRS[:4]]))
    assert scores[0] == scores[1]


def test_training_needs_both_labels(seeded_cross_encoder: Path) -> None:
    with pytest.raises(ConfigError, match="both relevant and irrelevant"):
        train_cross_encoder(seeded_cross_encoder, [p for p in PAIRS if p.label], RerankerTrainingConfig(device="cpu"))


@pytest.mark.parametrize("spec, message", [
    ("cross-encoder:/nonexistent/model", "not a local transformers model folder"),
    ("tool-rank:/nonexistent/model", "no causal LM"),
    ("/nonexistent/artifact", "reranker"),
])
def test_a_bad_reranker_setting_names_the_problem(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_reranker(spec, device="cpu")


def test_cuda_is_refused_without_a_gpu(seeded_cross_encoder: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("not applicable here: a GPU is present")  # not a missing prerequisite
    with pytest.raises(ConfigError, match="reranker_device"):
        CrossEncoderReranker(seeded_cross_encoder, device="cuda")
