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
from dataclasses import fields
from typing import Any

from toolsift.mappings.model import SCHEMA_VERSION, AgentDoc, F, ParameterDoc, ToolDoc

__all__ = [
    "build_mappings",
    "build_settings",
    "index_body",
    "mapping_fingerprint",
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


def _knn(dimension: int) -> dict[str, Any]:
    return {
        "type": "knn_vector",
        "dimension": dimension,
        "method": {
            "name": "hnsw",
            "engine": "lucene",
            "space_type": "cosinesimil",
            "parameters": {"m": 16, "ef_construction": 128},
        },
    }


def _scalar(kind: str) -> dict[str, Any]:
    if kind == "keyword":
        return {"type": "keyword"}
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
    if kind == "boolean":
        return {"type": "boolean"}
    if kind == "stored":
        return {"type": "object", "enabled": False}
    raise ValueError(f"unknown field kind {kind!r}")


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
                    sub = {p.name: _scalar(p.metadata["kind"]) for p in fields(ParameterDoc)}
                else:  # examples: one sub-document per user intent
                    sub = {"text": _scalar("text")}
                sub["vector"] = _knn(dimension)
                props[f.name] = {"type": "nested", "properties": sub}
                continue
            props[f.name] = _scalar(kind)
            if f.metadata.get("vector"):
                props[f"{f.name}_vector"] = _knn(dimension)
    # Vectors stay out of _source: k-NN reads its own vector files, and every hit would otherwise
    # drag ~1.5 KB of JSON per vector through parsing (that tripled search latency).
    excludes = sorted(name for name, spec in props.items() if spec.get("type") == "knn_vector")
    excludes += sorted(f"{name}.vector" for name, spec in props.items() if spec.get("type") == "nested")
    return {"dynamic": "strict", "_source": {"excludes": excludes}, "properties": props}


def build_settings(shards: int = 1, replicas: int = 0) -> dict[str, Any]:
    return {
        "index": {
            "knn": True,
            "number_of_shards": shards,
            "number_of_replicas": replicas,
        },
        "analysis": _ANALYSIS,
        "similarity": {BASELINE_SIMILARITY: {"type": "BM25", "k1": 1.5, "b": 0.75}},
    }


def mapping_fingerprint(dimension: int) -> str:
    """Short hash of the derived mapping and analysis: a changed fingerprint needs a new version."""
    body = json.dumps(
        {"v": SCHEMA_VERSION, "m": build_mappings(dimension), "s": build_settings()}, sort_keys=True
    )
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def index_body(
    *, dimension: int, embedding_model: str, shards: int = 1, replicas: int = 0
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
