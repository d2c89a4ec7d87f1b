"""Clients that never finish a request: hanging up mid-body, and slow connections that never end.

Every front end (the search API, the MCP server over HTTP, the workbench, the ranker service) is spoken
to over raw sockets, as a hostile client would:

* a client that declares ``Content-Length: 100``, sends 10 bytes and hangs up costs the service
  nothing it keeps: the next request is answered, and its log gains at most one quiet line per
  hang-up — never a traceback, never "Exception in ASGI application";
* twenty slow connections per service (slowloris) — headers sent a line at a time and never finished,
  or a body sent a byte at a time — are closed by the server once ``request_read_timeout_s`` (5 s
  in this deployment) has passed, a body's with a 408 ``request_timeout`` answer first. The bound
  asserted is generous (the guarantee is that they are closed, not how fast).
"""

from __future__ import annotations

import select
import socket
import time
from urllib.parse import urlsplit

import httpx
import pytest

from tests.security.conftest import INITIALIZE, MCP_HEADERS, READ_TIMEOUT_S, Deployment

pytestmark = [pytest.mark.integration, pytest.mark.security]

PATHS = {"api": "/v1/search", "mcp": "/mcp", "ui": "/api/search", "ranker": "/v1/rank"}
HANG_UPS = 5
SLOW_PER_SERVICE = 20
#: How long a slow connection may stay open before the test calls it unbounded (the timeout is 5 s).
BOUND_S = READ_TIMEOUT_S * 6 + 15


def _head(deployment: Deployment, front_end: str, length: int) -> bytes:
    """A POST's request line and headers, with a key and a declared body ``length``."""
    address = urlsplit(deployment.url(front_end)).netloc
    headers = {"Host": address, **deployment.header("acme"),
               **(MCP_HEADERS if front_end == "mcp" else {"Content-Type": "application/json"}),
               "Content-Length": str(length)}
    lines = [f"POST {PATHS[front_end]} HTTP/1.1", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
    return "\r\n".join(lines).encode("ascii")


def _connect(deployment: Deployment, front_end: str) -> socket.socket:
    parts = urlsplit(deployment.url(front_end))
    return socket.create_connection((parts.hostname, parts.port), timeout=10)


def _still_answers(deployment: Deployment, front_end: str) -> None:
    url = deployment.url(front_end)
    if front_end == "mcp":
        answer = httpx.post(url + "/mcp", json=INITIALIZE, headers={**deployment.header("acme"), **MCP_HEADERS},
                            timeout=60)
        assert answer.status_code == 200, answer.text
    else:
        assert httpx.get(url + "/health", timeout=60).status_code == 200


@pytest.mark.parametrize("front_end", list(PATHS))
def test_a_client_that_hangs_up_mid_body_leaves_at_most_one_quiet_line_per_hang_up(
        deployment: Deployment, front_end: str) -> None:
    _still_answers(deployment, front_end)  # started, and its start-up lines written
    log = deployment.front_ends[front_end].log
    before = len(log.read_bytes())

    for _ in range(HANG_UPS):
        with _connect(deployment, front_end) as sock:
            sock.sendall(_head(deployment, front_end, 100) + b'{"query":')  # 10 of the 100 bytes declared
    _still_answers(deployment, front_end)
    time.sleep(1)  # the hang-ups' handling finishes on the server's loop; a traceback would be written by now

    added = log.read_bytes()[before:].decode("utf-8", errors="replace")
    assert "Traceback" not in added and "Exception" not in added and "No response returned" not in added, added
    assert len(added.splitlines()) <= HANG_UPS, added


def test_slow_connections_to_every_front_end_are_closed_by_the_server(deployment: Deployment) -> None:
    """Half of each service's connections send their headers a line a second and never finish them;
    the other half finish the headers, declare a 1,000-byte body and send it a byte a second. The
    server closes every one (EOF or reset) within the bound, a slow body's after a 408 answer
    (``request_timeout``)."""
    slow: dict[socket.socket, tuple[str, str]] = {}
    for front_end in PATHS:
        for n in range(SLOW_PER_SERVICE):
            sock = _connect(deployment, front_end)
            if n % 2:
                sock.sendall(_head(deployment, front_end, 1000).split(b"\r\n", 1)[0] + b"\r\n")
                slow[sock] = (front_end, "headers")
            else:
                sock.sendall(_head(deployment, front_end, 1000) + b"{")
                slow[sock] = (front_end, "body")
            sock.setblocking(False)
    received = {sock: b"" for sock in slow}
    still_open = set(slow)
    started = time.monotonic()
    try:
        while still_open and time.monotonic() - started < BOUND_S:
            readable, _, _ = select.select(list(still_open), [], [], 1.0)
            for sock in readable:
                try:
                    data = sock.recv(65_536)
                except (ConnectionResetError, BrokenPipeError):
                    data = b""
                received[sock] += data
                if not data:  # EOF: the server closed it
                    still_open.discard(sock)
            for sock in list(still_open):  # one more trickle: a header line, or a byte of the body
                try:
                    sock.send(b"X-Slow: 1\r\n" if slow[sock][1] == "headers" else b" ")
                except (ConnectionResetError, BrokenPipeError):
                    still_open.discard(sock)
                except BlockingIOError:
                    pass
        left = sorted(f"{slow[s][0]} ({slow[s][1]})" for s in still_open)
        assert not left, f"{len(left)} slow connections still open after {BOUND_S} s: {left[:8]}"
        for sock, (front_end, phase) in slow.items():
            # the server closes with the client's trickle unread, so its reset may cut the answer short
            # (or beat it): what did arrive is the 408 and, as far as it goes, its one JSON body
            if phase == "body" and received[sock]:
                assert received[sock].startswith(b"HTTP/1.1 408"), (front_end, received[sock][:300])
                body = received[sock].partition(b"\r\n\r\n")[2]
                assert b'{"error":"the body did not arrive within 5 s'.startswith(body[:44]), (front_end, body)
    finally:
        for sock in slow:
            sock.close()
    for front_end in PATHS:
        _still_answers(deployment, front_end)
