"""Fakes shared by the tests: each stands in for one real collaborator and keeps its contract.

Import them as ``from tests.fakes import ...`` (pytest runs from the repository root, where ``tests``
is a namespace package, as ``tests.conftest`` is imported elsewhere).

* :class:`ScriptedLLM` stands in for :class:`toolsift.llm.llm_client.LLM` (its one method the pipeline
  calls, ``complete_json``). It answers from a script — one list per task, or one list for every
  task — and records every call. It is faithful where the callers' behaviour depends on it: the
  prompt is rendered as the real client renders it (so data that the real client could not send
  fails here too), each answer is read the way the client reads the model's text (the first JSON
  object in it, so a non-object answer is refused), validated against the task's schema and passed
  through the caller's ``check``; an answer that fails any of these is sent back for another try,
  at most ``max_retries`` more times (the ``llm_max_retries`` default, 2), after which the call
  raises :class:`~toolsift.errors.LLMOutputError` naming the last error, as the client does. An
  exception in the script is raised at that attempt, as the client raises its
  ``LLMUnavailableError`` / ``LLMOutputError``. It keeps no cache: the unit tests' ``cache`` fixture
  stands in for the cache the callers read first.
* :func:`fake_java_home` writes a JAVA_HOME whose ``bin/java`` is a script standing in for the
  OpenSearch runner (``LocalNode`` / ``LocalCluster`` run ``$JAVA_HOME/bin/java`` and talk to what it
  serves over HTTP); each test module brings the script of the node it needs.
* :class:`LoopbackJSONServer` stands in for an HTTP service that answers POSTs with JSON (a provider's
  API, an OpenSearch cluster): a server on a free loopback port whose answers a callable gives.
* :class:`SizedCounter` and :func:`sized` stand in for :class:`~toolsift.search.definitions.TokenCounter`
  and real definitions when a test is about ``fit``'s arithmetic: a definition's size is its ``size``
  key, so budgets read plainly.
* :class:`MemoryBackend` stands in for :class:`toolsift.search.backend.SearchBackend` behind the real
  :class:`~toolsift.api.search_service.ToolSearchService`: a few tools held in memory, as ingest writes
  their documents (``to_index_documents`` of real :class:`~toolsift.mappings.ToolDoc` /
  :class:`~toolsift.mappings.AgentDoc`), seen through the same tenant rule as the index (a document
  with no tenants is public). ``deliver`` *is* ``SearchBackend.deliver`` — the real definitions, names
  and ``fit`` over those sources — so formats and token budgets are real; ``search`` ranks tools by
  the query words in their name and description and answers the real
  :class:`~toolsift.search.request.SearchResponse`. Its ``client`` (:class:`FakeOpenSearch`) answers
  the one call the API makes on it, ``count``, or fails as an unreachable cluster does.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError

from toolsift.errors import LLMOutputError, ToolsiftError
from toolsift.ingest.embed import to_index_documents
from toolsift.llm.prompt import extract_json, render_data, system_message
from toolsift.mappings import F, AgentDoc, ToolDoc
from toolsift.query.structured import StructuredQuery
from toolsift.records import RankedTool
from toolsift.search.backend import DEFINITION_SOURCE, SearchBackend
from toolsift.search.definitions import TokenCounter, ToolDefinition
from toolsift.search.request import SearchRequest, SearchResponse, SearchResult

__all__ = [
    "LLMCall",
    "ScriptedLLM",
    "fake_java_home",
    "LoopbackJSONServer",
    "chat_completion",
    "SizedCounter",
    "sized",
    "FakeOpenSearch",
    "MemoryBackend",
]


# --- the LLM ------------------------------------------------------------------------------------------


@dataclass
class LLMCall:
    """One ``complete_json`` call as the fake received it, and how many answers it took."""

    task: str
    instructions: str
    data: dict[str, str]
    schema: Mapping[str, Any]
    subject: str
    attempts: int = 0


class ScriptedLLM:
    """``complete_json`` answered from a script (see the module docstring).

    Args:
        script: a list of answers for every task in call order, or task → its own list. An answer is
            a JSON value (sent as the model's text), a string (the model's text itself) or an
            exception (raised at that attempt).
        model: what ``model`` says (callers key their caches by it).
        max_retries: extra attempts after an invalid answer (the real client's ``llm_max_retries``).

    A call (or a retry) with no answer left for its task fails the test (``AssertionError``), naming the task.
    """

    def __init__(self, script: Sequence[Any] | Mapping[str, Sequence[Any]], *, model: str = "scripted-model",
                 max_retries: int = 2) -> None:
        self._per_task = isinstance(script, Mapping)
        self._answers: dict[str | None, list[Any]] = (
            {task: list(answers) for task, answers in script.items()} if isinstance(script, Mapping)
            else {None: list(script)}
        )
        self.model = model
        self.max_retries = max_retries
        self.calls: list[LLMCall] = []

    def complete_json(self, *, task: str, instructions: str, data: Mapping[str, str], schema: Mapping[str, Any],
                      subject: str, check: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """The real client's ``complete_json`` (same keywords), answered from the script."""
        system_message(instructions, schema)  # the prompt the real client would send: it must render
        render_data(data)
        call = LLMCall(task, instructions, dict(data), schema, subject)
        self.calls.append(call)
        last_error = ""
        for attempt in range(self.max_retries + 1):
            call.attempts = attempt + 1
            answer = self._next(task, attempt + 1)
            if isinstance(answer, BaseException):
                raise answer
            text = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
            try:
                output: dict[str, Any] = extract_json(text)
                jsonschema.validate(output, dict(schema))
                if check is not None:
                    check(output)
            except (ToolsiftError, ValueError, jsonschema.ValidationError) as exc:  # as the client: sent back
                last_error = exc.message if isinstance(exc, jsonschema.ValidationError) else str(exc)
                continue
            return output
        raise LLMOutputError(f"{task}: the LLM ({self.model}) gave no valid answer for {subject[:80]!r} after "
                             f"{self.max_retries + 1} attempt(s); last error: {last_error[:300]}")

    def tasks(self) -> list[str]:
        """The tasks called, in order."""
        return [c.task for c in self.calls]

    def _next(self, task: str, attempt: int) -> Any:
        answers = self._answers.get(task if self._per_task else None) or []
        if not answers:
            raise AssertionError(f"unexpected {task!r} call (attempt {attempt}): the script has no answer left for it")
        return answers.pop(0)


# --- an HTTP service answering JSON -------------------------------------------------------------------


class LoopbackJSONServer:
    """An HTTP server on a free loopback port (``url`` is its root) answering each POST (and GET, with an
    empty body) with JSON: ``answer(path, headers, body)`` gives the status and the JSON value for the
    request's path, its headers (names lower-cased) and its raw body. Not serving yet: run
    ``server.serve_forever`` in a thread, and ``server.shutdown()`` / ``server.server_close()`` after."""

    def __init__(self, answer: Callable[[str, dict[str, str], bytes], tuple[int, Any]]) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                self.do_POST()

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, value = answer(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", f"{len(data)}")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


def chat_completion(content: str, *, model: str, completion_id: str = "x") -> dict[str, Any]:
    """An OpenAI chat-completions answer whose one choice says ``content``."""
    return {"id": completion_id, "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


# --- the JDK --------------------------------------------------------------------------------------------


def fake_java_home(home: Path, script: str) -> Path:
    """``home`` as a JAVA_HOME whose ``bin/java`` is ``script`` (an executable file, shebang and all)."""
    java = home / "bin" / "java"
    java.parent.mkdir(parents=True, exist_ok=True)
    java.write_text(script)
    java.chmod(0o755)
    return home


# --- token counting -------------------------------------------------------------------------------------


class SizedCounter(TokenCounter):
    """Each definition's size is its ``size`` key: budgets become easy to read."""

    def count(self, definition: Mapping[str, Any]) -> int:
        return int(definition["size"])


def sized(*sizes: int) -> list[ToolDefinition]:
    """Definitions ``t0``, ``t1``, ... of these sizes (for :class:`SizedCounter`)."""
    return [ToolDefinition(f"t{n}", f"t{n}", f"t{n}", None, {"size": s}) for n, s in enumerate(sizes)]


# --- the search backend ---------------------------------------------------------------------------------


class _NoVectors:
    """The ingest's document encoder, answering zero vectors (the fake never searches by vector)."""

    def encode_document(self, texts: Sequence[str]) -> np.ndarray:
        return np.zeros((len(texts), 4), dtype=np.float32)


@dataclass
class FakeOpenSearch:
    """The client calls the API makes itself: ``count`` (``/health``); ``down`` fails them as an
    unreachable cluster does (opensearch-py's ``ConnectionError``)."""

    documents: int = 0
    down: bool = False
    counted: list[str] = field(default_factory=list)

    def count(self, *, index: str, **_: Any) -> dict[str, Any]:
        self.counted.append(index)
        if self.down:
            raise OpenSearchConnectionError("N/A", "Connection refused", None)
        return {"count": self.documents}


_WORD = re.compile(r"[a-z0-9]+")


class MemoryBackend:
    """A :class:`~toolsift.search.backend.SearchBackend` over documents held in memory (see the module docstring).

    Args:
        docs: the tools and agents, as ingest builds them.
        index: the index the settings name (recorded in the answers).

    Attributes:
        requests: every :class:`SearchRequest` asked, in order.
        tenants: ``(method, tenant)`` of every call that reads documents, in order.
        error: when set, ``search`` raises it (a cluster that fails mid-search).
    """

    def __init__(self, docs: Sequence[ToolDoc | AgentDoc], *, index: str = "tools") -> None:
        bodies = to_index_documents(_NoVectors(), docs)
        self.documents: dict[str, dict[str, Any]] = {
            (d.tool_id if isinstance(d, ToolDoc) else d.agent_id): body for d, body in zip(docs, bodies, strict=True)
        }
        self.index = index
        self.client = FakeOpenSearch(documents=len(self.documents))
        self.requests: list[SearchRequest] = []
        self.tenants: list[tuple[str, str | None]] = []
        self.error: BaseException | None = None

    # --- what the index lets a tenant see ---------------------------------------------------------
    def _visible(self, tenant: str | None, entity: str | None = None) -> dict[str, dict[str, Any]]:
        return {
            doc_id: body for doc_id, body in self.documents.items()
            if (tenant is None or not body.get("tenants") or tenant in body["tenants"])
            and (entity is None or body[F.entity] == entity)
        }

    def tool_sources(self, ids: Sequence[str], *, tenant: str | None) -> dict[str, dict[str, Any]]:
        self.tenants.append(("tool_sources", tenant))
        visible = self._visible(tenant, "tool")
        return {i: {k: copy.deepcopy(v) for k, v in visible[i].items() if k in DEFINITION_SOURCE}
                for i in dict.fromkeys(ids) if i in visible}

    def agent_names(self, agent_ids: Sequence[str], *, tenant: str | None) -> dict[str, str]:
        self.tenants.append(("agent_names", tenant))
        visible = self._visible(tenant)
        return {i: str(visible[i].get(F.name, i)) for i in dict.fromkeys(agent_ids) if i in visible}

    #: The real delivery: definitions in the asked format, names made unique, cut by ``fit``.
    deliver = SearchBackend.deliver

    # --- search ------------------------------------------------------------------------------------
    def search(self, request: SearchRequest) -> SearchResponse:
        """Tools whose name or description holds the request's words, most words first (tool level only)."""
        self.requests.append(request)
        self.tenants.append(("search", request.tenant))
        if self.error is not None:
            raise self.error
        if request.level != "tool":
            raise AssertionError(f"MemoryBackend answers tool-level searches only, not {request.level!r}")
        text = " ".join([request.query, *request.steps]).strip()
        words = set(_WORD.findall(text.lower()))
        scope = request.scope
        found: list[RankedTool] = []
        for doc_id, body in self._visible(request.tenant, "tool").items():
            if scope.agents and body.get(F.agent_id) not in scope.agents:
                continue
            if scope.tags and not set(scope.tags) & set(body.get(F.tags, ())):
                continue
            if request.risky == "exclude" and body.get(F.risk) == "flagged":
                continue
            score = len(words & set(_WORD.findall(f"{body[F.name]} {body[F.description]}".lower())))
            if score:
                found.append(RankedTool(doc_id, body[F.name], "tool", body.get(F.agent_id), float(score),
                                        risk=tuple(body.get(F.risk_reasons, ()))))
        found.sort(key=lambda t: (-t.score, t.doc_id))
        ranked = tuple(replace(t, first_stage_rank=n) for n, t in enumerate(found[: request.top_k], start=1))
        result = SearchResult(query=StructuredQuery.from_text(text), method=request.method,
                              retriever=request.retriever or "bm25", level="tool", tools=ranked,
                              timings={"total": 0.0}, index=self.index, ranker="memory")
        return SearchResponse(request, "off", result=result)
