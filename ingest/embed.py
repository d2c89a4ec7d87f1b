"""Stage 3 of ingest: turn normalised records into index documents with their embeddings.

Every non-empty text with a vector field in the model gets one; empty fields get no vector (the
field is simply absent, so k-NN never matches a placeholder). Texts are encoded in one batch per
chunk of documents.

Examples that rule-based expansion derived (``ToolDoc.derived``: the name as words) are matched by
their words only and get no vector: an identifier's words ("multiply fractions") are lexical evidence,
and embedded, a two-word name sits close to every long request on a near topic (on Toolink, embedding
them cost the MiniLM multi-field row 0.042 NDCG@10; ``docs/evaluation.md``). A derived description
keeps its vector: it is the only text such a tool has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from toolsift.embedding import Embedder
from toolsift.mappings import AgentDoc, F, ToolDoc, vector_field

__all__ = ["to_index_documents", "document_texts"]

IndexDocument = dict[str, Any]


def _lexical_only(doc: ToolDoc | AgentDoc, name: str) -> bool:
    """Whether ``doc``'s field ``name`` holds derived examples (no vector)."""
    return isinstance(doc, ToolDoc) and name == "examples" and name in doc.derived


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


def _body(doc: ToolDoc | AgentDoc, vec: dict[str, list[float]]) -> IndexDocument:
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


def to_index_documents(embedder: Embedder, docs: Sequence[ToolDoc | AgentDoc]) -> list[IndexDocument]:
    """Index bodies (fields + vectors + bookkeeping) for ``docs``, embedding their texts in one batch."""
    texts = list(dict.fromkeys(t for d in docs for t in document_texts(d)))
    matrix = embedder.encode_document(texts)
    vec = {t: matrix[i].tolist() for i, t in enumerate(texts)}
    return [_body(d, vec) for d in docs]
