"""What a 429 from OpenSearch means to toolsift: the cause read as one line, and the error that names the remedy.

The answers below are OpenSearch's own (a tripped parent breaker, a full write queue), as opensearch-py
raises them and as a bulk item reports them.
"""

from __future__ import annotations

from opensearchpy.exceptions import TransportError

from toolsift.config import Settings
from toolsift.errors import ClusterError, error_kind
from toolsift.opensearch import BulkRetry, node_refused_error, refusal

PARENT = {"type": "circuit_breaking_exception",
          "reason": "[parent] Data too large, data for [<http_request>] would be [1020054528/972.7mb], which is\n"
                    "larger than the limit of [1020054732/972.7mb]", "bytes_wanted": 1020054528,
          "bytes_limit": 1020054732, "durability": "PERMANENT"}
QUEUE = {"type": "rejected_execution_exception", "reason": "rejected execution of coordinating operation"}


def test_a_429_is_read_as_its_type_and_reason_on_one_line_whether_raised_or_reported_per_document() -> None:
    raised = TransportError(429, "circuit_breaking_exception", {"error": {"root_cause": [PARENT], **PARENT},
                                                                "status": 429})
    item = {"_id": "t1", "status": 429, "error": QUEUE}

    assert refusal(raised) == ("circuit_breaking_exception: [parent] Data too large, data for [<http_request>] "
                               "would be [1020054528/972.7mb], which is larger than the limit of "
                               "[1020054732/972.7mb]")
    assert refusal(item) == "rejected_execution_exception: rejected execution of coordinating operation"


def test_other_answers_are_no_refusal() -> None:
    bad_mapping = {"error": {"type": "mapper_parsing_exception"}}
    assert refusal(TransportError(400, "mapper_parsing_exception", bad_mapping)) is None
    assert refusal({"_id": "t1", "status": 400, "error": {"type": "mapper_parsing_exception"}}) is None
    assert refusal(TransportError("N/A", "ConnectionError", "refused")) is None


def test_the_retries_wait_one_two_four_eight_sixteen_seconds_by_default() -> None:
    retry = BulkRetry.from_settings(Settings())

    assert retry.kwargs() == {"max_retries": 5, "initial_backoff": 1.0, "max_backoff": 30.0}
    assert retry.waited_s == 31
    assert BulkRetry(max_retries=8).waited_s == 1 + 2 + 4 + 8 + 16 + 30 + 30 + 30


def test_a_full_managed_node_is_named_with_the_remedy_and_what_was_removed_in_one_line() -> None:
    cause = refusal({"status": 429, "error": PARENT}) or ""
    error = node_refused_error(Settings(node_port=9213, node_heap="1g"), cause, retry=BulkRetry(),
                               removed="tools-000002")

    assert isinstance(error, ClusterError) and error_kind(error) is not None and error_kind(error).exit_code == 5
    assert "\n" not in str(error)
    assert str(error) == (
        "OpenSearch at http://127.0.0.1:9213 refused the writes with 429 (" + cause + ") after 5 retries over 31 s: "
        "the node is out of memory; restart it (`toolsift node stop && toolsift node start`) or give it more heap "
        "(TOOLSIFT_NODE_HEAP, now 1g); the half-built index version tools-000002 was removed")


def test_a_busy_cluster_of_ones_own_is_told_what_to_do_about_it_and_what_was_left() -> None:
    cause = refusal({"status": 429, "error": QUEUE}) or ""
    error = node_refused_error(Settings(opensearch_url="https://search.example:9200"), cause, left="tools-000001")

    assert str(error) == (
        "OpenSearch at https://search.example:9200 refused the writes with 429 (" + cause + "): the node is too busy "
        "(its queues are full); give its nodes more heap or more nodes, or retry when it is less loaded; the "
        "half-built index version tools-000001 is left (not aliased): delete it once the node answers")
