"""The guard every toolsift HTTP service puts before its routes (:class:`toolsift.webguard.RequestGuard`),
over real HTTP (uvicorn on loopback): the ``Host`` allow-list, writes from other sites' pages, the key
before the body, JSON-only writes and the body cap, each refusal in the one JSON error body.

The route behind the guard is a small echo app that says what body it received; the services'
own apps behind the same guard: tests/integration/test_search_api.py, test_workbench_access.py,
test_mcp_server.py and tests/unit/ranker/test_service.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import BodyCounter
from toolsift.access import ApiKey, KeyRing, hash_key
from toolsift.webguard import RequestGuard, key_check

CAP = 100_000
KEY = "tsk_the-one-key"
KEYS = KeyRing([ApiKey(name="ops", tenant="*", role="admin", sha256=hash_key(KEY))])


class Echo:
    """The route: answers 200 with how many body bytes it received, and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        self.calls += 1
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        answer = json.dumps({"received": len(body), "head": body[:20].decode("latin-1")}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": answer})


@pytest.fixture()
def served(serve_app: Any) -> Iterator[tuple[str, Echo, BodyCounter]]:
    """The guard (keys on ``/v1/`` but not ``/v1/open``, the proxy name ``tools.example.com``) over the echo app."""
    echo = Echo()
    counter = BodyCounter(RequestGuard(echo, allowed_hosts=["127.0.0.1", "localhost", "tools.example.com"],
                                       max_body_bytes=CAP, authenticate=key_check(KEYS), protected=("/v1/",),
                                       open_paths=("/v1/open",)))
    yield str(serve_app(counter).url), echo, counter


def _stream(total: int, chunk: int = 16_384) -> Iterator[bytes]:
    for _ in range(total // chunk):
        yield b"x" * chunk


def test_a_body_over_the_cap_is_413_on_its_content_length_before_a_byte_is_read(
        served: tuple[str, Echo, BodyCounter]) -> None:
    url, echo, counter = served
    answer = httpx.post(f"{url}/open", content=b" " * (CAP + 1), headers={"Content-Type": "application/json"})

    assert answer.status_code == 413
    assert answer.json() == {"error": "the body has 100,001 bytes; this service accepts at most 100,000 "
                                      "(setting max_body_bytes)", "code": "request_too_large",
                             "field": "Content-Length"}
    assert counter.consumed == 0 and echo.calls == 0


def test_a_streamed_body_is_refused_as_soon_as_it_passes_the_cap(served: tuple[str, Echo, BodyCounter]) -> None:
    url, echo, counter = served
    answer = httpx.post(f"{url}/open", content=_stream(20_000_000), headers={"Content-Type": "application/json"},
                        timeout=60)

    assert answer.status_code == 413 and answer.json()["code"] == "request_too_large"
    assert answer.json()["error"] == "the body is larger than the 100,000 bytes this service accepts (setting max_body_bytes)"
    assert CAP < counter.consumed <= CAP + 1_000_000 and echo.calls == 0  # read up to the cap, no further


@pytest.mark.parametrize("size", [0, 1, CAP - 1, CAP])
def test_a_body_within_the_cap_reaches_the_route_whole_streamed_or_not(
        served: tuple[str, Echo, BodyCounter], size: int) -> None:
    url, _, _ = served
    json_type = {"Content-Type": "application/json"}
    declared = httpx.post(f"{url}/open", content=b"y" * size, headers=json_type)
    streamed = httpx.post(f"{url}/open", content=iter([b"y" * (size // 2), b"z" * (size - size // 2)]),
                          headers=json_type)

    assert declared.json() == {"received": size, "head": "y" * min(size, 20)}
    assert streamed.status_code == 200 and streamed.json()["received"] == size


def test_without_a_valid_key_a_protected_path_is_401_before_its_body_is_read(
        served: tuple[str, Echo, BodyCounter]) -> None:
    url, echo, counter = served
    json_type = {"Content-Type": "application/json"}

    missing = httpx.post(f"{url}/v1/search", content=_stream(5 * CAP), headers=json_type, timeout=60)
    wrong = httpx.get(f"{url}/v1/tools/x", headers={"Authorization": "Bearer tsk_guessed"})
    assert (missing.status_code, wrong.status_code) == (401, 401)
    assert missing.json() == {"error": "this service needs an API key: send 'Authorization: Bearer <key>'",
                              "code": "unauthorized", "field": None}
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert counter.consumed == 0 and echo.calls == 0

    assert httpx.post(f"{url}/v1/search", content=b"{}", headers={**json_type, "X-API-Key": KEY}).status_code == 200
    assert httpx.post(f"{url}/v1/open", content=b"{}", headers=json_type).status_code == 200
    assert httpx.get(f"{url}/health").status_code == 200


@pytest.mark.parametrize(("headers", "status", "field"), [
    ({}, 200, None),  # a program: no Origin, no fetch metadata
    ({"Origin": "{url}", "Sec-Fetch-Site": "same-origin"}, 200, None),  # the service's own page
    ({"Origin": "https://tools.example.com", "Sec-Fetch-Site": "same-origin"}, 200, None),  # behind a proxy
    ({"Origin": "https://attacker.example"}, 403, "Origin"),
    ({"Origin": "https://attacker.example", "Sec-Fetch-Site": "cross-site"}, 403, "Origin"),
    ({"Sec-Fetch-Site": "cross-site"}, 403, "Sec-Fetch-Site"),
    ({"Sec-Fetch-Site": "same-site"}, 403, "Sec-Fetch-Site"),
    ({"Origin": "http://127.0.0.1:1", "Sec-Fetch-Site": "same-site"}, 403, "Origin"),  # another local server
    ({"Origin": "http://localhost:{port}"}, 403, "Origin"),  # another origin of this very port
    ({"Origin": "null"}, 403, "Origin"),  # a sandboxed frame, a file: page
], ids=["program", "own-page", "proxy-name", "foreign-origin", "foreign-origin-cross-site", "cross-site",
        "same-site-without-origin", "other-local-port", "other-loopback-name", "opaque-origin"])
def test_a_write_from_another_sites_page_is_403_whether_or_not_keys_are_configured(
        served: tuple[str, Echo, BodyCounter], headers: dict[str, str], status: int, field: str | None) -> None:
    url, echo, _ = served
    port = url.rsplit(":", 1)[1]
    sent = {k: v.format(url=url, port=port) for k, v in headers.items()}

    for path, auth in (("/open", {}), ("/v1/search", {"Authorization": f"Bearer {KEY}"})):
        answer = httpx.post(f"{url}{path}", content=b"{}", headers={**sent, **auth, "Content-Type": "application/json"})
        assert answer.status_code == status, (path, answer.text)
        if field is not None:
            assert answer.json()["code"] == "forbidden" and answer.json()["field"] == field
            assert echo.calls == 0
    if "Origin" in sent and status == 403:
        assert repr(sent["Origin"]) in answer.json()["error"]
    # reads are not writes: a page may link to the service
    assert httpx.get(f"{url}/open", headers=sent).status_code == 200


@pytest.mark.parametrize(("content_type", "status"), [
    ("application/json", 200),
    ("application/json; charset=utf-8", 200),
    ("Application/JSON", 200),
    ("application/merge-patch+json", 200),
    (None, 200),  # a program that names no type: the route reads the body as JSON or refuses it
    ("text/plain", 415),
    ("text/plain;charset=UTF-8", 415),
    ("application/x-www-form-urlencoded", 415),
    ("multipart/form-data; boundary=x", 415),
])
def test_a_write_whose_body_is_declared_as_anything_but_json_is_415(
        served: tuple[str, Echo, BodyCounter], content_type: str | None, status: int) -> None:
    url, _, _ = served
    answer = httpx.post(f"{url}/open", content=b"{}", headers={"Content-Type": content_type} if content_type else {})

    assert answer.status_code == status
    if status == 415:
        assert answer.json()["code"] == "unsupported_media_type" and answer.json()["field"] == "Content-Type"
        assert content_type in answer.json()["error"]


def test_a_foreign_host_is_refused_before_anything_else(served: tuple[str, Echo, BodyCounter]) -> None:
    url, echo, counter = served
    answer = httpx.post(f"{url}/v1/search", content=b" " * (CAP + 1),
                        headers={"Host": "attacker.example", "Content-Type": "text/plain"})

    assert answer.status_code == 403
    assert answer.json() == {"error": "this service does not answer to host 'attacker.example'", "code": "forbidden",
                             "field": "Host"}
    assert counter.consumed == 0 and echo.calls == 0
