"""QueryBuilder: the OpenSearch request bodies, and reading exact per-field scores back."""

from __future__ import annotations

import json

from collections.abc import Sequence
from typing import Any

import pytest

from toolsift.config import DEFAULT_FIELD_WEIGHTS, FIELDS
from toolsift.errors import BadQueryError
from toolsift.query.scope import Scope
from toolsift.query.builder import HIT_FIELDS, PARAMETER_SOURCE, hit_identity, QueryBuilder, parse_field_scores
from toolsift.plugin_scripts.pipelines import HYBRID_LAYOUT
from toolsift.records import FieldSignals, ParameterMatch, kinds_for
from toolsift.query.structured import StructuredQuery

WEIGHTS = {"description": 1.0, "parameters": 0.3, "response": 0.25, "examples": 0.5}
TOOL_FILTER = [{"term": {"entity": "tool"}}]


def _sq(*, args: dict[str, str] | None = None, needs: int = 1, text: str = "the request") -> StructuredQuery:
    raw_needs = [
        {"user_intent": f"ui{i}", "tool_description": f"td{i}", "expected_response": f"er{i}"} for i in range(needs)
    ]
    return StructuredQuery.from_dict({"tool_needs": raw_needs, "extracted_arguments": args or {}}, text=text)


def _vectors(sq: StructuredQuery) -> dict[str, list[float]]:
    """A distinct two-dimensional vector for every text of the query."""
    return {t: [float(i), 0.5] for i, t in enumerate(sq.all_texts())}


def _knn(path: str, vector: Sequence[float], k: int, *, filtered: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"vector": list(vector), "k": k}
    if filtered:
        spec["filter"] = {"bool": {"filter": TOOL_FILTER}}
    return {"knn": {path: spec}}


def _script(path: str, vector: Sequence[float]) -> dict[str, Any]:
    return {
        "query": {"exists": {"field": path}},
        "script": {
            "source": "knn_score",
            "lang": "knn",
            "params": {"field": path, "query_value": list(vector), "space_type": "cosinesimil"},
        },
    }


def _clause_name(clause: dict[str, Any]) -> str:
    (kind, body), = clause.items()
    if kind == "match":
        (spec,) = body.values()
        return str(spec["_name"])
    return str(body["_name"])


# --- kinds and pipelines -----------------------------------------------------------------------------


def test_each_retriever_uses_its_score_kinds() -> None:
    assert kinds_for("bm25") == ("bm25",)
    assert kinds_for("minilm") == ("dense",)
    assert kinds_for("hybrid") == ("bm25", "dense")


def test_bm25_runs_without_a_pipeline_and_the_hybrid_modes_through_their_minmax_template() -> None:
    assert QueryBuilder.pipeline_for("bm25") is None
    assert QueryBuilder.pipeline_for("hybrid") == "hybrid-minmax"
    assert QueryBuilder.pipeline_for("minilm") == "minilm-minmax"
    assert QueryBuilder.pipeline_for("minilm", "rrf") == "hybrid-rrf"
    assert QueryBuilder.pipeline_for("bm25", "rrf") is None


def test_an_unknown_fusion_is_a_bad_query() -> None:
    with pytest.raises(BadQueryError, match="fusion"):
        QueryBuilder.pipeline_for("hybrid", "borda")  # type: ignore[arg-type]


def test_the_hybrid_layouts_are_pinned() -> None:
    # The search pipelines' weight vectors are positional: changing this order silently swaps weights.
    assert HYBRID_LAYOUT == {
        "hybrid": ("lexical", "description", "response", "examples", "parameters"),
        "minilm": ("description", "response", "examples", "parameters", "full_doc"),
    }


# --- first stage: bm25 ---------------------------------------------------------------------------------


def test_bm25_candidates_are_a_bool_with_dis_max_over_needs_boosted_by_field_weights() -> None:
    sq = _sq(args={"city": "the city"}, needs=2)
    body = QueryBuilder(field_weights=WEIGHTS, candidates=7).candidates_body(sq, {}, "bm25")

    def per_need(i: int) -> dict[str, Any]:
        return {
            "bool": {
                "should": [
                    {"match": {"description": {"query": f"td{i}", "boost": 1.0}}},
                    {"match": {"response": {"query": f"er{i}", "boost": 0.25}}},
                    {
                        "nested": {
                            "path": "examples",
                            "score_mode": "max",
                            "query": {"match": {"examples.text": {"query": f"ui{i}"}}},
                            "boost": 0.5,
                        }
                    },
                    {"match": {"full_doc": {"query": f"ui{i}", "boost": 0.1}}},
                ]
            }
        }

    assert body == {
        "size": 7,
        "stored_fields": "_none_",  # identity from doc values: no stored-field loads
        "docvalue_fields": HIT_FIELDS,
        "query": {
            "bool": {
                "should": [
                    {"dis_max": {"queries": [per_need(0), per_need(1)]}},
                    {
                        "nested": {
                            "path": "parameters",
                            "score_mode": "max",
                            "query": {
                                "multi_match": {
                                    "query": "city: the city",
                                    "fields": ["parameters.name", "parameters.description"],
                                }
                            },
                            "boost": 0.3,
                        }
                    },
                ],
                "filter": TOOL_FILTER,
                "minimum_should_match": 1,
            }
        },
    }


def test_bm25_candidates_leave_out_zero_weight_fields() -> None:
    weights = {"description": 1.0, "parameters": 0.0, "response": 0.0, "examples": 0.0}
    body = QueryBuilder(field_weights=weights).candidates_body(_sq(args={"city": "x"}), {}, "bm25")

    should = body["query"]["bool"]["should"]
    assert len(should) == 1  # no parameters clause
    (need,) = should[0]["dis_max"]["queries"]
    assert need["bool"]["should"] == [
        {"match": {"description": {"query": "td0", "boost": 1.0}}},
        {"match": {"full_doc": {"query": "ui0", "boost": 0.1}}},
    ]


def test_bm25_candidates_have_no_parameters_clause_without_arguments() -> None:
    body = QueryBuilder(field_weights=WEIGHTS).candidates_body(_sq(), {}, "bm25")

    assert [next(iter(c)) for c in body["query"]["bool"]["should"]] == ["dis_max"]


def test_searching_tools_and_agents_together_drops_the_entity_filter() -> None:
    builder = QueryBuilder(field_weights=WEIGHTS, entity=None)
    sq = _sq()

    assert builder.candidates_body(sq, {}, "bm25")["query"]["bool"]["filter"] == []
    knn = builder.candidates_body(sq, _vectors(sq), "minilm")["query"]["hybrid"]["queries"][0]
    assert "filter" not in knn["knn"]["description_vector"]


def test_an_agent_filter_restricts_every_first_stage_sub_query_to_those_agents() -> None:
    builder = QueryBuilder(field_weights=WEIGHTS, scope=Scope(agents=("agent:a", "agent:b")))
    sq = _sq(args={"city": "the city"})
    wanted = [*TOOL_FILTER, {"terms": {"agent_id": ["agent:a", "agent:b"]}}]

    assert builder.candidates_body(sq, {}, "bm25")["query"]["bool"]["filter"] == wanted
    subs = builder.candidates_body(sq, _vectors(sq), "hybrid")["query"]["hybrid"]["queries"]
    assert subs[0]["bool"]["filter"] == wanted  # lexical
    assert subs[1]["knn"]["description_vector"]["filter"] == {"bool": {"filter": wanted}}
    nested = [q for q in subs if "bool" in q and "must" in q["bool"]]
    assert {q["bool"]["must"][0]["nested"]["path"] for q in nested} == {"examples", "parameters"}
    assert all(q["bool"]["filter"] == wanted for q in nested)  # a nested k-NN cannot filter its parents
    dense = builder.full_doc_body("the request", [0.1, 0.2], "dense", 5)["query"]["knn"]["full_doc_vector"]
    assert dense["filter"] == {"bool": {"filter": wanted}}


def test_a_tenant_bounds_every_k_nn_inside_its_own_filter_even_on_nested_sub_documents() -> None:
    builder = QueryBuilder(field_weights=WEIGHTS, scope=Scope(tenant="acme"))
    sq = _sq(args={"city": "the city"})
    acme = {"bool": {"should": [{"term": {"tenants": "acme"}},
                                {"bool": {"must_not": {"exists": {"field": "tenants"}}}}], "minimum_should_match": 1}}

    assert builder.candidates_body(sq, {}, "bm25")["query"]["bool"]["filter"] == [*TOOL_FILTER, acme]
    subs = builder.candidates_body(sq, _vectors(sq), "hybrid")["query"]["hybrid"]["queries"]
    assert subs[1]["knn"]["description_vector"]["filter"] == {"bool": {"filter": [*TOOL_FILTER, acme]}}
    nested = {q["nested"]["path"]: q["nested"]["query"] for q in subs if "nested" in q}
    assert set(nested) == {"examples", "parameters"}
    for path, knn in nested.items():  # the sub-documents' own copy of the tenants, inside the k-NN
        (spec,) = knn["knn"].values()
        assert json.dumps(spec["filter"]).count(f'"{path}.tenants"') == 2


def test_a_tag_filter_keeps_tools_with_any_of_the_tags() -> None:
    body = QueryBuilder(field_weights=WEIGHTS, scope=Scope(tags=("weather", "maps"))).candidates_body(_sq(), {}, "bm25")
    assert {"terms": {"tags.keyword": ["weather", "maps"]}} in body["query"]["bool"]["filter"]


def test_an_unscoped_search_sends_the_queries_it_always_sent() -> None:
    sq = _sq(args={"city": "the city"})
    subs = QueryBuilder(field_weights=WEIGHTS).candidates_body(sq, _vectors(sq), "hybrid")["query"]["hybrid"]["queries"]
    nested = [q["nested"]["query"] for q in subs if "nested" in q]
    assert nested and all("filter" not in next(iter(q["knn"].values())) for q in nested)


# --- first stage: hybrid modes -------------------------------------------------------------------------


def test_hybrid_candidates_follow_the_hybrid_layout_exactly() -> None:
    sq = _sq(args={"city": "the city"})
    v = _vectors(sq)
    builder = QueryBuilder(field_weights=WEIGHTS, candidates=9)
    body = builder.candidates_body(sq, v, "hybrid")

    assert body["size"] == 9
    assert body["stored_fields"] == "_none_"
    lexical, description, response, examples, parameters = body["query"]["hybrid"]["queries"]
    # lexical: the bm25 query without field boosts (the pipeline carries the weights)
    (need,) = lexical["bool"]["should"][0]["dis_max"]["queries"]
    assert need["bool"]["should"][0] == {"match": {"description": {"query": "td0", "boost": 1.0}}}
    assert need["bool"]["should"][1] == {"match": {"response": {"query": "er0", "boost": 1.0}}}
    assert need["bool"]["should"][2]["nested"]["boost"] == 1.0
    assert lexical["bool"]["should"][1]["nested"]["boost"] == 1.0
    assert lexical["bool"]["filter"] == TOOL_FILTER
    # dense sub-queries in layout order, each on its own vector field
    assert description == _knn("description_vector", v["td0"], 9, filtered=True)
    assert response == _knn("response_vector", v["er0"], 9, filtered=True)
    assert examples == {
        "nested": {
            "path": "examples",
            "score_mode": "max",
            "query": _knn("examples.vector", v["ui0"], 9, filtered=False),
        }
    }
    assert parameters == {
        "nested": {
            "path": "parameters",
            "score_mode": "max",
            "query": _knn("parameters.vector", v["city: the city"], 9, filtered=False),
        }
    }


def test_minilm_candidates_follow_the_minilm_layout_exactly() -> None:
    sq = _sq(args={"city": "the city"}, text="weather in Paris")
    v = _vectors(sq)
    body = QueryBuilder(field_weights=WEIGHTS, candidates=5).candidates_body(sq, v, "minilm")

    description, response, examples, parameters, full_doc = body["query"]["hybrid"]["queries"]
    assert description == _knn("description_vector", v["td0"], 5, filtered=True)
    assert response == _knn("response_vector", v["er0"], 5, filtered=True)
    assert examples["nested"]["path"] == "examples"
    assert examples["nested"]["query"] == _knn("examples.vector", v["ui0"], 5, filtered=False)
    assert parameters["nested"]["path"] == "parameters"
    assert parameters["nested"]["query"] == _knn("parameters.vector", v["city: the city"], 5, filtered=False)
    assert full_doc == _knn("full_doc_vector", v["weather in Paris"], 5, filtered=True)


def test_dense_full_doc_falls_back_to_the_first_intent_when_the_request_text_is_empty() -> None:
    sq = _sq(text="")
    v = _vectors(sq)
    body = QueryBuilder(field_weights=WEIGHTS).candidates_body(sq, v, "minilm")

    assert body["query"]["hybrid"]["queries"][4]["knn"]["full_doc_vector"]["vector"] == v["ui0"]


@pytest.mark.parametrize("retriever", ["hybrid", "minilm"])
def test_the_parameters_slot_is_match_none_without_arguments(retriever: str) -> None:
    sq = _sq()
    subs = QueryBuilder(field_weights=WEIGHTS).candidates_body(sq, _vectors(sq), retriever)["query"]["hybrid"]["queries"]  # type: ignore[arg-type]

    assert len(subs) == len(HYBRID_LAYOUT[retriever])  # the slot is kept: the weights stay aligned
    assert subs[HYBRID_LAYOUT[retriever].index("parameters")] == {"match_none": {}}


def test_dense_sub_queries_take_the_best_over_needs_and_arguments_with_dis_max() -> None:
    sq = _sq(needs=2, args={"city": "c", "date": "d"})
    v = _vectors(sq)
    subs = QueryBuilder(field_weights=WEIGHTS, candidates=3).candidates_body(sq, v, "hybrid")["query"]["hybrid"]["queries"]

    assert subs[1] == {
        "dis_max": {
            "queries": [
                _knn("description_vector", v["td0"], 3, filtered=True),
                _knn("description_vector", v["td1"], 3, filtered=True),
            ]
        }
    }
    assert subs[4]["nested"]["query"] == {
        "dis_max": {
            "queries": [
                _knn("parameters.vector", v["city: c"], 3, filtered=False),
                _knn("parameters.vector", v["date: d"], 3, filtered=False),
            ]
        }
    }


def test_a_text_repeated_across_needs_gives_one_knn_clause() -> None:
    same = {"user_intent": "u", "tool_description": "same", "expected_response": "r"}
    sq = StructuredQuery.from_dict({"tool_needs": [same, {**same, "user_intent": "v"}]})
    v = _vectors(sq)
    subs = QueryBuilder(field_weights=WEIGHTS, candidates=3).candidates_body(sq, v, "hybrid")["query"]["hybrid"]["queries"]

    assert subs[1] == _knn("description_vector", v["same"], 3, filtered=True)
    assert len(subs[3]["nested"]["query"]["dis_max"]["queries"]) == 2  # "u" and "v" differ


# --- exact field scores ---------------------------------------------------------------------------------


def test_field_scores_body_names_every_clause_field_kind_index() -> None:
    sq = _sq(needs=2, args={"city": "c"})
    body = QueryBuilder(field_weights=WEIGHTS).field_scores_body(sq, _vectors(sq), "hybrid", ["t1", "t2"])

    names = [_clause_name(c) for c in body["query"]["bool"]["should"]]
    assert names == [
        f"{field}|{kind}|{i}"
        for kind in ("bm25", "dense")
        for field, i in [
            ("description", 0), ("response", 0), ("examples", 0),
            ("description", 1), ("response", 1), ("examples", 1),
            ("parameters", 0),
        ]
    ]


def test_field_scores_body_is_restricted_to_the_candidate_ids() -> None:
    sq = _sq()
    body = QueryBuilder(field_weights=WEIGHTS).field_scores_body(sq, {}, "bm25", ("t1", "t2", "t3"))

    assert body["size"] == 3
    assert body["stored_fields"] == "_none_"  # identity from doc values; no arguments, no parameter source
    assert body["docvalue_fields"] == HIT_FIELDS
    assert body["query"]["bool"]["filter"] == [{"ids": {"values": ["t1", "t2", "t3"]}}]


def test_field_scores_body_bm25_clauses() -> None:
    sq = _sq(args={"city": "c"})
    should = QueryBuilder(field_weights=WEIGHTS).field_scores_body(sq, {}, "bm25", ["t1"])["query"]["bool"]["should"]

    assert should == [
        {"match": {"description": {"query": "td0", "_name": "description|bm25|0"}}},
        {"match": {"response": {"query": "er0", "_name": "response|bm25|0"}}},
        {
            "nested": {
                "path": "examples",
                "score_mode": "max",
                "query": {"multi_match": {"query": "ui0", "fields": ["examples.text"]}},
                "_name": "examples|bm25|0",
            }
        },
        {
            "nested": {
                "path": "parameters",
                "score_mode": "max",
                "query": {"multi_match": {"query": "city: c", "fields": ["parameters.name", "parameters.description"]}},
                "_name": "parameters|bm25|0",
                "inner_hits": {"name": "parameters|bm25|0", "size": 100, "_source": False},
            }
        },
    ]


def test_field_scores_body_dense_clauses_use_the_exact_knn_score_script() -> None:
    sq = _sq(args={"city": "c"})
    v = _vectors(sq)
    should = QueryBuilder(field_weights=WEIGHTS).field_scores_body(sq, v, "minilm", ["t1"])["query"]["bool"]["should"]

    assert should == [
        {"script_score": {**_script("description_vector", v["td0"]), "_name": "description|dense|0"}},
        {"script_score": {**_script("response_vector", v["er0"]), "_name": "response|dense|0"}},
        {
            "nested": {
                "path": "examples",
                "score_mode": "max",
                "query": {"script_score": _script("examples.vector", v["ui0"])},
                "_name": "examples|dense|0",
            }
        },
        {
            "nested": {
                "path": "parameters",
                "score_mode": "max",
                "query": {"script_score": _script("parameters.vector", v["city: c"])},
                "_name": "parameters|dense|0",
                "inner_hits": {"name": "parameters|dense|0", "size": 100, "_source": False},
            }
        },
    ]


def test_field_scores_body_skips_empty_need_texts() -> None:
    sq = StructuredQuery.from_dict({"tool_needs": [{"user_intent": "only an intent"}]})
    should = QueryBuilder(field_weights=WEIGHTS).field_scores_body(sq, {}, "bm25", ["t1"])["query"]["bool"]["should"]

    assert [_clause_name(c) for c in should] == ["examples|bm25|0"]


# --- parse_field_scores -----------------------------------------------------------------------------------


def _hit(doc_id: str, source: dict[str, Any], matched: Any = None, inner: dict[str, list[tuple[int, float]]] | None = None) -> dict[str, Any]:
    # As OpenSearch answers: identity as doc values, the parameter list (when fetched) as _source.
    doc_values = {"name": "name.keyword", "entity": "entity", "agent_id": "agent_id"}
    fields = {dv: [source[key]] for key, dv in doc_values.items() if key in source}
    hit: dict[str, Any] = {"_id": doc_id, "_source": source, "fields": fields}
    if matched is not None:
        hit["matched_queries"] = matched
    if inner is not None:
        hit["inner_hits"] = {
            name: {
                "hits": {
                    "hits": [
                        {"_nested": {"field": "parameters", "offset": off}, "_score": score} for off, score in rows
                    ]
                }
            }
            for name, rows in inner.items()
        }
    return hit


WEATHER_SOURCE = {
    "tool_id": "t1",
    "name": "get_weather",
    "entity": "tool",
    "agent_id": "a1",
    "parameters": [
        {"name": "city", "required": True},
        {"name": "date", "required": False},
        {"name": "units"},  # required unless the documentation says otherwise
    ],
}


def _parse_weather() -> FieldSignals:
    sq = _sq(needs=2, args={"city": "c", "date": "d"})
    response = {
        "hits": {
            "hits": [
                _hit(
                    "t1",
                    WEATHER_SOURCE,
                    matched={
                        "description|bm25|0": 2.0,
                        "description|bm25|1": 5.0,
                        "response|bm25|1": 1.5,
                        # examples|bm25 absent: no match
                        "description|dense|0": 0.9,  # cos 0.8
                        "description|dense|1": 0.6,  # cos 0.2
                        "response|dense|0": 0.25,  # cos -0.5
                        "examples|dense|0": 0.75,  # cos 0.5
                        "examples|dense|1": 0.5,  # cos 0.0
                    },
                    inner={
                        "parameters|bm25|0": [(0, 3.0), (2, 1.0)],
                        "parameters|bm25|1": [(0, 4.0)],
                        "parameters|dense|0": [(0, 0.9), (1, 0.5), (2, 0.6)],  # cos 0.8, 0.0, 0.2
                        "parameters|dense|1": [(0, 0.7), (1, 0.8), (2, 0.55)],  # cos 0.4, 0.6, 0.1
                    },
                )
            ]
        }
    }
    return parse_field_scores(response, sq, "hybrid", {"t1": (0.7, 2)})["t1"]


def test_parse_field_scores_takes_the_best_over_needs_per_field_and_kind() -> None:
    s = _parse_weather()

    assert set(s.fields) == {"bm25", "dense"}
    assert list(s.fields["bm25"]) == list(FIELDS)
    assert s.fields["bm25"]["description"] == 5.0
    assert s.fields["bm25"]["response"] == 1.5
    assert s.fields["bm25"]["examples"] == 0.0
    assert s.fields["dense"]["description"] == pytest.approx(0.8)
    assert s.fields["dense"]["response"] == pytest.approx(-0.5)  # a negative cosine is kept
    assert s.fields["dense"]["examples"] == pytest.approx(0.5)


def test_parse_field_scores_scores_each_parameter_by_its_best_argument() -> None:
    s = _parse_weather()

    assert s.parameters["bm25"] == (
        ParameterMatch("city", True, 4.0),
        ParameterMatch("date", False, 0.0),  # no argument matched it
        ParameterMatch("units", True, 1.0),
    )
    dense = s.parameters["dense"]
    assert [(m.name, m.required) for m in dense] == [("city", True), ("date", False), ("units", True)]
    assert [m.score for m in dense] == pytest.approx([0.8, 0.6, 0.2])


def test_parse_field_scores_parameters_field_is_the_mean_over_parameters() -> None:
    s = _parse_weather()

    assert s.fields["bm25"]["parameters"] == pytest.approx((4.0 + 0.0 + 1.0) / 3)
    assert s.fields["dense"]["parameters"] == pytest.approx((0.8 + 0.6 + 0.2) / 3)


def test_parse_field_scores_carries_identity_and_first_stage_position() -> None:
    s = _parse_weather()

    assert (s.doc_id, s.name, s.entity, s.agent_id) == ("t1", "get_weather", "tool", "a1")
    assert (s.first_stage_score, s.first_stage_rank) == (0.7, 2)
    assert s.parameter_names == (("city", True), ("date", False), ("units", True))


def test_parse_field_scores_missing_named_scores_are_zero() -> None:
    sq = _sq(args={"city": "c"})
    response = {"hits": {"hits": [_hit("bare", {}), _hit("t2", {"name": "x", "parameters": [{"name": "p"}]}, matched={})]}}

    out = parse_field_scores(response, sq, "hybrid", {})

    bare = out["bare"]
    assert bare.fields == {"bm25": dict.fromkeys(FIELDS, 0.0), "dense": dict.fromkeys(FIELDS, 0.0)}
    assert bare.parameters == {"bm25": (), "dense": ()}  # the tool has no parameters
    assert (bare.name, bare.entity, bare.agent_id) == ("bare", "tool", None)
    assert (bare.first_stage_score, bare.first_stage_rank) == (0.0, 0)
    assert out["t2"].parameters["bm25"] == (ParameterMatch("p", True, 0.0),)
    assert out["t2"].fields["bm25"]["parameters"] == 0.0


def test_parse_field_scores_without_arguments_leaves_every_parameter_uncovered() -> None:
    sq = _sq()
    response = {"hits": {"hits": [_hit("t1", WEATHER_SOURCE, matched={"description|bm25|0": 1.0})]}}

    s = parse_field_scores(response, sq, "bm25", {})["t1"]

    assert set(s.fields) == {"bm25"}
    # MFTR: s_pj is the best score over no arguments, 0 — nothing in the request covers the parameter.
    assert [m.score for m in s.parameters["bm25"]] == [0.0, 0.0, 0.0]
    assert s.arguments == 0
    assert s.fields["bm25"]["parameters"] == 0.0
    assert s.parameter_names == (("city", True), ("date", False), ("units", True))


def test_parse_field_scores_rejects_clusters_without_named_query_scores() -> None:
    response = {"hits": {"hits": [_hit("t1", {}, matched=["description|bm25|0"])]}}

    with pytest.raises(BadQueryError, match="include_named_queries_score"):
        parse_field_scores(response, _sq(), "bm25", {})


# --- full-doc baseline -------------------------------------------------------------------------------------


def test_full_doc_body_bm25_matches_the_flat_document() -> None:
    body = QueryBuilder(field_weights=WEIGHTS).full_doc_body("weather in Paris", None, "bm25", 10)

    assert body == {
        "size": 10,
        "stored_fields": "_none_",
        "docvalue_fields": HIT_FIELDS,
        "query": {"bool": {"must": [{"match": {"full_doc": "weather in Paris"}}], "filter": TOOL_FILTER}},
    }


def test_full_doc_body_dense_is_knn_on_the_flat_vector_searched_as_wide_as_the_first_stage() -> None:
    body = QueryBuilder(field_weights=WEIGHTS, candidates=100).full_doc_body("w", [0.1, 0.2], "dense", 4)

    # HNSW explores k candidates: a k of 4 would miss true neighbours; the top 4 of 100 are returned.
    assert body == {
        "size": 4,
        "stored_fields": "_none_",
        "docvalue_fields": HIT_FIELDS,
        "query": _knn("full_doc_vector", [0.1, 0.2], 100, filtered=True),
    }


def test_full_doc_body_dense_without_entity_has_no_filter() -> None:
    body = QueryBuilder(field_weights=WEIGHTS, entity=None, candidates=100).full_doc_body("w", [0.1], "dense", 4)

    assert body["query"] == {"knn": {"full_doc_vector": {"vector": [0.1], "k": 100}}}
    assert QueryBuilder(field_weights=WEIGHTS, entity=None).full_doc_body("w", None, "bm25", 4)["query"]["bool"]["filter"] == []


def test_full_doc_body_dense_needs_a_vector() -> None:
    with pytest.raises(BadQueryError, match="query vector"):
        QueryBuilder(field_weights=WEIGHTS).full_doc_body("w", None, "dense", 4)


# --- unknown retriever --------------------------------------------------------------------------------------


def test_an_unknown_retriever_is_a_bad_query() -> None:
    builder = QueryBuilder(field_weights=DEFAULT_FIELD_WEIGHTS)
    sq = _sq()

    with pytest.raises(BadQueryError, match="unknown retriever 'splade'"):
        kinds_for("splade")  # type: ignore[arg-type]
    with pytest.raises(BadQueryError, match="unknown retriever"):
        builder.field_scores_body(sq, {}, "splade", ["t1"])  # type: ignore[arg-type]
    with pytest.raises(BadQueryError, match="unknown retriever"):
        parse_field_scores({"hits": {"hits": []}}, sq, "splade", {})  # type: ignore[arg-type]


def test_candidates_body_rejects_an_unknown_retriever_as_a_bad_query() -> None:
    with pytest.raises(BadQueryError, match="unknown retriever"):
        QueryBuilder(field_weights=DEFAULT_FIELD_WEIGHTS).candidates_body(_sq(), {}, "splade")  # type: ignore[arg-type]


def test_cap_terms_keeps_short_requests_whole_and_cuts_long_ones_to_their_share() -> None:
    from toolsift.opensearch import TERM_BUDGET, cap_terms

    short = "convert a word document to pdf"
    assert cap_terms(short, 10) == short
    long_text = " ".join(f"w{i}" for i in range(5000))
    one = cap_terms(long_text, 1)
    four = cap_terms(long_text, 4)
    assert len(one.split()) == TERM_BUDGET // 3
    assert len(four.split()) == TERM_BUDGET // 12
    assert long_text.startswith(four)


def test_a_pasted_document_never_exceeds_lucenes_clause_limit_across_the_request() -> None:
    long_text = " ".join(f"w{i}" for i in range(5000))  # ~29k characters, under the request limit
    sq = StructuredQuery.from_dict(
        {
            "tool_needs": [{"user_intent": long_text, "tool_description": long_text, "expected_response": long_text}] * 3,
            "extracted_arguments": {"a": long_text, "b": long_text},
        }
    )
    builder = QueryBuilder(field_weights=DEFAULT_FIELD_WEIGHTS, candidates=10)
    import json
    import re

    for body in (
        builder.candidates_body(sq, {}, "bm25"),
        builder.field_scores_body(sq, {}, "bm25", ["x"]),
    ):
        words = sum(len(re.findall(r"\w+", q)) for q in re.findall(r'"query": "([^"]*)"', json.dumps(body)))
        multi_field = 2  # parameter clauses search name and description
        assert words * multi_field <= 1024



def test_a_query_with_arguments_fetches_the_parameter_list_for_per_parameter_detail() -> None:
    sq = StructuredQuery.from_dict(
        {"tool_needs": [{"user_intent": "u", "tool_description": "d", "expected_response": "r"}],
         "extracted_arguments": {"city": "the city"}}
    )
    body = QueryBuilder(field_weights=WEIGHTS).field_scores_body(sq, {}, "bm25", ["t1"])

    assert body["_source"] == PARAMETER_SOURCE
    assert "stored_fields" not in body


def test_hit_identity_reads_doc_values_when_there_is_no_id() -> None:
    tool = {"fields": {"tool_id": ["t1"], "agent_id": ["agent:a"], "entity": ["tool"], "name.keyword": ["Weather"]}}
    agent = {"fields": {"agent_id": ["agent:a"], "entity": ["agent"]}}

    assert hit_identity(tool) == type(hit_identity(tool))("t1", "Weather", "tool", "agent:a")
    assert hit_identity(agent).doc_id == "agent:a"
    assert hit_identity(agent).name == "agent:a"  # no name doc value: the id stands in
    assert hit_identity(tool).derived == ()
    assert hit_identity({"fields": {**tool["fields"], "derived": ["examples"]}}).derived == ("examples",)
    with pytest.raises(BadQueryError):
        hit_identity({"fields": {}})



def _knn_specs(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        found = [spec for path, spec in node["knn"].items()] if "knn" in node else []
        return found + [s for v in node.values() for s in _knn_specs(v)]
    if isinstance(node, list):
        return [s for v in node for s in _knn_specs(v)]
    return []


def test_every_first_stage_knn_clause_searches_as_wide_as_ef_search_when_it_is_set() -> None:
    sq = _sq(args={"city": "Paris"}, needs=2)
    wide = QueryBuilder(field_weights=WEIGHTS, candidates=100, ef_search=200).candidates_body(sq, _vectors(sq), "hybrid")
    plain = QueryBuilder(field_weights=WEIGHTS, candidates=100).candidates_body(sq, _vectors(sq), "hybrid")

    assert len(_knn_specs(wide)) >= 5
    assert all(spec["method_parameters"] == {"ef_search": 200} and spec["k"] == 100 for spec in _knn_specs(wide))
    assert all("method_parameters" not in spec for spec in _knn_specs(plain))
