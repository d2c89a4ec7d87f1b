"""One workbench: the searcher of one index, the weights being tuned, and what it keeps between calls.

Every operation of the web app is a method here, so the routes (:mod:`.app`) only translate HTTP.
Searches go through the search backend (:class:`~toolsift.search.SearchBackend`, asking for the
candidates) with ``source="ui"`` and the request the search API sends, so the current ranking is the
one the API and MCP return (the multi-need ranking on an index of servers) and they are logged
like any other search when the ``query_log`` setting is on; the candidates they return — a multi-need
answer's per-text rankings, else the multi-field candidates — are kept (the last
:data:`KEEP_SEARCHES` searches) so sliders re-rank them without a round trip, exactly as a search
with the proposed parameters ranks. Saving and pushing carries those parameters to every searcher.

Every read runs in the caller's tenant (``tenant``: the caller's key's, never the request's; None:
every tenant): searches, sets and comparisons see only that tenant's and public tools, and a kept
search answers only the tenant that made it. Paths in requests (benchmark folders, weights
artifacts) must resolve, symlinks followed, inside :attr:`Workbench.roots`: the data dir and the
folders it was given.
"""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from toolsift.config import Settings
from toolsift.encoders.embedding import Embedder
from toolsift.evaluation.evalruns import EvalRunLog
from toolsift.errors import BadQueryError, ConfigError
from toolsift.mappings import F
from toolsift.records import FieldSignals
from toolsift.query.scope import Scope, tenant_clause
from toolsift.query.structured import StructuredQuery
from toolsift.ranker.artifact import load_artifact, name_problem, resolve_versioned
from toolsift.ranker.deploy import PushReport, clear_weights, push_weights
from toolsift.ranker.mftr import MFTRWeights
from toolsift.ranker.ranking_pipeline import RankingPipeline
from toolsift.records import RankedTool
from toolsift.search import SearchBackend, SearchRequest, SearchResult, StepRanking, tool_to_dict
from toolsift.workbench.comparison import Comparison, SetCandidates, compare, gather_candidates
from toolsift.workbench.judgments import Judgment, JudgmentStore, UnknownToolError, tenant_label
from toolsift.workbench.metrics_page import eval_run_series, latency_series
from toolsift.workbench.querysets import (
    QuerySet,
    QuerySetStore,
    check_name,
    from_benchmark,
    from_judgments,
    indexed_tool_ids,
)
from toolsift.workbench.tuning import (
    CachedReranker,
    Proposal,
    current_weights,
    parse_planner,
    parse_weights,
    planner_ranges,
    rank_with,
    shown_fields,
    slider_ranges,
    tuned_artifact,
)

__all__ = ["Workbench", "KEEP_SEARCHES", "OutsideRootsError", "confine"]

#: How many recent searches keep their candidates for re-ranking.
KEEP_SEARCHES = 64
#: How many of the latest eval-run rows the metrics page plots.
EVAL_RUN_ROWS = 2000


class OutsideRootsError(BadQueryError):
    """A path in a request resolves outside the folders the workbench may read (the same message
    whether or not it exists, so nothing outside them is revealed)."""

    field = "path"


def confine(path: str | Path, roots: Sequence[Path]) -> Path:
    """``path`` resolved (``~`` expanded, symlinks followed) when it lies inside one of ``roots``
    (resolved folders).

    Raises:
        OutsideRootsError: it does not, or it cannot be resolved; the message names the roots only, the
            same whether or not the path exists.
    """
    try:
        resolved: Path | None = Path(path).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL byte, an unknown ~user
        resolved = None
    if resolved is None or not any(resolved.is_relative_to(root) for root in roots):
        raise OutsideRootsError("path is outside the folders this workbench may read: "
                                + ", ".join(str(r) for r in roots))
    return resolved


@dataclass(frozen=True)
class _Kept:
    query: str
    structured: StructuredQuery
    rewrite_source: str
    candidates: tuple[FieldSignals, ...]
    result: SearchResult
    top_k: int
    tenant: str | None = None
    #: A multi-need answer's per-text rankings (empty: the multi-field ranking answered).
    steps: tuple[StepRanking, ...] = ()


class Workbench:
    """The workbench over ``settings.index``.

    Args:
        client: connected client.
        settings: index, retriever, weights, reranker, the workbench's index names.
        embedder: the query encoder (the index's model).
        rewrite: rewrite requests like ``toolsift search`` (cached rewrite, else the LLM, else as is).
        roots: folders besides ``settings.data_dir`` that paths in requests (a benchmark folder to
            import, a weights artifact to push) may name (``toolsift serve ui --root``).
    """

    def __init__(self, client: OpenSearch, settings: Settings, embedder: Embedder | None, *,
                 rewrite: bool = True, roots: Sequence[str | Path] = ()) -> None:
        self.client = client
        self.settings = settings
        self.embedder = embedder
        self.rewrite = rewrite
        #: The folders paths in requests must resolve inside (symlinks followed).
        self.roots: tuple[Path, ...] = tuple(dict.fromkeys(
            Path(p).expanduser().resolve() for p in (settings.data_dir, *roots)))
        self._lock = threading.RLock()
        self._searches: OrderedDict[str, _Kept] = OrderedDict()
        self._set_candidates: dict[tuple[str, str | None], SetCandidates] = {}
        self.judgments = JudgmentStore.open(client, settings.judgments_index)
        self.query_sets = QuerySetStore.open(client, settings.query_sets_index)
        #: Every search goes through the one backend (logged as ``ui``).
        self.backend = SearchBackend(client, settings, embedder=embedder, source="ui")
        self._load_searcher()

    # --- state ------------------------------------------------------------------------------------
    def _load_searcher(self) -> None:
        self.backend.forget()
        self._use_searcher()

    def _use_searcher(self) -> None:
        """Tune what the backend's searcher ranks with (after a push here, or one the backend noticed)."""
        self.searcher = self.backend.searcher()
        ranking = self.searcher.ranking
        self.reranking: RankingPipeline | None = None
        if isinstance(ranking, RankingPipeline) and ranking.reranker is not None:
            ranking.reranker = CachedReranker(ranking.reranker)
            self.reranking = ranking
        self.current = Proposal(
            current_weights(self.searcher),
            self.reranking.fusion_weight if self.reranking else None,
            self.searcher.planner if self.searcher.plans(None) else None,
        )
        self._set_candidates.clear()

    @property
    def alias(self) -> str:
        return self.settings.index

    def confine(self, path: str) -> Path:
        """``path`` resolved (symlinks followed) when it lies inside :attr:`roots` (:func:`confine`)."""
        return confine(path, self.roots)

    def describe(self, tenant: str | None = None) -> dict[str, Any]:
        """What the page needs to draw itself: index, ranking, the current weights and slider ranges
        (the tool count is the tenant's)."""
        searcher = self.searcher
        weights = self.current.weights
        counted: list[dict[str, Any]] = [{"term": {F.entity: "tool"}}]
        if tenant is not None:
            counted.append(tenant_clause(tenant))
        counts = self.client.count(index=self.alias, body={"query": {"bool": {"filter": counted}}})["count"]
        return {
            "index": self.alias,
            "concrete_index": searcher.index.index,
            "tools": counts,
            "retriever": self.settings.retriever,
            "ranker": (f"multi-need ({self.current.planner.describe()})" if self.current.planner is not None
                       else searcher.ranking.name),
            "remote_ranker": self.settings.ranker_url,
            "reranker": self.reranking.reranker.name if self.reranking and self.reranking.reranker else None,
            "weights_version": searcher.weights_version,
            "weights_mode": "learned" if not weights.normalise else (
                "tuned" if searcher.artifact is not None else "fixed"),
            "weights": self.current.to_dict(),
            # what ranks this index's searches: the multi-need planner (its β and M) or the field weights
            "ranking": "multi-need" if self.current.planner is not None else "fields",
            "planner_ranges": planner_ranges(self.current.planner) if self.current.planner is not None else None,
            "ranges": slider_ranges(weights),
            "fields": list(shown_fields(weights)),
            "query_log": {"on": self.settings.query_log, "index": self.settings.query_log_index},
            "query_sets": self.query_sets.list(self.alias, tenant),
            "embedding_model": searcher.index.embedding_model,
        }

    def proposal(self, data: dict[str, Any] | None) -> Proposal:
        """The browser's proposed weights (None: the current ones)."""
        if not data:
            return self.current
        weights = parse_weights(data.get("weights") or {}, self.current.weights)
        lam = data.get("rerank_weight")
        if lam is not None and not 0.0 <= float(lam) <= 1.0:
            raise BadQueryError(f"rerank_weight must be within [0, 1], got {lam}")
        planner = parse_planner(data.get("planner"), self.current.planner)
        return Proposal(weights, None if lam is None else float(lam), planner)

    # --- searching --------------------------------------------------------------------------------
    def search(self, query: str, *, top_k: int = 10, proposal: dict[str, Any] | None = None,
               tenant: str | None = None) -> dict[str, Any]:
        """Search (logged as ``ui``) in ``tenant``, keep the candidates, and rank them with the proposal too."""
        text = " ".join((query or "").split())
        if not text:
            raise BadQueryError("type a request to search for")
        with self._lock:
            # the search API's request (and the backend's ranking) plus what re-ranking needs
            answer = self.backend.search(SearchRequest(query=text, rewrite=self.rewrite, top_k=top_k, candidates=True,
                                                       tenant=tenant))
            if self.backend.searcher() is not self.searcher:  # weights were pushed or cleared elsewhere
                self._use_searcher()
            result, candidates, source = answer.result, answer.candidates, answer.rewrite_source
            assert result is not None
            search_id = uuid.uuid4().hex[:16]
            kept = _Kept(text, result.query, source, tuple(candidates), result, top_k, tenant,
                         result.steps if result.level == "tool" else ())
            self._searches[search_id] = kept
            while len(self._searches) > KEEP_SEARCHES:
                self._searches.popitem(last=False)
            judged = self.judgments.for_query(self.alias, text, tenant)
            proposed = self._proposed(kept, self.proposal(proposal))
            names = self.searcher.agent_names([*result.tools, *proposed])
        return {
            "search_id": search_id,
            "query": text,
            "rewrite_source": source,
            "structured_query": result.query.to_dict(),
            "candidates": len(candidates) or sum(len(s.entities) for s in kept.steps),
            "ranking": "multi-need" if kept.steps else "fields",
            "texts": [s.text for s in kept.steps],
            "ranker": result.ranker,
            "reranker": result.reranker,
            "degraded": result.degraded,
            "degraded_reason": result.degraded_reason,
            "weights_version": self.searcher.weights_version,
            "timings_ms": {k: round(v, 1) for k, v in result.timings.items()},
            "current": [self._tool(t, i, names, judged) for i, t in enumerate(result.tools)],
            "proposed": [self._tool(t, i, names, judged) for i, t in enumerate(proposed)],
        }

    def rerank(self, search_id: str, proposal: dict[str, Any] | None, tenant: str | None = None) -> dict[str, Any]:
        """The kept search's candidates ranked with the proposal."""
        with self._lock:
            kept = self._kept(search_id, tenant)
            proposed = self._proposed(kept, self.proposal(proposal))
            names = self.searcher.agent_names(proposed)
            judged = self.judgments.for_query(self.alias, kept.query, tenant)
        return {"search_id": search_id, "proposed": [self._tool(t, i, names, judged) for i, t in enumerate(proposed)]}

    def recommend_set(self, search_id: str, tenant: str | None = None) -> dict[str, Any]:
        """PTR's precise set for the kept search's request (history when the index has one), in ``tenant``."""
        with self._lock:
            kept = self._kept(search_id, tenant)
            answer = self.backend.search(SearchRequest(query=kept.query, structured=kept.structured, level="set",
                                                       tenant=tenant))
        assert answer.tool_set is not None
        return {"search_id": search_id, **answer.tool_set.to_dict()}

    def _kept(self, search_id: str, tenant: str | None) -> _Kept:
        kept = self._searches.get(search_id)
        if kept is None or kept.tenant != tenant:  # another tenant's search: as if it were gone
            raise BadQueryError(f"search {search_id!r} is no longer kept (the last {KEEP_SEARCHES} are); search again")
        return kept

    def _proposed(self, kept: _Kept, proposal: Proposal) -> list[RankedTool]:
        if proposal == self.current:
            return list(kept.result.tools)
        if kept.steps:  # the multi-need ranking: its own parameters, over the search's kept rankings
            if proposal.planner == self.current.planner:
                return list(kept.result.tools)
            assert proposal.planner is not None
            return self.searcher.replan(kept.steps, top_k=kept.top_k, params=proposal.planner,
                                        scope=Scope(tenant=kept.tenant))
        return rank_with(proposal, kept.structured, kept.candidates, top_k=kept.top_k, reranking=self.reranking)

    @staticmethod
    def _tool(t: RankedTool, i: int, names: dict[str, str], judged: dict[str, bool]) -> dict[str, Any]:
        return {**tool_to_dict(t, i + 1), "agent": names.get(t.agent_id or "", t.agent_id), "judged": judged.get(t.doc_id)}

    # --- judgments and query sets -----------------------------------------------------------------
    def judge(self, query: str, tool_id: str, relevant: bool | None, *, tool_name: str = "",
              agent_id: str | None = None, query_set: str | None = None,
              tenant: str | None = None) -> dict[str, Any]:
        """Record (or with ``relevant`` None, forget) a verdict on one result, as a judgment of the
        writer's ``tenant`` (:mod:`~toolsift.workbench.judgments`). The tool's name and agent are the
        index's (``tool_name`` only fills a missing name; ``agent_id`` is not trusted).

        Raises:
            UnknownToolError: no tool ``tool_id`` in the index, or one ``tenant`` may not see (the same answer).
        """
        text = " ".join((query or "").split())
        if relevant is None:
            return {"deleted": self.judgments.delete(self.alias, text, tool_id, tenant)}
        found = self.backend.tool_sources([tool_id], tenant=tenant).get(tool_id)
        if found is None:
            raise UnknownToolError(f"tool_id: no tool {tool_id!r} to judge")
        judgment = Judgment(index=self.alias, query=text, tool_id=tool_id, relevant=bool(relevant),
                            tool_name=str(found.get(F.name) or tool_name), agent_id=found.get(F.agent_id) or None,
                            query_set=query_set, weights_version=self.searcher.weights_version,
                            tenant=tenant_label(tenant))
        return {"id": self.judgments.record(judgment), "judgment": judgment.to_doc()}

    def list_judgments(self, limit: int = 200, tenant: str | None = None) -> list[dict[str, Any]]:
        """The index's judgments a caller of ``tenant`` sees: its tenant's and the shared ones, on tools
        it may see (None: every judgment)."""
        return [j.to_doc() for j in self._judgments(tenant, size=limit)]

    def _judgments(self, tenant: str | None, *, size: int = 10_000) -> list[Judgment]:
        judgments = self.judgments.all(self.alias, tenant=tenant, size=size)
        if tenant is not None:
            visible = self._visible_ids({j.tool_id for j in judgments}, tenant)
            judgments = [j for j in judgments if j.tool_id in visible]
        return judgments

    def _visible_ids(self, ids: set[str], tenant: str) -> set[str]:
        """Those of ``ids`` that ``tenant`` may see (its own and public documents)."""
        found: set[str] = set()
        wanted = sorted(ids)
        for start in range(0, len(wanted), 1000):
            chunk = wanted[start:start + 1000]
            body = {"size": len(chunk), "_source": False,
                    "query": {"bool": {"filter": [{"ids": {"values": chunk}}, tenant_clause(tenant)]}}}
            found |= {hit["_id"] for hit in self.client.search(index=self.alias, body=body)["hits"]["hits"]}
        return found

    def import_query_set(self, path: str, name: str | None = None, tenant: str | None = None) -> dict[str, Any]:
        """Import a benchmark folder's queries (those whose relevant tools this index holds and
        ``tenant`` may see) as a set of ``tenant``; the folder must lie inside :attr:`roots`."""
        folder = self.confine(path)
        query_set = from_benchmark(folder, self.alias, indexed_tool_ids(self.client, self.alias, tenant), name=check_name(name) if name else None,
                                   tenant=tenant_label(tenant))
        self.query_sets.save(query_set)
        self._forget_candidates(query_set.name)
        return query_set.summary()

    def query_set_from_judgments(self, name: str, tenant: str | None = None) -> dict[str, Any]:
        """A set of ``tenant`` from the judgments it sees (an all-tenant caller's set is shared with every
        tenant, so it is made from the shared judgments only)."""
        judgments = self._judgments(tenant) if tenant is not None else self.judgments.shared(self.alias)
        query_set = from_judgments(name, self.alias, judgments, tenant=tenant_label(tenant))
        self.query_sets.save(query_set)
        self._forget_candidates(query_set.name)
        return query_set.summary()

    def _forget_candidates(self, query_set: str) -> None:
        with self._lock:
            for key in [k for k in self._set_candidates if k[0] == query_set]:
                del self._set_candidates[key]

    def compare(self, query_set: str, proposal: dict[str, Any] | None, tenant: str | None = None) -> dict[str, Any]:
        """NDCG@10 / Recall@10 of the current and the proposed weights on ``query_set``, the candidates
        retrieved in ``tenant``."""
        with self._lock:
            candidates = self._set_candidates.get((query_set, tenant))
            if candidates is None:
                candidates = gather_candidates(self.searcher, self.query_sets.get(self.alias, query_set, tenant),
                                               self.settings.retriever, scope=Scope(tenant=tenant))
                self._set_candidates[(query_set, tenant)] = candidates
            result: Comparison = compare(candidates, self.current, self.proposal(proposal), reranking=self.reranking)
        return {**result.to_dict(), "candidates_seconds": round(candidates.seconds, 2)}

    # --- weights ----------------------------------------------------------------------------------
    def save_weights(self, name: str, proposal: dict[str, Any] | None,
                     query_set: str | None = None, tenant: str | None = None) -> dict[str, Any]:
        """Save the proposal as a new version of the weights artifact ``name``."""
        problem = name_problem(name, "weights name")
        if problem:  # the request's own field: a bad request, not a bad setting
            raise BadQueryError(problem)
        chosen = self.proposal(proposal)
        metrics: dict[str, Any] = {}
        if query_set:
            metrics = {"workbench": self.compare(query_set, proposal, tenant)}
        artifact = tuned_artifact(self.searcher, chosen, tuned_in="workbench", metrics=metrics).save(
            self.settings.data_dir / "weights", name)
        return {"version": artifact.version, "path": str(artifact.path), "digest": artifact.digest,
                "created": artifact.created}

    def push(self, path: str) -> dict[str, Any]:
        """Push a saved artifact (inside :attr:`roots`) to the index (pipelines + active weights) and
        rank with it from now on."""
        try:  # the file a folder names (its newest version) must lie inside the roots too
            file = self.confine(str(resolve_versioned(self.confine(path), "weights.json",
                                                      hint="give a saved weights version or its weights.json")))
            artifact = load_artifact(file)
        except OutsideRootsError:
            raise
        except ConfigError as exc:  # the request's own field: a bad request, not a bad setting
            raise BadQueryError(f"path: {exc}") from None
        _check_compatible(artifact.weights, self.current.weights)
        with self._lock:
            report: PushReport = push_weights(self.client, self.alias, artifact)
            self._load_searcher()
        return report.to_dict()

    def clear_pushed(self) -> dict[str, Any]:
        """Back to the fixed field weights (unless the ``weights`` setting names some)."""
        with self._lock:
            clear_weights(self.client, self.alias, dict(self.settings.field_weights))
            self._load_searcher()
        return {"index": self.alias, "weights_version": self.searcher.weights_version}

    # --- the review queue of changed tool definitions (toolsift.ingest.approvals) ------------------
    def approvals(self, tenant: str | None) -> dict[str, Any]:
        """The changes waiting for approval that ``tenant`` may see (its tenant's and public documents', every
        definition a record stores among them: :meth:`ApprovalStore.pending`), each with its diff and the
        screen's reasons."""
        from toolsift.ingest.approvals import ApprovalStore, definition_diff

        queue = []
        for record in ApprovalStore(self.client, self.alias).pending(tenant):
            queue.append({"id": record.doc_id, "entity": record.entity, "reason": record.reason,
                          "source": record.pending_source, "approved_source": record.approved_source or None,
                          "since": record.pending_since, "risk": list(record.pending_risk),
                          "diff": definition_diff(record)})
        return {"index": self.alias, "pending": queue}

    def decide(self, doc_id: str, approve: bool, by: str) -> dict[str, Any]:
        """Approve (index and pin the new definition) or reject (keep the pinned one) the change of ``doc_id``.

        Raises:
            NotFoundError: nothing is pending for it.
            ConfigError: approving needs the embedding model, and this workbench has none loaded.
        """
        from toolsift.ingest.approvals import ApprovalStore, approve_pending

        if approve:
            if self.embedder is None:
                raise ConfigError("approving indexes the new definition: start the workbench with its embedding model")
            approve_pending(self.client, self.settings.with_overrides(index=self.alias), self.embedder, doc_id, by)
        else:
            store = ApprovalStore(self.client, self.alias)
            store.write([store.reject(doc_id, by)])
        return {"id": doc_id, "decision": "approved" if approve else "rejected"}

    # --- metrics ----------------------------------------------------------------------------------
    def eval_runs(self, query_set: str | None = None, tenant: str | None = None) -> dict[str, Any]:
        """The eval runs over time. They are the operator's (``toolsift eval`` over its own eval indices and
        folders, for no tenant): an all-tenant caller (``tenant`` None) reads them, a tenant's none."""
        log = EvalRunLog(self.client, self.settings.eval_runs_index)
        rows = log.history(query_set, size=EVAL_RUN_ROWS) if tenant is None else []
        return {"index": log.index, **eval_run_series(rows)}

    def latency(self, interval: str = "1h", since: str = "now-7d", source: str | None = None,
                tenant: str | None = None) -> dict[str, Any]:
        """Search latency over time from the query log: a tenant's caller's figures are its tenant's searches
        only; an all-tenant caller's (``tenant`` None) every search."""
        return {**latency_series(self.client, self.settings.query_log_index, interval=interval, since=since,
                                 source=source, tenant=tenant), "logging": self.settings.query_log,
                "now": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}


def _check_compatible(weights: MFTRWeights, current: MFTRWeights) -> None:
    if tuple(weights.kinds) != tuple(current.kinds):
        raise BadQueryError(f"these weights read {list(weights.kinds)} scores; this workbench's retriever gives "
                            f"{list(current.kinds)}")
