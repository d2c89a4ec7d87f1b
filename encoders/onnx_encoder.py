"""The sentence encoder on ONNX Runtime: the same model, exported here from its local weights.

:class:`toolsift.encoders.embedding.Embedder` runs its model on one of three backends (``embedding_backend``):

* ``torch`` — sentence-transformers on PyTorch (CUDA when present);
* ``onnx`` — the model's transformer exported to ONNX from the local weights (``torch.onnx``),
  its graph fused for BERT by ONNX Runtime's transformer optimizer, run by ONNX Runtime on the CPU.
  Same arithmetic in float32: its embeddings equal torch's to within float rounding (a test holds
  cosine ≥ 0.9999 on a benchmark catalog's texts);
* ``onnx-int8`` — that graph with its MatMul weights quantised to int8 per output channel (ONNX
  Runtime's dynamic quantisation; activations are quantised per batch at run time). Embeddings
  move a little (cosine ~0.994 to torch's on a catalog's texts), so an index records the backend
  with the model name and refuses queries encoded by another.

Nothing is downloaded: the export reads the model folder (the bundled all-MiniLM-L6-v2 or a local
sentence-transformers directory) and writes ``<cache_dir>/onnx/<key>/model.onnx``, where the key
hashes the weights, the tokenizer, the backend and the versions of torch and ONNX Runtime, so
another model or library version exports again. Writing is atomic (a temporary folder renamed into
place): two processes exporting at once both succeed and one export wins.

Tokenisation is the model's own ``tokenizer.json`` (Hugging Face ``tokenizers``), truncated to the
model's ``max_seq_length``; texts are sorted by length and batched so each batch pads to little more
than its own longest text. Pooling (mean or CLS) and L2 normalisation follow the model's
sentence-transformers modules; a model with other modules (a dense layer, max pooling) is refused
with the setting named, and runs on ``torch``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toolsift.errors import ConfigError

__all__ = ["BACKENDS", "OnnxEncoder", "export_onnx", "padded_batches"]

#: The values of ``embedding_backend`` (``auto`` resolves to one of the others).
BACKENDS = ("auto", "torch", "onnx", "onnx-int8")
#: Bumped when the export below changes, so earlier exports are not reused.
_EXPORT_VERSION = "1"
_POOLING_MODES = ("pooling_mode_cls_token", "pooling_mode_mean_tokens", "pooling_mode_max_tokens",
                  "pooling_mode_mean_sqrt_len_tokens")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"embedding model file {path} cannot be read: {exc}") from exc


def _layout(model_dir: Path) -> tuple[str, bool, int]:
    """(pooling ``"mean"``/``"cls"``, normalise, max_seq_length) of a sentence-transformers folder."""
    modules = _read_json(model_dir / "modules.json") if (model_dir / "modules.json").exists() else []
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    normalise = "Normalize" in kinds
    if any(k not in ("Transformer", "Pooling", "Normalize") for k in kinds):
        raise ConfigError(
            f"embedding_backend='onnx' runs models made of Transformer, Pooling and Normalize modules; "
            f"{model_dir} has {kinds} (use embedding_backend='torch')"
        )
    pooling = "mean"
    pooling_module = next((m for m in modules if str(m.get("type", "")).endswith("Pooling")), None)
    if pooling_module is not None:
        config = _read_json(model_dir / str(pooling_module.get("path", "")) / "config.json")
        modes = [mode for mode in _POOLING_MODES if config.get(mode)]
        if "pooling_mode" in config:  # sentence-transformers >= 6 writes one key: {"pooling_mode": "mean"}
            modes = [f"pooling_mode_{config['pooling_mode']}" + ("_token" if config["pooling_mode"] == "cls" else
                                                               "_tokens")]
        if modes not in (["pooling_mode_mean_tokens"], ["pooling_mode_cls_token"]):
            raise ConfigError(
                f"embedding_backend='onnx' supports mean or CLS pooling; {model_dir} pools with {modes} "
                "(use embedding_backend='torch')"
            )
        pooling = "cls" if modes == ["pooling_mode_cls_token"] else "mean"
    # sentence-transformers < 6 records max_seq_length in sentence_bert_config.json; 6 leaves it to the tokenizer
    max_len = 0
    bert_config = model_dir / "sentence_bert_config.json"
    if bert_config.exists():
        max_len = int(_read_json(bert_config).get("max_seq_length") or 0)
    tokenizer_config = model_dir / "tokenizer_config.json"
    if not max_len and tokenizer_config.exists():
        max_len = int(_read_json(tokenizer_config).get("model_max_length") or 0)
    return pooling, normalise, max_len if 0 < max_len <= 8192 else 512


def _export_key(model_dir: Path, quantise: bool) -> str:
    import onnxruntime
    import torch

    digest = hashlib.sha256(f"{_EXPORT_VERSION}|{quantise}|{torch.__version__}|{onnxruntime.__version__}".encode())
    for name in ("config.json", "tokenizer.json", "model.safetensors", "pytorch_model.bin"):
        file = model_dir / name
        if file.exists():
            digest.update(name.encode())
            with file.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()[:20]


def export_onnx(model_dir: Path, cache_dir: Path, *, quantise: bool) -> Path:
    """The ONNX file of ``model_dir``'s transformer (exported now unless the cache holds it).

    Raises:
        ConfigError: the folder holds no transformer the export can read.
    """
    target = cache_dir / "onnx" / _export_key(model_dir, quantise)
    model_file = target / "model.onnx"
    if model_file.exists():
        return model_file
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
    try:
        _export(model_dir, staging, quantise)
        try:
            os.rename(staging, target)
        except OSError:
            if not model_file.exists():  # not a concurrent export that won: a real failure
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return model_file


def _export(model_dir: Path, out: Path, quantise: bool) -> None:
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers import optimizer
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # no "Loading weights" bar in a log
    try:
        model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager", local_files_only=True).eval()
    except (OSError, ValueError) as exc:
        raise ConfigError(f"embedding model {model_dir} cannot be exported to ONNX: {exc}") from exc
    finally:
        if bars:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
    config = model.config
    length = 16
    example = (torch.ones((2, length), dtype=torch.long), torch.ones((2, length), dtype=torch.long),
               torch.zeros((2, length), dtype=torch.long))
    example[1][1, length // 2:] = 0  # one padded row, so the mask's path is traced
    axes = {"batch": 0, "sequence": 1}
    dynamic = {name: {axes["batch"]: "batch", axes["sequence"]: "sequence"}
               for name in ("input_ids", "attention_mask", "token_type_ids")}
    dynamic["hidden"] = {0: "batch", 1: "sequence"}
    raw = out / "raw.onnx"
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Hidden(model), example, str(raw), input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["hidden"], dynamic_axes=dynamic, opset_version=17, dynamo=False,
        )
        fused = optimizer.optimize_model(str(raw), model_type="bert", num_heads=int(config.num_attention_heads),
                                         hidden_size=int(config.hidden_size))
        fused.save_model_to_file(str(out / "fused.onnx"))
        if quantise:
            quantize_dynamic(str(out / "fused.onnx"), str(out / "model.onnx"), weight_type=QuantType.QInt8,
                             per_channel=True, op_types_to_quantize=["MatMul"],
                             extra_options={"DefaultTensorType": 1})
        else:
            os.replace(out / "fused.onnx", out / "model.onnx")
    for leftover in ("raw.onnx", "fused.onnx"):
        (out / leftover).unlink(missing_ok=True)


class _Hidden:
    """The transformer's last hidden state as a plain ``torch.nn.Module`` forward (built lazily)."""

    def __new__(cls, model: Any) -> Any:
        import torch

        class Hidden(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
                return self.model(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=token_type_ids).last_hidden_state

        return Hidden()


#: A batch's padding may add this share of its texts' own tokens ...
PADDING_SHARE = 0.25
#: ... plus this many tokens (about what one more model call costs): short texts still share a call.
PADDING_ALLOWANCE = 64


def padded_batches(lengths: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """The rows of each model call: texts sorted by token count, cut into batches of at most
    ``batch_size`` whose padding (every row padded to the batch's longest) stays within
    :data:`PADDING_SHARE` of their own tokens plus :data:`PADDING_ALLOWANCE`.

    A request's texts (a whole request and its needs: 8, 10, 15 and 40 tokens) no longer pay four
    rows of 40; a catalog's sorted texts, whose neighbours differ little, still fill whole batches.
    ONNX Runtime's embedding of a row does not depend on the other rows or the padding (checked bit
    for bit in the tests), so the cut changes no vector.

    Example:
        >>> [list(b) for b in padded_batches(np.array([40, 8, 15, 10]), 64)]
        [[1, 3, 2], [0]]
    """
    order = np.argsort(lengths, kind="stable")
    batches: list[np.ndarray] = []
    start, tokens = 0, 0
    for end, row in enumerate(order):
        n = int(lengths[row])
        rows = end - start + 1
        if rows > 1 and (rows > batch_size or rows * n > (1 + PADDING_SHARE) * (tokens + n) + PADDING_ALLOWANCE):
            batches.append(order[start:end])
            start, tokens = end, 0
        tokens += n
    if len(order):
        batches.append(order[start:])
    return batches


class OnnxEncoder:
    """A sentence-transformers model run by ONNX Runtime on the CPU.

    Args:
        model_dir: the model's local folder.
        cache_dir: where exports are kept (``Settings.cache_dir``).
        quantise: int8 MatMul weights (``onnx-int8``) instead of float32 (``onnx``).
        threads: ONNX Runtime's intra-op threads (0: one per core).
    """

    def __init__(self, model_dir: Path, cache_dir: Path, *, quantise: bool, threads: int = 0) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.pooling, self.normalise, self.max_length = _layout(model_dir)
        if not (model_dir / "tokenizer.json").exists():
            raise ConfigError(f"embedding_backend='onnx' needs {model_dir / 'tokenizer.json'} (a fast tokenizer)")
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(self.max_length)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # The encoder shares the CPU with OpenSearch and the web server: waiting threads sleep.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        path = export_onnx(model_dir, cache_dir, quantise=quantise)
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        """Unit-length (when the model normalises) embeddings of ``texts``, in their order."""
        encodings = self._tokenizer.encode_batch(list(texts))
        lengths = np.array([len(e.ids) for e in encodings])
        result: np.ndarray | None = None
        for rows in padded_batches(lengths, batch_size):
            width = int(lengths[rows].max())
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                n = int(lengths[i])
                ids[r, :n] = encodings[i].ids
                mask[r, :n] = 1
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self._session.run(["hidden"], {k: v for k, v in feeds.items() if k in self._inputs})[0]
            pooled = self._pool(np.asarray(hidden, dtype=np.float32), mask)
            if result is None:
                result = np.zeros((len(texts), pooled.shape[1]), dtype=np.float32)
            result[rows] = pooled
        assert result is not None
        return result

    def _pool(self, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        if self.normalise:
            pooled = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return pooled.astype(np.float32)
