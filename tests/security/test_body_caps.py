"""A body over the cap is refused, not read — by every front end, with or without a key.

The front ends run with ``max_body_bytes`` = 1 MB. A declared length over it is answered 413 at once;
a streamed body with no declared length is cut off as soon as it passes the cap; a caller with no key
is answered 401 before a byte of the body is read. Either way the client cannot push more than its
socket buffers take (a few MB of a 100 MB upload), and the refusal is the one JSON error body.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.security.conftest import CAP, MCP_HEADERS, Deployment

pytestmark = [pytest.mark.integration, pytest.mark.security]

PATHS = {"api": "/v1/search", "mcp": "/mcp", "ui": "/api/search", "ranker": "/v1/rank"}
UPLOAD = 100_000_000
#: What the client may have handed over before the server's refusal stopped it: socket buffers, not the body.
BOUNDED = 40_000_000


class Upload:
    """A streamed body of ``total`` bytes (never built in memory) that counts what the server took."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.sent = 0

    def __iter__(self) -> Iterator[bytes]:
        chunk = b" " * 65_536
        for _ in range(self.total // len(chunk)):
            self.sent += len(chunk)
            yield chunk


def _headers(front_end: str, extra: dict[str, str]) -> dict[str, str]:
    base = {**MCP_HEADERS} if front_end == "mcp" else {"Content-Type": "application/json"}
    return {**base, **extra}


@pytest.mark.parametrize("front_end", list(PATHS))
def test_a_declared_length_over_the_cap_is_413_at_once(deployment: Deployment, front_end: str) -> None:
    url = deployment.url(front_end) + PATHS[front_end]
    answer = httpx.post(url, content=b" " * (CAP + 1), headers=_headers(front_end, deployment.header("acme")),
                        timeout=120)
    assert (answer.status_code, answer.json()["code"]) == (413, "request_too_large")
    assert f"{CAP:,}" in answer.json()["error"]  # the refusal names the cap


@pytest.mark.parametrize("front_end", list(PATHS))
def test_a_streamed_upload_over_the_cap_is_cut_off_not_read(deployment: Deployment, front_end: str) -> None:
    url = deployment.url(front_end) + PATHS[front_end]
    upload = Upload(UPLOAD)
    try:
        answer = httpx.post(url, content=upload, headers=_headers(front_end, deployment.header("acme")), timeout=120)
    except httpx.WriteError:  # the server answered and closed while the client was still sending: also a refusal
        answer = None
    if answer is not None:
        assert (answer.status_code, answer.json()["code"]) == (413, "request_too_large")
    assert upload.sent < BOUNDED


@pytest.mark.parametrize("front_end", list(PATHS))
def test_without_a_key_a_large_upload_is_401_before_its_body_is_read(deployment: Deployment, front_end: str) -> None:
    url = deployment.url(front_end) + PATHS[front_end]
    upload = Upload(UPLOAD)
    try:
        answer = httpx.post(url, content=upload, headers=_headers(front_end, {}), timeout=120)
    except httpx.WriteError:
        answer = None
    if answer is not None:
        assert (answer.status_code, answer.json()["code"]) == (401, "unauthorized")
    assert upload.sent < BOUNDED


def test_a_search_within_the_cap_is_answered_after_the_refusals(deployment: Deployment) -> None:
    """The refusals cost the service nothing it needs: the next ordinary request is answered in full."""
    answer = httpx.post(deployment.url("api") + "/v1/search", json={"query": "send an email", "top_k": 3},
                        headers=deployment.header("acme"), timeout=120)
    assert answer.status_code == 200 and answer.json()["tools"]
