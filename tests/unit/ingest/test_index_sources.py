"""The bulk bodies of the write pass: the documents of ``to_index_documents``, as JSON text.

The encoder is a small deterministic one (a vector seeded by the text's length): what is checked is
the body, not the model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

from toolsift.ingest.embed import document_texts, index_sources, to_index_documents
from toolsift.mappings import AgentDoc, F, ParameterDoc, ToolDoc, vector_field


class LengthEncoder:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode_document(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.stack([np.random.default_rng(len(t)).standard_normal(8).astype(np.float32) for t in texts])


TOOL = ToolDoc(
    tool_id="convert_currency", name="convert_currency", agent_id="agent:money",
    description="Convert an amount of money into another currency.",
    parameters=(ParameterDoc("amount", "number", "The amount to convert."), ParameterDoc("to", "string", "")),
    overview="convert_currency: convert an amount of money", full_doc='{"name": "convert_currency"}',
    raw={"name": "convert_currency", "limits": {"max_amount": 2**70}},  # past 64 bits: orjson refuses it
)
AGENT = AgentDoc(agent_id="agent:money", name="money", description="Money tools.", overview="money: convert_currency",
                 full_doc='{"name": "money", "tools": ["convert_currency"]}')


def test_the_json_bodies_are_the_documents_with_their_float32_vectors() -> None:
    dicts = to_index_documents(LengthEncoder(), [AGENT, TOOL])

    sources = [json.loads(s) for s in index_sources(LengthEncoder(), [AGENT, TOOL])]

    for got, want in zip(sources, dicts, strict=True):
        assert set(got) == set(want)
        for key, value in want.items():
            if key.endswith("_vector"):
                assert np.array_equal(np.asarray(got[key], dtype=np.float32), np.asarray(value, dtype=np.float32))
            elif key in (F.parameters, F.examples):
                for g, w in zip(got[key], value, strict=True):
                    assert np.array_equal(np.asarray(g.pop("vector"), dtype=np.float32),
                                          np.asarray(w.pop("vector"), dtype=np.float32))
                    assert g == w
            else:
                assert got[key] == value, key
    assert sources[1]["raw"]["limits"]["max_amount"] == 2**70  # written as the client's serializer writes it


def test_an_agents_flat_document_is_matched_by_its_words_only() -> None:
    encoder = LengthEncoder()

    (agent,) = [json.loads(s) for s in index_sources(encoder, [AGENT])]

    assert agent[F.full_doc] == AGENT.full_doc and vector_field(F.full_doc) not in agent
    assert AGENT.full_doc not in document_texts(AGENT) and AGENT.full_doc not in encoder.calls[0]
    assert vector_field(F.overview) in agent and vector_field(F.description) in agent
    assert TOOL.full_doc in document_texts(TOOL)


def test_a_stored_body_reads_back_as_the_record_it_was_built_from() -> None:
    """What re-embedding an index relies on: a stored ``_source`` less its vectors is its record again."""
    from dataclasses import replace

    from toolsift.learning.reembed import doc_from_source

    tool = replace(TOOL, examples=("turn dollars into euros", "how much is 5 GBP in yen"), tenants=("acme",),
                   derived=("examples",), tags=("money",), raw={"name": "convert_currency"})
    agent = replace(AGENT, tenants=("acme",), tags=("finance",))
    for doc in (tool, agent, TOOL):
        stored = json.loads(json.dumps(to_index_documents(LengthEncoder(), [doc])[0]))
        assert doc_from_source(stored) == doc
