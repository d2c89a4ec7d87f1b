"""``toolsift eval DIR --level request``: what agents actually send — one whole request with several
needs — on LiveMCPBench, through the MCP server as an agent calls it, beside a BM25 peer.

Protocol (printed with the table and stored in the JSON):

* **Requests.** Each judged task's ``Question``, whole: no annotated steps, no rewrite file.
* **Tool gold, by name.** The tool names of ``Annotator Metadata → Tools`` that some server of
  ``tools.json`` owns (any server: ``write_file`` is found whether Filesystem or Desktop Commander
  answers). Tool R@K = the share of gold names among the names of the first K tools returned.
* **Agent gold.** The servers owning those tools (:func:`~toolsift.agents.agent_eval.gold_agents`).
  A row's agent ranking is the servers of its top 10 tools, at first appearance; ir_measures R@5 and
  nDCG@5 (binary).
* **Latency.** Per request, measured by the client around the call (MCP rows: ``tools/call`` over
  stdio, definitions included); p50 / p95 nearest rank.
* **Halves.** Tasks at even positions (in file order) are half A, where the multi-need parameters
  were calibrated (``server_weight``, ``prerequisite_tools``, ``lexical_weight``); odd positions are half B, reported apart.
* **Chinese slice.** The tasks one of whose gold tools some server describes in Chinese (CJK
  characters in its description), scored apart: what the English-only embedder meets there.

Rows: toolsift's default (``search_tools`` over MCP: multi-need, hybrid), the same server with
``multi_need`` off (one multi-field hybrid query: the default before), the multi-need and one-query
BM25 and MiniLM searches in-process, and the peer — FastMCP's ``BM25SearchTransform``
``search_tools`` over MCP stdio (:mod:`toolsift.evaluation.peer_fastmcp`), when ``fastmcp`` is
installed (the ``bench`` extra).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opensearchpy import OpenSearch

from toolsift.config import MultiNeed, Retriever, Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import ClusterError, ConfigError, LLMOutputError, ToolsiftError
from toolsift.agents.agent_eval import gold_agents, load_livemcpbench
from toolsift.evaluation.metrics import evaluate
from toolsift.evaluation.runner import ensure_eval_index, eval_index_name, latency_summary, ranked_run
from toolsift.ingest.benchmarks import Benchmark
from toolsift.ingest.loaders.mcp import tool_id_for as mcp_tool_id
from toolsift.search.backend import SearchBackend
from toolsift.query.structured import StructuredQuery
from toolsift.search.request import SearchRequest

if TYPE_CHECKING:
    from toolsift.llm import LLMCache

__all__ = ["REQUEST_MEASURES", "RequestRow", "RequestEvalResult", "gold_tool_names", "score_answers",
           "run_request_eval", "save_rewrites"]

#: The measures of every row: tool R@5 / R@10 (names), agent R@5 / nDCG@5.
REQUEST_MEASURES: tuple[str, ...] = ("tool_R@5", "tool_R@10", "agent_R@5", "agent_nDCG@5")
#: Tools asked for per request.
TOP_K = 10
#: A CJK unified ideograph: a description written in Chinese (or Japanese kanji).
_CJK = re.compile(r"[\u4e00-\u9fff]")
#: An answer: the returned tools' (name, agent id), best first.
Answer = list[tuple[str, str]]


@dataclass(frozen=True)
class RequestRow:
    """One system's answers to every task, scored on all tasks and on each half."""

    name: str
    via: str
    metrics: Mapping[str, float]
    half_a: Mapping[str, float]
    half_b: Mapping[str, float]
    latency_ms: Mapping[str, float]
    main: bool = False
    peer: bool = False
    chinese: Mapping[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "via": self.via, "metrics": dict(self.metrics), "half_a": dict(self.half_a),
                "half_b": dict(self.half_b), "chinese": dict(self.chinese), "latency_ms": dict(self.latency_ms),
                "main": self.main, "peer": self.peer}


@dataclass(frozen=True)
class RequestEvalResult:
    dataset: str
    n_tasks: int
    rows: list[RequestRow]
    index: str
    protocol: dict[str, Any] = field(default_factory=dict)

    @property
    def main(self) -> RequestRow:
        return next(r for r in self.rows if r.main)

    def to_dict(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "level": "request", "n_tasks": self.n_tasks, "index": self.index,
                "rows": [r.to_dict() for r in self.rows], "protocol": self.protocol}


def gold_tool_names(benchmark: Benchmark) -> dict[str, list[str]]:
    """Task → its annotated tool names that some server owns (tasks with none are left out)."""
    annotated: Mapping[str, Sequence[str]] = benchmark.extra.get("annotated_tools", {})
    unresolved: Mapping[str, Sequence[str]] = benchmark.extra.get("unresolved_tools", {})
    out = {}
    for task in benchmark.qrels:
        names = [n for n in annotated.get(task, ()) if n not in set(unresolved.get(task, ()))]
        if names:
            out[task] = list(dict.fromkeys(names))
    return out


def score_answers(answers: Mapping[str, Answer], tool_gold: Mapping[str, Sequence[str]],
                  agent_gold: Mapping[str, Mapping[str, int]], tasks: Sequence[str]) -> dict[str, float]:
    """The four measures over ``tasks`` (see the module's protocol).

    Example:
        >>> answers = {"t": [("a", "agent:x"), ("b", "agent:y")]}
        >>> score_answers(answers, {"t": ["b", "c"]}, {"t": {"agent:y": 1}}, ["t"])["tool_R@5"]
        0.5
    """
    if not tasks:
        return {m: 0.0 for m in REQUEST_MEASURES}
    recall = {5: 0.0, 10: 0.0}
    for task in tasks:
        names = [name for name, _ in answers.get(task, [])]
        gold = set(tool_gold[task])
        for k in recall:
            recall[k] += len(gold & set(names[:k])) / len(gold)
    agents = {task: ranked_run(dict.fromkeys(a for _, a in answers.get(task, [])[:TOP_K] if a), TOP_K)
              for task in tasks}
    scored = evaluate({t: agent_gold[t] for t in tasks}, agents, ("recall@5", "ndcg@5"))
    return {"tool_R@5": round(recall[5] / len(tasks), 4), "tool_R@10": round(recall[10] / len(tasks), 4),
            "agent_R@5": round(scored["recall@5"], 4), "agent_nDCG@5": round(scored["ndcg@5"], 4)}


# --- the systems ---------------------------------------------------------------------------------
def _in_process(backend: SearchBackend, questions: Mapping[str, str], *, retriever: Retriever,
                multi_need: MultiNeed, progress: Callable[[int], None], rewrite: bool = False,
                sources: dict[str, str] | None = None) -> tuple[dict[str, Answer], list[float]]:
    """Each question searched in-process; with ``rewrite``, through the rewriter (cache, else the LLM),
    each task's rewrite source written to ``sources``: a request the LLM could not answer validly
    (invalid output on every attempt, or a prompt longer than its context window) is searched as it
    is (source ``invalid``), as a client falls back. Without ``rewrite`` no LLM
    and no cached rewrite is read."""
    answers: dict[str, Answer] = {}
    latencies = []
    for done, (task, question) in enumerate(questions.items(), start=1):
        t0 = time.perf_counter()
        request = SearchRequest(query=question, top_k=TOP_K, retriever=retriever, multi_need=multi_need,
                                explain=False, rewrite=rewrite)
        source: str
        try:
            response = backend.search(request)
            source = response.rewrite_source
        except LLMOutputError:
            response = backend.search(replace(request, rewrite=False))
            source = "invalid"
        latencies.append((time.perf_counter() - t0) * 1000)
        assert response.result is not None
        answers[task] = [(t.name, t.agent_id or "") for t in response.result.tools if t.entity == "tool"][:TOP_K]
        if sources is not None:
            sources[task] = source
        progress(done)
    return answers, latencies


def _judged_tasks(benchmark: Benchmark, tool_gold: Mapping[str, Any], agent_gold: Mapping[str, Any],
                  limit: int | None = None) -> list[str]:
    """The tasks every row answers: those with tool gold and agent gold, in file order, the first ``limit``."""
    tasks = [t for t in benchmark.queries if t in tool_gold and t in agent_gold]
    return tasks[:limit] if limit else tasks


def _cached_rewrite(cache: LLMCache, model: str, question: str) -> dict[str, Any] | None:
    """``model``'s cached rewrite of ``question``, under either subject the rewriter caches it by: the
    request as given, or as cleaned."""
    from toolsift.llm import cached_output
    from toolsift.query.rewrite import REWRITE_TASK

    for subject in dict.fromkeys((question, StructuredQuery.from_text(question).text)):
        found = cached_output(cache, REWRITE_TASK, model, subject)
        if found is not None:
            return found
    return None


def _any_rewrite_cached(settings: Settings, questions: Iterable[str]) -> bool:
    from toolsift.llm import LLMCache

    cache = LLMCache(settings.llm_cache_path)
    return any(_cached_rewrite(cache, settings.llm_model, q) is not None for q in questions)


def save_rewrites(settings: Settings, dataset_dir: Path, folder: Path, *, limit: int | None = None) -> dict[str, Any]:
    """Write ``llm_model``'s cached rewrites of a LiveMCPBench folder's judged requests to ``folder`` as
    evaluation data a later run reads without the LLM (``toolsift cache import FOLDER --queries
    FOLDER/queries.json``): ``rewritten_queries.<model>.json`` (task id → rewrite, MFTR's format),
    ``queries.json`` ([{id, query}]) and ``manifest.json`` (model, SHA-256 of the rewrite instructions,
    the context size, which tasks had no rewrite). Returns the manifest.

    Raises:
        ConfigError: no request's rewrite is cached (nothing to save).
    """
    import hashlib

    from toolsift.llm import LLMCache
    from toolsift.query.rewrite import REWRITE_INSTRUCTIONS

    benchmark = load_livemcpbench(dataset_dir, "request")
    tasks = _judged_tasks(benchmark, gold_tool_names(benchmark), gold_agents(benchmark), limit)
    cache = LLMCache(settings.llm_cache_path)
    found = {task: _cached_rewrite(cache, settings.llm_model, benchmark.queries[task]) for task in tasks}
    rewrites = {task: rewrite for task, rewrite in found.items() if rewrite is not None}
    if not rewrites:
        raise ConfigError(f"no rewrite by {settings.llm_model!r} of {dataset_dir}'s requests is cached: nothing to save")
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "dataset": benchmark.name, "model": settings.llm_model, "rewrite_context": settings.rewrite_context,
        "instructions_sha256": hashlib.sha256(REWRITE_INSTRUCTIONS.encode()).hexdigest(),
        "rewrites": len(rewrites), "missing": [t for t in tasks if t not in rewrites],
    }
    files = {f"rewritten_queries.{settings.llm_model}.json": rewrites,
             "queries.json": [{"id": t, "query": benchmark.queries[t]} for t in rewrites],
             "manifest.json": manifest}
    for name, data in files.items():
        (folder / name).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return manifest


def _llm_cost(sources: Mapping[str, str], latencies_ms: Sequence[float], model: str) -> dict[str, Any]:
    """Where the LLM row's rewrites came from (``invalid``: the LLM answered, never validly) and what
    the LLM cost per request (wall seconds of the searches that called it; a cache hit costs a search)."""
    called = [ms for task, ms in zip(sources, latencies_ms) if sources[task] in ("llm", "invalid")]
    counts = {src: sum(1 for v in sources.values() if v == src) for src in ("llm", "invalid", "cache", "fallback")}
    return {"model": model, "sources": {k: v for k, v in counts.items() if v},
            "seconds_per_llm_request": round(sum(called) / len(called) / 1000, 1) if called else None}


def _names_from(result: Any) -> list[dict[str, Any]]:
    """The tool entries of a ``search_tools`` result (toolsift's ``tools`` list or the peer's list)."""
    if result.is_error:
        text = " ".join(getattr(c, "text", "") for c in result.content)
        raise ClusterError(f"search_tools answered an error: {text[:300]}")
    data: Any = result.structured_content
    if data is None:
        data = json.loads(result.content[0].text)
    if isinstance(data, dict) and "result" in data and len(data) == 1:
        data = data["result"]
    if isinstance(data, dict):
        data = data.get("tools", [])
    return [d for d in data if isinstance(d, dict)]


def _over_mcp(command: Sequence[str], env: Mapping[str, str], questions: Mapping[str, str],
              entry_of: Callable[[dict[str, Any]], tuple[str, str]], progress: Callable[[int], None],
              arguments: Mapping[str, Any]) -> tuple[dict[str, Answer], list[float]]:
    """Every question through ``search_tools`` of the MCP server ``command`` (stdio, the SDK's client)."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    answers: dict[str, Answer] = {}
    latencies: list[float] = []

    async def session() -> None:
        params = StdioServerParameters(command=command[0], args=list(command[1:]), env=dict(env))
        with open(os.devnull, "w") as quiet:
            async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                await client.call_tool("search_tools", {"query": "warm up", **arguments})
                for done, (task, question) in enumerate(questions.items(), start=1):
                    t0 = time.perf_counter()
                    result = await client.call_tool("search_tools", {"query": question, **arguments})
                    latencies.append((time.perf_counter() - t0) * 1000)
                    answers[task] = [entry_of(entry) for entry in _names_from(result)][:TOP_K]
                    progress(done)

    try:
        anyio.run(session)
    except BaseExceptionGroup as group:  # the SDK's task groups wrap what went wrong
        leaves: list[BaseException] = []
        pending: list[BaseException] = [group]
        while pending:
            error = pending.pop()
            if isinstance(error, BaseExceptionGroup):
                pending.extend(error.exceptions)
            else:
                leaves.append(error)
        raise next((e for e in leaves if isinstance(e, ToolsiftError)),
                   ClusterError(f"the MCP server {command[-1]!r} failed: {leaves[0] if leaves else group}")) from None
    return answers, latencies


def _toolsift_mcp_env(settings: Settings, alias: str, multi_need: MultiNeed) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLSIFT_")}
    env.update({"TOOLSIFT_OPENSEARCH_URL": settings.effective_url, "TOOLSIFT_INDEX": alias,
                "TOOLSIFT_MULTI_NEED": multi_need, "TOOLSIFT_QUERY_LOG": "false", "TOOLSIFT_RETRIEVER": "hybrid",
                # the server encodes the questions with the model the index was built with
                "TOOLSIFT_EMBEDDING_MODEL": settings.embedding_model,
                "TOOLSIFT_EMBEDDING_BACKEND": settings.embedding_backend,
                "TOOLSIFT_EMBEDDING_DEVICE": settings.embedding_device})
    config = os.environ.get("TOOLSIFT_CONFIG")
    if config:
        env["TOOLSIFT_CONFIG"] = config
    return env


def peer_available() -> bool:
    """Whether the FastMCP peer can run here (``fastmcp`` installed: the ``bench`` extra)."""
    from importlib.util import find_spec

    return find_spec("fastmcp") is not None


def run_request_eval(
    client: OpenSearch,
    settings: Settings,
    dataset_dir: Path,
    *,
    embedder: Embedder,
    limit: int | None = None,
    peer: bool = True,
    llm_rewrite: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
) -> RequestEvalResult:
    # Long: every row of the whole-request table in the order the docs print them, each a call with its own
    # settings.
    """Every row of the whole-request evaluation on a LiveMCPBench folder (see the module's protocol).

    ``llm_rewrite`` adds a row whose requests go through the rewriter: ``llm_model``'s cached rewrite
    (an earlier run's, or committed outputs brought in by ``toolsift cache import``), else the LLM at
    ``llm_base_url`` (its answer cached); the LLM's tool needs replace the rule-based ones in the
    multi-need planner. Every other row reads no LLM and no cached rewrite.

    Raises:
        CatalogError: the folder is not a LiveMCPBench folder.
        ConfigError: ``llm_rewrite`` with no LLM configured and no request's rewrite cached.
    """
    started = time.perf_counter()
    benchmark = load_livemcpbench(dataset_dir, "request")
    tool_gold = gold_tool_names(benchmark)
    agent_gold = gold_agents(benchmark)
    tasks = _judged_tasks(benchmark, tool_gold, agent_gold, limit)
    questions = {t: benchmark.queries[t] for t in tasks}
    if llm_rewrite and not settings.llm_base_url and not _any_rewrite_cached(settings, questions.values()):
        raise ConfigError(
            f"--llm-rewrite: no LLM is configured (llm_base_url) and no request's rewrite by {settings.llm_model!r} "
            "is cached: serve one (`python -m toolsift.llm.server --gguf \"$(toolsift llm fetch)\"`, then "
            "TOOLSIFT_LLM_BASE_URL and TOOLSIFT_LLM_MODEL) or import committed rewrites (`toolsift cache import`)")
    half_a, half_b = tasks[0::2], tasks[1::2]

    alias = eval_index_name(benchmark, embedder.name)
    ensure_eval_index(client, settings, embedder, alias, benchmark.catalog_path, benchmark.catalog_format)
    local = settings.with_overrides(index=alias, query_log=False)
    backend = SearchBackend(client, local, embedder=embedder, source="eval")
    rows: list[RequestRow] = []

    def add(name: str, via: str, run: tuple[dict[str, Answer], list[float]], *, main: bool = False,
            is_peer: bool = False) -> None:
        answers, latencies = run
        rows.append(RequestRow(name, via, score_answers(answers, tool_gold, agent_gold, tasks),
                               score_answers(answers, tool_gold, agent_gold, half_a),
                               score_answers(answers, tool_gold, agent_gold, half_b),
                               latency_summary(latencies), main=main, peer=is_peer,
                               chinese=score_answers(answers, tool_gold, agent_gold, chinese)))

    def tick(name: str) -> Callable[[int], None]:
        return lambda done: progress(name, done, len(tasks)) if progress else None

    # Every catalog tool's server, looked up once: answers name tools by id (toolsift) or by name (the peer).
    from toolsift.evaluation.peer_fastmcp import catalog_tools, first_owners

    listed = catalog_tools(benchmark.catalog_path)
    ids = [mcp_tool_id(server, tool["name"]) for server, tool in listed]
    in_chinese = {tool["name"] for _, tool in listed if _CJK.search(str(tool.get("description") or ""))}
    chinese = [t for t in tasks if in_chinese & set(tool_gold[t])]
    agent_of = {i: str(s.get("agent_id") or "") for i, s in backend.tool_sources(ids, tenant=None).items()}

    def toolsift_entry(entry: dict[str, Any]) -> tuple[str, str]:
        return str(entry.get("original_name") or entry.get("name")), agent_of.get(str(entry.get("id", "")), "")

    toolsift = [sys.executable, "-m", "toolsift.cli.main", "serve", "mcp"]
    for multi_need, label, main in (("auto", "toolsift search_tools (default: multi-need, hybrid)", True),
                                    ("off", "toolsift search_tools, multi_need off (one multi-field hybrid query)", False)):
        add(label, "MCP stdio", _over_mcp(toolsift, _toolsift_mcp_env(local, alias, multi_need), questions,  # type: ignore[arg-type]
                                          toolsift_entry, tick(label), {"top_k": TOP_K}), main=main)
    for retriever, word in (("bm25", "BM25"), ("minilm", "MiniLM")):
        for multi_need, what in (("on", "multi-need"), ("off", "one multi-field query")):
            label = f"toolsift {what}, {word}"
            embedder.clear_query_cache()  # no row is served embeddings an earlier run computed
            add(label, "in-process", _in_process(backend, questions, retriever=retriever,  # type: ignore[arg-type]
                                                 multi_need=multi_need, progress=tick(label)))  # type: ignore[arg-type]

    llm_note: dict[str, Any] | str = "not run (--llm-rewrite: the configured LLM rewrites each request)"
    if llm_rewrite:
        label = f"toolsift multi-need, hybrid, LLM rewrite ({settings.llm_model})"
        sources: dict[str, str] = {}
        embedder.clear_query_cache()
        run = _in_process(backend, questions, retriever="hybrid", multi_need="on", progress=tick(label),
                          rewrite=True, sources=sources)
        add(label, "in-process", run)
        llm_note = _llm_cost(sources, run[1], settings.llm_model)

    peer_note = "not run: fastmcp is not installed (pip install 'toolsift[bench]')"
    if peer and peer_available():
        owners = first_owners(benchmark.catalog_path)

        def peer_entry(entry: dict[str, Any]) -> tuple[str, str]:
            name = str(entry.get("name", ""))
            server = owners.get(name)
            return name, agent_of.get(mcp_tool_id(server, name), "") if server else ""

        from importlib.metadata import version

        label = "FastMCP search_tools (BM25SearchTransform) [peer]"
        command = [sys.executable, "-m", "toolsift.evaluation.peer_fastmcp", str(benchmark.catalog_path)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLSIFT_")}
        add(label, "MCP stdio", _over_mcp(command, env, questions, peer_entry, tick(label), {}), is_peer=True)
        peer_note = f"fastmcp {version('fastmcp')}: the catalog's tools registered by name (first server wins a shared name), max_results {TOP_K}"

    return RequestEvalResult(
        dataset=benchmark.name,
        n_tasks=len(tasks),
        rows=rows,
        index=backend.searcher().index.index,
        protocol={
            "embedding_model": embedder.name,
            "requests": "each judged task's Question, whole (no steps, no rewrite file)",
            "tool_gold": "the annotated tool names some server owns, any server; tool R@K = share of gold names "
                         "among the names of the first K tools returned",
            "agent_gold": "the servers owning those tools; a row's agents = the servers of its top 10 tools at first "
                          "appearance; ir_measures R@5, nDCG@5 (binary)",
            "halves": f"A = tasks at even positions ({len(half_a)}; server_weight, prerequisite_tools and "
                      "lexical_weight calibrated there), "
                      f"B = odd positions ({len(half_b)})",
            "chinese": f"{len(chinese)} tasks with a gold tool some server describes in Chinese "
                       f"({len(in_chinese)} such tool names in the catalog)",
            "server_weight": settings.server_weight,
            "prerequisite_tools": settings.prerequisite_tools,
            "lexical_weight": settings.lexical_weight,
            "latency": "client-measured per request, after one warm-up call; MCP rows include the definitions",
            "peer": peer_note,
            "llm_rewrite": llm_note,
            "limit": limit,
            "seconds": round(time.perf_counter() - started, 1),
        },
    )
