"""The OpenAI-compatible client: temperature 0, schema-validated JSON, bounded retries, cached."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

import jsonschema
import openai

from toolsift.config import Settings
from toolsift.errors import LLMOutputError, LLMUnavailableError, ToolsiftError
from toolsift.llm.cache import LLMCache
from toolsift.llm.prompt import extract_json, render_data, system_message

__all__ = ["LLM", "llm_and_cache"]

_BACKOFF_S = 0.5


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class LLM:
    """A model behind an OpenAI-compatible endpoint (``llm_base_url``, ``llm_model``, ``llm_api_key``).

    Raises:
        LLMUnavailableError: at construction when ``llm_base_url`` is unset.
    """

    def __init__(self, settings: Settings, *, cache: LLMCache | None = None) -> None:
        if not settings.llm_base_url:
            raise LLMUnavailableError("no LLM configured: set llm_base_url (TOOLSIFT_LLM_BASE_URL)")
        self.model = settings.llm_model
        self.base_url = settings.llm_base_url
        self.cache = cache or LLMCache(settings.llm_cache_path)
        self.max_retries = settings.llm_max_retries
        self.max_tokens = settings.llm_max_tokens
        self.timeout = settings.llm_timeout
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else "not-needed"
        self._client = openai.OpenAI(base_url=self.base_url, api_key=key, timeout=self.timeout, max_retries=0)

    @classmethod
    def from_settings(cls, settings: Settings) -> LLM | None:
        """The configured LLM, or None when ``llm_base_url`` is unset."""
        return cls(settings) if settings.llm_base_url else None

    def complete_json(
        self,
        *,
        task: str,
        instructions: str,
        data: Mapping[str, str],
        schema: Mapping[str, Any],
        subject: str,
        check: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """One JSON answer for ``task`` that satisfies ``schema`` (and ``check``), from cache or the model.

        An answer that is not JSON or fails validation is sent back with the error for another try,
        at most ``llm_max_retries`` more times; connection errors, timeouts and 5xx answers are
        retried with backoff within the same budget.

        Raises:
            LLMUnavailableError: the endpoint is down, too slow, or refuses the request (4xx).
            LLMOutputError: every attempt answered invalid output.
        """
        messages: list[dict[str, str]] = [
            {"role": "system", "content": system_message(instructions, schema)},
            {"role": "user", "content": render_data(data)},
        ]
        prompt_key = LLMCache.prompt_key(self.model, messages, schema)
        cached = self.cache.get(prompt_key)
        if cached is not None:
            return cached
        last_error = ""
        for attempt in range(self.max_retries + 1):
            answer = self._call(messages, task, attempt)
            if answer is None:
                last_error = "no answer"
                continue
            try:
                output: dict[str, Any] = extract_json(answer)
                jsonschema.validate(output, dict(schema))
                if check is not None:
                    check(output)
            except (ToolsiftError, ValueError, jsonschema.ValidationError) as exc:  # a check may raise either
                last_error = exc.message if isinstance(exc, jsonschema.ValidationError) else str(exc)
                messages = [
                    *messages,
                    {"role": "assistant", "content": answer},
                    {"role": "user", "content": f"That answer is invalid: {_short(last_error, 300)}. "
                                                "Answer again with one JSON object that satisfies the schema."},
                ]
                continue
            meta = {
                "task": task,
                "model": self.model,
                "subject": _short(subject, 200),
                "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "prompt_key": prompt_key,
                "attempts": attempt + 1,
            }
            self.cache.put(prompt_key, output, meta=meta)
            self.cache.put(LLMCache.subject_key(task, self.model, subject), output, meta=meta)
            return output
        raise LLMOutputError(
            f"{task}: the LLM ({self.model}) gave no valid answer for {_short(subject)!r} after "
            f"{self.max_retries + 1} attempt(s); last error: {_short(last_error, 300)}"
        )

    def _call(self, messages: list[dict[str, str]], task: str, attempt: int) -> str | None:
        """The model's answer text; None after a retryable failure when attempts remain."""
        try:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                temperature=0,
                top_p=1,
                max_tokens=self.max_tokens,
            )
        except openai.APITimeoutError as exc:
            self._retry_or_raise(attempt, f"{task}: the LLM at {self.base_url} did not answer within "
                                          f"llm_timeout={self.timeout:g}s", exc)
            return None
        except openai.APIConnectionError as exc:
            self._retry_or_raise(attempt, f"{task}: cannot reach the LLM at llm_base_url={self.base_url} ({exc})", exc)
            return None
        except openai.APIStatusError as exc:
            if exc.status_code >= 500 or exc.status_code in (408, 429):  # server trouble, timeout, rate limit
                self._retry_or_raise(attempt, f"{task}: the LLM at {self.base_url} failed with HTTP "
                                              f"{exc.status_code}", exc)
                return None
            if exc.status_code == 400 and exc.code == "context_length_exceeded":  # the OpenAI error body's code
                # this request can never be answered by this model: not an outage, and no retry helps
                raise LLMOutputError(
                    f"{task}: the prompt does not fit the context window of {self.model} at {self.base_url} "
                    "(lower rewrite_context or llm_max_tokens, or serve a longer context)"
                ) from exc
            hint = "check llm_api_key" if exc.status_code in (401, 403) else "check llm_model and llm_base_url"
            raise LLMUnavailableError(
                f"{task}: the LLM at {self.base_url} refused the request with HTTP {exc.status_code} ({hint})"
            ) from exc
        content = response.choices[0].message.content if response.choices else None
        return content or ""

    def _retry_or_raise(self, attempt: int, message: str, exc: Exception) -> None:
        if attempt >= self.max_retries:
            raise LLMUnavailableError(message) from exc
        time.sleep(_BACKOFF_S * (2**attempt))


def llm_and_cache(settings: Settings) -> tuple[LLM | None, LLMCache]:
    """The configured LLM (None without ``llm_base_url``) and the cache it writes to and reads from."""
    llm = LLM.from_settings(settings)
    return llm, llm.cache if llm is not None else LLMCache(settings.llm_cache_path)

