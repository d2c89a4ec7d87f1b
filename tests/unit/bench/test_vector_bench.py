"""``toolsift bench vectors``' pure parts: the variants' mappings and queries, byte encoding, recall against
exact search (ties count), the bytes the Lucene engine reads, the table."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from toolsift.cli.main import cli
from toolsift.errors import ConfigError
from toolsift.bench.vector_bench import (
    DEFAULT_VARIANTS,
    FIELD,
    Variant,
    byte_scale,
    exact_top,
    hot_bytes,
    recall_at,
    table_rows,
    to_bytes,
    vector_bytes,
)
from toolsift.mappings.template import knn_mapping


# --- the variants ------------------------------------------------------------------------------------


def test_the_baseline_variant_is_the_product_mapping_exactly() -> None:
    (product,) = [v for v in DEFAULT_VARIANTS if v.name == "product"]

    assert product.field_mapping(384) == knn_mapping(384)
    assert product.field_mapping(384)["method"]["engine"] == "lucene"


def test_variants_change_only_what_they_name() -> None:
    sq = Variant("sq", encoding="sq").field_mapping(384)
    byte = Variant("b", encoding="byte").field_mapping(384)
    m8 = Variant("m8", m=8).field_mapping(384)
    product = knn_mapping(384)

    assert sq["method"]["parameters"]["encoder"] == {"name": "sq"}
    assert {k: v for k, v in sq["method"]["parameters"].items() if k != "encoder"} == product["method"]["parameters"]
    assert byte["data_type"] == "byte" and byte["method"] == product["method"]
    assert m8["method"]["parameters"] == {**product["method"]["parameters"], "m": 8}


def test_ef_search_goes_into_the_knn_query_method_parameters_only_when_given() -> None:
    plain = Variant("p").query([0.5, 0.5], k=100, size=10)
    tuned = Variant("t", ef_search=512).query([0.5, 0.5], k=100, size=10)

    assert plain == {"size": 10, "_source": False, "query": {"knn": {FIELD: {"vector": [0.5, 0.5], "k": 100}}}}
    assert tuned["query"]["knn"][FIELD]["method_parameters"] == {"ef_search": 512}


def test_query_time_variants_share_the_products_index_and_every_build_is_distinct_otherwise() -> None:
    builds = {v.name: v.build for v in DEFAULT_VARIANTS}

    assert len(builds) == len(DEFAULT_VARIANTS)  # names unique
    assert {builds[f"ef_search={n}"] for n in (50, 100, 200, 512)} == {builds["product"]}
    assert len(set(builds.values())) == len(DEFAULT_VARIANTS) - 4


@pytest.mark.parametrize("kwargs", [{"encoding": "fp16"}, {"scale": "x255"}, {"m": 1}, {"ef_search": 0}])
def test_a_bad_variant_is_refused_naming_it(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="'bad'"):
        Variant("bad", **kwargs)


def test_an_unknown_variant_name_is_a_usage_error_listing_the_known_ones() -> None:
    result = CliRunner().invoke(cli, ["bench", "vectors", "--variants", "product,fp16"])

    assert result.exit_code == 2
    assert "fp16" in result.output and "byte-scaled" in result.output


# --- byte vectors ------------------------------------------------------------------------------------


def test_byte_vectors_are_the_unit_vector_times_the_scale_rounded_and_clipped() -> None:
    vectors = np.array([[3.0, 4.0, 0.0], [0.0, 3.0, -4.0]], dtype=np.float32)  # unit: 0.6, 0.8

    plain = to_bytes(vectors, byte_scale(vectors, "x127"))
    scaled = to_bytes(vectors, byte_scale(vectors, "scaled"))
    clipped = to_bytes(vectors, 300.0)

    assert plain.dtype == np.int8
    assert plain.tolist() == [[76, 102, 0], [0, 76, -102]]  # 0.6 * 127 = 76.2, 0.8 * 127 = 101.6
    assert byte_scale(vectors, "scaled") == pytest.approx(127.0 / 0.8)  # the largest unit |component|: 127
    assert scaled.tolist() == [[95, 127, 0], [0, 95, -127]]
    assert clipped.tolist() == [[127, 127, 0], [0, 127, -128]]


def test_all_zero_vectors_cannot_be_scaled() -> None:
    with pytest.raises(ConfigError, match="every component is 0"):
        byte_scale(np.zeros((2, 3), dtype=np.float32), "scaled")


# --- exact search and recall -------------------------------------------------------------------------


def test_exact_search_ranks_by_cosine_best_first_whatever_the_lengths() -> None:
    docs = np.array([[1.0, 0.0], [0.0, 5.0], [1.0, 1.0]], dtype=np.float32)
    queries = np.array([[0.0, 2.0], [3.0, 0.1]], dtype=np.float32)

    top, sims = exact_top(queries, docs, 2)

    assert top.tolist() == [[1, 2], [0, 2]]
    assert sims.shape == (2, 3) and sims[0, 1] == pytest.approx(1.0)


def test_recall_counts_the_found_rows_inside_the_exact_top_k() -> None:
    sims = np.array([0.9, 0.8, 0.7, 0.1, 0.0])

    assert recall_at([0, 1], sims, 2) == 1.0
    assert recall_at([0, 3], sims, 2) == 0.5
    assert recall_at([3, 4, 0], sims, 2) == 0.0  # only the first k found count
    assert recall_at([0, 0], sims, 2) == 0.5  # a row found twice counts once


def test_recall_counts_ties_with_the_kth_best_and_needs_only_as_many_rows_as_there_are_documents() -> None:
    sims = np.array([0.9, 0.5, 0.5, 0.1])

    assert recall_at([0, 2], sims, 2) == 1.0  # row 2 ties with row 1, the exact 2nd best
    assert recall_at([0, 1, 2, 3], sims, 10) == 1.0  # 4 documents, k = 10


# --- bytes ------------------------------------------------------------------------------------------


def test_the_lucene_working_set_is_the_graph_and_the_vectors_the_search_scores() -> None:
    sizes = {"vec": 1000, "vex": 100, "vem": 5, "veq": 260, "vemq": 3, "dvd": 999, "fdt": 50}

    assert vector_bytes(sizes) == 1000 + 100 + 5 + 260 + 3
    assert hot_bytes(sizes, "fp32") == hot_bytes(sizes, "byte") == 1100
    assert hot_bytes(sizes, "sq") == 360  # quantised vectors, not the raw ones kept for merges


# --- the table ---------------------------------------------------------------------------------------


def _record(name: str, variant: Variant) -> dict[str, Any]:
    summary = {"p50": 4.0, "p95": 9.0, "mean": 5.0}
    return {"name": name, "variant": {"encoding": variant.encoding, "ef_search": variant.ef_search},
            "mapping": variant.field_mapping(4), "recall@10": 0.98, "recall@100": 0.95, "ndcg@10": 0.5,
            "latency": {"took_ms": summary, "wall_ms": summary}, "build": {"seconds": 1.25},
            "disk": {"segments": 1, "vector_bytes_per_tool": 1560.0, "doc_values_bytes_per_tool": 1540.0,
                     "store_bytes_per_tool": 9000.0, "ram_bytes_per_tool": 1558.0}}


def test_the_table_has_a_row_per_variant_then_exact_search() -> None:
    figures = {"variants": [_record("product", Variant("product")), _record("sq", Variant("sq", encoding="sq"))],
               "exact": {"ndcg@10": 0.55}}

    headers, rows = table_rows(figures)

    assert [row[0] for row in rows] == ["product", "sq", "exact (brute force, numpy)"]
    assert all(len(row) == len(headers) for row in rows)
    assert rows[0][1] == "fp32 16/128/-" and rows[1][1] == "sq 16/128/-"
    assert rows[0][headers.index("R@10")] == "0.980" and rows[-1][headers.index("NDCG@10")] == "0.550"
