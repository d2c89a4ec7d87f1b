"""`POST /v1/search`'s `brief` and `pinned` options, over real HTTP on the real node: brief entries for
deferred loading, and pinned tools that always come first, in the caller's tenant only."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.integration.conftest import TenantCatalog

pytestmark = pytest.mark.integration

QUERY = "search the web for recent news articles"


@pytest.fixture(scope="module")
def api(tenant_api: str) -> str:
    return tenant_api


def search(api: str, catalog: TenantCatalog, key: str = "acme", **body: Any) -> httpx.Response:
    return httpx.post(f"{api}/v1/search", json={"query": QUERY, **body}, headers=catalog.header(key), timeout=60)


def answer(api: str, catalog: TenantCatalog, key: str = "acme", **body: Any) -> dict[str, Any]:
    response = search(api, catalog, key, **body)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def tools_of(catalog: TenantCatalog, tenant: str) -> list[str]:
    return sorted(d for d, owner in catalog.owner.items() if owner == tenant and not d.startswith("agent:"))


def not_found_by(found: dict[str, Any], catalog: TenantCatalog, tenant: str, count: int) -> list[str]:
    """``count`` tools of ``tenant`` that the search ``found`` did not return."""
    returned = {t["id"] for t in found["tools"]}
    return [t for t in tools_of(catalog, tenant) if t not in returned][:count]


def ids(found: dict[str, Any]) -> list[str]:
    return [t["id"] for t in found["tools"]]


# --- brief -------------------------------------------------------------------------------------------


def test_a_brief_search_returns_each_tool_as_only_its_id_callable_name_and_a_one_line_description(
        api: str, tenant_catalog: TenantCatalog) -> None:
    full = answer(api, tenant_catalog, top_k=8, format="mcp")
    brief = answer(api, tenant_catalog, top_k=8, format="mcp", brief=True)

    assert ids(brief) == ids(full)
    for short, whole in zip(brief["tools"], full["tools"], strict=True):
        assert set(short) - {"risk"} == {"id", "name", "description"}
        assert short["name"] == whole["definition"]["name"]
        line = short["description"]
        assert "\n" not in line and 0 < len(line) <= 160
        assert whole["definition"]["description"].startswith(line.removesuffix("…"))


def test_a_brief_answer_keeps_the_answers_other_keys(api: str, tenant_catalog: TenantCatalog) -> None:
    full = answer(api, tenant_catalog, top_k=5)
    brief = answer(api, tenant_catalog, top_k=5, brief=True)

    assert set(full) <= set(brief) and brief["brief"] is True
    assert brief["request_id"] != full["request_id"] and len(brief["request_id"]) == 32


def test_brief_names_are_the_asked_formats_callable_names_whatever_the_format(
        api: str, tenant_catalog: TenantCatalog) -> None:
    full = answer(api, tenant_catalog, top_k=8, format="openai")
    brief = answer(api, tenant_catalog, top_k=8, format="openai", brief=True)

    assert [t["name"] for t in brief["tools"]] == [t["definition"]["function"]["name"] for t in full["tools"]]


def test_the_token_budget_counts_the_brief_entries_so_the_same_budget_holds_more_tools(
        api: str, tenant_catalog: TenantCatalog) -> None:
    from toolsift.search.definitions import TokenCounter

    full = answer(api, tenant_catalog, top_k=10)
    budget = full["tools"][0]["tokens"] + full["tools"][1]["tokens"]
    brief = answer(api, tenant_catalog, top_k=10, brief=True, token_budget=budget)

    counter = TokenCounter()
    counted = [counter.count({k: t[k] for k in ("id", "name", "description")}) for t in brief["tools"]]
    assert len(brief["tools"]) > 2 and ids(brief) == ids(full)[:len(brief["tools"])]
    assert brief["total_tokens"] == sum(counted) <= budget


# --- pinned ------------------------------------------------------------------------------------------


def test_pinned_tools_come_first_in_the_order_given_and_the_search_results_follow(
        api: str, tenant_catalog: TenantCatalog) -> None:
    plain = answer(api, tenant_catalog, top_k=5)
    first, second = not_found_by(plain, tenant_catalog, "acme", 2)

    pinned = answer(api, tenant_catalog, top_k=5, pinned=[second, first])

    assert ids(pinned) == [second, first, *ids(plain)]
    assert pinned["pinned"] == [second, first] and pinned["pinned_over_budget"] is False
    assert [t.get("pinned", False) for t in pinned["tools"]] == [True, True] + [False] * len(plain["tools"])
    assert pinned["tools"][0]["score"] is None and pinned["tools"][0]["definition"]["id"] == second
    assert [t["rank"] for t in pinned["tools"]] == list(range(1, len(pinned["tools"]) + 1))


def test_a_pinned_tool_the_search_also_finds_is_returned_once_in_its_pinned_place(
        api: str, tenant_catalog: TenantCatalog) -> None:
    plain = answer(api, tenant_catalog, top_k=5)
    third = ids(plain)[2]

    pinned = answer(api, tenant_catalog, top_k=5, pinned=[third])

    assert ids(pinned) == [third, *[i for i in ids(plain) if i != third]]
    assert pinned["tools"][0]["pinned"] is True and pinned["tools"][0]["score"] == plain["tools"][2]["score"]


def test_a_repeated_pinned_id_is_returned_once(api: str, tenant_catalog: TenantCatalog) -> None:
    plain = answer(api, tenant_catalog, top_k=3)
    [extra] = not_found_by(plain, tenant_catalog, "acme", 1)

    pinned = answer(api, tenant_catalog, top_k=3, pinned=[extra, extra])

    assert ids(pinned) == [extra, *ids(plain)] and pinned["pinned"] == [extra]


def test_pinned_tools_take_no_place_from_top_k_but_count_against_max_results(
        api: str, tenant_catalog: TenantCatalog) -> None:
    plain = answer(api, tenant_catalog, top_k=5)
    extra = not_found_by(plain, tenant_catalog, "acme", 2)

    uncapped = answer(api, tenant_catalog, top_k=5, pinned=extra)
    capped = answer(api, tenant_catalog, top_k=5, pinned=extra, max_results=4)

    assert len(uncapped["tools"]) == 2 + len(plain["tools"])
    assert ids(capped) == [*extra, *ids(plain)[:2]]
    assert capped["truncated_by"] == "max_results" and capped["pinned_over_budget"] is False


def test_pinned_tools_count_against_the_token_budget_and_the_search_fits_in_what_they_leave(
        api: str, tenant_catalog: TenantCatalog) -> None:
    plain = answer(api, tenant_catalog, top_k=5)
    [extra] = not_found_by(plain, tenant_catalog, "acme", 1)
    alone = answer(api, tenant_catalog, top_k=5, pinned=[extra], max_results=1)
    budget = alone["tools"][0]["tokens"] + plain["tools"][0]["tokens"]

    fitted = answer(api, tenant_catalog, top_k=5, pinned=[extra], token_budget=budget)

    assert ids(fitted) == [extra, ids(plain)[0]]
    assert fitted["truncated_by"] == "token_budget" and fitted["total_tokens"] <= budget


def test_pinned_tools_alone_over_max_results_or_the_budget_are_all_returned_and_the_answer_says_so(
        api: str, tenant_catalog: TenantCatalog) -> None:
    plain = answer(api, tenant_catalog, top_k=5)
    extra = not_found_by(plain, tenant_catalog, "acme", 3)

    over_count = answer(api, tenant_catalog, top_k=5, pinned=extra, max_results=2)
    over_tokens = answer(api, tenant_catalog, top_k=5, pinned=extra, token_budget=1)

    for over in (over_count, over_tokens):
        assert ids(over) == extra and over["pinned_over_budget"] is True
        assert over["dropped"] == len(plain["tools"])
    assert over_tokens["total_tokens"] > 1


def test_pinned_tools_are_returned_whatever_the_filters_say(api: str, tenant_catalog: TenantCatalog) -> None:
    plain = answer(api, tenant_catalog, top_k=5)
    server = plain["tools"][0]["server"]
    other = next(t for t in tools_of(tenant_catalog, "acme")
                 if httpx.get(f"{api}/v1/tools/{t}", headers=tenant_catalog.header("acme")).json()["server"] != server)

    filtered = answer(api, tenant_catalog, top_k=5, filters={"servers": [server]}, pinned=[other])

    assert ids(filtered)[0] == other and {t["server"] for t in filtered["tools"][1:]} == {server}


def test_a_public_tool_may_be_pinned_by_any_tenant(api: str, tenant_catalog: TenantCatalog) -> None:
    public = tools_of(tenant_catalog, "")[0]

    for key in ("acme", "globex"):
        assert ids(answer(api, tenant_catalog, key, top_k=3, pinned=[public]))[0] == public


@pytest.mark.parametrize("what", ["another-tenants-tool", "no-such-tool", "an-agent"])
def test_pinning_what_is_not_a_tool_of_the_callers_tenant_is_a_400_naming_its_place_in_pinned(
        api: str, tenant_catalog: TenantCatalog, what: str) -> None:
    own = tools_of(tenant_catalog, "acme")[0]
    wrong = {"another-tenants-tool": tools_of(tenant_catalog, "globex")[0], "no-such-tool": "no/such-tool",
             "an-agent": next(d for d, o in tenant_catalog.owner.items() if o == "acme" and d.startswith("agent:"))}[what]

    refused = search(api, tenant_catalog, top_k=3, pinned=[own, wrong])

    assert refused.status_code == 400
    assert refused.json() == {"error": f"pinned.1: no tool {wrong!r}", "code": "bad_query", "field": "pinned.1"}


def test_more_than_fifty_pinned_tools_is_a_400_naming_pinned(api: str, tenant_catalog: TenantCatalog) -> None:
    refused = search(api, tenant_catalog, pinned=[f"tool-{n}" for n in range(51)])

    assert refused.status_code == 400 and refused.json()["field"] == "pinned"


def test_brief_and_pinned_together_give_brief_entries_with_the_pinned_ones_first(
        api: str, tenant_catalog: TenantCatalog) -> None:
    plain = answer(api, tenant_catalog, top_k=4)
    extra = not_found_by(plain, tenant_catalog, "acme", 2)

    both = answer(api, tenant_catalog, top_k=4, brief=True, pinned=extra, max_results=3)

    assert ids(both) == [*extra, ids(plain)[0]] and both["pinned"] == extra
    assert all(set(t) - {"risk"} == {"id", "name", "description"} for t in both["tools"])


def test_feedback_on_a_pinned_tool_is_accepted_as_it_was_handed_over(api: str, tenant_catalog: TenantCatalog) -> None:
    plain = answer(api, tenant_catalog, top_k=3)
    [extra] = not_found_by(plain, tenant_catalog, "acme", 1)
    pinned = answer(api, tenant_catalog, top_k=3, pinned=[extra])

    stored = httpx.post(f"{api}/v1/feedback", headers=tenant_catalog.header("acme"), timeout=60, json={
        "request_id": pinned["request_id"], "calls": [{"tool_id": extra, "called": True, "success": True}]})

    assert stored.status_code == 200 and stored.json()["stored"] == 1
