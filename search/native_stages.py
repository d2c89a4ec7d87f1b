"""toolsift's stages behind OpenSearch's own search pipeline (the ranker service's ``/v1/opensearch`` routes).

A search team sends OpenSearch a request carrying toolsift's structured query (through the stored search
template, :mod:`toolsift.plugin_scripts.native`) with ``?search_pipeline=<name>``. The pipeline calls the
ranker service twice through ml-commons remote models:

1. **first stage** (an ``ml_inference`` *request* processor): the request → the exact first-stage request
   ``toolsift search`` sends (:meth:`~toolsift.search.Searcher.first_stage_request`: the hybrid query with
   the query vectors, its scope filters), which OpenSearch then runs with the index's learned min-max
   weights;
2. **ranking** (an ``ml_inference`` *response* processor): the hits' ids → toolsift's ranking of them: the
   exact field scores (:meth:`~toolsift.search.Searcher.signals_for`), MFTR with the missing-parameter
   penalty and the reranker on the top M (the searcher's in-process ranking), as one ordering value per
   hit that OpenSearch's ``rerank`` processor sorts by.

Both steps are the code ``toolsift search`` runs for a multi-field tool search, so the order is the same.
:class:`NativeStages` holds one :class:`~toolsift.search.Searcher` per index alias.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError as OpenSearchNotFound

from toolsift.config import Settings
from toolsift.encoders.embedding import Embedder, load_embedder
from toolsift.errors import BadQueryError, NotFoundError, RankerUnavailableError
from toolsift.mappings import F
from toolsift.plugin_scripts import native
from toolsift.query.scope import Scope
from toolsift.query.structured import StructuredQuery
from toolsift.ranker.protocol import RankRequest
from toolsift.search.searcher import Searcher

__all__ = [
    "NATIVE_SOURCE",
    "NativeReport",
    "NativeStages",
    "check_native",
    "deploy_native",
    "installed_models",
    "remove_native",
    "request_query",
    "request_scope",
    "template_params",
]

#: What every hit of the native first stage carries in ``_source`` (the ranking step reads ``tool_id``).
NATIVE_SOURCE: list[str] = [F.tool_id, F.agent_id, F.name]


def template_params(query: str | StructuredQuery, *, tenant: str | None = None,
                    candidates: int | None = None) -> dict[str, Any]:
    """The search template's ``params`` for a request ``toolsift search`` would get as ``query``.

    A plain text is sent as ``text`` alone (the service structures it as the searcher does); a
    structured query as ``text``, ``tool_needs`` and ``extracted_arguments``.
    """
    params: dict[str, Any]
    if isinstance(query, StructuredQuery):
        params = {"text": query.text, **query.to_dict()}
    else:
        params = {"text": query}
    if tenant is not None:
        params["tenant"] = tenant
    if candidates is not None:
        params["candidates"] = candidates
    return params


def request_query(searcher: Searcher, request: Mapping[str, Any]) -> StructuredQuery:
    """The structured query of a pipeline request (the template's ``ext.ml_inference.toolsift``).

    ``tool_needs`` present: that structured query; else ``text`` as ``toolsift search`` structures it
    (:meth:`~toolsift.search.Searcher.structure`), with ``extracted_arguments`` when given.

    Raises:
        BadQueryError: naming the field that is wrong.
    """
    if not isinstance(request, Mapping):
        raise BadQueryError("the toolsift request (ext.ml_inference.toolsift) must be an object")
    text = request.get("text") or ""
    if not isinstance(text, str):
        raise BadQueryError("text must be a string")
    needs = [n for n in request.get("tool_needs") or [] if n]  # the template renders [] when absent
    arguments = request.get("extracted_arguments") or {}
    if needs:
        return StructuredQuery.from_dict({"tool_needs": needs, "extracted_arguments": arguments}, text=text.strip())
    if not text.strip():
        raise BadQueryError("the request has neither text nor tool_needs")
    sq = searcher.structure(text)
    if arguments:
        parsed = StructuredQuery.from_dict({"tool_needs": sq.to_dict()["tool_needs"], "extracted_arguments": arguments})
        sq = replace(sq, extracted_arguments=parsed.extracted_arguments)
    return sq


def request_scope(request: Mapping[str, Any]) -> Scope:
    """The request's ``tenant`` and ``agents`` / ``tags`` filters as a :class:`~toolsift.query.scope.Scope`."""
    tenant = request.get("tenant") or None
    if tenant is not None and not isinstance(tenant, str):
        raise BadQueryError("tenant must be a string")

    def values(name: str) -> tuple[str, ...]:
        raw = request.get(name) or []
        if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
            raise BadQueryError(f"{name} must be a list of strings")
        return tuple(raw)

    return Scope(tenant=tenant, agents=values("agents"), tags=values("tags"))


class NativeStages:
    """The two stages OpenSearch's pipeline calls, over every index alias it is asked about.

    Args:
        settings: the service's settings; each alias gets them with ``index`` replaced (and no
            ``ranker_url``: the ranking runs here, in-process, as ``toolsift search`` runs it).
        connect: makes the OpenSearch client, on first use (the service starts without a cluster).
        embedder: the query encoder; default: loaded from the settings on first use.
    """

    def __init__(
        self,
        settings: Settings,
        connect: Callable[[], OpenSearch],
        embedder: Embedder | None = None,
    ) -> None:
        self.settings = settings
        self._connect = connect
        self._client: OpenSearch | None = None
        self._embedder = embedder
        self._searchers: dict[str, Searcher] = {}
        self._lock = threading.Lock()

    def searcher(self, index: str) -> Searcher:
        """The searcher of ``index`` (created on first use; IndexMismatchError when it does not exist)."""
        with self._lock:
            found = self._searchers.get(index)
            if found is not None:
                return found
            if self._client is None:
                self._client = self._connect()
            settings = self.settings.with_overrides(index=index, ranker_url=None, query_log=False)
            if self._embedder is None and settings.retriever != "bm25":
                self._embedder = load_embedder(settings)
            searcher = Searcher(self._client, settings, self._embedder, source="opensearch")
            self._searchers[index] = searcher
            return searcher

    def first_stage(self, index: str, request: Mapping[str, Any]) -> dict[str, Any]:
        """The request OpenSearch runs instead of the template's: ``{"body": <JSON text>}``.

        The body is ``toolsift search``'s first-stage request for ``request`` (the hybrid query with its
        vectors and scope), returning each hit's :data:`NATIVE_SOURCE`, with the normalised request in
        ``ext.ml_inference.toolsift`` for the ranking step. It is JSON *text* because the processor's
        ``query_template`` pastes it in verbatim.
        """
        searcher = self.searcher(index)
        sq = request_query(searcher, request)
        scope = request_scope(request)
        retriever = searcher.settings.retriever
        depth = _candidates(request, searcher.settings.candidates)
        body, _ = searcher.first_stage_request(sq, searcher.encode(sq, retriever), retriever, depth, scope=scope)
        body.pop("stored_fields", None)
        body["_source"] = NATIVE_SOURCE
        body["ext"] = {"ml_inference": {"toolsift": {**dict(request), "text": sq.text, **sq.to_dict()}}}
        return {"body": json.dumps(body, separators=(",", ":"))}

    def rank_hits(self, index: str, ids: Sequence[str], request: Mapping[str, Any]) -> dict[str, Any]:
        """toolsift's ranking of the hits ``ids`` (first-stage order), one value per hit, in that order.

        ``order``: what OpenSearch sorts by (higher first: the best ranked gets ``len(ids)``; hits the
        ranker left out keep their first-stage order below every ranked one); ``scores``: the ranker's
        score (0 for a hit it left out); ``ranks``: the 1-based rank (0: left out).
        """
        searcher = self.searcher(index)
        if not ids:
            return {"order": [], "scores": [], "ranks": []}
        sq = request_query(searcher, request)
        retriever = searcher.settings.retriever
        vectors = searcher.encode(sq, retriever)
        first_stage = {doc_id: (0.0, rank) for rank, doc_id in enumerate(ids, start=1)}
        signals = searcher.signals_for(sq, vectors, retriever, list(first_stage), first_stage,
                                       documents=searcher.reranks)
        answer = searcher.ranking.rank(RankRequest.build(sq, list(signals.values()), top_k=len(first_stage)))
        ranked = {r.doc_id: (position, r.score) for position, r in enumerate(answer.results)}
        total = len(ids)
        order, scores, ranks = [], [], []
        for first, doc_id in enumerate(ids):
            if doc_id in ranked:
                position, score = ranked[doc_id]
                order.append(float(total - position))
                scores.append(float(score))
                ranks.append(position + 1)
            else:
                order.append(float(-1 - first))
                scores.append(0.0)
                ranks.append(0)
        return {"order": order, "scores": scores, "ranks": ranks}


def _candidates(request: Mapping[str, Any], default: int) -> int:
    raw = request.get("candidates")
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise BadQueryError(f"candidates must be a whole number, got {raw!r}") from None
    if not 1 <= value <= 1000:
        raise BadQueryError(f"candidates must be from 1 to 1000, got {value}")
    return value


# --- deploying it on the cluster ---------------------------------------------------------------------


@dataclass(frozen=True)
class NativeReport:
    """What ``toolsift deploy opensearch`` did or found, for one alias."""

    index: str
    pipeline: str
    template: str
    ranker_url: str
    models: dict[str, str]
    weights_version: str | None
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    checked: bool = False
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def deploy_native(
    client: OpenSearch,
    settings: Settings,
    *,
    ranker_url: str,
    token: str,
    pipeline: str | None = None,
    timeout_s: float = 5.0,
    check: bool = True,
) -> NativeReport:
    """Install toolsift's ranking in the cluster's search pipeline for ``settings.index``
    (:mod:`toolsift.plugin_scripts.native`), then prove it: both models called (a wrong token or an
    unreachable service is an error naming it) and one search through the template and the pipeline.

    Raises:
        ConfigError: no ml-commons, or a retriever without a hybrid pipeline... (named).
        RankerUnavailableError: the probe failed (the message says why).
    """
    native.require_ml_commons(client)
    searcher = Searcher(client, settings.with_overrides(query_log=False), None, source="deploy")
    first = searcher.first_stage_pipeline()
    normalization = (client.search_pipeline.get(id=first)[first].get("phase_results_processors", [])
                     if first else [])
    names = native.native_names(settings.index, pipeline)
    changed = [f"cluster setting {k}" for k in native.ensure_cluster_settings(client, ranker_url)]
    models = native.ensure_models(client, ranker_url, token, timeout_s)
    if check:  # before the pipeline switches to them: a wrong token leaves the installed pipeline as it was
        try:
            native.probe_models(client, names, models, ranker_url)
        except RankerUnavailableError:
            native.collect_models(client)
            raise
    changed += [f"model {name}" for name in models.created]
    weights = searcher.weights_version or "fixed field weights"
    description = (f"toolsift {_version()}: {settings.retriever} first stage and ranking of {settings.index} "
                   f"({weights}) by the ranker service at {ranker_url}")
    wrote_pipeline, wrote_template = native.install(client, names, models, normalization,
                                                    candidates=settings.candidates, description=description)
    changed += [f"search pipeline {names.pipeline}"] if wrote_pipeline else []
    changed += [f"search template {names.template}"] if wrote_template else []
    removed = native.collect_models(client)
    notes = []
    if searcher.plans(None):
        notes.append("this index holds servers: `toolsift search` answers a plain request with a multi-need "
                     "search there; the pipeline gives the multi-field ranking (`toolsift search --multi-need off`)")
    if check:  # the models answered above: what is left is one search through the new pipeline
        _check_search(client, settings.index, names)
    return NativeReport(index=settings.index, pipeline=names.pipeline, template=names.template, ranker_url=ranker_url,
                        models={"first_stage": models.first_stage, "ranking": models.ranking},
                        weights_version=searcher.weights_version, changed=tuple(changed), removed=tuple(removed),
                        checked=check, notes=tuple(notes))


def installed_models(client: OpenSearch, names: native.NativeNames) -> native.NativeModels:
    """The models the alias's pipeline calls.

    Raises:
        NotFoundError: the pipeline is not installed.
    """
    try:
        body = client.search_pipeline.get(id=names.pipeline)[names.pipeline]
    except OpenSearchNotFound:
        raise NotFoundError(f"no search pipeline {names.pipeline!r}: run `toolsift deploy opensearch` first") from None
    tags = {}
    for section in ("request_processors", "response_processors"):
        for processor in body.get(section, []):
            inner = processor.get("ml_inference") or {}
            if inner.get("tag") in ("toolsift-first-stage", "toolsift-ranking"):
                tags[inner["tag"]] = str(inner.get("model_id"))
    if len(tags) != 2:
        raise NotFoundError(f"the search pipeline {names.pipeline!r} is not toolsift's (no toolsift processors)")
    return native.NativeModels(first_stage=tags["toolsift-first-stage"], ranking=tags["toolsift-ranking"])


def check_native(
    client: OpenSearch,
    settings: Settings,
    *,
    ranker_url: str,
    pipeline: str | None = None,
) -> None:
    """Both models answer, and a search through the template and the pipeline comes back ranked by toolsift.

    Raises:
        RankerUnavailableError: naming the token, the unreachable service, or the failed step.
    """
    names = native.native_names(settings.index, pipeline)
    native.probe_models(client, names, installed_models(client, names), ranker_url)
    _check_search(client, settings.index, names)


def _check_search(client: OpenSearch, index: str, names: native.NativeNames) -> None:
    """One search through the template and the pipeline comes back with toolsift's ranking."""
    answer = client.search_template(index=index, body={"id": names.template, "params": {"text": "toolsift deploy check"}},
                                    params={"search_pipeline": names.pipeline})
    hits = answer.get("hits", {}).get("hits", [])
    if hits and "toolsift_rank" not in (hits[0].get("_source") or {}):
        raise RankerUnavailableError(
            f"a search through the pipeline {names.pipeline!r} came back without toolsift's ranking; see the node's "
            "log for the ml_inference processors' error"
        )


def remove_native(client: OpenSearch, settings: Settings, *, pipeline: str | None = None) -> NativeReport:
    """Delete the alias's pipeline and template, and the toolsift models no pipeline uses any more."""
    names = native.native_names(settings.index, pipeline)
    removed = native.remove(client, names)
    return NativeReport(index=settings.index, pipeline=names.pipeline, template=names.template, ranker_url="",
                        models={}, weights_version=None, removed=tuple(removed))


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("toolsift")
    except PackageNotFoundError:
        return "dev"
