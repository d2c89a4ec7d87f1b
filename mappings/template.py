"""Derive the index template (settings + mappings) from the document model.

Text is analysed with ``toolsift_text``: the standard tokenizer, identifiers split at case and
underscore boundaries (``GetUserToken`` → get, user, token; originals kept), lowercase, English stop
words and the Porter stemmer.

``full_doc``, the flat baseline, is analysed as the MFTR paper's BM25 Full-Doc rows were measured:
runs of two or more word characters, lowercased, Lucene's English stop words, no stemming, BM25 with
k1 = 1.5 and b = 0.75 (the defaults of the ``bm25s`` library). With this, BM25 Full-Doc gives the
published NDCG@10 on APIBank (0.5167) and Toolink (0.3828); the richer analyzer above would lift
the baseline and blur the comparison. Every ``knn_vector`` uses HNSW with cosine similarity on the Lucene
engine: the k-NN zip on Maven Central carries no native libraries, so faiss/nmslib would fail, and
faiss is 2.19's default, so the engine is always stated.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from toolsift.errors import ToolsiftError
from toolsift.mappings.layout import AUTO_REPLICAS
from toolsift.mappings.model import SCHEMA_VERSION, AgentDoc, F, ParameterDoc, ToolDoc

__all__ = [
    "build_mappings",
    "build_settings",
    "index_body",
    "mapping_fingerprint",
    "field_mapping",
    "knn_mapping",
    "record_properties",
    "side_index_body",
    "TEXT_ANALYZER",
    "BASELINE_ANALYZER",
    "BASELINE_SIMILARITY",
]

TEXT_ANALYZER = "toolsift_text"
BASELINE_ANALYZER = "toolsift_baseline"
BASELINE_SIMILARITY = "toolsift_baseline_bm25"

_ANALYSIS: dict[str, Any] = {
    "filter": {
        "toolsift_identifier_split": {
            "type": "word_delimiter_graph",
            "preserve_original": True,
            "split_on_case_change": True,
            "split_on_numerics": False,
            "stem_english_possessive": True,
        },
        "toolsift_english_stop": {"type": "stop", "stopwords": "_english_"},
        "toolsift_english_stemmer": {"type": "stemmer", "language": "english"},
    },
    "tokenizer": {
        "toolsift_word_runs": {
            "type": "pattern",
            "pattern": "\\w{2,}",
            "group": 0,
            "flags": "UNICODE_CHARACTER_CLASS",
        }
    },
    "analyzer": {
        BASELINE_ANALYZER: {
            "type": "custom",
            "tokenizer": "toolsift_word_runs",
            "filter": ["lowercase", "toolsift_english_stop"],
        },
        TEXT_ANALYZER: {
            "type": "custom",
            "tokenizer": "standard",
            "filter": [
                "toolsift_identifier_split",
                "lowercase",
                "toolsift_english_stop",
                "toolsift_english_stemmer",
            ],
        }
    },
}


_SIMILARITY: dict[str, Any] = {BASELINE_SIMILARITY: {"type": "BM25", "k1": 1.5, "b": 0.75}}

#: Kinds whose mapping is just the OpenSearch type of the same name.
_TYPED_KINDS = frozenset({"keyword", "boolean", "integer", "float", "date"})


def knn_mapping(dimension: int) -> dict[str, Any]:
    """A ``knn_vector`` of ``dimension``: HNSW, cosine similarity, on the Lucene engine, without doc values.

    The k-NN plugin would otherwise write every vector a second time as binary doc values (about 1.5 KB
    a 384-d vector, 9 KB a tool): on the Lucene engine its exact ``knn_score`` script and ``exists``
    read the vector files themselves, with the same scores (``tests/integration/test_vector_doc_values.py``).
    """
    return {
        "type": "knn_vector",
        "dimension": dimension,
        "doc_values": False,
        "method": {
            "name": "hnsw",
            "engine": "lucene",
            "space_type": "cosinesimil",
            "parameters": {"m": 16, "ef_construction": 128},
        },
    }


def field_mapping(kind: str, dimension: int | None = None) -> dict[str, Any]:
    """The mapping of a field of ``kind`` (see :mod:`toolsift.mappings.fields`); not ``nested``.

    Args:
        dimension: the embedding dimension, for a ``vector`` field.

    Raises:
        ToolsiftError: an unknown kind, or a ``vector`` field without a dimension.
    """
    if kind in _TYPED_KINDS:
        return {"type": kind}
    if kind == "text":
        return {"type": "text", "analyzer": TEXT_ANALYZER}
    if kind == "text_keyword":
        return {
            "type": "text",
            "analyzer": TEXT_ANALYZER,
            "fields": {"keyword": {"type": "keyword", "ignore_above": 256}},
        }
    if kind == "baseline_text":
        return {"type": "text", "analyzer": BASELINE_ANALYZER, "similarity": BASELINE_SIMILARITY}
    if kind == "standard_text":
        return {"type": "text"}
    if kind == "standard_text_raw":
        return {"type": "text", "fields": {"raw": {"type": "keyword", "ignore_above": 1024}}}
    if kind == "stored":
        return {"type": "object", "enabled": False}
    if kind == "vector":
        if dimension is None:
            raise ToolsiftError("a field of kind 'vector' needs the index's embedding dimension")
        return knn_mapping(dimension)
    raise ToolsiftError(f"unknown field kind {kind!r}")


def build_mappings(dimension: int) -> dict[str, Any]:
    """The ``mappings`` body for tool and agent documents with ``dimension``-wide vectors."""
    props: dict[str, Any] = {
        F.entity: {"type": "keyword"},
        F.relation: {"type": "join", "relations": {"agent": "tool"}},
        F.content_hash: {"type": "keyword"},
    }
    for record in (ToolDoc, AgentDoc):
        for f in fields(record):
            kind = f.metadata["kind"]
            if f.name in props:
                continue
            if kind == "nested":
                if f.name == "parameters":
                    sub = {p.name: field_mapping(p.metadata["kind"]) for p in fields(ParameterDoc)}
                else:  # examples: one sub-document per user intent
                    sub = {"text": field_mapping("text")}
                sub["vector"] = knn_mapping(dimension)
                sub["tenants"] = {"type": "keyword"}  # the tool's, so nested k-NN can filter by tenant
                props[f.name] = {"type": "nested", "properties": sub}
                continue
            props[f.name] = field_mapping(kind)
            if f.metadata.get("vector"):
                props[f"{f.name}_vector"] = knn_mapping(dimension)
    # Vectors stay out of _source: k-NN reads its own vector files, and every hit would otherwise
    # drag ~1.5 KB of JSON per vector through parsing (that tripled search latency).
    excludes = sorted(name for name, spec in props.items() if spec.get("type") == "knn_vector")
    excludes += sorted(f"{name}.vector" for name, spec in props.items() if spec.get("type") == "nested")
    return {"dynamic": "strict", "_source": {"excludes": excludes}, "properties": props}


def build_settings(shards: int = 1, replicas: int | None = None) -> dict[str, Any]:
    """The index settings; ``replicas`` None: one wherever a second node can hold it
    (``auto_expand_replicas``, :mod:`toolsift.mappings.layout`)."""
    copies: dict[str, Any] = ({"auto_expand_replicas": AUTO_REPLICAS} if replicas is None
                              else {"number_of_replicas": replicas})
    return {
        "index": {
            "knn": True,
            "number_of_shards": shards,
            **copies,
        },
        "analysis": _ANALYSIS,
        "similarity": _SIMILARITY,
    }


def mapping_fingerprint(dimension: int) -> str:
    """Short hash of the derived mapping and analysis: a changed fingerprint needs a new version."""
    body = json.dumps(
        # shards and replicas are no schema: the fingerprint reads the settings of one copy of one shard
        {"v": SCHEMA_VERSION, "m": build_mappings(dimension), "s": build_settings(1, 0)}, sort_keys=True
    )
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def index_body(
    *, dimension: int, embedding_model: str, shards: int = 1, replicas: int | None = None
) -> dict[str, Any]:
    """Settings + mappings (with toolsift's ``_meta``) for one new index version."""
    mappings = build_mappings(dimension)
    mappings["_meta"] = {
        "toolsift": {
            "schema_version": SCHEMA_VERSION,
            "mapping_fingerprint": mapping_fingerprint(dimension),
            "embedding_model": embedding_model,
            "embedding_dim": dimension,
        }
    }
    return {"settings": build_settings(shards, replicas), "mappings": mappings}


# --- side indices: one flat record each, settings derived from its kinds ----------------------------

#: Kinds analysed with the ``analysis`` section of :func:`build_settings`.
_ANALYSED_KINDS = frozenset({"text", "text_keyword", "baseline_text"})


def record_properties(record: type, *, dimension: int | None = None) -> dict[str, Any]:
    """The ``properties`` of a flat record (no ``nested`` or ``vector=True`` fields): one per field,
    in the record's order.

    Args:
        record: a dataclass whose fields are declared with :func:`~toolsift.mappings.fields.doc_field`.
        dimension: the embedding dimension, when the record has a ``vector`` field.

    Raises:
        ToolsiftError: a field of a kind that needs more than one mapping entry, or see
            :func:`field_mapping`.
    """
    props: dict[str, Any] = {}
    for f in fields(record):
        kind = f.metadata["kind"]
        if kind == "nested" or f.metadata.get("vector"):
            raise ToolsiftError(f"{record.__name__}.{f.name}: a side index record has only flat fields")
        props[f.name] = field_mapping(kind, dimension)
    return props


def side_index_body(
    record: type,
    *,
    schema: str,
    schema_version: int,
    dimension: int | None = None,
    meta: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Settings and a strict mapping for a one-shard side index whose documents are ``record`` s.

    The settings follow from the record's kinds: k-NN is enabled when it has a ``vector`` field, and
    toolsift's analysis (and the baseline similarity) is defined when a field uses it. The shard has a
    replica wherever a second node can hold it (``auto_expand_replicas`` 0-1): green on one node, and on
    a cluster a node lost takes no side index down with it (approvals, versions, the query log).

    Args:
        record: the index's document record.
        schema, schema_version: recorded in ``_meta.toolsift`` (``meta`` adds to them).
        dimension: the embedding dimension, when the record has a ``vector`` field.
    """
    kinds = {f.metadata["kind"] for f in fields(record)}
    index: dict[str, Any] = {"knn": True} if "vector" in kinds else {}
    settings: dict[str, Any] = {"index": {**index, "number_of_shards": 1, "auto_expand_replicas": "0-1"}}
    if kinds & _ANALYSED_KINDS:
        settings["analysis"] = _ANALYSIS
    if "baseline_text" in kinds:
        settings["similarity"] = _SIMILARITY
    return {
        "settings": settings,
        "mappings": {
            "dynamic": "strict",
            "_meta": {"toolsift": {"schema": schema, "schema_version": schema_version, **(meta or {})}},
            "properties": record_properties(record, dimension=dimension),
        },
    }
