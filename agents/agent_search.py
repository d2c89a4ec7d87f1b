"""Tool-to-Agent retrieval: one joint first stage over tool and agent documents per step, Algorithm 1
per step, the steps merged.

Per step (a tool need of the request, an annotated step, or the request itself):

1. **Joint first stage** (:func:`joint_body`): tool and agent documents ranked together by one
   query. ``minilm``: k-NN on the ``overview`` vector (a tool's name, description and parameter
   names; an agent's name, description and its tools' names — the same field for both, so their
   scores compare). ``bm25``: BM25 over the flat document (``full_doc``). ``hybrid``: both as
   sub-queries of a neural-search ``hybrid`` query through the ``joint-hybrid`` pipeline (min-max,
   weights 0.25 lexical / 0.75 dense). Single-query scores are min-max normalised over the step's
   hits here, as the pipeline normalises each sub-query, so every step's scores lie in [0, 1].
2. **Algorithm 1** (:func:`~toolsift.agents.aggregation.aggregate_to_agents`): the top N entities
   (``agent_top_entities``, 50) to their owners, each owner scored by its best entity.
3. **Merge** (:func:`~toolsift.agents.aggregation.merge_steps`): CombMAX over the steps, ties by the
   sum of step scores (``rrf``: reciprocal-rank sum, the baseline).

Tools are merged the same way (best score over the steps), so the answer lists the tools that
reached the agents beside them.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from toolsift.errors import BadQueryError, ClusterError, IndexMismatchError
from toolsift.mappings import F, vector_field
from toolsift.mappings.model import rerank_text
from toolsift.opensearch import cap_terms, wire_vector
from toolsift.plugin_scripts.pipelines import pipeline_templates, render_pipeline
from toolsift.query.builder import fetch_spec, hit_identity
from toolsift.query.scope import UNSCOPED, Scope
from toolsift.query.structured import StructuredQuery
from toolsift.agents.aggregation import MergeRule, aggregate_to_agents, merge_steps
from toolsift.records import RankedAgent, RankedTool, kinds_for
from toolsift.search.request import StepRanking

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from toolsift.config import Retriever, Settings
    from toolsift.encoders.embedding import Embedder
    from toolsift.mappings.index import IndexInfo

__all__ = [
    "JOINT_PIPELINE",
    "MEMO_SIZE",
    "Representation",
    "AgentAnswer",
    "step_texts",
    "joint_body",
    "StepSource",
    "StepRetriever",
    "search_agents",
]

#: The search-pipeline template of the hybrid joint first stage.
JOINT_PIPELINE = "joint-hybrid"
#: How many step rankings a :class:`StepRetriever` remembers (an evaluation repeats steps across rows).
MEMO_SIZE = 4096
#: The index schema that added the tool and agent ``overview`` (text + vector) agent-level search reads.
OVERVIEW_SCHEMA_VERSION = 2
#: Which vector the dense part matches: ``overview`` (the method) or ``description`` (the plain
#: joint index of the paper's corpora: descriptions only; a reference row of the evaluation).
Representation = Literal["overview", "description"]


def step_texts(sq: StructuredQuery) -> list[str]:
    """One query text per tool need (its tool description, else its user intent), each once."""
    texts = [need.tool_description or need.user_intent for need in sq.tool_needs]
    return list(dict.fromkeys(t for t in texts if t))


@functools.cache
def joint_pipeline() -> dict[str, Any]:
    """The ``joint-hybrid`` template as an inline search pipeline (its processors, no description)."""
    template = pipeline_templates()[JOINT_PIPELINE]
    return {k: v for k, v in render_pipeline(JOINT_PIPELINE, template, {}).items() if k.endswith("processors")}


def joint_body(
    text: str,
    vector: Sequence[float] | None,
    retriever: Retriever,
    size: int,
    *,
    representation: Representation = "overview",
    scope: Scope = UNSCOPED,
) -> dict[str, Any]:
    """The joint first-stage request of one step: tool and agent documents, no entity filter; the
    caller's tenant inside the match's filter and the k-NN clause's own filter.

    ``hybrid`` must run through the ``joint-hybrid`` pipeline.

    Raises:
        BadQueryError: a dense retriever without the step's vector, or an unknown retriever.
    """
    kinds = kinds_for(retriever)
    clauses = scope.clauses()
    lexical: dict[str, Any] = {"match": {F.full_doc: cap_terms(text)}}
    if clauses:
        lexical = {"bool": {"must": [lexical], "filter": clauses}}
    if "dense" in kinds and vector is None:
        raise BadQueryError(f"retriever {retriever!r} needs the step's query vector")
    dense: dict[str, Any] = {}
    if vector is not None:
        spec: dict[str, Any] = {"vector": list(vector), "k": size}
        if clauses:
            spec["filter"] = {"bool": {"filter": clauses}}
        dense = {"knn": {vector_field(representation): spec}}
    if kinds == ("bm25",):
        query: dict[str, Any] = lexical
    elif kinds == ("dense",):
        query = dense
    else:
        query = {"hybrid": {"queries": [lexical, dense]}}
    return {"size": size, **fetch_spec(), "query": query}


@dataclass(frozen=True)
class AgentAnswer:
    """Step-wise Tool-to-Agent retrieval: the merged agents and tools, and every step's ranking."""

    agents: tuple[RankedAgent, ...]
    tools: tuple[RankedTool, ...]
    steps: tuple[StepRanking, ...]
    rule: MergeRule
    timings: Mapping[str, float]


def _min_max(scores: list[float]) -> list[float]:
    """A ranking's scores (best first) put on [0, 1]: the last is 0, the first 1 (all 1 when equal)."""
    if not scores:
        return scores
    high, low = scores[0], scores[-1]
    span = high - low
    if span <= 1e-12:
        return [1.0] * len(scores)
    return [(s - low) / span for s in scores]


def _ranked(hit: Mapping[str, Any], score: float, rank: int) -> RankedTool:
    """A hit of a joint ranking (or an id lookup) as a ranked entity: identity, prerequisites, risk, score."""
    who = hit_identity(hit)
    return RankedTool(doc_id=who.doc_id, name=who.name, entity=who.entity, agent_id=who.agent_id, score=score,
                      first_stage_rank=rank, prerequisites=who.prerequisites, risk=who.risk)


class StepSource(Protocol):
    """What step-wise retrieval needs of a searcher (:class:`~toolsift.search.searcher.Searcher` is one):
    its client, settings, embedder, index and agent names."""

    client: OpenSearch
    settings: Settings
    embedder: Embedder | None
    index: IndexInfo

    def agent_names(self, tools: Sequence[RankedTool]) -> dict[str, str]: ...


class StepRetriever:
    """Runs the joint first stage and Algorithm 1 for single steps on one index, remembering answers.

    Args:
        searcher: the index, client, embedder and pipelines (Algorithm 1's N from its settings).
        representation: the dense part's vector (``overview``; ``description`` for the reference
            row of the evaluation).
        remember: keep step rankings across calls (evaluations); False: only within one call.

    Raises:
        IndexMismatchError: at construction, when the index predates the ``overview`` field.
    """

    def __init__(self, searcher: StepSource, *, representation: Representation = "overview",
                 remember: bool = True) -> None:
        self.searcher = searcher
        self.representation = representation
        #: Keep step rankings across calls (an evaluation over a fixed index); a service serving a live
        #: index must not, or a tool indexed after the first ranking of a text would never appear.
        self.remember = remember
        if int(searcher.index.meta.get("schema_version", 0)) < OVERVIEW_SCHEMA_VERSION:
            raise IndexMismatchError(
                f"index {searcher.index.index!r} was built by an older toolsift, without the tool and agent "
                f"overviews agent-level search needs; rebuild it: `toolsift ingest CATALOG --index "
                f"{searcher.settings.index} --rebuild`"
            )
        self._memo: dict[tuple[object, ...], StepRanking] = {}

    @property
    def top_n(self) -> int:
        return self.searcher.settings.agent_top_entities

    def rank(self, texts: Sequence[str], retriever: Retriever, timings: dict[str, float] | None = None,
             scope: Scope = UNSCOPED) -> list[StepRanking]:
        """Each text's :class:`StepRanking` (all owners within the top N) within ``scope``, in order."""
        return self.rank_each([(text, retriever) for text in texts], timings, scope)

    def rank_each(self, wanted: Sequence[tuple[str, Retriever]], timings: dict[str, float] | None = None,
                  scope: Scope = UNSCOPED) -> list[StepRanking]:
        """Each (text, retriever)'s :class:`StepRanking` within ``scope``, in order: the texts' query
        vectors in one batch, every first stage not remembered in one ``_msearch`` round trip."""
        timings = timings if timings is not None else {}
        key = scope.key()
        memo = self._memo if self.remember else {}
        missing = [pair for pair in dict.fromkeys(wanted) if (pair[1], key, pair[0]) not in memo]
        embedded = [(text, how) for text, how in missing if "dense" in kinds_for(how)]
        dense = list(dict.fromkeys(text for text, _ in embedded))
        vectors: dict[str, list[float]] = {}
        if dense:
            if self.searcher.embedder is None:
                raise BadQueryError(f"retriever {embedded[0][1]!r} needs an embedding model")
            t0 = time.perf_counter()
            matrix = self.searcher.embedder.encode_query(dense)
            timings["encode"] = timings.get("encode", 0.0) + (time.perf_counter() - t0) * 1000
            vectors = {t: wire_vector(matrix[i]) for i, t in enumerate(dense)}
        t0 = time.perf_counter()
        found = {(t, how): memo[(how, key, t)] for t, how in wanted if (how, key, t) in memo}
        ranked = self._entities(missing, vectors, scope) if missing else []
        for (text, how), entities in zip(missing, ranked):
            agents = aggregate_to_agents(entities, top_n=self.top_n, top_k=self.top_n, names=self.searcher.agent_names(entities))
            found[(text, how)] = memo[(how, key, text)] = StepRanking(text, tuple(entities), tuple(agents))
            if len(memo) > MEMO_SIZE:  # oldest first: dicts keep insertion order
                del memo[next(iter(memo))]
        if missing:
            timings["candidates"] = timings.get("candidates", 0.0) + (time.perf_counter() - t0) * 1000
        return [found[pair] for pair in wanted]

    def identities(self, ids: Sequence[str], scope: Scope = UNSCOPED) -> dict[str, RankedTool]:
        """The tools ``ids`` that ``scope`` lets the caller see, by id (score 0, no rank): one search
        by id, so routed tool documents are found on any shard."""
        return {tool.doc_id: tool for tool in (_ranked(hit, 0.0, 0) for hit in self._by_id(ids, scope, fetch_spec()))}

    def documents(self, ids: Sequence[str], scope: Scope = UNSCOPED) -> dict[str, str]:
        """The reranker's text (:func:`~toolsift.mappings.model.rerank_text`) of the tools ``ids`` that
        ``scope`` lets the caller see, by id: one search by id."""
        hits = self._by_id(ids, scope, fetch_spec(with_documents=True))
        return {hit_identity(hit).doc_id: rerank_text(hit.get("_source") or {}) for hit in hits}

    def _by_id(self, ids: Sequence[str], scope: Scope, fetch: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The hits of the documents ``ids`` within ``scope`` (one search, so routed tool documents are
        found on any shard), with what ``fetch`` asks for."""
        if not ids:
            return []
        body = {"size": len(ids), **fetch,
                "query": {"bool": {"filter": [{"ids": {"values": list(ids)}}, *scope.clauses()]}}}
        hits: list[dict[str, Any]] = self.searcher.client.search(index=self.searcher.settings.index,
                                                                  body=body)["hits"]["hits"]
        return hits

    def _entities(self, wanted: Sequence[tuple[str, Retriever]], vectors: Mapping[str, Sequence[float]],
                  scope: Scope = UNSCOPED) -> list[list[RankedTool]]:
        """Each (text, retriever)'s joint first stage, all in one ``_msearch`` round trip."""
        searcher = self.searcher
        depth = max(self.top_n, searcher.settings.candidates)
        lines: list[dict[str, Any]] = []
        for text, retriever in wanted:
            body = joint_body(text, vectors.get(text), retriever, depth, representation=self.representation,
                              scope=scope)
            if retriever == "hybrid":  # _msearch takes no pipeline parameter: the body carries the pipeline inline
                body["search_pipeline"] = joint_pipeline()
            lines.extend(({"index": searcher.settings.index}, body))
        answers = searcher.client.msearch(body=lines)["responses"]
        out: list[list[RankedTool]] = []
        for (_, retriever), answer in zip(wanted, answers):
            if "error" in answer:
                reason = answer["error"].get("reason", answer["error"]) if isinstance(answer["error"], dict) else answer["error"]
                raise ClusterError(f"OpenSearch failed the joint first stage: {reason}")
            hits = answer["hits"]["hits"]
            scores = [float(hit["_score"]) for hit in hits]
            # The hybrid pipeline already normalised (and weighted) its sub-queries; a single query's
            # scores are put on the same [0, 1] scale here, so steps compare in the merge.
            if retriever != "hybrid":
                scores = _min_max(scores)
            out.append([_ranked(hit, score, i) for i, (hit, score) in enumerate(zip(hits, scores), start=1)])
        return out


def _merge_tools(rankings: Sequence[StepRanking], top_k: int) -> list[RankedTool]:
    """Tool entities by their best score over the steps (ties: earlier step, higher rank there)."""
    best: dict[str, tuple[float, int, int, RankedTool]] = {}
    for step, ranking in enumerate(rankings):
        for entity in ranking.entities:
            if entity.entity != "tool":
                continue
            key = (entity.score, -step, -entity.first_stage_rank, entity)
            if entity.doc_id not in best or key[:3] > best[entity.doc_id][:3]:
                best[entity.doc_id] = key
    ordered = sorted(best.values(), key=lambda k: (-k[0], -k[1], -k[2], k[3].doc_id))
    return [k[3] for k in ordered[:top_k]]


def search_agents(
    retriever_of_steps: StepRetriever,
    sq: StructuredQuery,
    *,
    top_k: int,
    retriever: Retriever,
    rule: MergeRule = "max",
    scope: Scope = UNSCOPED,
) -> AgentAnswer:
    """Step-wise Tool-to-Agent retrieval: each tool need of ``sq`` is a step (one need: direct).

    Raises:
        BadQueryError: a query without text.
    """
    texts = step_texts(sq)
    if not texts:
        raise BadQueryError("the query has no text to search with")
    timings: dict[str, float] = {}
    rankings = retriever_of_steps.rank(texts, retriever, timings, scope)
    t0 = time.perf_counter()
    agents = merge_steps([r.agents for r in rankings], top_k=top_k, rule=rule)
    tools = _merge_tools(rankings, top_k)
    timings["rank"] = (time.perf_counter() - t0) * 1000
    return AgentAnswer(tuple(agents), tuple(tools), tuple(rankings), rule, timings)
