"""The one exception tree of toolsift.

Library code raises these (or lets a specific opensearch-py error pass through). They are turned into
messages and exit codes in exactly two places: the CLI (``toolsift.cli``) and, later, the ranker
service's exception handler.
"""

from __future__ import annotations

__all__ = [
    "ToolsiftError",
    "ConfigError",
    "NodeError",
    "ClusterError",
    "CatalogRecordError",
    "CatalogError",
    "CatalogRejectedError",
    "IndexingError",
    "IndexMismatchError",
    "BadQueryError",
    "RankerUnavailableError",
    "LLMError",
    "LLMUnavailableError",
    "LLMOutputError",
]


class ToolsiftError(Exception):
    """Root of every error toolsift raises on purpose."""


class ConfigError(ToolsiftError):
    """A setting is missing, malformed or inconsistent; the message names the setting."""


class NodeError(ToolsiftError):
    """The managed local OpenSearch node could not be installed, started or stopped."""


class ClusterError(ToolsiftError):
    """The OpenSearch cluster is unreachable, unhealthy, or lacks a required plugin."""


class CatalogRecordError(ToolsiftError):
    """One catalog record is malformed.

    Args:
        source: the catalog file (or other origin) the record came from.
        position: where in the source: a record index, line number or JSON pointer.
        reason: what is wrong, in words.
        record_id: the record's id or name when it has one.
        field: the offending field, when one field is to blame.
    """

    def __init__(
        self,
        source: str,
        position: str,
        reason: str,
        *,
        record_id: str | None = None,
        field: str | None = None,
    ) -> None:
        self.source = source
        self.position = position
        self.reason = reason
        self.record_id = record_id
        self.field = field
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.source} {self.position}"
        if self.record_id:
            where += f" (id {self.record_id!r})"
        what = f"field {self.field!r}: {self.reason}" if self.field else self.reason
        return f"{where}: {what}"

    def to_dict(self) -> dict[str, str | None]:
        return {
            "source": self.source,
            "position": self.position,
            "record_id": self.record_id,
            "field": self.field,
            "reason": self.reason,
        }


class CatalogError(ToolsiftError):
    """A whole catalog cannot be read (missing file, unknown format, truncated JSON)."""


class CatalogRejectedError(CatalogError):
    """Strict ingest found bad records and wrote nothing; ``errors`` lists every one of them."""

    def __init__(self, catalog: str, errors: list[CatalogRecordError]) -> None:
        self.errors = errors
        shown = "\n".join(f"  - {e}" for e in errors[:20])
        more = f"\n  ... and {len(errors) - 20} more" if len(errors) > 20 else ""
        super().__init__(
            f"{catalog}: {len(errors)} bad record(s); nothing was written (strict mode):\n{shown}{more}"
        )


class IndexingError(ToolsiftError):
    """Bulk indexing failed for some documents; ``errors`` holds one entry per failed item."""

    def __init__(self, message: str, errors: list[dict[str, object]] | None = None) -> None:
        self.errors = errors or []
        super().__init__(message)


class IndexMismatchError(ToolsiftError):
    """The index was built for another embedding model or document schema than the one in use."""


class BadQueryError(ToolsiftError):
    """A search request or structured query is malformed."""


class RankerUnavailableError(ToolsiftError):
    """The remote ranker did not answer in time or answered with an error."""


class LLMError(ToolsiftError):
    """An LLM call failed; the message names the endpoint setting or the task and subject."""


class LLMUnavailableError(LLMError):
    """The LLM endpoint is not configured, unreachable, too slow, or answered with an HTTP error."""


class LLMOutputError(LLMError):
    """The LLM kept answering with output that is not valid JSON for the task's schema."""
