"""Connecting to OpenSearch: the managed local node or any cluster given by URL.

``connect`` builds an opensearch-py client from :class:`~toolsift.config.Settings` (basic auth, API key,
TLS options), checks that the node answers, and checks that the k-NN and neural-search plugins are
installed, saying plainly which is missing.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
from opensearchpy import JSONSerializer, OpenSearch, Transport
from opensearchpy.exceptions import ConnectionError as OSConnectionError
from opensearchpy.exceptions import TransportError

from toolsift.compaction import FORCE_MERGE_TIMEOUT_S, Compaction
from toolsift.compaction import compact as compact_index
from toolsift.config import IngestMerge, Settings
from toolsift.errors import ClusterError

__all__ = ["connect", "make_client", "check_plugins", "ensure_index", "bulk_loading", "BulkLoad", "MergeState",
           "merge_state", "primary_segments", "primary_segment_bytes", "wait_for_merge", "REQUIRED_PLUGINS",
           "PluginReport", "cap_terms", "cosine_from_lucene", "TERM_BUDGET", "WholeAnswerTransport",
           "LOST_COPY_FAILURES", "FastJSONSerializer", "wire_vector", "BulkRetry", "refusal", "node_refused_error"]

#: Plugin → the names it is listed under by ``_cat/plugins``: the official distribution lists the
#: plugin's name, the embedded runner (plugins loaded from the classpath) its class name.
REQUIRED_PLUGINS: dict[str, tuple[str, ...]] = {
    "k-NN": ("opensearch-knn", "org.opensearch.knn.plugin.KNNPlugin"),
    "neural-search": ("opensearch-neural-search", "org.opensearch.neuralsearch.plugin.NeuralSearch"),
}


@dataclass(frozen=True)
class PluginReport:
    present: tuple[str, ...]
    missing: tuple[str, ...]


#: Shard failures that mean a copy's node went away mid-request (killed, stopped, restarting): the same
#: search sent again is answered by another copy.
LOST_COPY_FAILURES = ("node_disconnected_exception", "node_not_connected_exception", "node_closed_exception",
                      "no_node_available_exception", "connect_transport_exception",
                      "send_request_transport_exception", "no_shard_available_action_exception")


def _lost_copy(error: Any) -> bool:
    """Whether an error body or a list of shard failures names a lost shard copy."""
    text = json.dumps(error, default=str) if isinstance(error, (dict, list)) else ""
    return any(kind in text for kind in LOST_COPY_FAILURES)


def _partial(answer: Any) -> bool:
    """Whether a ``_search`` answer (or any answer of an ``_msearch``) lacks shards because a copy was lost."""
    if not isinstance(answer, dict):
        return False
    shards = answer.get("_shards")
    if isinstance(shards, dict) and shards.get("failed") and _lost_copy(shards.get("failures")):
        return True
    responses = answer.get("responses")
    return isinstance(responses, list) and any(
        _partial(r) or (isinstance(r, dict) and _lost_copy(r.get("error"))) for r in responses)


class WholeAnswerTransport(Transport):
    """opensearch-py's transport, which also asks again when a search lost a shard copy mid-request.

    A search whose shard copy is lost between the query and the fetch phase (its node killed or stopped;
    the fetch is not retried on another copy) is answered with 200 and the other shards' hits only — a
    silently shorter ranking — or, when no hit is left, with a 500 ``search_phase_execution_exception``
    (``_msearch``: per search). Such a ``_search`` / ``_msearch`` is sent again, up to ``max_retries``
    times (by then the lost copy is out of the routing table and another copy answers); the last
    answer or error is passed on as it is. Only failures of :data:`LOST_COPY_FAILURES` are retried
    (a query a shard refuses is refused again), and scrolls are not (each would open a new context).
    """

    def perform_request(self, method: str, url: str, params: Mapping[str, Any] | None = None, body: Any = None,
                        timeout: int | float | None = None, ignore: Collection[int] = (),
                        headers: Mapping[str, str] | None = None) -> Any:
        repeatable = url.rstrip("/").rsplit("/", 1)[-1] in ("_search", "_msearch") and "scroll" not in (params or {})
        attempt = 0
        while True:
            last = not repeatable or attempt == self.max_retries
            try:
                answer = super().perform_request(method, url, params=params, body=body, timeout=timeout,
                                                 ignore=ignore, headers=headers)
            except TransportError as exc:
                if last or isinstance(exc, OSConnectionError) or not _lost_copy(exc.info):
                    raise
            else:
                if last or not _partial(answer):
                    return answer
            attempt += 1
            time.sleep(0.1 * attempt)


class FastJSONSerializer(JSONSerializer):
    """opensearch-py's serializer with request bodies written and answers read by orjson: ~10x faster
    on the large bodies a search sends (a k-NN vector per field twice over) and the hundreds of hits
    with their fields a first stage reads back; anything orjson cannot write goes through
    opensearch-py's own ``default`` (dates, decimals, UUIDs), and anything it will not read (``NaN``,
    a lone surrogate) through the standard library, as before. (orjson reads an integer past 64 bits
    as a float; OpenSearch writes none: ``unsigned_long`` ends at 2**64 - 1, read exactly.)"""

    def loads(self, s: str) -> Any:
        try:
            return orjson.loads(s)
        except orjson.JSONDecodeError:
            return super().loads(s)

    def dumps(self, data: Any) -> str:
        if isinstance(data, str):
            return data
        try:
            return orjson.dumps(data, default=self.default,
                                option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS).decode()
        except TypeError:  # e.g. an int beyond 64 bits: the standard library's writer as opensearch-py has it
            return str(super().dumps(data))


def wire_vector(vector: np.ndarray) -> list[float]:
    """A float32 vector as the shortest decimals that parse back to the same float32s.

    OpenSearch reads query vectors as float32, so nothing it computes changes; the request carries
    ~9 digits per value instead of the 17 a float64 ``repr`` writes (a search's body ~40% smaller).
    """
    values: list[float] = orjson.loads(orjson.dumps(np.asarray(vector, dtype=np.float32),
                                                    option=orjson.OPT_SERIALIZE_NUMPY))
    return values


def make_client(settings: Settings) -> OpenSearch:
    """An opensearch-py client for ``settings.effective_url`` (every URL of a comma-separated list, for
    failover: a request that cannot reach one node, or that it answers 502-504, is sent to the next; a
    search that lost a shard copy mid-request is sent again, :class:`WholeAnswerTransport`); does not
    contact the cluster."""
    headers: dict[str, str] = {}
    http_auth: tuple[str, str] | None = None
    if settings.opensearch_api_key is not None:
        headers["Authorization"] = f"ApiKey {settings.opensearch_api_key.get_secret_value()}"
    elif settings.opensearch_user:
        password = settings.opensearch_password.get_secret_value() if settings.opensearch_password else ""
        http_auth = (settings.opensearch_user, password)
    hosts = settings.opensearch_hosts
    return OpenSearch(
        hosts=hosts,
        http_auth=http_auth,
        headers=headers or None,
        use_ssl=hosts[0].startswith("https"),
        verify_certs=settings.opensearch_verify_certs,
        ssl_show_warn=settings.opensearch_verify_certs,
        ca_certs=str(settings.opensearch_ca_certs) if settings.opensearch_ca_certs else None,
        timeout=settings.opensearch_timeout,
        max_retries=2,
        retry_on_timeout=True,
        transport_class=WholeAnswerTransport,
        serializer=FastJSONSerializer(),
        http_compress=False,
    )


def check_plugins(client: OpenSearch) -> PluginReport:
    """Which of :data:`REQUIRED_PLUGINS` the cluster has (every node must have them)."""
    rows = client.cat.plugins(format="json")
    names = {row.get("component", "") for row in rows}
    present = tuple(p for p, aliases in REQUIRED_PLUGINS.items() if names & set(aliases))
    missing = tuple(p for p in REQUIRED_PLUGINS if p not in present)
    return PluginReport(present=present, missing=missing)


def connect(settings: Settings, *, require_plugins: bool = True) -> OpenSearch:
    """A client for the configured cluster, after checking it answers and has the plugins.

    Raises:
        ClusterError: the cluster is unreachable, refuses the credentials, or lacks k-NN /
            neural-search. For the managed node the message says how to start it.
    """
    client = make_client(settings)
    url = settings.effective_url
    try:
        client.cluster.health(wait_for_status="yellow")
    except OSConnectionError as exc:
        hint = (
            " Start the managed node with `toolsift node start`, or set TOOLSIFT_OPENSEARCH_URL."
            if settings.uses_managed_node
            else " Check TOOLSIFT_OPENSEARCH_URL and the network."
        )
        raise ClusterError(f"no OpenSearch answers at {url}.{hint}") from exc
    except TransportError as exc:
        if exc.status_code in (401, 403):
            raise ClusterError(
                f"OpenSearch at {url} refused the credentials ({exc.status_code}); set "
                "TOOLSIFT_OPENSEARCH_USER/PASSWORD or TOOLSIFT_OPENSEARCH_API_KEY."
            ) from exc
        raise ClusterError(f"OpenSearch at {url} is not healthy: {exc.status_code} {exc.error}") from exc
    if require_plugins:
        report = check_plugins(client)
        if report.missing:
            raise ClusterError(
                f"OpenSearch at {url} lacks the plugin(s) {', '.join(report.missing)}; toolsift needs "
                "k-NN (vector fields) and neural-search (hybrid query). The official image bundles "
                "both; the managed node (`toolsift node start`) loads both."
            )
    return client


def ensure_index(client: OpenSearch, index: str, body: dict[str, Any], *, added_fields: Sequence[str] = ()) -> None:
    """Create ``index`` with ``body`` unless it exists (a concurrent creation is no error).

    ``added_fields``: fields of ``body``'s mapping added since older toolsift versions created the
    index; an index that already exists gets their mappings (its older documents have no value).
    """
    if not client.indices.exists(index=index):
        client.indices.create(index=index, body=body, ignore=400)
    elif added_fields:
        properties = body["mappings"]["properties"]
        client.indices.put_mapping(index=index, body={"properties": {f: properties[f] for f in added_fields}})


@dataclass
class BulkLoad:
    """What :func:`bulk_loading` left once its block ended: the primaries' segments before any merge,
    the id of the force merge it started in the background (None: no merge, or one waited for), and what
    compacting it did (None: not asked)."""

    segments: int = 0
    merge_task: str | None = None
    compaction: Compaction | None = None


@dataclass(frozen=True)
class MergeState:
    """An index's primaries' segments and whether a force merge of it is still running."""

    segments: int
    merging: bool
    shards: int

    @property
    def merged(self) -> bool:
        """No merge running and at most one segment a primary."""
        return not self.merging and self.segments <= self.shards


def _primaries(client: OpenSearch, index: str) -> int:
    return int(client.indices.get_settings(index=index)[index]["settings"]["index"]["number_of_shards"])


def _primary_segment_rows(client: OpenSearch, index: str, **params: str) -> list[dict[str, Any]]:
    rows = client.cat.segments(index=index, format="json", **params)
    return [row for row in rows if row.get("prirep") in ("p", "primary")]


def primary_segments(client: OpenSearch, index: str) -> int:
    """How many segments the primaries of ``index`` hold (searchable or not)."""
    return len(_primary_segment_rows(client, index))


def primary_segment_bytes(client: OpenSearch, index: str) -> int:
    """The bytes of the primaries' segments, read now (the store size in ``_stats`` is refreshed every 10 s)."""
    return sum(int(row["size"]) for row in _primary_segment_rows(client, index, bytes="b"))


def merge_state(client: OpenSearch, index: str) -> MergeState:
    """Whether ``index`` is merged to one segment a primary, or a force merge of it is still running."""
    tasks = client.tasks.list(actions="indices:admin/forcemerge*", detailed=True)
    merging = any(f"[{index}]" in str(task.get("description", ""))
                  for node in tasks.get("nodes", {}).values() for task in node.get("tasks", {}).values())
    return MergeState(segments=primary_segments(client, index), merging=merging, shards=_primaries(client, index))


def wait_for_merge(client: OpenSearch, index: str, task: str, *, timeout_s: float = 3600.0) -> float:
    """Wait for the background force merge ``task`` of ``index`` (:class:`BulkLoad`), then refresh so
    searches read the merged segment; the seconds waited.

    Raises:
        ClusterError: the merge failed, or outlasted ``timeout_s``.
    """
    started = time.perf_counter()
    answer = client.tasks.get(task_id=task, wait_for_completion=True, timeout=f"{int(timeout_s)}s",
                              request_timeout=timeout_s + 30)
    if not answer.get("completed"):
        raise ClusterError(f"the force merge of {index} (task {task}) did not finish within {timeout_s:.0f} s")
    if answer.get("error"):
        raise ClusterError(f"the force merge of {index} (task {task}) failed: {answer['error']}")
    client.indices.refresh(index=index)
    return time.perf_counter() - started


@contextmanager
def bulk_loading(client: OpenSearch, index: str, *, merge: IngestMerge = "wait",
                 compact: bool = False) -> Iterator[BulkLoad]:
    """Fill a new, not yet searched index with refreshes off; its settings are restored afterwards.

    OpenSearch's advice for bulk loads, and what makes a rebuilt index the same index: with periodic
    refreshes, where the segments break (and so the HNSW graph each one builds) depends on timing, and
    approximate k-NN over a rebuilt index could answer differently. With refreshes off, the documents
    arrive in order in one in-memory segment and the caller's final refresh writes it whole. Where the
    indexing buffer still flushed part-way (a catalog larger than it), the index is force-merged to one
    segment, as OpenSearch advises for an index that is now read, not written: with ``merge="wait"``
    before the block returns; with ``"background"`` the merge is started and its task id left in the
    yielded :class:`BulkLoad` (searches meanwhile read the unmerged segments; the periodic refresh
    moves them to the merged one).

    With ``compact``, that merge (or, for one segment, a merge of its own) waits until OpenSearch no longer
    needs the documents' history, so it drops their ``_recovery_source`` too (:mod:`toolsift.compaction`:
    up to 30 s more, two thirds of the index's bytes less).
    """
    load = BulkLoad()
    client.indices.put_settings(index=index, body={"index": {"refresh_interval": "-1"}})
    try:
        yield load
        client.indices.refresh(index=index)
        load.segments = primary_segments(client, index)
        several = load.segments > _primaries(client, index)
        if compact:
            load.compaction = compact_index(client, index, background=several and merge == "background")
            if load.compaction.compacted:
                load.merge_task = load.compaction.merge_task
                return
        if several:
            if merge == "background":
                started = client.indices.forcemerge(index=index, max_num_segments=1, wait_for_completion=False)
                load.merge_task = str(started["task"])
            else:
                client.indices.forcemerge(index=index, max_num_segments=1, request_timeout=FORCE_MERGE_TIMEOUT_S)
                client.indices.refresh(index=index)  # searchers move to the merged segment; the old files go
    finally:
        client.indices.put_settings(index=index, body={"index": {"refresh_interval": None}})


@dataclass(frozen=True)
class BulkRetry:
    """How a bulk write backs off when OpenSearch refuses it with 429 (a tripped circuit breaker, a full
    write queue): opensearch-py's ``streaming_bulk`` / ``bulk`` send the refused documents (or the whole
    refused request) again after ``initial_backoff`` seconds, doubling up to ``max_backoff``, at most
    ``max_retries`` times; what is still refused after that is reported (or raised) as the helpers do.

    Every bulk path of toolsift passes :meth:`kwargs` to the helper (the ``bulk_max_retries`` and
    ``bulk_initial_backoff`` settings, :meth:`from_settings`, where the caller has settings).
    """

    max_retries: int = 5
    initial_backoff: float = 1.0
    max_backoff: float = 30.0

    @classmethod
    def from_settings(cls, settings: Settings) -> BulkRetry:
        return cls(max_retries=settings.bulk_max_retries, initial_backoff=settings.bulk_initial_backoff)

    def kwargs(self) -> dict[str, Any]:
        """The helpers' keyword arguments."""
        return {"max_retries": self.max_retries, "initial_backoff": self.initial_backoff,
                "max_backoff": self.max_backoff}

    @property
    def waited_s(self) -> float:
        """How long the retries of one refused chunk wait in all."""
        return float(sum(min(self.max_backoff, self.initial_backoff * 2.0 ** i) for i in range(self.max_retries)))


def refusal(error: object) -> str | None:
    """What OpenSearch's 429 answer ``error`` says (``circuit_breaking_exception: [parent] Data too large
    …``), as one line; None when ``error`` is not a 429 refusal. ``error`` is a :class:`TransportError` or a
    bulk item's failure (``{"status": 429, "error": {...}}``)."""
    if isinstance(error, TransportError):
        if error.status_code != 429:
            return None
        info = error.info if isinstance(error.info, dict) else {}
        cause = info.get("error", error.error)
    elif isinstance(error, Mapping) and error.get("status") == 429:
        cause = error.get("error")
    else:
        return None
    if isinstance(cause, Mapping):
        kind, reason = str(cause.get("type", "rejected")), str(cause.get("reason", ""))
    else:
        kind, reason = str(cause or "rejected"), ""
    text = " ".join((f"{kind}: {reason}" if reason else kind).split())
    return text if len(text) <= 300 else text[:299] + "…"


def node_refused_error(settings: Settings, cause: str, *, what: str = "the writes", retry: BulkRetry | None = None,
                       removed: str | None = None, left: str | None = None) -> ClusterError:
    """The one-line error of a request the cluster refused with 429 (``cause``: :func:`refusal`; ``what``: the
    request, ``retry``: how its retries waited): the node itself is the limit, and the message says what to
    do about it. ``removed``: the half-built index version that was deleted; ``left``: one that could not be
    (the node refused that too)."""
    after = f" after {retry.max_retries} retries over {retry.waited_s:.0f} s" if retry is not None else ""
    full = "out of memory" if "circuit_breaking" in cause else "too busy (its queues are full)"
    if settings.uses_managed_node:
        remedy = (f"restart it (`toolsift node stop && toolsift node start`) or give it more heap "
                  f"(TOOLSIFT_NODE_HEAP, now {settings.node_heap})")
    else:
        remedy = "give its nodes more heap or more nodes, or retry when it is less loaded"
    cleanup = ""
    if removed:
        cleanup = f"; the half-built index version {removed} was removed"
    elif left:
        cleanup = f"; the half-built index version {left} is left (not aliased): delete it once the node answers"
    return ClusterError(f"OpenSearch at {settings.effective_url} refused {what} with 429 ({cause}){after}: "
                        f"the node is {full}; {remedy}{cleanup}")


#: Lucene refuses a query with more than 1024 term clauses in its whole tree (OpenSearch's default
#: ``indices.query.bool.max_clause_count``); every BM25 text of one request shares this budget.
TERM_BUDGET = 900
_WORD = re.compile(r"\w+")


def cap_terms(text: str, clauses: int = 1) -> str:
    """``text`` cut after its share of :data:`TERM_BUDGET` when ``clauses`` BM25 texts share it.

    A word may become two or three terms (identifier splitting keeps the original too), hence the
    factor of 3. Requests that paste whole documents keep their beginning.
    """
    allowed = max(8, TERM_BUDGET // (3 * max(clauses, 1)))
    for count, match in enumerate(_WORD.finditer(text), start=1):
        if count == allowed:
            return text[: match.end()]
    return text


def cosine_from_lucene(score: float) -> float:
    """Lucene reports cosine similarity as (1 + cos) / 2; this gives cos back."""
    return 2.0 * score - 1.0
