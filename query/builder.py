"""Turn a :class:`StructuredQuery` into OpenSearch requests, and read per-field scores back.

Two requests per search (MFTR §3.4 on OpenSearch):

1. **Candidates** — OpenSearch's own hybrid machinery: a neural-search ``hybrid`` query whose
   sub-queries are BM25 over the MFTR fields and k-NN on each field's vector (per tool need, max over
   needs with ``dis_max``), run through a normalisation search pipeline (min-max, weighted by the field
   weights; see ``plugin_scripts/search-pipelines``). ``bm25`` mode needs no pipeline: one ``bool`` query.
2. **Exact field scores** for every candidate — named clauses (``include_named_queries_score``),
   restricted to the candidates with an ``ids`` filter: BM25 ``match`` per field and need, exact
   cosine through the k-NN ``knn_score`` script, and ``nested`` queries with ``inner_hits`` giving
   every parameter's score against every extracted argument. A candidate absent from one field's
   top list still gets that field's exact score.

Clause names are ``"<field>|<kind>|<i>"``: the field, ``bm25`` or ``dense``, and the need (or
argument) index. Lucene reports cosine similarity as ``(1 + cos) / 2``; it is mapped back to cos.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from toolsift.config import FIELDS, Retriever
from toolsift.errors import BadQueryError
from toolsift.mappings import RERANK_SOURCE, F, rerank_text, vector_field
from toolsift.opensearch import cap_terms, cosine_from_lucene
from toolsift.plugin_scripts.pipelines import HYBRID_LAYOUT
from toolsift.query.scope import UNSCOPED, Scope
from toolsift.query.structured import NEED_FIELD_FOR, StructuredQuery
from toolsift.records import FieldSignals, HitIdentity, Kind, ParameterMatch, kinds_for

__all__ = [
    "Fusion",
    "QueryBuilder",
    "parse_field_scores",
    "HIT_FIELDS",
    "PARAMETER_SOURCE",
    "fetch_spec",
    "hit_identity",
    "knn_score_query",
]

Fusion = Literal["minmax", "rrf"]
Vectors = Mapping[str, Sequence[float]]

_NAME_KEYWORD = f"{F.name}.keyword"
#: Doc-value fields every hit returns. Identity comes from doc values with ``stored_fields: _none_``:
#: each random stored-field load decompresses a whole block, which for 100 candidates was most of a
#: request's time (26 ms against 2 ms on toolink).
HIT_FIELDS: list[str] = [
    F.tool_id, F.agent_id, F.entity, _NAME_KEYWORD, F.derived, F.prerequisites, F.risk_reasons
]
#: Stored fields loaded only when per-parameter detail is needed (queries with extracted arguments).
PARAMETER_SOURCE: list[str] = [F.param_name, F.param_required]


def fetch_spec(*, with_parameters: bool = False, with_documents: bool = False) -> dict[str, Any]:
    """What a request fetches per hit: doc values, plus the parameter list or the reranker's
    document text (:data:`~toolsift.mappings.RERANK_SOURCE`) only when asked."""
    if with_documents:
        return {"_source": sorted({*PARAMETER_SOURCE, *RERANK_SOURCE}), "docvalue_fields": HIT_FIELDS}
    if with_parameters:
        return {"_source": PARAMETER_SOURCE, "docvalue_fields": HIT_FIELDS}
    return {"stored_fields": "_none_", "docvalue_fields": HIT_FIELDS}


def _fetch(sq: StructuredQuery, parameters: bool | None, documents: bool) -> dict[str, Any]:
    """:func:`fetch_spec` of an exact-score request: parameter lists as asked, else when the query has arguments."""
    return fetch_spec(with_parameters=bool(sq.extracted_arguments) if parameters is None else parameters,
                      with_documents=documents)


def _first(values: Mapping[str, list[Any]], name: str) -> str | None:
    found = values.get(name)
    return str(found[0]) if found else None


def hit_identity(hit: Mapping[str, Any]) -> HitIdentity:
    """Read a hit's identity from its doc values (``_id`` is absent without stored fields).

    Runs for every hit of every first stage (about 400 a multi-need request): kept to plain lookups.
    """
    values: Mapping[str, list[Any]] = hit.get("fields") or {}
    entity = _first(values, F.entity) or "tool"
    agent_id = _first(values, F.agent_id)
    doc_id = hit.get("_id") or (agent_id if entity == "agent" else _first(values, F.tool_id))
    if not doc_id:
        raise BadQueryError("a hit carries neither _id nor tool_id/agent_id doc values")
    doc_id = str(doc_id)
    return HitIdentity(
        doc_id=doc_id, name=_first(values, _NAME_KEYWORD) or doc_id, entity=entity, agent_id=agent_id,
        derived=tuple(map(str, values.get(F.derived) or ())),
        prerequisites=tuple(map(str, values.get(F.prerequisites) or ())),
        risk=tuple(map(str, values.get(F.risk_reasons) or ())),
    )


def knn_score_query(
    vector_path: str, vector: Sequence[float], *, name: str | None = None, ids: Sequence[str] | None = None
) -> dict[str, Any]:
    """Exact cosine of ``vector`` with every document's ``vector_path`` (the k-NN ``knn_score``
    script; the score is Lucene's ``(1 + cos) / 2``), optionally only over the documents ``ids``."""
    has_vector: dict[str, Any] = {"exists": {"field": vector_path}}
    body: dict[str, Any] = {
        "query": {"bool": {"filter": [{"ids": {"values": list(ids)}}, has_vector]}} if ids is not None else has_vector,
        "script": {
            "source": "knn_score",
            "lang": "knn",
            "params": {"field": vector_path, "query_value": list(vector), "space_type": "cosinesimil"},
        },
    }
    if name:
        body["_name"] = name
    return {"script_score": body}


class QueryBuilder:
    """Builds the candidate and exact-score requests for a structured query.

    Args:
        field_weights: MFTR field weights; used as clause boosts in ``bm25`` mode (the hybrid
            modes carry them in the search pipeline's weights).
        candidates: how many first-stage candidates to fetch.
        entity: ``"tool"`` to search tools only, ``None`` for tools and agents together.
        scope: the caller's tenant and the request's filters (agents, tags), carried inside every
            first-stage query (:mod:`toolsift.query.scope`).
        ef_search: how wide each first-stage k-NN clause searches the HNSW graph (its
            ``method_parameters.ef_search``); None: k, the engine's own choice.
    """

    def __init__(
        self,
        *,
        field_weights: Mapping[str, float],
        candidates: int = 100,
        entity: str | None = "tool",
        scope: Scope = UNSCOPED,
        ef_search: int | None = None,
    ) -> None:
        self.field_weights = dict(field_weights)
        self.candidates = candidates
        self.entity = entity
        self.scope = scope
        self.ef_search = ef_search

    # --- first stage ------------------------------------------------------------------------------
    def _entity_filter(self) -> list[dict[str, Any]]:
        """The first stage's restriction: the entity kind and the scope (tenant, agents, tags)."""
        entity = [{"term": {F.entity: self.entity}}] if self.entity else []
        return entity + self.scope.clauses()

    def _lexical(self, sq: StructuredQuery, *, boosts: bool) -> dict[str, Any]:
        """BM25 over the MFTR fields; per need a ``bool`` of field clauses, ``dis_max`` over needs."""
        clauses = 4 * len(sq.tool_needs) + (2 if sq.extracted_arguments else 0)
        per_need = []
        for need in sq.tool_needs:
            should: list[dict[str, Any]] = []
            for doc_field in NEED_FIELD_FOR:
                text = cap_terms(need.text_for(doc_field), clauses)
                weight = self.field_weights.get(doc_field, 0.0) if boosts else 1.0
                if not text or weight <= 0:
                    continue
                if doc_field == "examples":
                    should.append(
                        {
                            "nested": {
                                "path": F.examples,
                                "score_mode": "max",
                                "query": {"match": {F.example_text: {"query": text}}},
                                "boost": weight,
                            }
                        }
                    )
                else:
                    should.append({"match": {doc_field: {"query": text, "boost": weight}}})
            # The flat document keeps candidates for tools whose fields are sparse (recall only).
            recall_text = cap_terms(need.user_intent or need.tool_description, clauses)
            should.append({"match": {F.full_doc: {"query": recall_text, "boost": 0.1}}})
            per_need.append({"bool": {"should": should}})
        arguments = cap_terms(" ".join(sq.argument_texts()), clauses)
        top: list[dict[str, Any]] = [{"dis_max": {"queries": per_need}}]
        weight = self.field_weights.get("parameters", 0.0) if boosts else 1.0
        if arguments and weight > 0:
            top.append(
                {
                    "nested": {
                        "path": F.parameters,
                        "score_mode": "max",
                        "query": {
                            "multi_match": {
                                "query": arguments,
                                "fields": [F.param_name, F.param_description],
                            }
                        },
                        "boost": weight,
                    }
                }
            )
        return {"bool": {"should": top, "filter": self._entity_filter(), "minimum_should_match": 1}}

    def _knn(self, vector_path: str, vector: Sequence[float], *, nested: str | None = None,
             k: int | None = None) -> dict[str, Any]:
        """One k-NN clause (``k`` nearest, default the candidates) whose own ``filter`` holds the scope: on
        the document, or inside the nested field ``nested`` on its sub-documents (which carry only the
        tenant boundary)."""
        spec: dict[str, Any] = {"vector": list(vector), "k": k or self.candidates}
        if self.ef_search:  # the Lucene engine searches max(k, ef_search) wide
            spec["method_parameters"] = {"ef_search": self.ef_search}
        clauses = self.scope.nested_clauses(nested) if nested else self._entity_filter()
        if clauses:
            spec["filter"] = {"bool": {"filter": clauses}}
        return {"knn": {vector_path: spec}}

    def _dense(self, sq: StructuredQuery, vectors: Vectors, doc_field: str) -> dict[str, Any]:
        """k-NN on one field's vector, best over needs (or over arguments for parameters)."""
        if doc_field == "parameters":
            texts = sq.argument_texts()
        elif doc_field == "full_doc":
            texts = [sq.text or sq.tool_needs[0].user_intent]
        else:
            texts = [need.text_for(doc_field) for need in sq.tool_needs]
        texts = [t for t in dict.fromkeys(texts) if t]
        if not texts:
            return {"match_none": {}}
        nested = doc_field in ("parameters", "examples")
        path = vector_field(doc_field)
        queries = [self._knn(path, vectors[t], nested=doc_field if nested else None) for t in texts]
        inner = queries[0] if len(queries) == 1 else {"dis_max": {"queries": queries}}
        if nested:
            nested_query = {"nested": {"path": doc_field, "score_mode": "max", "query": inner}}
            # a nested k-NN cannot filter on its parent's fields: the agents and tags restrict the parents
            if self.scope.narrows:
                return {"bool": {"must": [nested_query], "filter": self._entity_filter()}}
            return nested_query
        return inner

    def candidates_body(
        self, sq: StructuredQuery, vectors: Vectors, retriever: Retriever
    ) -> dict[str, Any]:
        """The first-stage request. In the hybrid modes it must run with :meth:`pipeline_for`."""
        kinds_for(retriever)  # rejects unknown retrievers
        if retriever == "bm25":
            query = self._lexical(sq, boosts=True)
        else:
            layout = HYBRID_LAYOUT[retriever]
            subs = [
                self._lexical(sq, boosts=False) if part == "lexical" else self._dense(sq, vectors, part)
                for part in layout
            ]
            query = {"hybrid": {"queries": subs}}
        return {"size": self.candidates, **fetch_spec(), "query": query}

    @staticmethod
    def pipeline_for(retriever: Retriever, fusion: Fusion = "minmax") -> str | None:
        """The search-pipeline template the first stage of ``retriever`` runs through.

        ``minmax``: min-max normalisation and a weighted mean (weights from the field weights);
        ``rrf``: reciprocal rank fusion of the sub-queries (rank_constant 60, unweighted).
        """
        kinds_for(retriever)
        if retriever == "bm25":
            return None
        if fusion == "rrf":
            return "hybrid-rrf"
        if fusion == "minmax":
            return f"{retriever}-minmax"
        raise BadQueryError(f"unknown fusion {fusion!r}; use minmax or rrf")

    # --- exact scores -----------------------------------------------------------------------------
    def field_scores_body(
        self,
        sq: StructuredQuery,
        vectors: Vectors,
        retriever: Retriever,
        ids: Sequence[str],
        *,
        parameters: bool | None = None,
        documents: bool = False,
    ) -> dict[str, Any]:
        """Named clauses giving every candidate's exact score per field, need and argument.

        ``parameters`` fetches each candidate's parameter list (names, required flags); by default
        only when the query has extracted arguments. MFTR's penalty needs it always: a tool whose
        parameters no argument covers is penalised even when the query extracted none.
        """
        return {
            "size": len(ids),
            **_fetch(sq, parameters, documents),
            "query": {"bool": {"filter": [{"ids": {"values": list(ids)}}],
                               "should": self._field_score_clauses(sq, vectors, retriever)}},
        }

    def candidates_with_field_scores_body(
        self,
        sq: StructuredQuery,
        vectors: Vectors,
        retriever: Retriever,
        *,
        parameters: bool | None = None,
        documents: bool = False,
    ) -> dict[str, Any]:
        """The first stage and every candidate's exact field scores in one request.

        The first stage ranks as :meth:`candidates_body` does (same query, same pipeline); the named
        clauses of :meth:`field_scores_body` ride in a ``post_filter`` that keeps every hit (a
        ``match_all`` must clause; the optional clauses filter nothing), so only the fetch phase
        scores them, on the candidates it returns, exactly as the second request would. Run it with
        ``include_named_queries_score``; parse it with :func:`parse_field_scores`.

        Only for a query without argument texts: the parameters' clauses carry nested ``inner_hits``, and
        inner hits inside a ``post_filter`` make OpenSearch's node query cache keep each request's whole
        search context, hits and all (OpenSearch 2.19, on a segment of 10,000 documents or more; issue 44).
        A query with arguments takes :meth:`candidates_body`, then :meth:`field_scores_body` over its
        candidates (:meth:`~toolsift.search.Searcher.candidate_signals` chooses).
        """
        body = {k: v for k, v in self.candidates_body(sq, vectors, retriever).items()
                if k not in ("stored_fields", "_source", "docvalue_fields")}
        return {
            **body,
            **_fetch(sq, parameters, documents),
            "post_filter": {"bool": {"must": [{"match_all": {}}],
                                     "should": self._field_score_clauses(sq, vectors, retriever)}},
        }

    def _field_score_clauses(self, sq: StructuredQuery, vectors: Vectors, retriever: Retriever) -> list[dict[str, Any]]:
        should: list[dict[str, Any]] = []
        clauses = 3 * len(sq.tool_needs) + 2 * len(sq.extracted_arguments)
        for kind in kinds_for(retriever):
            for i, need in enumerate(sq.tool_needs):
                for doc_field in NEED_FIELD_FOR:
                    text = need.text_for(doc_field)
                    if not text:
                        continue
                    name = f"{doc_field}|{kind}|{i}"
                    should.append(self._exact(doc_field, kind, text, vectors, name, clauses))
            for j, text in enumerate(sq.argument_texts()):
                name = f"parameters|{kind}|{j}"
                should.append(self._exact("parameters", kind, text, vectors, name, clauses))
        return should

    def _exact(
        self, doc_field: str, kind: Kind, text: str, vectors: Vectors, name: str, clauses: int
    ) -> dict[str, Any]:
        if kind == "bm25":
            text = cap_terms(text, clauses)
        if doc_field in ("parameters", "examples"):
            if kind == "bm25":
                fields_ = [F.param_name, F.param_description] if doc_field == "parameters" else [F.example_text]
                inner: dict[str, Any] = {"multi_match": {"query": text, "fields": fields_}}
            else:
                inner = knn_score_query(vector_field(doc_field), vectors[text])
            nested: dict[str, Any] = {
                "path": doc_field,
                "score_mode": "max",
                "query": inner,
                "_name": name,
            }
            if doc_field == "parameters":
                nested["inner_hits"] = {"name": name, "size": 100, "_source": False}
            return {"nested": nested}
        if kind == "bm25":
            return {"match": {doc_field: {"query": text, "_name": name}}}
        return knn_score_query(vector_field(doc_field), vectors[text], name=name)

    # --- flat baseline ----------------------------------------------------------------------------
    def full_doc_body(
        self, text: str, vector: Sequence[float] | None, kind: Kind | Literal["hybrid"], size: int
    ) -> dict[str, Any]:
        """The Full-Doc baseline: BM25, k-NN, or both (a ``hybrid`` query) over the flat documentation."""
        lexical: dict[str, Any] = {
            "bool": {"must": [{"match": {F.full_doc: cap_terms(text)}}], "filter": self._entity_filter()}
        }
        if kind == "bm25":
            return {"size": size, **fetch_spec(), "query": lexical}
        if vector is None:
            raise BadQueryError("dense full-doc search needs the query vector")
        # Lucene's HNSW search explores k candidates: k = top_k alone (5) misses true neighbours,
        # so it searches as wide as the first stage does and returns the top ``size``.
        dense = self._knn(vector_field(F.full_doc), vector, k=max(size, self.candidates))
        if kind == "dense":
            return {"size": size, **fetch_spec(), "query": dense}
        # hybrid: the pipeline ``fulldoc-hybrid`` min-max normalises and averages the two
        return {"size": size, **fetch_spec(), "query": {"hybrid": {"queries": [lexical, dense]}}}


def _param_list(source: Mapping[str, Any]) -> tuple[tuple[str, bool], ...]:
    params = source.get(F.parameters) or []
    return tuple((str(p.get("name", "")), bool(p.get("required", True))) for p in params)


def parse_field_scores(
    response: Mapping[str, Any],
    sq: StructuredQuery,
    retriever: Retriever,
    first_stage: Mapping[str, tuple[float, int]],
) -> dict[str, FieldSignals]:
    """Read the exact-score response into :class:`FieldSignals` per candidate id.

    Missing named scores mean "no match": 0 for BM25; for dense, every candidate with a vector has
    a score, so absence means the document has no such field (also 0).
    """
    kinds = kinds_for(retriever)
    n_args = len(sq.extracted_arguments)
    out: dict[str, FieldSignals] = {}
    for hit in response["hits"]["hits"]:
        who = hit_identity(hit)
        doc_id = who.doc_id
        source = hit.get("_source", {})
        matched: Mapping[str, float] = hit.get("matched_queries") or {}
        if isinstance(matched, list):  # older clusters return names only
            raise BadQueryError("the cluster does not support include_named_queries_score (needs 2.13+)")
        params = _param_list(source)
        fields_by_kind: dict[str, dict[str, float]] = {}
        params_by_kind: dict[str, tuple[ParameterMatch, ...]] = {}
        for kind in kinds:
            scores: dict[str, float] = {}
            for doc_field in NEED_FIELD_FOR:
                best = 0.0 if kind == "bm25" else -1.0
                seen = False
                for i in range(len(sq.tool_needs)):
                    value = matched.get(f"{doc_field}|{kind}|{i}")
                    if value is None:
                        continue
                    seen = True
                    value = cosine_from_lucene(value) if kind == "dense" else value
                    best = max(best, value)
                scores[doc_field] = best if seen else 0.0
            matches: tuple[ParameterMatch, ...] = ()
            if params:
                per_param = [0.0] * len(params)  # a parameter no argument reached: no match
                inner = hit.get("inner_hits") or {}
                for j in range(n_args):
                    for ih in inner.get(f"parameters|{kind}|{j}", {}).get("hits", {}).get("hits", []):
                        offset = ih["_nested"]["offset"]
                        value = ih["_score"]
                        value = cosine_from_lucene(value) if kind == "dense" else value
                        if offset < len(per_param):
                            per_param[offset] = max(per_param[offset], value)
                matches = tuple(
                    ParameterMatch(name=name, required=req, score=max(s, 0.0) if kind == "bm25" else s)
                    for (name, req), s in zip(params, per_param)
                )
                scores["parameters"] = sum(m.score for m in matches) / len(matches)
            else:
                scores["parameters"] = 0.0
            fields_by_kind[kind] = {f: scores.get(f, 0.0) for f in FIELDS}
            params_by_kind[kind] = matches
        fs_score, fs_rank = first_stage.get(doc_id, (0.0, 0))
        out[doc_id] = FieldSignals(
            arguments=n_args,
            document=rerank_text(source) if F.description in source or F.name in source else "",
            doc_id=doc_id,
            name=who.name,
            entity=who.entity,
            agent_id=who.agent_id,
            first_stage_score=fs_score,
            first_stage_rank=fs_rank,
            fields=fields_by_kind,
            parameters=params_by_kind,
            parameter_names=params,
            derived=who.derived,
            risk=who.risk,
        )
    return out
