"""The one search backend: a :class:`~toolsift.search.request.SearchRequest` in, a
:class:`~toolsift.search.request.SearchResponse` out.

Every front end (``toolsift search``, the workbench, the search API) holds one
:class:`SearchBackend` and calls :meth:`SearchBackend.search`; none of them builds a query body or
calls OpenSearch for a search. The backend applies the request's own choices (index, retriever,
weights, reranker, ranker URL) to the settings, loads the embedding model only when the request
needs it, keeps one :class:`~toolsift.search.searcher.Searcher` per such choice, shapes the request
(:func:`~toolsift.search.shaping.shape_request`) and answers at the asked level: tools, agents,
``auto``, or a precise tool set (PTR, from the index's history when it has one). A tenant with an
A/B test on the index (:mod:`toolsift.learning.experiments`) has its test's share of requests ranked
by the candidate weights, picked by a hash of the request id.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from opensearchpy import OpenSearch

from toolsift.config import Retriever, Settings
from toolsift.encoders.embedding import Embedder, load_embedder
from toolsift.mappings import F
from toolsift.query.scope import Scope
from toolsift.ranker.artifact import WeightsArtifact
from toolsift.ranker.deploy import current_weights_stamp
from toolsift.learning.experiments import TenantExperiment, arm_for, experiments
from toolsift.sets.history_store import HistoryStore
from toolsift.records import kinds_for
from toolsift.search.definitions import Fitted, Format, definitions, fit
from toolsift.search.request import SearchLevel, SearchRequest, SearchResponse
from toolsift.search.searcher import Searcher
from toolsift.sets.recommender import SetRecommender
from toolsift.search.shaping import shape_request

__all__ = ["SearchBackend", "needs_embedder", "DEFINITION_SOURCE"]

#: The ``_source`` fields a tool definition is made from (:mod:`toolsift.search.definitions`).
DEFINITION_SOURCE = [F.tool_id, F.name, F.description, F.agent_id, F.source, F.parameters, F.response, F.raw,
                     F.entity, F.risk_reasons]


def needs_embedder(level: SearchLevel, retriever: Retriever) -> bool:
    """Whether answering at ``level`` with ``retriever`` encodes text: a dense or hybrid first stage, or a tool set."""
    return level == "set" or "dense" in kinds_for(retriever)


class SearchBackend:
    """Answers search requests against the indices of one cluster.

    Args:
        client: a connected client.
        settings: the defaults every request starts from.
        embedder: the embedding model to use; default: the settings' model (:func:`load_embedder`),
            loaded on the first request that needs one.
        source: who searches (``cli``, ``ui``, ``api``), recorded in the query log.
    """

    def __init__(
        self,
        client: OpenSearch,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        embedder_loader: Callable[[Settings], Embedder] = load_embedder,
        source: str = "api",
    ) -> None:
        self.client = client
        self.settings = settings
        self.source = source
        self._embedder = embedder
        self._load_embedder = embedder_loader
        self._searchers: dict[tuple[object, ...], Searcher] = {}
        self._checked: dict[str, float] = {}
        self._experiments: dict[str, dict[str, TenantExperiment]] = {}
        self._lock = threading.Lock()

    def settings_for(self, request: SearchRequest) -> Settings:
        """The settings ``request`` runs with: the defaults plus its own choices."""
        return self.settings.with_overrides(**request.overrides())

    def searcher(self, request: SearchRequest | None = None) -> Searcher:
        """The searcher for ``request``'s choices (default: the settings'), created on first use."""
        if request is None:
            return self._searcher(self.settings, "tool")
        return self._searcher(self.settings_for(request), request.level)

    def warm(self) -> None:
        """Build now what a first request would otherwise build while its client waits (index checks,
        search pipelines, the query log, weights artifacts): the default searcher and, when the index
        runs tenants' A/B tests, each candidate's searcher."""
        searcher = self.searcher()
        if self.settings.weights is not None:  # explicit weights take no A/B test
            return
        for experiment in self._tenant_experiments(searcher).values():
            self._searcher(self.settings, "tool", experiment.candidate)

    def _searcher(self, settings: Settings, level: SearchLevel, candidate: WeightsArtifact | None = None) -> Searcher:
        with_model = self._embedder is not None or needs_embedder(level, settings.retriever)
        key = (settings.index, str(settings.weights), settings.reranker, settings.ranker_url, with_model,
               candidate.digest if candidate is not None else None)
        with self._lock:
            found = self._searchers.get(key)
            if found is not None and not self._current(settings, found):
                # weights were pushed to (or cleared from) the index, or its alias moved: rank as it now says
                self._searchers = {k: v for k, v in self._searchers.items() if k[0] != settings.index}
                self._experiments.clear()
                found = None
            if found is None:
                embedder = self.embedder(settings) if with_model else None
                found = self._searchers[key] = Searcher(self.client, settings, embedder, artifact=candidate,
                                                        source=self.source)
            return found

    def _tenant_experiments(self, searcher: Searcher) -> dict[str, TenantExperiment]:
        """tenant → A/B test on ``searcher``'s index, read once per weights stamp."""
        with self._lock:
            found = self._experiments.get(searcher.weights_stamp)
            if found is None:
                found = self._experiments[searcher.weights_stamp] = experiments(searcher.index)
        return found

    def _arm(self, settings: Settings, searcher: Searcher, request: SearchRequest) -> Searcher:
        """The searcher of the arm this request falls in, when its tenant has an A/B test on the index
        (:mod:`toolsift.learning.experiments`; explicit weights take none): ``searcher`` or the candidate's."""
        if settings.weights is not None or request.tenant is None:
            return searcher
        experiment = self._tenant_experiments(searcher).get(request.tenant)
        if arm_for(experiment, request.request_id) == "control":
            return searcher
        assert experiment is not None
        return self._searcher(settings, request.level, experiment.candidate)

    def _current(self, settings: Settings, searcher: Searcher) -> bool:
        """Whether ``searcher`` still ranks as its index says: the pushed weights (and the index behind
        the alias) are those it was built with. Looked up at most every ``weights_check_interval``
        seconds per index; explicit ``weights`` take no pushed ones."""
        if settings.weights is not None:
            return True
        now = time.monotonic()
        last = self._checked.get(settings.index)
        if last is not None and now - last < settings.weights_check_interval:
            return True
        self._checked[settings.index] = now
        return current_weights_stamp(self.client, settings.index) == searcher.weights_stamp

    def embedder(self, settings: Settings | None = None) -> Embedder:
        """The embedding model (loaded on first use)."""
        if self._embedder is None:
            self._embedder = self._load_embedder(settings or self.settings)
        return self._embedder

    def forget(self) -> None:
        """Drop the kept searchers (after weights were pushed or cleared: the next request reloads)."""
        with self._lock:
            self._searchers.clear()

    # --- tools as definitions ------------------------------------------------------------------------
    def _visible(self, ids: Sequence[str], tenant: str | None, source: list[str],
                 *filters: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """id → ``_source`` fields of the documents among ``ids`` that ``tenant`` may see (the tenant
        boundary inside the query; None: every tenant); the others are simply absent."""
        ids = [i for i in dict.fromkeys(ids) if i]
        if not ids:
            return {}
        clauses = [{"ids": {"values": ids}}, *filters, *Scope(tenant=tenant).clauses()]
        answer = self.client.search(index=self.settings.index,
                                    body={"size": len(ids), "_source": source, "query": {"bool": {"filter": clauses}}})
        return {hit["_id"]: dict(hit["_source"]) for hit in answer["hits"]["hits"]}

    def tool_sources(self, ids: Sequence[str], *, tenant: str | None) -> dict[str, dict[str, Any]]:
        """id → ``_source`` (the fields of :data:`DEFINITION_SOURCE`) of the tools among ``ids`` that
        ``tenant`` may see (None: every tenant); the others are simply absent."""
        return self._visible(ids, tenant, DEFINITION_SOURCE, {"term": {F.entity: "tool"}})

    def agent_names(self, agent_ids: Sequence[str], *, tenant: str | None) -> dict[str, str]:
        """agent id → name, for the agents among ``agent_ids`` that ``tenant`` may see."""
        return {i: str(s.get(F.name, i)) for i, s in self._visible(agent_ids, tenant, [F.name]).items()}

    def deliver(self, ids: Sequence[str], *, tenant: str | None, fmt: Format = "toolsift",
                max_results: int | None = None, token_budget: int | None = None, brief: bool = False,
                keep: int = 0) -> Fitted:
        """The tools ``ids`` (best first) as ready-to-call definitions in ``fmt``, cut to ``max_results``
        and to ``token_budget`` tokens (:func:`~toolsift.search.definitions.fit`; None: no cap), as
        ``tenant`` sees them.

        Args:
            brief: brief definitions (``{id, name, description}``, a one-line description), counted as such.
            keep: the first ``keep`` of ``ids`` (those ``tenant`` may see) are never cut (pinned tools).

        Raises:
            BadQueryError: an unknown format, or a cap below 1.
        """
        sources = self.tool_sources(ids, tenant=tenant)
        ordered = [sources[i] for i in dict.fromkeys(ids) if i in sources]
        kept = sum(1 for i in dict.fromkeys(ids[:keep]) if i in sources)
        names = self.agent_names([str(s.get(F.agent_id) or "") for s in ordered], tenant=tenant)
        return fit(definitions(ordered, fmt, agent_names=names, brief=brief), max_results=max_results,
                   token_budget=token_budget, keep=kept)

    def search(self, request: SearchRequest) -> SearchResponse:
        """Answer one request.

        Raises:
            BadQueryError: the request cannot be answered as asked.
            IndexMismatchError: the index does not exist or was built for another model.
        """
        settings = self.settings_for(request)
        scope = replace(request.scope, exclude_flagged=settings.risky_tools == "exclude")
        searcher = self._arm(settings, self._searcher(settings, request.level), request)
        # A searcher is kept per index, weights, reranker and ranker URL; the retriever is the request's own.
        retriever = settings.retriever
        query, source = shape_request(request, self.client, searcher.settings, searcher.structure)
        if request.level == "set":
            alias = searcher.settings.index
            history = (HistoryStore(self.client, alias, tenant=request.tenant)
                       if HistoryStore.exists(self.client, alias) else None)
            recommender = SetRecommender(searcher, history, scope=scope)
            return SearchResponse(request, source, tool_set=recommender.recommend(query))
        # Candidates for re-ranking come with the one multi-field query; a multi-need answer brings its
        # texts' rankings instead (``result.steps``): either way the ranking is the one any front end gets.
        if (request.candidates and request.level == "tool" and request.method == "multi-field"
                and not searcher.plans(settings.multi_need, scope)):
            result, candidates = searcher.search_with_candidates(query, top_k=request.top_k,
                                                                 retriever=retriever,
                                                                 scope=scope, copies=settings.copies)
            return SearchResponse(request, source, result=result, candidates=tuple(candidates))
        result = searcher.search(query, top_k=request.top_k, method=request.method,
                                 retriever=retriever, level=request.level, merge=request.merge,
                                 scope=scope, multi_need=settings.multi_need, copies=settings.copies)
        return SearchResponse(request, source, result=result)
