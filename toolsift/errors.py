"""The one exception tree of toolsift, and the one table that says what each error means at an edge.

Library code raises these (or lets a specific opensearch-py error pass through); it never raises a
bare ``ValueError`` or ``RuntimeError`` for a user's mistake. Each edge translates once, through
:func:`error_kind`: the CLI (``toolsift.cli``: the exit code) and every FastAPI app (the workbench,
the ranker service: the HTTP status and a short ``code``), as opensearch-py's ``HTTP_EXCEPTIONS``
maps statuses to exceptions the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ErrorKind",
    "ERROR_TABLE",
    "error_kind",
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
    "AuthError",
    "ForbiddenError",
    "NotFoundError",
    "RequestTooLargeError",
    "RequestTimeoutError",
    "UnsupportedMediaTypeError",
    "RankerUnavailableError",
    "RerankerFailedError",
    "ShuttingDownError",
    "SourceError",
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


class AuthError(ToolsiftError):
    """A service call without a valid API key."""


class ForbiddenError(ToolsiftError):
    """A valid key whose role does not allow the call (a write with a ``search`` key), or a request
    from a host the service does not answer to."""


class NotFoundError(ToolsiftError):
    """What was asked for does not exist, or the caller's tenant may not see it (the same answer, so
    ids of other tenants' tools are not revealed)."""


class RequestTooLargeError(ToolsiftError):
    """An HTTP request's body is larger than the service accepts (refused before it is read whole)."""


class RequestTimeoutError(ToolsiftError):
    """An HTTP request's body did not arrive within the time the service gives a client to send it."""


class UnsupportedMediaTypeError(ToolsiftError):
    """A request that changes state sends its body as something other than JSON."""


class RankerUnavailableError(ToolsiftError):
    """The remote ranker did not answer in time or answered with an error."""


class RerankerFailedError(ToolsiftError):
    """The ranker service's reranker model call failed (CUDA out of memory, a tokenizer error): the
    requests of that batch answer 503; the service keeps answering."""


class ShuttingDownError(ToolsiftError):
    """The service is stopping: a request it still held (the ranker service's queued rank requests)
    answers 503."""


class SourceError(ToolsiftError):
    """A live MCP source could not be listed or indexed: unreachable, hung, crashed, or not answering
    with a tool list; the message names the source."""


class LLMError(ToolsiftError):
    """An LLM call failed; the message names the endpoint setting or the task and subject."""


class LLMUnavailableError(LLMError):
    """The LLM endpoint is not configured, unreachable, too slow, or answered with an HTTP error."""


class LLMOutputError(LLMError):
    """The LLM kept answering with output that is not valid JSON for the task's schema."""


@dataclass(frozen=True)
class ErrorKind:
    """What an error means at an edge: the CLI's exit code, an HTTP status and a short JSON ``code``."""

    exit_code: int
    http_status: int
    code: str


#: Error class → its meaning at the edges; a subclass not listed takes its nearest listed base's.
#: Exit code 1 is click's own (a usage mistake is 2); toolsift's start at 3.
ERROR_TABLE: dict[type[Exception], ErrorKind] = {
    ToolsiftError: ErrorKind(1, 500, "toolsift_error"),
    ConfigError: ErrorKind(3, 500, "config_error"),
    NodeError: ErrorKind(4, 503, "node_error"),
    ClusterError: ErrorKind(5, 503, "opensearch_unavailable"),
    CatalogError: ErrorKind(6, 422, "bad_catalog"),
    CatalogRecordError: ErrorKind(6, 422, "bad_record"),
    CatalogRejectedError: ErrorKind(6, 422, "catalog_rejected"),
    IndexingError: ErrorKind(7, 502, "indexing_failed"),
    IndexMismatchError: ErrorKind(8, 409, "index_mismatch"),
    BadQueryError: ErrorKind(9, 400, "bad_query"),
    AuthError: ErrorKind(12, 401, "unauthorized"),
    ForbiddenError: ErrorKind(12, 403, "forbidden"),
    NotFoundError: ErrorKind(9, 404, "not_found"),
    RequestTooLargeError: ErrorKind(9, 413, "request_too_large"),
    RequestTimeoutError: ErrorKind(9, 408, "request_timeout"),
    UnsupportedMediaTypeError: ErrorKind(9, 415, "unsupported_media_type"),
    RankerUnavailableError: ErrorKind(10, 503, "ranker_unavailable"),
    RerankerFailedError: ErrorKind(10, 503, "reranker_failed"),
    ShuttingDownError: ErrorKind(10, 503, "shutting_down"),
    SourceError: ErrorKind(13, 502, "source_unavailable"),
    LLMError: ErrorKind(11, 502, "llm_error"),
    LLMUnavailableError: ErrorKind(11, 503, "llm_unavailable"),
    LLMOutputError: ErrorKind(11, 502, "llm_bad_output"),
}


def error_kind(exc: BaseException) -> ErrorKind | None:
    """The table's entry for ``exc`` (its nearest listed class), with opensearch-py's errors read as
    the cluster's: unreachable, or answering 503 (a node still recovering its shards) →
    ``opensearch_unavailable`` (503); another error answer → ``opensearch_error`` (its own 4xx status
    passed on as 400, a 5xx as 502). None: not an error toolsift raises on purpose."""
    for cls in type(exc).__mro__:
        if cls in ERROR_TABLE:
            return ERROR_TABLE[cls]
    from opensearchpy.exceptions import ConnectionError as OSConnectionError
    from opensearchpy.exceptions import TransportError

    if isinstance(exc, OSConnectionError):
        return ERROR_TABLE[ClusterError]
    if isinstance(exc, TransportError):
        status = exc.status_code if isinstance(exc.status_code, int) else 500
        if status == 503:
            return ERROR_TABLE[ClusterError]
        return ErrorKind(5, 400 if 400 <= status < 500 else 502, "opensearch_error")
    return None
