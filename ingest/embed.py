"""Stage 3 of ingest: turn normalised records into index documents with their embeddings.

Every non-empty text with a vector field in the model gets one; empty fields get no vector (the
field is simply absent, so k-NN never matches a placeholder). The texts of a chunk of documents are
encoded together (each distinct text once); :func:`index_sources` gives the bodies as JSON text for the
bulk writes, vectors in float32's shortest form (what the index stores: the same float32 values as the
float64 text of the same vectors, in half the bytes, and serialised by orjson ~10x faster than ``json``).

Which texts earn a vector was measured (issue 32). A tool's every vector field is queried by some
search method (description, response, examples and parameters by multi-field; ``full_doc`` by the
Full-Doc baseline, PTR sets and the MiniLM first stage's recall net; ``overview`` and ``description``
by Tool-to-Agent). An agent's ``full_doc`` vector was queried by none (agent search's dense part is the
overview, or the description for the reference row; the Full-Doc baseline and sets search tools), so
an agent's flat document is matched by its words only — on LiveMCPBench its 70 agents' flat documents
were 8% of the tokens embedded. Cutting a tool's ``full_doc`` embedding text below the model's 256
tokens costs Full-Doc MiniLM on APIBank far more than the 0.005 NDCG@10 allowed (0.6026 at 256 tokens,
0.5786 at 192, 0.4844 at 128: exact cosine over the same vectors), so every other text keeps its
vector, at the model's full length.

Examples that rule-based expansion derived (``ToolDoc.derived``: the name as words) are matched by
their words only and get no vector: an identifier's words ("multiply fractions") are lexical evidence,
and embedded, a two-word name sits close to every long request on a near topic (on Toolink, embedding
them cost the MiniLM multi-field row 0.042 NDCG@10; ``docs/evaluation.md``). A derived description
keeps its vector: it is the only text such a tool has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any, Protocol

import numpy as np
import orjson
from opensearchpy.serializer import JSONSerializer

from toolsift.mappings import AgentDoc, F, ToolDoc, vector_field

__all__ = ["to_index_documents", "index_sources", "document_texts", "document_vectors", "DocumentEncoder"]

IndexDocument = dict[str, Any]
#: A text's vector: a float32 row (ingest's JSON bodies) or a list of floats (:func:`to_index_documents`).
Vector = np.ndarray | list[float]

_ORJSON = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
_FALLBACK = JSONSerializer()


class DocumentEncoder(Protocol):
    """What embeds documents: an :class:`~toolsift.encoders.embedding.Embedder`, or one with a vector cache in
    front (:class:`~toolsift.encoders.vectorcache.CachedEncoder`)."""

    def encode_document(self, texts: Sequence[str]) -> np.ndarray: ...


def _lexical_only(doc: ToolDoc | AgentDoc, name: str) -> bool:
    """Whether ``doc``'s field ``name`` is matched by its words only (no vector): derived examples,
    and an agent's flat document."""
    if isinstance(doc, AgentDoc):
        return name == "full_doc"
    return name == "examples" and name in doc.derived


def document_texts(doc: ToolDoc | AgentDoc) -> list[str]:
    """Every text of ``doc`` that gets an embedding, in a fixed order."""
    texts: list[str] = []
    for f in fields(doc):
        if not f.metadata.get("vector") or _lexical_only(doc, f.name):
            continue
        value = getattr(doc, f.name)
        if f.name == "parameters":
            texts.extend(p.embedding_text for p in value)
        elif f.name == "examples":
            texts.extend(e for e in value if e)
        elif value:
            texts.append(value)
    return texts


def _body(doc: ToolDoc | AgentDoc, vec: Mapping[str, Vector]) -> IndexDocument:
    body: IndexDocument = {F.content_hash: doc.content_hash}
    # sub-documents carry their tool's tenants: a nested k-NN can only filter on its own documents
    tenants: dict[str, list[str]] = {"tenants": list(doc.tenants)} if doc.tenants else {}
    for f in fields(doc):
        value = getattr(doc, f.name)
        if f.name == "parameters":
            body[F.parameters] = [
                {
                    "name": p.name,
                    "type": p.type,
                    "description": p.description,
                    "required": p.required,
                    "vector": vec[p.embedding_text],
                    **tenants,
                }
                for p in value
            ]
        elif f.name == "examples":
            body[F.examples] = [{"text": e, **({} if _lexical_only(doc, f.name) else {"vector": vec[e]}), **tenants}
                                for e in value if e]
        elif isinstance(value, tuple):
            body[f.name] = list(value)
        elif value is not None:
            body[f.name] = value
            if f.metadata.get("vector") and value and not _lexical_only(doc, f.name):
                body[vector_field(f.name)] = vec[value]
    if isinstance(doc, ToolDoc):
        body[F.entity] = "tool"
        if doc.agent_id:
            body[F.relation] = {"name": "tool", "parent": doc.agent_id}
    else:
        body[F.entity] = "agent"
        body[F.relation] = {"name": "agent"}
    return body


def document_vectors(encoder: DocumentEncoder, docs: Sequence[ToolDoc | AgentDoc]) -> dict[str, np.ndarray]:
    """Every distinct text of ``docs`` that gets an embedding, with its vector (one ``encode_document`` call)."""
    texts = list(dict.fromkeys(t for d in docs for t in document_texts(d)))
    matrix = encoder.encode_document(texts)
    return dict(zip(texts, matrix))


def to_index_documents(embedder: DocumentEncoder, docs: Sequence[ToolDoc | AgentDoc]) -> list[IndexDocument]:
    """Index bodies (fields + vectors + bookkeeping) for ``docs``, embedding their texts in one batch."""
    vec: dict[str, Vector] = {t: v.tolist() for t, v in document_vectors(embedder, docs).items()}
    return [_body(d, vec) for d in docs]


def index_sources(encoder: DocumentEncoder, docs: Sequence[ToolDoc | AgentDoc]) -> list[str]:
    """The bodies of :func:`to_index_documents` as JSON text, ready for a bulk request's ``_source``.

    The vectors are written as float32 in their shortest form (the values the index stores).
    """
    vec: dict[str, Vector] = dict(document_vectors(encoder, docs))
    return [_dumps(_body(d, vec)) for d in docs]


def _dumps(body: IndexDocument) -> str:
    try:
        return orjson.dumps(body, option=_ORJSON, default=_FALLBACK.default).decode()
    except orjson.JSONEncodeError:
        # what orjson refuses and the client's serializer writes (an integer past 64 bits in a raw
        # definition): that body as the client would have sent it
        plain = _FALLBACK.dumps(body)
        return plain if isinstance(plain, str) else bytes(plain).decode()
