"""toolsift.integrations._common, what the framework adapters share: the hit -> framework tool matching rule,
the "toolsift could not answer" test and ``on_error``, the query's length, and the sync/async plumbing.
No framework is needed: the module imports none."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import pytest

from toolsift.client import ToolHit, ToolsiftAPIError, ToolsiftConnectionError
from toolsift.errors import ConfigError, ToolsiftError
from toolsift.integrations import _common
from toolsift.integrations._common import (
    MAX_QUERY_CHARS,
    check_positive,
    clip_query,
    fall_back,
    latest_user_text,
    match_hit,
    pick,
    search_async,
    unreachable,
)
from toolsift.query import structured

LOG = logging.getLogger("toolsift.integrations.test")


def hit(name: str, id: str, original_name: str | None = None) -> ToolHit:
    raw: dict[str, Any] = {"id": id, "name": name}
    if original_name is not None:
        raw["original_name"] = original_name
    return ToolHit(id=id, name=name, description="", definition=None, raw=raw)


def test_the_longest_query_is_the_apis() -> None:
    # kept as a copy: the ground layer may not import toolsift.query
    assert MAX_QUERY_CHARS == structured.MAX_QUERY_CHARS


def test_the_query_is_stripped_and_cut_to_the_apis_longest() -> None:
    long = " " + "x" * (MAX_QUERY_CHARS + 10)

    assert clip_query("  what is AAPL at?\n") == "what is AAPL at?"
    assert clip_query(long) == "x" * MAX_QUERY_CHARS
    assert clip_query(long, strip=False) == long[:MAX_QUERY_CHARS] and clip_query("   ") == ""


def test_a_hit_matches_by_name_then_original_name_then_id() -> None:
    names = {"get_quote", "quote", "fin/get_quote"}

    assert match_hit(hit("get_quote", "fin/get_quote", "quote"), names) == "get_quote"
    assert match_hit(hit("fin__get_quote", "fin/get_quote", "quote"), names) == "quote"
    assert match_hit(hit("fin__get_quote", "fin/get_quote"), names) == "fin/get_quote"
    assert match_hit(hit("other", "x/other", "other"), names) is None  # unknown: skipped, never invented


def test_without_original_name_or_with_aliases_the_match_is_name_or_id_or_the_alias_only() -> None:
    names = {"quote", "fin/get_quote", "my_quote"}

    assert match_hit(hit("fin__get_quote", "fin/x", "quote"), names, original_name=False) is None
    assert match_hit(hit("fin__get_quote", "fin/get_quote", "quote"), names, original_name=False) == "fin/get_quote"
    assert match_hit(hit("quote", "fin/get_quote"), names, aliases={"fin/get_quote": "my_quote"}) == "my_quote"
    assert match_hit(hit("quote", "fin/get_quote"), names, aliases={"fin/get_quote": "gone"}) is None


def test_picks_keep_toolsifts_order_each_once_without_the_always_included_and_cut_to_the_limit() -> None:
    matches = ["b", None, "a", "b", "c", "d", None, "a"]

    assert pick(matches) == ["b", "a", "c", "d"]
    assert pick(matches, exclude={"a"}) == ["b", "c", "d"]
    assert pick(matches, exclude=["c"], limit=2) == ["b", "a"] and pick([None]) == []


@pytest.mark.parametrize(("exc", "expected"), [
    (ToolsiftConnectionError("refused", not_sent=True), True),
    (ToolsiftConnectionError("timed out", not_sent=False), True),
    (ToolsiftAPIError(429, "slow down", "rate_limited"), True),
    (ToolsiftAPIError(500, "boom", "internal"), True),
    (ToolsiftAPIError(503, "busy", "http_503"), True),
    (ToolsiftAPIError(400, "bad option", "bad_request"), False),
    (ToolsiftAPIError(401, "wrong key", "unauthorized"), False),
    (ToolsiftAPIError(404, "no such tool", "not_found"), False),
    (ToolsiftError("another"), False),
])
def test_unreachable_means_no_answer_a_429_or_a_5xx(exc: ToolsiftError, expected: bool) -> None:
    assert unreachable(exc) is expected


def test_on_error_falls_back_with_a_warning_only_when_toolsift_was_unreachable(
        caplog: pytest.LogCaptureFixture) -> None:
    down = ToolsiftConnectionError("refused", not_sent=True)
    wrong = ToolsiftAPIError(401, "wrong key", "unauthorized")

    with caplog.at_level(logging.WARNING, logger=LOG.name):
        fall_back(down, "fallback", LOG, "toolsift could not answer (%s); all %d tools", 7)
    with pytest.raises(ToolsiftConnectionError):
        fall_back(down, "raise", LOG, "never %s")
    with pytest.raises(ToolsiftAPIError):
        fall_back(wrong, "fallback", LOG, "never %s")

    assert caplog.messages == ["toolsift could not answer (refused); all 7 tools"]


def test_positive_options_are_checked_by_name() -> None:
    check_positive(top_k=1, limit=None)

    with pytest.raises(ConfigError, match=r"^top_k must be positive \(got 0\)$"):
        check_positive(top_k=0)
    with pytest.raises(ConfigError, match=r"^top_k and max_tools must be positive \(got 5, 0\)$"):
        check_positive(top_k=5, max_tools=0)


def test_the_latest_user_messages_text_from_dicts_or_objects() -> None:
    class Message:
        role = "user"
        content = "  from an object "

    assert latest_user_text([{"role": "user", "content": "old"}, Message()]) == "from an object"
    assert latest_user_text([{"role": "user", "content": [{"type": "image_url"}]}]) is None


class SyncFake:
    def __init__(self) -> None:
        self.threads: list[str] = []

    def search(self, query: str, **kwargs: Any) -> Any:
        self.threads.append(threading.current_thread().name)
        return ("sync", query, kwargs)


class AsyncFake:
    async def search(self, query: str, **kwargs: Any) -> Any:
        return ("async", query, kwargs)


def test_the_async_search_takes_the_async_client_else_the_sync_one_in_a_worker_thread() -> None:
    sync = SyncFake()

    async def both() -> list[Any]:
        return [await search_async("q", {"top_k": 3}, client=sync, async_client=AsyncFake()),  # type: ignore[arg-type]
                await search_async("q", {"top_k": 3}, client=sync)]  # type: ignore[arg-type]

    assert asyncio.run(both()) == [("async", "q", {"top_k": 3}), ("sync", "q", {"top_k": 3})]
    assert sync.threads and sync.threads[0] != threading.main_thread().name
    with pytest.raises(ConfigError):
        asyncio.run(search_async("q", {}))


def test_the_module_exports_what_it_defines() -> None:
    assert all(hasattr(_common, name) for name in _common.__all__)
