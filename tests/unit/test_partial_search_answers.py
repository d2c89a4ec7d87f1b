"""A search that lost a shard copy mid-request is asked again (toolsift.opensearch.WholeAnswerTransport).

OpenSearch answers 200 with the other shards' hits when a shard copy is lost between the query and
the fetch phase (its node killed or stopped mid-request): a shorter ranking, with nothing to show for
it but ``_shards.failed``; with no hit left, a 500. The client toolsift builds asks again. The cluster
here is a small HTTP server on loopback answering each request with the next scripted status and body
(the failures are the ones a real three-node cluster gave in `toolsift bench node-loss`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from opensearchpy.exceptions import TransportError

from tests.fakes import LoopbackJSONServer
from toolsift.config import Settings
from toolsift.opensearch import make_client

LOST_FETCH = {"total": 3, "successful": 2, "skipped": 0, "failed": 1, "failures": [{
    "shard": 1, "index": "tools-000001", "reason": {"type": "node_disconnected_exception",
                                                    "reason": "[node-3][phase/fetch/id] disconnected"}}]}
WHOLE = {"total": 3, "successful": 3, "skipped": 0, "failed": 0}
BAD_QUERY = {"total": 3, "successful": 2, "skipped": 0, "failed": 1, "failures": [{
    "shard": 0, "index": "tools-000001", "reason": {"type": "query_shard_exception", "reason": "failed to create query"}}]}
FETCH_LOST_ALL = {"error": {"root_cause": [], "type": "search_phase_execution_exception", "reason": "", "phase": "fetch",
                            "grouped": True, "failed_shards": [], "caused_by": {
                                "type": "node_not_connected_exception",
                                "reason": "[node-3][127.0.0.1:19362] Node not connected"}}, "status": 500}


def _answer(shards: dict[str, Any], hits: int) -> dict[str, Any]:
    return {"took": 1, "timed_out": False, "_shards": shards,
            "hits": {"total": {"value": hits, "relation": "eq"}, "hits": [{"_id": f"t{i}"} for i in range(hits)]}}


class Scripted(LoopbackJSONServer):
    """An HTTP server answering requests with ``bodies`` in turn (the last one again when they run out)."""

    def __init__(self, bodies: list[dict[str, Any]]) -> None:
        """``bodies``: each answered with 200, or with its own ``status`` when it has one (an error body)."""
        self.bodies, self.paths = bodies, []
        super().__init__(self._answer)

    def _answer(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any]:
        self.paths.append(path)
        answer = self.bodies[min(len(self.paths), len(self.bodies)) - 1]
        return int(answer.get("status", 200)), answer


@pytest.fixture()
def serve() -> Iterator[Any]:
    started: list[Scripted] = []

    def start(bodies: list[dict[str, Any]]) -> Scripted:
        scripted = Scripted(bodies)
        threading.Thread(target=scripted.server.serve_forever, daemon=True).start()
        started.append(scripted)
        return scripted

    yield start
    for scripted in started:
        scripted.server.shutdown()
        scripted.server.server_close()


def test_a_search_that_lost_a_shard_is_asked_again_and_the_whole_answer_returned(serve: Any) -> None:
    cluster = serve([_answer(LOST_FETCH, 2), _answer(WHOLE, 5)])
    client = make_client(Settings(opensearch_url=cluster.url))

    answer = client.search(index="tools", body={"query": {"match_all": {}}})

    assert (answer["_shards"]["failed"], len(answer["hits"]["hits"])) == (0, 5)
    assert cluster.paths == ["/tools/_search", "/tools/_search"]


def test_a_multi_search_with_one_partial_answer_is_asked_again(serve: Any) -> None:
    cluster = serve([{"responses": [_answer(WHOLE, 5), _answer(LOST_FETCH, 1)]},
                     {"responses": [_answer(WHOLE, 5), _answer(WHOLE, 4)]}])
    client = make_client(Settings(opensearch_url=cluster.url))

    answer = client.msearch(body=[{"index": "tools"}, {"query": {"match_all": {}}}, {"index": "tools"}, {}])

    assert [len(r["hits"]["hits"]) for r in answer["responses"]] == [5, 4]
    assert len(cluster.paths) == 2


def test_a_search_that_stays_partial_is_answered_as_it_is_after_the_retries(serve: Any) -> None:
    cluster = serve([_answer(LOST_FETCH, 2)])
    client = make_client(Settings(opensearch_url=cluster.url))

    answer = client.search(index="tools", body={"query": {"match_all": {}}})

    assert answer["_shards"]["failed"] == 1 and len(cluster.paths) == 1 + client.transport.max_retries


def test_a_search_that_lost_every_hit_to_a_lost_copy_is_asked_again(serve: Any) -> None:
    cluster = serve([FETCH_LOST_ALL, _answer(WHOLE, 5)])
    client = make_client(Settings(opensearch_url=cluster.url))

    answer = client.search(index="tools", body={"query": {"match_all": {}}})

    assert len(answer["hits"]["hits"]) == 5 and len(cluster.paths) == 2


def test_a_multi_search_whose_search_failed_for_a_lost_copy_is_asked_again(serve: Any) -> None:
    cluster = serve([{"responses": [_answer(WHOLE, 5), FETCH_LOST_ALL]},
                     {"responses": [_answer(WHOLE, 5), _answer(WHOLE, 3)]}])
    client = make_client(Settings(opensearch_url=cluster.url))

    answer = client.msearch(body=[{"index": "tools"}, {}, {"index": "tools"}, {}])

    assert [len(r["hits"]["hits"]) for r in answer["responses"]] == [5, 3] and len(cluster.paths) == 2


def test_failures_that_are_not_a_lost_copy_are_passed_on_at_once(serve: Any) -> None:
    cluster = serve([_answer(BAD_QUERY, 2), {**FETCH_LOST_ALL, "error": {"type": "search_phase_execution_exception",
                                                                          "reason": "all shards failed"}}])
    client = make_client(Settings(opensearch_url=cluster.url))

    partial = client.search(index="tools", body={"query": {"match_all": {}}})
    with pytest.raises(TransportError) as failed:
        client.search(index="tools", body={"query": {"match_all": {}}})

    assert partial["_shards"]["failed"] == 1 and failed.value.status_code == 500
    assert len(cluster.paths) == 2


def test_whole_answers_scrolls_and_other_requests_are_sent_once(serve: Any) -> None:
    cluster = serve([_answer(WHOLE, 5), _answer(LOST_FETCH, 2), _answer(LOST_FETCH, 2)])
    client = make_client(Settings(opensearch_url=cluster.url))

    client.search(index="tools", body={"query": {"match_all": {}}})
    client.search(index="tools", body={"query": {"match_all": {}}}, params={"scroll": "1m"})
    client.count(index="tools", body={"query": {"match_all": {}}})

    assert [path.split("?")[0] for path in cluster.paths] == ["/tools/_search", "/tools/_search", "/tools/_count"]
