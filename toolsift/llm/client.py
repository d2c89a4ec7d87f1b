"""The OpenAI-compatible client: deterministic, schema-validated JSON answers, bounded retries, cached.

One method, :meth:`LLM.complete_json`, serves every task (standardisation, Tool-DE expansion and
judging, query rewriting). It sends trusted instructions as the system message and untrusted data as
delimited sections (:mod:`toolsift.llm.prompt`), asks at ``temperature=0``, extracts the first JSON
object of the answer, validates it against the task's JSON Schema (``jsonschema``) and the caller's
``check``, and caches it (:class:`~toolsift.llm.cache.LLMCache`) under the prompt key and the subject
key. ``openai`` and ``jsonschema`` are imported on first use, so importing :mod:`toolsift.llm` for
the cache alone stays cheap.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from enum import StrEnum
from typing import TYPE_CHECKING, Any, cast

from toolsift.errors import LLMOutputError, LLMUnavailableError
from toolsift.llm.cache import LLMCache
from toolsift.llm.prompt import extract_json, render_data, system_message

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletionMessageParam

    from toolsift.config import Settings

__all__ = ["LLM", "Task"]

logger = logging.getLogger(__name__)

#: First pause before retrying a transient failure; doubled per attempt, capped at _MAX_BACKOFF_S.
_BACKOFF_S = 0.5
_MAX_BACKOFF_S = 8.0
#: 4xx statuses that mean "try again later" rather than "this request is wrong".
_RETRYABLE_4XX = frozenset({408, 409, 429})


class Task(StrEnum):
    """The tasks toolsift asks an LLM to do; each is a cache namespace (``subject_key``'s ``task``).

    Members are strings, so ``Task.REWRITE`` and ``"rewrite"`` give the same cache keys.
    """

    STANDARDIZE = "standardize"
    """MFTR standardisation of a raw tool documentation into description/parameters/response/examples."""
    EXPAND = "expand"
    """Tool-DE expansion of a tool documentation into a profile (function, tags, when to use, limits)."""
    JUDGE = "judge"
    """Tool-DE's faithfulness check of an expansion."""
    REWRITE = "rewrite"
    """MFTR query rewriting into tool needs and extracted arguments."""


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Transient(Exception):
    """A failure worth retrying (connection, timeout, 5xx, 429); ``message`` is the final error's text."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


class LLM:
    """A chat model behind an OpenAI-compatible endpoint, answering in schema-valid JSON.

    Args:
        settings: ``llm_base_url`` (required), ``llm_model`` (sent, and part of every cache key),
            ``llm_api_key`` (sent, never logged or cached; ``"not-needed"`` when unset),
            ``llm_timeout`` (seconds per request), ``llm_max_retries`` (extra attempts after an
            invalid answer or a transient failure), ``llm_max_tokens`` and ``llm_cache_path``.
        cache: the output cache; default ``LLMCache(settings.llm_cache_path)``.

    Raises:
        LLMUnavailableError: ``llm_base_url`` is unset (the message names the setting).

    Example:
        >>> llm = LLM(Settings(llm_base_url="http://127.0.0.1:8000/v1", llm_model="smollm2-135m-instruct"))
        >>> llm.complete_json(task="expand", instructions="Give tags for the tool.",
        ...                   data={"documentation": doc_text}, schema=TAGS_SCHEMA, subject=doc_hash)
        {'tags': ['weather', 'forecast']}
    """

    model: str
    cache: LLMCache

    def __init__(self, settings: Settings, *, cache: LLMCache | None = None) -> None:
        if not settings.llm_base_url:
            raise LLMUnavailableError(
                "no LLM is configured: set llm_base_url (TOOLSIFT_LLM_BASE_URL) to an OpenAI-compatible "
                "endpoint, e.g. http://127.0.0.1:8000/v1 (`python -m toolsift.llm.server` serves one locally)"
            )
        import openai

        self.model = settings.llm_model
        self.base_url = settings.llm_base_url
        self.cache = cache if cache is not None else LLMCache(settings.llm_cache_path)
        self.timeout = settings.llm_timeout
        self.max_retries = settings.llm_max_retries
        self.max_tokens = settings.llm_max_tokens
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key is not None else ""
        self._secret = key
        self._client: openai.OpenAI = openai.OpenAI(
            base_url=self.base_url, api_key=key or "not-needed", timeout=self.timeout, max_retries=0
        )

    def __repr__(self) -> str:
        return f"LLM(model={self.model!r}, base_url={self.base_url!r})"

    @classmethod
    def from_settings(cls, settings: Settings) -> LLM | None:
        """The configured LLM, or None when ``llm_base_url`` is unset (callers then use the cache only)."""
        return cls(settings) if settings.llm_base_url else None

    # --- the one call ---------------------------------------------------------------------------------
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
        """One JSON object for ``task`` that satisfies ``schema`` and ``check``: cached, else asked.

        The prompt key (model, messages, schema) is looked up first; a cached answer that still
        passes ``schema`` and ``check`` is returned without any request. Otherwise the model is
        asked (``temperature=0``, ``top_p=1``, ``max_tokens=llm_max_tokens``). An answer that holds
        no JSON object or fails validation is sent back with a short correction naming the error,
        at most ``llm_max_retries`` more times. Connection errors, timeouts, HTTP 5xx and 429 are
        retried with exponential backoff within the same budget; other 4xx answers are not retried.
        A valid answer is cached under the prompt key and under
        ``subject_key(task, model, subject)``.

        Args:
            task: the task name (:class:`Task`): the cache namespace, and named in errors.
            instructions: trusted task instructions (the system message).
            data: section name → untrusted text (tool documents, user requests); sent only inside
                delimited data sections, never as instructions.
            schema: the JSON Schema the answer must satisfy (also shown to the model).
            subject: the input's canonical identity (a request text, a documentation hash).
            check: extra semantic validation; raise ``ValueError`` to reject an answer.

        Returns:
            The validated JSON object.

        Raises:
            LLMUnavailableError: the endpoint is unreachable, too slow (``llm_timeout``), keeps
                failing with 5xx, or refuses the request (401/403: ``llm_api_key``; 404:
                ``llm_model``). The message names the setting and ``llm_base_url``.
            LLMOutputError: every attempt answered invalid output; names the task, the subject and
                the last validation error.
            ValueError: ``schema`` is not a valid JSON Schema, or a data section is malformed.
        """
        validate = _validator(task, schema, check)
        messages: list[dict[str, str]] = [
            {"role": "system", "content": system_message(instructions, schema)},
            {"role": "user", "content": render_data(data)},
        ]
        prompt_key = LLMCache.prompt_key(self.model, messages, schema)
        cached = self.cache.get(prompt_key)
        if cached is not None:
            try:
                validate(cached)
            except ValueError:
                logger.info("%s: cached answer %s… no longer validates; asking again", task, prompt_key[:12])
            else:
                return cached

        attempts = self.max_retries + 1
        last_error = "no answer"
        for attempt in range(1, attempts + 1):
            try:
                answer, finish_reason = self._ask(messages)
            except _Transient as exc:
                if attempt == attempts:
                    raise LLMUnavailableError(
                        f"{task}: {exc.message} (gave up after {attempts} attempt(s))"
                    ) from exc.__cause__
                pause = exc.retry_after if exc.retry_after is not None else _BACKOFF_S * 2 ** (attempt - 1)
                pause = min(pause, _MAX_BACKOFF_S)
                logger.warning("%s: %s; retrying in %.1fs (attempt %d/%d)", task, exc.message, pause, attempt, attempts)
                time.sleep(pause)
                continue
            try:
                output = extract_json(answer)
                validate(output)
            except ValueError as exc:
                last_error = str(exc)
                if finish_reason == "length":
                    last_error += f" (the answer was cut off at llm_max_tokens={self.max_tokens})"
                logger.info("%s: invalid answer (attempt %d/%d): %s", task, attempt, attempts, _short(last_error, 200))
                messages = [
                    *messages,
                    {"role": "assistant", "content": answer},
                    {
                        "role": "user",
                        "content": f"Your answer was not accepted: {_short(last_error, 500)}. Answer again "
                        "with only one JSON object that satisfies the JSON Schema in the system message.",
                    },
                ]
                continue
            meta = {
                "task": str(task),
                "model": self.model,
                "subject": _short(subject, 200),
                "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "prompt_sha256": prompt_key,
                "attempts": attempt,
            }
            self.cache.put(prompt_key, output, meta=meta)
            self.cache.put(LLMCache.subject_key(task, self.model, subject), output, meta=meta)
            return output
        raise LLMOutputError(
            f"{task}: the LLM ({self.model} at {self.base_url}) gave no valid answer for {_short(subject)!r} "
            f"after {attempts} attempt(s); last error: {_short(last_error, 300)}"
        )

    # --- transport --------------------------------------------------------------------------------
    def _ask(self, messages: list[dict[str, str]]) -> tuple[str, str | None]:
        """The answer text and finish reason; transient failures raise :class:`_Transient`."""
        import openai

        try:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=cast("list[ChatCompletionMessageParam]", messages),
                temperature=0,
                top_p=1,
                max_tokens=self.max_tokens,
            )
        except openai.APITimeoutError as exc:
            raise _Transient(
                f"the LLM at llm_base_url={self.base_url} did not answer within llm_timeout={self.timeout:g}s"
            ) from exc
        except openai.APIConnectionError as exc:
            reason = self._redact(str(exc.__cause__ or exc))
            raise _Transient(f"cannot reach the LLM at llm_base_url={self.base_url}: {_short(reason, 200)}") from exc
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from exc
        if not response.choices:
            return "", None
        choice = response.choices[0]
        return choice.message.content or "", choice.finish_reason

    def _status_error(self, exc: openai.APIStatusError) -> Exception:
        status = exc.status_code
        said = _short(self._redact(_error_text(exc)), 200)
        where = f"the LLM at llm_base_url={self.base_url} answered HTTP {status}"
        if status >= 500 or status in _RETRYABLE_4XX:
            return _Transient(f"{where}: {said}", _retry_after(exc))
        if status in (401, 403):
            hint = "check llm_api_key (TOOLSIFT_LLM_API_KEY)"
        elif status == 404:
            hint = f"check llm_model={self.model!r} (the endpoint does not serve it) and llm_base_url"
        else:
            hint = f"check llm_model={self.model!r} and llm_max_tokens={self.max_tokens}"
        return LLMUnavailableError(f"{where}: {said} ({hint})")

    def _redact(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret else text


def _error_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(body.get("detail"), str):
            return str(body["detail"])
    return exc.message


def _retry_after(exc: openai.APIStatusError) -> float | None:
    value = exc.response.headers.get("retry-after") if exc.response is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _validator(
    task: str, schema: Mapping[str, Any], check: Callable[[dict[str, Any]], None] | None
) -> Callable[[dict[str, Any]], None]:
    """A function raising ValueError (naming where) when an answer fails ``schema`` or ``check``."""
    import jsonschema
    import jsonschema.exceptions

    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        raise ValueError(f"{task}: the answer schema is not a valid JSON Schema: {exc.message}") from exc
    validator = cls(schema)

    def validate(output: dict[str, Any]) -> None:
        error = jsonschema.exceptions.best_match(validator.iter_errors(output))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path)
            raise ValueError(f"at {where}: {error.message}" if where else error.message)
        if check is not None:
            check(output)

    return validate
