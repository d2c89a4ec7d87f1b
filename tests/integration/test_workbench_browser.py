"""The workbench in a real browser: headless Chromium (Debian's ``chromium``, driven by Playwright with
``executable_path``) against ``toolsift serve ui``'s app on a real node.

Screenshots of every step are written to ``build/screenshots/`` (``TOOLSIFT_SCREENSHOTS`` to move them).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.integration

QUERY = "convert a word document to pdf"
SHOTS = Path(os.environ.get("TOOLSIFT_SCREENSHOTS", Path(__file__).resolve().parents[2] / "build" / "screenshots"))


def _chromium() -> str | None:
    explicit = os.environ.get("TOOLSIFT_CHROMIUM")
    return explicit or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    executable = _chromium()
    if executable is None:
        pytest.skip("browser tests need Chromium: `apt-get install chromium` (make test installs it)")
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1440, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(60_000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        yield page
        browser.close()
        assert not errors, f"JavaScript errors on the page: {errors}"


def ids(page: Any, column: str) -> list[str]:
    return [str(x) for x in page.locator(f"#{column} .result").evaluate_all("(els) => els.map((e) => e.dataset.id)")]


def test_searching_shows_the_rewritten_query_and_explained_results(page: Any, workbench_url: str) -> None:
    page.goto(workbench_url + "/")
    page.wait_for_selector("#sliders input[type=range]")
    assert "toolsift-wbtest-catalog" in page.inner_text("#status")
    page.fill("#query", QUERY)
    page.click("#search-button")
    page.wait_for_selector("#current .result")
    assert QUERY in page.inner_text("#structured")
    first = page.locator("#current .result").first
    assert first.get_attribute("data-id") == "office-word-mcp-server/convert_to_pdf"
    assert "Office-Word-MCP-Server" in first.inner_text()
    # the index holds servers: the multi-need search ranks it, as it ranks the API's and MCP's answers
    assert "multi-need" in page.inner_text("#planned-texts")
    assert first.locator(".bars .seg-need").count() == 1 and first.locator(".bars .seg-server").count() == 1
    assert first.locator(".bars .seg-description").count() == 0  # no bar for a term that did not count
    page.wait_for_selector("#current .chip.set")  # PTR's set marks its members
    first.locator(".name").click()
    table = first.locator(".explain table")
    assert table.is_visible()
    text = first.locator(".explain").inner_text()
    assert "need" in text and f"“{QUERY}”" in text and "β × the score of Office-Word-MCP-Server" in text
    page.screenshot(path=str(SHOTS / "01-search-explained.png"), full_page=True)


def test_moving_a_slider_changes_the_proposed_order_and_the_ndcg_delta(page: Any, workbench_url: str,
                                                                       datasets: Path) -> None:
    httpx.post(workbench_url + "/api/querysets/import", json={"path": str(datasets / "livemcpbench"),
                                                              "name": "livemcpbench-slice"}, timeout=120)
    page.goto(workbench_url + "/")
    page.wait_for_selector("#sliders input[type=range]")
    page.fill("#query", QUERY)
    page.click("#search-button")
    page.wait_for_selector("#proposed .result")
    current = ids(page, "current")
    assert ids(page, "proposed") == current
    page.select_option("#compare-set", "livemcpbench-slice")
    page.wait_for_selector("#ndcg-delta")
    assert page.inner_text("#ndcg-delta") == "(+0.0000)"
    before = page.inner_text("#ndcg-current")

    # the multi-need search's own sliders: the server term at its most, no prerequisites — the order must
    # change, and the set's NDCG@10 with it
    for name, value in (("server_weight", "e.max"), ("prerequisite_tools", "0")):
        page.locator(f"#w-x-{name}").evaluate(f"(e) => {{ e.value = {value}; e.dispatchEvent(new Event('input')); }}")
    page.wait_for_function("(before) => [...document.querySelectorAll('#proposed .result')]"
                           ".map((e) => e.dataset.id).join('|') !== before.join('|')", arg=current)
    assert ids(page, "proposed") != current
    assert ids(page, "current") == current  # the current list stays as the index ranks it
    assert page.locator("#proposed .move.up, #proposed .move.down, #proposed .move.new").count() > 0
    page.wait_for_function("() => document.querySelector('#ndcg-delta')?.textContent !== '(+0.0000)'")
    assert page.inner_text("#ndcg-current") == before
    assert page.locator("#sliders .slider.changed").count() >= 2
    page.screenshot(path=str(SHOTS / "02-slider-reranked.png"), full_page=True)


def test_a_judgment_made_in_the_page_is_in_the_index(page: Any, workbench_url: str, client: Any,
                                                     workbench_settings: Any) -> None:
    page.goto(workbench_url + "/")
    page.wait_for_selector("#sliders input[type=range]")
    page.fill("#query", QUERY)
    page.click("#search-button")
    page.wait_for_selector("#current .result")
    second = page.locator("#current .result").nth(1)
    tool_id = second.get_attribute("data-id")
    second.locator(".judge .yes").click()
    page.wait_for_selector(f"#current .result[data-id='{tool_id}'] .judge .yes.on")
    found = client.search(index=workbench_settings.judgments_index, body={"query": {"bool": {"filter": [
        {"term": {"tool_id": tool_id}}, {"term": {"query.raw": QUERY}}]}}})["hits"]["hits"]
    assert len(found) == 1 and found[0]["_source"]["relevant"] is True
    page.screenshot(path=str(SHOTS / "03-judged.png"), full_page=True)

    page.click("#tab-judge")
    page.wait_for_selector("#judgments tbody tr")
    assert QUERY in page.inner_text("#judgments")
    page.fill("#judged-set-name", "judged-in-browser")
    page.click("#from-judgments-form button")
    page.wait_for_function("() => document.querySelector('#query-sets').textContent.includes('judged-in-browser')")
    page.screenshot(path=str(SHOTS / "04-judgments-and-query-sets.png"), full_page=True)


def test_the_metrics_page_plots_eval_runs_and_query_log_latency(page: Any, workbench_url: str, client: Any,
                                                                workbench_settings: Any) -> None:
    from toolsift.evaluation.evalruns import EvalRunLog, EvalRunRow

    log = EvalRunLog.open(client, workbench_settings)
    for ndcg, recall in ((0.52, 0.61), (0.55, 0.63), (0.58, 0.66)):
        log.record([EvalRunRow(query_set="browser-set", dataset_path="x", index="i", kind="tool", method="multi-field",
                               retriever="hybrid", row="multi-field · hybrid", main=True, queries=20,
                               metrics={"ndcg@10": ndcg, "recall@10": recall})])
    page.goto(workbench_url + "/")
    page.wait_for_selector("#sliders input[type=range]")
    page.click("#tab-metrics")
    page.wait_for_selector("#metric-set option[value='browser-set']", state="attached")
    page.select_option("#metric-set", "browser-set")
    page.wait_for_selector("#eval-chart canvas")
    assert page.locator("#eval-table tbody tr").count() >= 3
    page.select_option("#latency-interval", "1m")
    page.select_option("#latency-since", "now-1h")
    page.wait_for_selector("#latency-chart canvas")
    assert "logged searches" in page.inner_text("#latency-summary")
    page.screenshot(path=str(SHOTS / "05-metrics.png"), full_page=True)


# --- with API keys ---------------------------------------------------------------------------------------

SEARCH_KEY, ADMIN_KEY = "tsk_browser-search-key", "tsk_browser-admin-key"


@pytest.fixture(scope="module")
def keyed_workbench_url(client: Any, workbench_settings: Any, embedder: Any, serve_app_for_session: Any) -> str:
    """The same workbench with keys configured (a search key of tenant acme, an all-tenant admin key)."""
    from toolsift.access import ApiKey, KeyRing, hash_key
    from toolsift.workbench.app import create_app
    from toolsift.workbench.session import Workbench

    keys = KeyRing([ApiKey(name="acme", tenant="acme", role="search", sha256=hash_key(SEARCH_KEY)),
                    ApiKey(name="ops", tenant="*", role="admin", sha256=hash_key(ADMIN_KEY))])
    return str(serve_app_for_session(create_app(Workbench(client, workbench_settings, embedder), keys=keys)).url)


def test_with_keys_the_page_asks_for_the_key_once_keeps_it_for_the_tab_and_sends_it(
    page: Any, keyed_workbench_url: str
) -> None:
    prompts: list[str] = []
    answers = [SEARCH_KEY]

    def on_dialog(dialog: Any) -> None:
        prompts.append(dialog.message)
        dialog.accept(answers[0])

    page.on("dialog", on_dialog)
    try:
        page.goto(keyed_workbench_url + "/")
        page.wait_for_selector("#sliders input[type=range]")  # every /api call of the page load succeeded
        assert len(prompts) == 1 and "API key" in prompts[0]
        assert page.evaluate("() => sessionStorage.getItem('toolsift-workbench-key')") == SEARCH_KEY
        page.fill("#query", QUERY)
        page.click("#search-button")
        page.wait_for_selector("#current .result")
        # a write with a search key: refused (403) and said so, without asking for a key again
        refused = page.evaluate("() => api('/api/weights/clear', {}).then(() => 'done', (e) => e.message)")
        assert "needs an admin key" in refused and "needs an admin key" in page.inner_text("#error")
        assert len(prompts) == 1
        page.screenshot(path=str(SHOTS / "06-keys-search-key-write-refused.png"), full_page=True)

        # a stale or wrong key: the next 401 asks again, and the new key replaces it
        page.evaluate("() => sessionStorage.setItem('toolsift-workbench-key', 'tsk_revoked')")
        answers[0] = ADMIN_KEY
        page.reload()
        page.wait_for_selector("#sliders input[type=range]")
        assert len(prompts) == 2
        assert page.evaluate("() => sessionStorage.getItem('toolsift-workbench-key')") == ADMIN_KEY
        assert page.evaluate("() => api('/api/config').then((c) => c.caller.role)") == "admin"
    finally:
        page.remove_listener("dialog", on_dialog)
