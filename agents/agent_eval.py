"""``toolsift eval DIR --level agent``: Tool-to-Agent retrieval scored at agent level on LiveMCPBench.

Each task's gold agents are the MCP servers that own its annotated tools (``Annotator Metadata`` →
``Tools``, resolved by :func:`~toolsift.ingest.benchmarks.load_livemcpbench_benchmark`: a name
several servers share goes to those that also own another tool of the task, else to all of them;
a name no server owns is ignored, and a task whose every name is unknown is dropped and counted).
Each row answers every task with a ranked list of agents, scored with ir_measures at K = 1, 3, 5:
``recall@K`` (R@K), ``map@K`` (AP@K: average precision cut at K over all gold agents) and
``ndcg@K`` (binary gains).

Rows, all measured in one run on the same indices:

* **step-wise [main]** — each annotated step (``Steps``, split at its numbering) is a query on the
  joint tool + agent index (:mod:`toolsift.agents.agent_search`: the ``overview`` representation, the
  ``--retriever``'s first stage, Algorithm 1 with N = ``agent_top_entities``), the steps merged
  by CombMAX (ties by the sum of step scores);
* **step-wise, reciprocal-rank merge** — the same step rankings merged by Σ 1/rank;
* **direct (whole question)** — the task's question as one query;
* **own decomposition** — the question split into needs without an LLM: a cached rewrite when the
  LLM cache holds one for the question, else :func:`~toolsift.query.decompose.split_needs`;
* **agent-only index** — step-wise on a second index holding only the servers (name +
  description, no tools), as the paper's agent-only baseline;
* **description vectors, reciprocal-rank merge** — the plain joint index of the paper's corpora
  (dense part on the tools' and agents' descriptions) with the baseline merge: what the
  ``overview`` and CombMAX add;
* **BM25** and **hybrid** step-wise — the other first stages of the same method.

References:
    Tool-to-Agent Retrieval (2025), §2 and §3, Tables 1–2 (LiveMCPBench, step-wise, agent level).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from toolsift.agents.agent_search import Representation, StepRetriever
from toolsift.config import Retriever, Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import CatalogError
from toolsift.ingest.benchmarks import Benchmark, load_benchmark
from toolsift.evaluation.metrics import evaluate
from toolsift.evaluation.runner import ensure_eval_index, eval_index_name, ranked_run
from toolsift.ingest.loaders.naming import agent_id_for
from toolsift.ingest.loaders.mcp import tool_id_for as mcp_tool_id
from toolsift.records import kinds_for
from toolsift.query.decompose import split_needs
from toolsift.agents.aggregation import MergeRule, merge_steps
from toolsift.search import Searcher

__all__ = [
    "AGENT_MEASURES",
    "PAPER_MINILM",
    "AgentRow",
    "AgentEvalResult",
    "gold_agents",
    "load_livemcpbench",
    "agent_only_catalog",
    "run_agent_eval",
]

AGENT_MEASURES: tuple[str, ...] = (
    "recall@1", "recall@3", "recall@5", "map@1", "map@3", "map@5", "ndcg@1", "ndcg@3", "ndcg@5",
)
#: Tool-to-Agent Retrieval, Table 2, all-MiniLM-L6-v2 (step-wise, agent level, its own protocol).
PAPER_MINILM: Mapping[str, float] = {"recall@5": 0.80, "ndcg@5": 0.45, "map@5": 0.33}
#: How many agents each task's answer holds (the measures stop at 5).
RUN_DEPTH = 10
_RETRIEVER_LABEL = {"bm25": "BM25", "minilm": "MiniLM", "hybrid": "BM25 + MiniLM"}


@dataclass(frozen=True)
class AgentRow:
    """One way of answering the tasks, with its mean scores.

    Args:
        queries: what each task is queried with: ``steps`` (annotated), ``question`` or ``needs``
            (own decomposition).
        index: ``joint`` (tools + agents) or ``agent-only``.
        representation: the dense part's vector (``overview`` or ``description``).
        merge: how the queries' agent rankings are merged.
    """

    name: str
    queries: str
    index: str
    retriever: str
    representation: str
    merge: str
    metrics: dict[str, float]
    main: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"row": self.name, "main": self.main, "queries": self.queries, "index": self.index,
                "retriever": self.retriever, "representation": self.representation, "merge": self.merge,
                "metrics": {k: round(v, 4) for k, v in self.metrics.items()}}


@dataclass(frozen=True)
class AgentEvalResult:
    """``--json`` contract: dataset, method ``tool-to-agent``, retriever, n_queries, rows, protocol."""

    dataset: str
    retriever: str
    n_queries: int
    rows: list[AgentRow]
    index: str
    agent_only_index: str
    embedding_model: str
    protocol: dict[str, Any] = field(default_factory=dict)

    @property
    def main(self) -> AgentRow:
        return next(r for r in self.rows if r.main)

    def to_dict(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "method": "tool-to-agent", "level": "agent", "retriever": self.retriever,
                "n_queries": self.n_queries, "index": self.index, "agent_only_index": self.agent_only_index,
                "embedding_model": self.embedding_model, "rows": [r.to_dict() for r in self.rows],
                "protocol": self.protocol}


def load_livemcpbench(dataset_dir: Path, level: str) -> Benchmark:
    """The LiveMCPBench folder ``dataset_dir`` (tool ids as the MCP loader indexes them) for ``--level level``.

    Raises:
        CatalogError: the folder is not a LiveMCPBench folder.
    """
    benchmark = load_benchmark(Path(dataset_dir), tool_id_for=mcp_tool_id)
    if benchmark.format != "livemcpbench":
        raise CatalogError(f"{dataset_dir}: --level {level} needs a LiveMCPBench folder (tools.json + "
                           f"all_annotations.json), found a {benchmark.format} folder")
    return benchmark


def gold_agents(benchmark: Benchmark) -> dict[str, dict[str, int]]:
    """Task id → {agent id: 1} for every task with at least one resolved tool (its servers' agents)."""
    servers: Mapping[str, Sequence[str]] = benchmark.extra.get("servers", {})
    return {
        task: {agent_id_for(server): 1 for server in servers.get(task, ())}
        for task in benchmark.qrels
        if servers.get(task)
    }


def agent_only_catalog(catalog: Path, target: Path) -> Path:
    """Write ``catalog``'s servers without their tools to ``target`` (rewritten only when it changes).

    The agent-only baseline: each server keeps its name, description and the rest of its entry.
    """
    servers = json.loads(catalog.read_text(encoding="utf-8"))
    if not isinstance(servers, list):
        raise CatalogError(f"{catalog}: expected a list of MCP servers")
    stripped = [{**s, "tools": []} for s in servers if isinstance(s, dict)]
    text = json.dumps(stripped, ensure_ascii=False, indent=1)
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return target


def _decompositions(settings: Settings, client: OpenSearch, questions: Mapping[str, str]) -> tuple[dict[str, list[str]], int]:
    """Each question's needs: a cached rewrite's tool needs when there is one, else the rule-based split."""
    from toolsift.llm.cache import LLMCache
    from toolsift.query.rewrite import QueryRewriter

    rewriter = QueryRewriter(client, settings, None, LLMCache(settings.llm_cache_path))  # no LLM, ever
    out: dict[str, list[str]] = {}
    cached = 0
    for task, question in questions.items():
        rewrite = rewriter.rewrite(question)
        if rewrite.source == "cache":
            cached += 1
            out[task] = [n.tool_description or n.user_intent for n in rewrite.query.tool_needs]
        else:
            out[task] = split_needs(question)
    return out, cached


def run_agent_eval(
    client: OpenSearch,
    settings: Settings,
    dataset_dir: Path,
    *,
    retriever: Retriever,
    embedder: Embedder,
    limit: int | None = None,
    merge: MergeRule = "max",
    progress: Callable[[str, int, int], None] | None = None,
) -> AgentEvalResult:
    # Long: every row of the agent-level table in the order the docs print them, each a call with its own
    # settings.
    """Every row of the agent-level evaluation on a LiveMCPBench folder.

    Args:
        client: connected client.
        settings: base settings (Algorithm 1's N from ``agent_top_entities``); the index aliases are
            the benchmark's own: ``toolsift-eval-<name>`` and ``toolsift-eval-<name>-agent-only``.
        dataset_dir: a LiveMCPBench folder (``tools.json`` + ``all_annotations.json``).
        retriever: the main row's first stage (``minilm``: k-NN on the overviews).
        embedder: the embedding model (all-MiniLM-L6-v2 by default).
        limit: evaluate only the first ``limit`` judged tasks (a quick slice).
        merge: the main row's merge rule.
        progress: called as (row, done, total).

    Raises:
        CatalogError: the folder is not a LiveMCPBench folder.
    """
    started = time.perf_counter()
    benchmark = load_livemcpbench(dataset_dir, "agent")
    qrels = gold_agents(benchmark)
    dropped = sorted(set(benchmark.queries) - set(qrels))
    tasks = list(qrels)[:limit] if limit else list(qrels)
    qrels = {t: qrels[t] for t in tasks}
    steps_of: Mapping[str, Sequence[str]] = benchmark.extra.get("steps", {})
    questions = {t: benchmark.queries[t] for t in tasks}
    steps = {t: list(steps_of.get(t) or ()) or [questions[t]] for t in tasks}
    without_steps = [t for t in tasks if not steps_of.get(t)]

    alias = eval_index_name(benchmark, embedder.name)
    ensure_eval_index(client, settings, embedder, alias, benchmark.catalog_path, benchmark.catalog_format)
    only_alias = f"{alias}-agent-only"
    only_catalog = agent_only_catalog(benchmark.catalog_path, settings.cache_dir / "eval" / f"{only_alias}.json")
    ensure_eval_index(client, settings, embedder, only_alias, only_catalog, "mcp", prune=True)
    joint = Searcher(client, settings.with_overrides(index=alias), embedder, source="eval")
    only = Searcher(client, settings.with_overrides(index=only_alias), embedder, source="eval")
    retrievers: dict[tuple[str, str], StepRetriever] = {}

    def step_retriever(searcher: Searcher, representation: Representation) -> StepRetriever:
        key = (searcher.settings.index, representation)
        if key not in retrievers:
            retrievers[key] = searcher.steps() if representation == "overview" else StepRetriever(
                searcher, representation=representation)
        return retrievers[key]

    decomposed, from_cache = _decompositions(settings, client, questions)
    rows: list[AgentRow] = []

    def row(name: str, queries: str, texts: Mapping[str, Sequence[str]], *, searcher: Searcher = joint,
            first_stage: Retriever = retriever, representation: Representation = "overview",
            rule: MergeRule = merge, main: bool = False) -> None:
        ranker = step_retriever(searcher, representation)
        run: dict[str, dict[str, float]] = {}
        for done, task in enumerate(tasks, start=1):
            rankings = ranker.rank(texts[task], first_stage)
            agents = merge_steps([r.agents for r in rankings], top_k=RUN_DEPTH, rule=rule)
            run[task] = ranked_run((a.agent_id for a in agents), RUN_DEPTH)
            if progress:
                progress(name, done, len(tasks))
        rows.append(AgentRow(name, queries, "joint" if searcher is joint else "agent-only", first_stage,
                             representation, rule, evaluate(qrels, run, AGENT_MEASURES), main=main))

    label = _RETRIEVER_LABEL[retriever]
    row(f"step-wise · {label} · CombMAX merge [main]", "steps", steps, main=True)
    row(f"step-wise · {label} · reciprocal-rank merge", "steps", steps, rule="rrf")
    row(f"direct (whole question) · {label}", "question", {t: [q] for t, q in questions.items()})
    row(f"own decomposition (rule-based needs) · {label}", "needs", decomposed)
    row(f"agent-only index (server name + description) · step-wise · {label}", "steps", steps, searcher=only)
    if "dense" in kinds_for(retriever):
        row(f"plain joint index (description vectors) · step-wise · {label} · reciprocal-rank merge", "steps",
            steps, representation="description", rule="rrf")
    others: tuple[Retriever, ...] = ("bm25", "hybrid")
    for other in others:
        if other != retriever:
            row(f"step-wise · {_RETRIEVER_LABEL[other]} · CombMAX merge", "steps", steps, first_stage=other)

    ambiguous: Mapping[str, Mapping[str, Sequence[str]]] = benchmark.extra.get("ambiguous_tools", {})
    unresolved: Mapping[str, Sequence[str]] = benchmark.extra.get("unresolved_tools", {})
    return AgentEvalResult(
        dataset=benchmark.name,
        retriever=retriever,
        n_queries=len(tasks),
        rows=rows,
        index=joint.index.index,
        agent_only_index=only.index.index,
        embedding_model=embedder.name,
        protocol={
            "gold": "the servers owning the task's annotated tools (Annotator Metadata → Tools); binary relevance",
            "ambiguous_tool_names": (
                "a name several servers own goes to those that also own another tool of the same task, else to "
                f"all of them (every one is gold); {len(ambiguous)} task(s) have such a name"),
            "unknown_tool_names": (
                "a name no server in tools.json owns is ignored; a task whose every name is unknown is dropped: "
                f"{len(dropped)} of {len(benchmark.queries)} tasks dropped ({', '.join(dropped) or 'none'}); "
                f"{len(unresolved)} task(s) have an unknown name"),
            "steps": ("each numbered item of Annotator Metadata → Steps is one query; a task without steps is "
                      f"queried with its question ({len(without_steps)} such task(s))"),
            "first_stage": {
                "bm25": "BM25 over the flat document (full_doc) of tools and agents",
                "minilm": "k-NN over the overview vectors of tools and agents (name, description, parameter names / "
                          "the agent's tools' names), all-MiniLM-L6-v2",
                "hybrid": "both, min-max normalised per sub-query, weights 0.25 BM25 / 0.75 k-NN (pipeline joint-hybrid)",
                "description_vectors": "the reference row's k-NN over the description vectors instead of the overviews",
                "scale": "every step's entity scores min-max normalised to [0, 1] over its hits",
            },
            "algorithm_1": {"N": settings.agent_top_entities, "K": RUN_DEPTH,
                            "rule": "the top N entities of a step mapped to their owners, each owner scored by its best entity"},
            "merge": {
                "max": "CombMAX: an agent's score is its best step score; ties by the sum of its step scores, then id",
                "rrf": "Σ over the steps that reached the agent of 1 / its rank there (rank constant 0)",
                "main": merge,
            },
            "own_decomposition": (
                "no LLM: a cached rewrite of the question when the LLM cache holds one "
                f"({from_cache} task(s)), else toolsift.query.decompose.split_needs (sentences; 'then' and "
                "'and <action verb>' clauses)"),
            "agent_only_index": "the catalog's servers with their tool lists removed: name, description and the "
                                "rest of each server entry; overview = name + description",
            "measures": "ir_measures R@K, AP@K (cut at K, over all gold agents), nDCG@K (binary); mean over tasks",
            "paper_minilm": dict(PAPER_MINILM),
            "limit": limit,
            "seconds": round(time.perf_counter() - started, 1),
        },
    )
