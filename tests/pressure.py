"""A real node that refuses writes with 429, for the tests of what toolsift does when the node is the limit.

Import as ``from tests.pressure import RefusingNode``. OpenSearch answers ``429 circuit_breaking_exception``
when a request would take a circuit breaker over its limit. Its in-flight-requests breaker
(``network.breaker.inflight_requests.limit``, a dynamic cluster setting) counts the bytes of every HTTP
request body in flight, so with its limit lowered to a few kilobytes the node refuses every bulk request
(hundreds of kilobytes of documents and vectors) and answers the small ones (settings, stats, a delete
without a body) — the same answer a node whose heap is full gives through its parent breaker, made
without filling a heap the other tests share.

:class:`RefusingNode` lowers the limit when :meth:`~RefusingNode.refuse` is called (the refusal is
"armed"), counts the refusals by the breaker's own ``tripped`` counter, and — in ``transient`` mode —
lifts the limit again as soon as the node has refused once, as a node does whose pressure passes. The
limit is always restored when the ``with`` block ends.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import Any

__all__ = ["BREAKER_LIMIT", "RefusingNode", "tripped"]

#: The cluster setting lowered to make the node refuse.
BREAKER_LIMIT = "network.breaker.inflight_requests.limit"
#: Small enough for every bulk request of documents with vectors, large enough for settings and stats.
REFUSING_LIMIT = "4kb"


def tripped(client: Any) -> int:
    """How many times the node's in-flight-requests breaker has refused a request (all nodes)."""
    stats = client.nodes.stats(metric="breaker")
    return sum(int(node["breakers"]["in_flight_requests"]["tripped"]) for node in stats["nodes"].values())


class RefusingNode:
    """Make the node refuse bulk writes with 429 (see the module docstring).

    Args:
        client: a client of the node.
        transient: lift the limit again once the node has refused (the refusal passes); else it stays
            until the block ends.
    """

    def __init__(self, client: Any, *, transient: bool) -> None:
        self.client = client
        self.transient = transient
        self.baseline = tripped(client)
        self.armed = False
        self.lifted = threading.Event()
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    @property
    def refusals(self) -> int:
        """How many requests the node refused since the block began."""
        return tripped(self.client) - self.baseline

    def refuse(self) -> None:
        """Lower the limit now (once); in transient mode a watcher lifts it after the first refusal."""
        if self.armed:
            return
        self.armed = True
        self.client.cluster.put_settings(body={"persistent": {BREAKER_LIMIT: REFUSING_LIMIT}})
        if self.transient:
            self._watcher = threading.Thread(target=self._lift_after_first_refusal, daemon=True)
            self._watcher.start()

    def _lift_after_first_refusal(self) -> None:
        while not self._stop.is_set():
            if self.refusals > 0:
                self._lift()
                return
            time.sleep(0.02)

    def _lift(self) -> None:
        self.client.cluster.put_settings(body={"persistent": {BREAKER_LIMIT: None}})
        self.lifted.set()

    def __enter__(self) -> RefusingNode:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=10)
        self._lift()
