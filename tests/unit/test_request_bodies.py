"""What the OpenSearch client writes: request bodies by orjson, query vectors as short float32 decimals."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from opensearchpy import JSONSerializer

from toolsift.opensearch import FastJSONSerializer, wire_vector

finite32 = st.floats(width=32, allow_nan=False, allow_infinity=False)


@given(st.lists(finite32, min_size=1, max_size=64))
def test_a_wire_vector_parses_back_to_the_very_same_float32s(values: list[float]) -> None:
    vector = np.asarray(values, dtype=np.float32)

    sent = json.loads(FastJSONSerializer().dumps({"vector": wire_vector(vector)}))["vector"]

    assert np.array_equal(np.asarray(sent, dtype=np.float32), vector)


def test_a_wire_vector_is_about_half_the_json_of_the_float64_list() -> None:
    vector = np.random.default_rng(0).standard_normal(384).astype(np.float32)

    assert len(json.dumps(wire_vector(vector))) < 0.65 * len(json.dumps(vector.tolist()))


def test_the_fast_serializer_writes_what_opensearch_py_writes() -> None:
    body = {"query": {"match": {"name": "météo ☂"}}, "size": 10, "when": dt.datetime(2026, 11, 27, 4, 5, 6),
            "id": uuid.UUID(int=7), "price": Decimal("1.5"), "n": np.int64(3), "flags": [True, None]}

    assert json.loads(FastJSONSerializer().dumps(body)) == json.loads(JSONSerializer().dumps(body))
    assert FastJSONSerializer().dumps('{"already": "a string"}') == '{"already": "a string"}'


def test_what_orjson_refuses_goes_through_the_standard_writer() -> None:
    huge = {"n": 2**70, "text": "lone \ud800 surrogate"}

    assert FastJSONSerializer().dumps(huge) == JSONSerializer().dumps(huge)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


@given(json_values)
def test_the_fast_serializer_reads_an_answer_as_opensearch_py_reads_it(value: object) -> None:
    answer = json.dumps(value)

    assert FastJSONSerializer().loads(answer) == JSONSerializer().loads(answer)


def test_what_orjson_will_not_read_goes_through_the_standard_reader() -> None:
    for answer in ('{"score": NaN}', '{"text": "lone \\ud800 surrogate"}'):
        read = FastJSONSerializer().loads(answer)
        assert json.dumps(read) == json.dumps(JSONSerializer().loads(answer))
    # OpenSearch writes no integer past 64 bits (unsigned_long ends at 2**64 - 1, read exactly)
    assert FastJSONSerializer().loads('{"n": 18446744073709551615}') == {"n": 2**64 - 1}
