"""A tiny causal LM built from a config (random weights, no download) to exercise the reranker code paths.

Quality figures come from real weights only (``toolsift eval --reranker``); these only prove the
plumbing: prompts, token ids, batching, training steps, saving and loading. The tiny cross-encoder
is ``seeded_cross_encoder`` in ``tests/conftest.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

_WORDS = ["true", "false", "<|im_start|>", "<|im_end|>", "system", "user", "assistant", "<think>", "</think>",
          "judge", "query", "tool", "document", "date", "today", "alarm", "weather", "name", "description"]


@pytest.fixture(scope="session")
def tiny_causal_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer Llama with a word-level tokenizer in which ``true`` and ``false`` are single tokens."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-lm")
    vocab = {w: i for i, w in enumerate(["<pad>", "<unk>", "<eos>", *_WORDS])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", unk_token="<unk>", eos_token="<eos>")
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
                         pad_token_id=0, eos_token_id=2, bos_token_id=2)
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder
