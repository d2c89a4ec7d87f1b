"""Search: request → structured query → OpenSearch candidates + exact field scores → ranker.

:class:`Searcher` is the library entry point the CLI, the evaluation harness and the benchmark all
use. One instance holds the client, the embedder and the ranker, checks once that the index was
built with the same embedding model, and installs the search pipelines once.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from opensearchpy import OpenSearch

from toolsift.config import Copies, MultiNeed, Retriever, Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import BadQueryError, ConfigError
from toolsift.mappings import F
from toolsift.mappings.index import IndexInfo, IndexManager
from toolsift.opensearch import cosine_from_lucene, wire_vector
from toolsift.plugin_scripts.pipelines import ensure_pipelines
from toolsift.query.builder import QueryBuilder, hit_identity, parse_field_scores
from toolsift.query.scope import UNSCOPED, Scope
from toolsift.query.structured import StructuredQuery
from toolsift.agents.aggregation import AUTO_MIN_TOOLS, MergeRule, decide_level
from toolsift.ranker.artifact import WeightsArtifact, load_artifact
from toolsift.ranker.deploy import active_weights, weights_stamp
from toolsift.ranker.fusion import FieldWeightRanker
from toolsift.ranker.mftr import MFTRRanker
from toolsift.ranker.ranking_pipeline import RankingPipeline, candidate_text, fuse_reranked, ranking_pipeline
from toolsift.ranker.protocol import RankingService, RankRequest, RankResponse
from toolsift.ranker.types import Ranker
from toolsift.records import FieldSignals, Kind, RankedTool, kinds_for
from toolsift.agents.agent_search import StepRetriever, search_agents
from toolsift.search.copy_lookup import answer_once, depth_for
from toolsift.search.planner import PlannerParams, plan_search, rank_planned
from toolsift.learning.querylog import QueryLog
from toolsift.search.request import Method, RequestedLevel, SearchResult, StepRanking, check_top_k

__all__ = ["Searcher", "PLANNER_KEY", "planner_params", "copies_for"]

#: Where a weights artifact's ``config`` holds the multi-need parameters it was tuned with.
PLANNER_KEY = "planner"


def copies_for(sq: StructuredQuery) -> str:
    """The ``preference`` a query's first stage is sent with: the same request reads the same shard
    copies, so it gets the same answer (a primary and its replica can rank near-ties apart: their
    segments differ); other requests still spread over the copies."""
    return "q" + hashlib.blake2b(json.dumps(sq.to_dict(), sort_keys=True).encode(), digest_size=8).hexdigest()


def planner_params(artifact: WeightsArtifact | None, settings: Settings) -> PlannerParams:
    """The multi-need parameters in force: those a weights artifact was tuned with (its
    ``config["planner"]``), else the settings'.

    Raises:
        ConfigError: the artifact's parameters are malformed (named with its path).
    """
    found = artifact.config.get(PLANNER_KEY) if artifact is not None else None
    if found is None:
        return PlannerParams.from_settings(settings)
    try:
        if not isinstance(found, Mapping):
            raise BadQueryError(f"expected an object, got {found!r}")
        return PlannerParams.from_dict(found)
    except BadQueryError as exc:
        where = artifact.path if artifact is not None and artifact.path else "the active weights"
        raise ConfigError(f"{where}: config.{PLANNER_KEY} is not the multi-need parameters ({exc})") from None

class Searcher:
    """Searches one toolsift index.

    Args:
        client: connected client.
        settings: index alias, retriever, candidates, field weights, Algorithm 1's N.
        embedder: needed for the ``minilm`` and ``hybrid`` retrievers; may be None for ``bm25``.
        ranker: orders the candidates; default: :class:`MFTRRanker` with the learned weights of
            ``artifact`` or the ``weights`` setting, else :class:`FieldWeightRanker` with the
            settings' field weights.
        artifact: learned weights to use instead of the ``weights`` setting. Learned weights are
            also pushed into the first stage (clause boosts or the hybrid pipeline's weights, in
            pipelines of their own).
        ranking: the ranking service the multi-field path calls; default: the ranker service at
            ``ranker_url`` (with its first-stage fallback) when set, else in-process
            :class:`RankingPipeline` over ``ranker`` plus the ``reranker`` setting's model.
        source: who searches (``cli``, ``api``, ``ui``, ``eval``: only an evaluation, over an index
            that does not change, keeps step rankings across searches), recorded in the query log when the
            ``query_log`` setting is on.

    Raises:
        IndexMismatchError: at construction, when the index does not exist or holds vectors of
            another embedding model.
    """

    def __init__(
        self,
        client: OpenSearch,
        settings: Settings,
        embedder: Embedder | None = None,
        *,
        ranker: Ranker | None = None,
        artifact: WeightsArtifact | None = None,
        ranking: RankingService | None = None,
        source: str = "api",
    ) -> None:
        self.client = client
        self.settings = settings
        self.embedder = embedder
        self.artifact: WeightsArtifact | None = artifact
        #: Field weights of the first-stage query: the learned ones, pushed down, when weights are loaded.
        self.first_stage_weights: dict[str, float] = dict(settings.field_weights)
        manager = IndexManager(client, settings.index)
        self.index: IndexInfo = manager.require()
        #: The index and pushed weights this searcher was built for (:func:`~toolsift.ranker.deploy.weights_stamp`).
        self.weights_stamp = weights_stamp(self.index)
        tag = ""
        if self.artifact is None and ranker is None:
            # the weights setting, else the weights pushed to the index (toolsift.ranker.deploy)
            self.artifact = load_artifact(settings.weights) if settings.weights is not None else active_weights(self.index)
        if self.artifact is not None:
            ranker = ranker or MFTRRanker(self.artifact.weights)
            self.first_stage_weights = self.artifact.weights.first_stage_weights()
            tag = self.artifact.tag
        self.ranker: Ranker = ranker or FieldWeightRanker(settings.field_weights, settings.derived_weight)
        #: The multi-need ranking's β and M: a weights artifact's (tuned for it in the workbench), else the settings'.
        self.planner: PlannerParams = planner_params(self.artifact, settings)
        self.ranking: RankingService = ranking or self._ranking_from_settings()
        #: Whether candidates travel with their text (a reranker reads it).
        self.reranks = settings.ranker_url is not None or getattr(self.ranking, "reranker", None) is not None
        if embedder is not None:
            manager.check_model(self.index, embedder.name, embedder.dimension)
        self._pipelines = ensure_pipelines(client, settings.index, self.first_stage_weights, tag=tag)
        self._agent_names: dict[str, str] = {}
        self._steps: StepRetriever | None = None
        self._holds_servers: bool | None = None
        #: Where searches are recorded (the ``query_log`` setting); None: not logged.
        self.source = source
        self.query_log: QueryLog | None = QueryLog.open(client, settings, source=source) if settings.query_log else None

    @property
    def weights_version(self) -> str | None:
        """``<name>/vNNN`` of the learned weights in use (their digest when not saved); None: fixed weights."""
        return None if self.artifact is None else self.artifact.version

    def _ranking_from_settings(self) -> RankingService:
        settings = self.settings
        if settings.ranker_url:
            from toolsift.ranker.ranker_client import RemoteRanker

            token = settings.ranker_token.get_secret_value() if settings.ranker_token else None
            return RemoteRanker(settings.ranker_url, timeout=settings.ranker_timeout, token=token)
        return ranking_pipeline(settings, self.artifact, self.ranker)

    def structure(self, text: str) -> StructuredQuery:
        """A plain request as a structured query, the way this searcher's ranker expects it.

        Learned MFTR weights were trained with the request matched against parameters as one
        argument; the fixed-weight ranker uses the request for the three need fields only.
        """
        learned = isinstance(self.ranker, MFTRRanker) and not self.ranker.weights.normalise
        return StructuredQuery.from_text(text, as_argument=learned)

    # --- public -----------------------------------------------------------------------------------
    def search(
        self,
        query: str | StructuredQuery,
        *,
        top_k: int = 10,
        method: Method = "multi-field",
        retriever: Retriever | None = None,
        level: RequestedLevel = "tool",
        merge: MergeRule = "max",
        scope: Scope = UNSCOPED,
        multi_need: MultiNeed | None = None,
        copies: Copies | None = None,
    ) -> SearchResult:
        """Rank tools (or agents) for ``query``.

        Args:
            query: the request text (becomes one tool need) or a rewritten structured query.
            top_k: how many tools (or agents) to return.
            method: ``multi-field`` (MFTR fields, per-field scores, ranker) or ``full-doc``; the
                tool-level ranking (``tool`` and ``auto``).
            retriever: ``bm25``, ``minilm`` or ``hybrid``; default from the settings.
            level: ``tool``; ``agent`` for Tool-to-Agent retrieval (:mod:`toolsift.agents.agent_search`:
                each tool need of ``query`` is a step with its own joint tool + agent ranking and
                Algorithm 1, the steps merged by ``merge``); ``auto``: the tool answer, or the
                agents owning at least two of its tools.
            merge: how the steps' agent rankings are merged (``max`` or ``rrf``; see
                :func:`~toolsift.agents.aggregation.merge_steps`).
            scope: the caller's tenant (every level) and the request's agent and tag filters (tool
                level), inside every first-stage query (:class:`~toolsift.query.scope.Scope`).
            multi_need: a multi-field tool search over the request's needs
                (:mod:`toolsift.search.planner`): ``on``, ``off``, or ``auto`` (on for an index that
                holds servers, without agent or tag filters or learned weights); default: the setting.
            copies: a tool answer's copies of one tool on several servers: ``once`` (the best-ranked,
                naming the others in ``also_on``: :mod:`toolsift.search.copy_lookup`) or ``all``; default:
                the setting.

        Raises:
            BadQueryError: the request cannot be answered as asked (``multi_need="on"`` with filters,
                ``top_k`` out of range: :func:`~toolsift.search.request.check_top_k`).
        """
        check_top_k(top_k)
        result = self._search(query, top_k=top_k, method=method, retriever=retriever, level=level, merge=merge,
                              scope=scope, multi_need=multi_need, copies=copies)
        if self.query_log is not None:
            self.query_log.record(result, weights_version=self.weights_version, tenant=scope.tenant)
        return result

    def search_with_candidates(
        self, query: str | StructuredQuery, *, top_k: int = 10, retriever: Retriever | None = None,
        scope: Scope = UNSCOPED, copies: Copies | None = None,
    ) -> tuple[SearchResult, list[FieldSignals]]:
        """A multi-field tool search (logged like :meth:`search`) plus every first-stage candidate's
        signals, for re-ranking them with other weights (the workbench)."""
        candidates: list[FieldSignals] = []
        result = self._search(query, top_k=top_k, method="multi-field", retriever=retriever, level="tool",
                              merge="max", candidates_out=candidates, scope=scope, copies=copies)
        if self.query_log is not None:
            self.query_log.record(result, weights_version=self.weights_version, tenant=scope.tenant)
        return result, candidates

    def _search(
        self,
        query: str | StructuredQuery,
        *,
        top_k: int,
        method: Method,
        retriever: Retriever | None,
        level: RequestedLevel,
        merge: MergeRule,
        candidates_out: list[FieldSignals] | None = None,
        scope: Scope = UNSCOPED,
        multi_need: MultiNeed | None = None,
        copies: Copies | None = None,
    ) -> SearchResult:
        if level == "agent":
            if scope.narrows:
                raise BadQueryError("agent and tag filters narrow a tool search; at agent level they have nothing to filter")
            return self._search_agents(query, top_k=top_k, method=method, retriever=retriever, merge=merge,
                                       scope=scope)
        if level == "auto":
            return self._search_auto(query, top_k=top_k, method=method, retriever=retriever, scope=scope,
                                     multi_need=multi_need, copies=copies)
        if level != "tool":
            raise BadQueryError(f"unknown level {level!r}; use tool, agent or auto")
        retriever = retriever or self.settings.retriever
        once = (copies or self.settings.copies) == "once"
        if method == "multi-field" and candidates_out is None and self.plans(multi_need, scope):
            return self._search_planned(query, top_k=top_k, retriever=retriever, scope=scope, once=once)
        if self.artifact is not None and method == "multi-field":
            self._check_kinds(retriever)
        sq = query if isinstance(query, StructuredQuery) else self.structure(query)
        timings: dict[str, float] = {}
        started = time.perf_counter()
        vectors = self._encode(sq, retriever, method, timings)
        ranker_name, reranker_name, degraded_reason = self.ranker.name, None, None
        # Collapsing copies takes more of the ranking, never a deeper first stage: the ranking is the same.
        keep = min(depth_for(top_k), max(top_k, self.settings.candidates)) if once else top_k
        if method == "full-doc":
            tools = self._full_doc(sq, vectors, retriever, top_k, "tool", timings, scope=scope, keep=keep)
        elif method == "multi-field":
            tools, answer = self._multi_field(sq, vectors, retriever, top_k, "tool", timings, candidates_out,
                                              scope=scope, keep=keep)
            ranker_name, reranker_name, degraded_reason = answer.ranker, answer.reranker, answer.degraded_reason
        else:
            raise BadQueryError(f"unknown method {method!r}; use multi-field or full-doc")
        if once:
            tools = self._once(tools, top_k, scope, timings)
        timings["total"] = (time.perf_counter() - started) * 1000
        return SearchResult(
            query=sq,
            method=method,
            retriever=retriever,
            level="tool",
            tools=tuple(tools[:top_k]),
            timings=timings,
            index=self.index.index,
            ranker=ranker_name if method == "multi-field" else "opensearch",
            reranker=reranker_name,
            degraded=degraded_reason is not None,
            degraded_reason=degraded_reason,
        )

    def _search_agents(
        self,
        query: str | StructuredQuery,
        *,
        top_k: int,
        method: Method,
        retriever: Retriever | None,
        merge: MergeRule,
        scope: Scope = UNSCOPED,
    ) -> SearchResult:
        retriever = retriever or self.settings.retriever
        sq = query if isinstance(query, StructuredQuery) else StructuredQuery.from_text(query)
        started = time.perf_counter()
        answer = search_agents(self.steps(), sq, top_k=top_k, retriever=retriever, rule=merge, scope=scope)
        timings = {**answer.timings, "total": (time.perf_counter() - started) * 1000}
        return SearchResult(
            query=sq,
            method=method,
            retriever=retriever,
            level="agent",
            tools=answer.tools,
            agents=answer.agents,
            timings=timings,
            index=self.index.index,
            ranker=f"tool-to-agent ({merge} over {len(answer.steps)} step(s))",
            steps=answer.steps,
            requested_level="agent",
        )

    def plans(self, multi_need: MultiNeed | None, scope: Scope = UNSCOPED) -> bool:
        """Whether a multi-field tool search runs as a multi-need search (:mod:`toolsift.search.planner`).

        Raises:
            BadQueryError: ``on`` with agent or tag filters (the joint rankings do not take them).
        """
        mode = multi_need or self.settings.multi_need
        if mode == "off":
            return False
        if scope.narrows:
            if mode == "on":
                raise BadQueryError("multi_need 'on' searches tools and servers together and takes no agent or tag "
                                    "filters; send the filters with multi_need 'auto' or 'off'")
            return False
        # Learned MFTR weights were trained for the one multi-field query: a search team's tuning wins,
        # unless the weights were tuned for the multi-need ranking itself (they carry its parameters).
        tuned_for_it = self.artifact is None or PLANNER_KEY in self.artifact.config
        return mode == "on" or (tuned_for_it and self.holds_servers)

    @property
    def holds_servers(self) -> bool:
        """Whether the index holds server (agent) documents beside its tools (looked up once)."""
        if self._holds_servers is None:
            answer = self.client.count(index=self.settings.index, body={"query": {"term": {F.entity: "agent"}}})
            self._holds_servers = int(answer.get("count", 0)) > 0
        return self._holds_servers

    def _once(self, tools: Sequence[RankedTool], top_k: int, scope: Scope,
              timings: dict[str, float]) -> list[RankedTool]:
        """The first ``top_k`` of ``tools`` with each capability once (:mod:`toolsift.search.copy_lookup`)."""
        t0 = time.perf_counter()
        kept = answer_once(self.client, self.settings.index, tools, top_k=top_k,
                           threshold=self.settings.copy_overlap, scope=scope)
        timings["copies"] = (time.perf_counter() - t0) * 1000
        return kept

    def _search_planned(
        self, query: str | StructuredQuery, *, top_k: int, retriever: Retriever, scope: Scope = UNSCOPED,
        once: bool = False,
    ) -> SearchResult:
        sq = query if isinstance(query, StructuredQuery) else StructuredQuery.from_text(query)
        started = time.perf_counter()
        # An in-process reranker (the reranker setting) rescores the planned answer's top M.
        pipeline = self.ranking if isinstance(self.ranking, RankingPipeline) and self.ranking.reranker else None
        reranker = pipeline.reranker if pipeline is not None else None
        wanted = depth_for(top_k) if once else top_k
        depth = max(wanted, pipeline.rerank_top) if pipeline is not None else wanted
        answer = plan_search(self.steps(), sq, top_k=depth, retriever=retriever, params=self.planner, scope=scope)
        tools: Sequence[RankedTool] = answer.tools
        timings = dict(answer.timings)
        if pipeline is not None and reranker is not None and tools:
            # The reranker reads the whole request against each of the planned answer's top M.
            t0 = time.perf_counter()
            head = tools[:pipeline.rerank_top]
            texts = self.steps().documents([t.doc_id for t in head], scope)
            scores = reranker.score_pairs([(sq.text or "", candidate_text(texts.get(t.doc_id, ""), t.name))
                                           for t in head])
            tools = fuse_reranked(tools, scores, pipeline.fusion_weight)
            timings["rerank"] = (time.perf_counter() - t0) * 1000
        if once:
            tools = self._once(tools, top_k, scope, timings)
        timings["total"] = (time.perf_counter() - started) * 1000
        return SearchResult(
            query=sq,
            method="multi-field",
            retriever=retriever,
            level="tool",
            tools=tuple(tools[:top_k]),
            agents=answer.agents[:top_k],
            timings=timings,
            index=self.index.index,
            ranker=f"multi-need ({len(answer.steps)} texts; {self.planner.describe()})",
            reranker=reranker.name if reranker is not None and tools else None,
            steps=answer.steps,
        )

    def replan(self, steps: Sequence[StepRanking], *, top_k: int, params: PlannerParams,
               scope: Scope = UNSCOPED) -> list[RankedTool]:
        """A multi-need answer from a search's kept ``steps`` (its texts' rankings) with ``params``: what
        a search with those parameters ranks (the workbench's proposals), prerequisites looked up in ``scope``.
        A search made at λ = 0 kept no ranking of the request's words: a proposed λ reweighs nothing there."""
        tools, _ = rank_planned(steps, top_k=top_k, params=params,
                                identities=lambda ids: self.steps().identities(ids, scope))
        return tools

    def _search_auto(
        self, query: str | StructuredQuery, *, top_k: int, method: Method, retriever: Retriever | None,
        scope: Scope = UNSCOPED, multi_need: MultiNeed | None = None, copies: Copies | None = None,
    ) -> SearchResult:
        result = self._search(query, top_k=top_k, method=method, retriever=retriever, level="tool", merge="max",
                              scope=scope, multi_need=multi_need, copies=copies)
        decision = decide_level(result.tools, min_tools=AUTO_MIN_TOOLS, names=self.agent_names(result.tools))
        return replace(result, level=decision.level, agents=decision.agents, requested_level="auto",
                       level_reason=decision.reason)

    def steps(self) -> StepRetriever:
        """The step-wise joint retriever of this index (agent level), created on first use."""
        if self._steps is None:
            self._steps = StepRetriever(self, remember=self.source == "eval")
        return self._steps

    def _check_kinds(self, retriever: Retriever) -> None:
        assert self.artifact is not None
        wanted = tuple(self.artifact.weights.kinds)
        if set(wanted) != set(kinds_for(retriever)):
            trained = self.artifact.config.get("retriever", "?")
            raise BadQueryError(
                f"the weights in {self.artifact.path} were trained for the {trained!r} retriever "
                f"({', '.join(wanted)} scores); search with --retriever {trained} or other weights"
            )

    # --- stages -----------------------------------------------------------------------------------
    def _encode(
        self, sq: StructuredQuery, retriever: Retriever, method: Method, timings: dict[str, float]
    ) -> dict[str, list[float]]:
        if "dense" not in kinds_for(retriever):
            return {}
        if self.embedder is None:
            raise BadQueryError(f"retriever {retriever!r} needs an embedding model")
        t0 = time.perf_counter()
        texts = [sq.text or sq.tool_needs[0].user_intent] if method == "full-doc" else sq.all_texts()
        matrix = self.embedder.encode_query(texts)
        timings["encode"] = (time.perf_counter() - t0) * 1000
        return {t: wire_vector(matrix[i]) for i, t in enumerate(texts)}

    def _builder(self, depth: int, entity: str | None, scope: Scope = UNSCOPED) -> QueryBuilder:
        return QueryBuilder(
            field_weights=self.first_stage_weights,
            candidates=max(depth, self.settings.candidates),
            entity=entity,
            scope=scope,
            ef_search=self.settings.knn_ef_search,
        )

    def _full_doc(self, sq: StructuredQuery, vectors: Mapping[str, Sequence[float]], retriever: Retriever, depth: int,
                  entity: str | None, timings: dict[str, float], *, scope: Scope = UNSCOPED,
                  keep: int | None = None) -> list[RankedTool]:
        """The Full-Doc baseline's ranking, ``depth`` deep (``keep``: that many of it, as deep a first stage)."""
        kind: Kind | Literal["hybrid"] = "hybrid" if retriever == "hybrid" else kinds_for(retriever)[0]
        text = sq.text or sq.tool_needs[0].user_intent
        body = self._builder(depth, entity, scope).full_doc_body(text, vectors.get(text), kind, keep or depth)
        params = {"preference": copies_for(sq),
                  **({"search_pipeline": self._pipelines["fulldoc-hybrid"]} if kind == "hybrid" else {})}
        t0 = time.perf_counter()
        answer = self.client.search(index=self.settings.index, body=body, params=params)
        timings["candidates"] = (time.perf_counter() - t0) * 1000
        out = []
        for i, hit in enumerate(answer["hits"]["hits"]):
            who = hit_identity(hit)
            score = float(hit["_score"])
            out.append(
                RankedTool(
                    doc_id=who.doc_id,
                    name=who.name,
                    entity=who.entity,
                    agent_id=who.agent_id,
                    score=score,
                    raw_scores={kind: {F.full_doc: cosine_from_lucene(score) if kind == "dense" else score}},
                    first_stage_rank=i + 1,
                    risk=who.risk,
                )
            )
        return out

    def _multi_field(self, sq: StructuredQuery, vectors: Mapping[str, Sequence[float]], retriever: Retriever,
                     depth: int, entity: str | None, timings: dict[str, float],
                     candidates_out: list[FieldSignals] | None = None, *, scope: Scope = UNSCOPED,
                     keep: int | None = None) -> tuple[list[RankedTool], RankResponse]:
        """The ranked candidates of a first stage ``depth`` deep, ``keep`` of them (default ``depth``)."""
        signals = self.candidate_signals(sq, vectors, retriever, depth, entity, timings, documents=self.reranks,
                                         scope=scope)
        if candidates_out is not None:
            candidates_out.extend(signals.values())
        t0 = time.perf_counter()
        answer = self.ranking.rank(RankRequest.build(sq, list(signals.values()), top_k=keep or depth))
        timings["rank"] = (time.perf_counter() - t0) * 1000
        for stage in ("base", "rerank"):
            if stage in answer.timings_ms:
                timings[f"rank_{stage}"] = answer.timings_ms[stage]
        return answer.tools(), answer

    def candidate_signals(
        self,
        sq: StructuredQuery,
        vectors: Mapping[str, Sequence[float]],
        retriever: Retriever,
        depth: int,
        entity: str | None = "tool",
        timings: dict[str, float] | None = None,
        *,
        parameters: bool | None = None,
        documents: bool = False,
        scope: Scope = UNSCOPED,
    ) -> dict[str, FieldSignals]:
        """First stage + exact per-field scores: the ranker's input, by document id (with each
        candidate's reranker text when ``documents``).

        A query without argument texts is one request: the exact scores are computed in its fetch phase
        (:meth:`~toolsift.query.builder.QueryBuilder.candidates_with_field_scores_body`). A query with
        arguments is two, the first stage and then the exact scores of its candidates (:meth:`signals_for`):
        each parameter's score against each argument comes from nested ``inner_hits``, and inner hits
        inside a ``post_filter`` make OpenSearch's node query cache keep the whole search context of the
        request — every hit it fetched, ~1.3 MB per search — once a segment holds 10,000 documents
        (OpenSearch 2.19; issue 44: a long evaluation filled a 1 GB heap and the node answered 429 to
        everything). Asked in the query of their own request, the same inner hits are not kept."""
        timings = timings if timings is not None else {}
        parameters = self._wants_parameters(sq, parameters)
        if sq.argument_texts():
            body, pipeline = self.first_stage_request(sq, vectors, retriever, depth, entity, scope=scope)
            params = {"preference": copies_for(sq), **({"search_pipeline": pipeline} if pipeline else {})}
            t0 = time.perf_counter()
            answer = self.client.search(index=self.settings.index, body=body, params=params)
            timings["candidates"] = (time.perf_counter() - t0) * 1000
            first_stage = {hit_identity(hit).doc_id: (float(hit["_score"]), rank + 1)
                           for rank, hit in enumerate(answer["hits"]["hits"])}
            t0 = time.perf_counter()
            signals = self.signals_for(sq, vectors, retriever, list(first_stage), first_stage, parameters=parameters,
                                       documents=documents)
            timings["field_scores"] = (time.perf_counter() - t0) * 1000
            return signals
        body = self._builder(depth, entity, scope).candidates_with_field_scores_body(
            sq, vectors, retriever, parameters=parameters, documents=documents)
        pipeline = self.first_stage_pipeline(retriever)
        params = {"include_named_queries_score": "true", "preference": copies_for(sq),
                  **({"search_pipeline": pipeline} if pipeline else {})}
        t0 = time.perf_counter()
        answer = self.client.search(index=self.settings.index, body=body, params=params)
        timings["candidates"] = (time.perf_counter() - t0) * 1000
        first_stage = {
            hit_identity(hit).doc_id: (float(hit["_score"]), rank + 1)
            for rank, hit in enumerate(answer["hits"]["hits"])
        }
        signals = parse_field_scores(answer, sq, retriever, first_stage)
        return {doc_id: signals[doc_id] for doc_id in first_stage if doc_id in signals}

    def _wants_parameters(self, sq: StructuredQuery, parameters: bool | None) -> bool:
        """Whether the candidates' parameter lists are fetched: as asked, else when MFTR ranks (its
        penalty needs them always) or the query has arguments."""
        if parameters is None:
            return isinstance(self.ranker, MFTRRanker) or bool(sq.extracted_arguments)
        return parameters

    def first_stage_pipeline(self, retriever: Retriever | None = None) -> str | None:
        """The id of the search pipeline ``retriever``'s first stage runs through (None: no pipeline)."""
        template = QueryBuilder.pipeline_for(retriever or self.settings.retriever, self.settings.fusion)
        return self._pipelines[template] if template else None

    def first_stage_request(self, sq: StructuredQuery, vectors: Mapping[str, Sequence[float]], retriever: Retriever,
                            depth: int, entity: str | None = "tool", *,
                            scope: Scope = UNSCOPED) -> tuple[dict[str, Any], str | None]:
        """The first-stage request body and the search pipeline it runs through (None: no pipeline)."""
        body = self._builder(depth, entity, scope).candidates_body(sq, vectors, retriever)
        return body, self.first_stage_pipeline(retriever)

    def signals_for(
        self,
        sq: StructuredQuery,
        vectors: Mapping[str, Sequence[float]],
        retriever: Retriever,
        ids: Sequence[str],
        first_stage: Mapping[str, tuple[float, int]] | None = None,
        *,
        parameters: bool | None = None,
        documents: bool = False,
    ) -> dict[str, FieldSignals]:
        """Exact per-field scores of the documents ``ids`` (in that order; unknown ids are left out).

        Training uses it for positives and hard negatives that the first stage may not return;
        ``first_stage`` gives the (score, rank) of those it did. ``parameters`` fetches every
        candidate's parameter list (default: when the ranker is MFTR's or the query has arguments).
        """
        if not ids:
            return {}
        parameters = self._wants_parameters(sq, parameters)
        exact = self.client.search(
            index=self.settings.index,
            body=self._builder(len(ids), None).field_scores_body(
                sq, vectors, retriever, list(ids), parameters=parameters, documents=documents
            ),
            params={"include_named_queries_score": "true"},
        )
        signals = parse_field_scores(exact, sq, retriever, first_stage or {})
        return {doc_id: signals[doc_id] for doc_id in ids if doc_id in signals}

    def encode(self, sq: StructuredQuery, retriever: Retriever) -> dict[str, list[float]]:
        """Query vectors for every text of ``sq`` the retriever needs (empty for BM25)."""
        return self._encode(sq, retriever, "multi-field", {})

    def agent_names(self, tools: Sequence[RankedTool]) -> dict[str, str]:
        """Agent id → name for the owners of ``tools`` and the agent documents among them (cached)."""
        wanted = {t.agent_id for t in tools if t.agent_id} | {t.doc_id for t in tools if t.entity == "agent"}
        missing = sorted(a for a in wanted if a and a not in self._agent_names)
        if missing:
            answer = self.client.search(
                index=self.settings.index,
                body={"size": len(missing), "_source": [F.name], "query": {"ids": {"values": missing}}},
            )
            for hit in answer["hits"]["hits"]:
                self._agent_names[hit["_id"]] = str(hit["_source"].get(F.name, hit["_id"]))
        return dict(self._agent_names)
