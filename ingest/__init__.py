"""Ingest: load a tool catalog, standardise its records, (later) embed and index them."""

from __future__ import annotations

from toolsift.ingest.loaders import detect_format, load_catalog
from toolsift.ingest.normalise import full_doc_text, normalise_agent, normalise_tool
from toolsift.ingest.raw_records import LoadedRecord, RawAgent, RawRecord, RawTool, RejectedRecord

__all__ = [
    "RawTool",
    "RawAgent",
    "RejectedRecord",
    "RawRecord",
    "LoadedRecord",
    "load_catalog",
    "detect_format",
    "normalise_tool",
    "normalise_agent",
    "full_doc_text",
]
