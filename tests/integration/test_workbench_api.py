"""The workbench's API on a real node: explained search, live re-ranking, sets, judgments, query sets,
weights saved and pushed, metrics — all over HTTP against ``toolsift serve ui``'s app."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from toolsift.errors import ERROR_TABLE, CatalogError
from tests.environment import subprocess_environment

pytestmark = pytest.mark.integration

QUERY = "convert a word document to pdf"


def post(url: str, path: str, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
    answer = httpx.post(f"{url}{path}", json=body, timeout=120)
    assert answer.status_code == status, answer.text
    return dict(answer.json())


def get(url: str, path: str) -> dict[str, Any]:
    answer = httpx.get(f"{url}{path}", timeout=60)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


#: The multi-need ranking without its server term and prerequisites: each tool by its best need score.
NEEDS_ONLY = {"planner": {"server_weight": 0.0, "prerequisite_tools": 0}}


def dense_only(config: dict[str, Any], field: str = "description") -> dict[str, Any]:
    """A proposal that keeps only one dense field weight (the BM25 weights at 0)."""
    weights = config["weights"]["weights"]
    fields = {kind: {f: (1.0 if kind == "dense" and f == field else 0.0) for f in weights["features"]}
              for kind in weights["kinds"]}
    return {"weights": {"field_weights": fields}}


def test_the_page_and_its_assets_are_served_from_the_package(workbench_url: str) -> None:
    page = httpx.get(workbench_url + "/")
    assert page.status_code == 200 and "toolsift" in page.text and "/static/app.js" in page.text
    for asset in ("/static/app.js", "/static/app.css", "/static/vendor/uPlot.iife.min.js"):
        assert httpx.get(workbench_url + asset).status_code == 200


def test_the_config_describes_the_index_ranking_and_the_sliders(workbench_url: str) -> None:
    config = get(workbench_url, "/api/config")
    assert config["index"] == "toolsift-wbtest-catalog" and config["tools"] > 50
    assert config["weights_mode"] == "fixed" and config["weights_version"] is None
    # an index of servers: its searches are ranked by the multi-need search, whose β and M are sliders too
    assert config["ranking"] == "multi-need" and config["ranker"].startswith("multi-need")
    assert config["weights"]["planner"] == {"server_weight": 0.4, "prerequisite_tools": 1, "lexical_weight": 0.9}
    for name, (low, high, _) in config["planner_ranges"].items():
        assert low <= config["weights"]["planner"][name] <= high
    weights = config["weights"]["weights"]
    assert weights["kinds"] == ["bm25", "dense"] and weights["normalise"] is True
    for kind in weights["kinds"]:
        for name, (low, high, _) in config["ranges"][kind].items():
            value = weights["field_weights"][kind].get(name, weights.get(name, {}).get(kind) if name in
                                                       ("tau", "w_req", "w_opt") else None)
            assert low <= value <= high


def test_a_search_explains_every_result_and_is_logged_as_ui(workbench_url: str, client: Any,
                                                            workbench_settings: Any) -> None:
    from toolsift.search.planner import LEXICAL_NEED

    answer = post(workbench_url, "/api/search", {"query": QUERY, "top_k": 5})
    assert answer["structured_query"]["tool_needs"][0]["user_intent"] == QUERY
    assert answer["rewrite_source"] == "fallback" and answer["candidates"] >= 5
    current = answer["current"]
    assert [t["rank"] for t in current] == [1, 2, 3, 4, 5]
    assert current[0]["name"] == "convert_to_pdf" and current[0]["agent"] == "Office-Word-MCP-Server"
    assert answer["ranking"] == "multi-need" and answer["texts"] == [QUERY, LEXICAL_NEED]  # the request, its words
    for tool in current:  # each result by the terms that ranked it: its need and its server
        found = tool["explanation"]
        assert found["kind"] == "multi-need" and found["need"]["text"] in answer["texts"]
        assert set(tool["contributions"]) == {"need", "server"}
        assert found["need"]["score"] + found["server"]["score"] == pytest.approx(tool["score"], abs=1e-3)
        assert tool["first_stage_rank"] >= 1
    # untouched sliders: the proposed list is the current one
    assert [t["id"] for t in answer["proposed"]] == [t["id"] for t in current]
    client.indices.refresh(index=workbench_settings.query_log_index)
    logged = client.search(index=workbench_settings.query_log_index, body={
        "query": {"bool": {"filter": [{"term": {"source": "ui"}}, {"term": {"request.raw": QUERY}}]}}})
    hit = logged["hits"]["hits"][0]["_source"]
    assert hit["tool_ids"] == [t["id"] for t in current] and hit["latency_ms"] > 0


def test_moving_a_slider_reranks_the_same_candidates(workbench_url: str) -> None:
    config = get(workbench_url, "/api/config")
    answer = post(workbench_url, "/api/search", {"query": QUERY, "top_k": 10})
    servers_first = {"planner": {"server_weight": 2.0}}
    moved = post(workbench_url, "/api/rerank", {"search_id": answer["search_id"], "proposal": servers_first})["proposed"]
    scores = [t["score"] for t in moved]
    assert scores == sorted(scores, reverse=True)
    for tool in moved:  # each score is its need plus the proposed β × its server's score
        found = tool["explanation"]
        assert tool["score"] == pytest.approx(found["need"]["score"] + found["server"]["score"], abs=1e-3)
    current = {t["id"]: t["explanation"] for t in answer["current"]}
    assert any(t["explanation"]["server"]["score"] == pytest.approx(5 * current[t["id"]]["server"]["score"], abs=1e-3)
               for t in moved if t["id"] in current)  # β 0.4 → 2.0
    assert [t["id"] for t in moved] != [t["id"] for t in answer["current"]]
    # the same proposal in the search request gives the same proposed list
    again = post(workbench_url, "/api/search", {"query": QUERY, "top_k": 10, "proposal": servers_first})
    assert [t["id"] for t in again["proposed"]] == [t["id"] for t in moved]
    # field weights do not rank a multi-need search: moving them leaves it as it is
    fields = post(workbench_url, "/api/rerank", {"search_id": answer["search_id"], "proposal": dense_only(config)})
    assert [t["id"] for t in fields["proposed"]] == [t["id"] for t in answer["current"]]


def test_a_proposed_lambda_ranks_as_a_search_with_that_lexical_weight(
    workbench_url: str, client: Any, workbench_settings: Any, embedder: Any
) -> None:
    from toolsift.search import Searcher
    from toolsift.search.planner import LEXICAL_NEED

    request = "search the web for news about electric cars and save a summary to a file"
    answer = post(workbench_url, "/api/search", {"query": request, "top_k": 10,
                                                 "proposal": {"planner": {"lexical_weight": 0.0}}})
    def by_words(tools: list[dict[str, Any]]) -> list[str]:
        return [t["id"] for t in tools if (t["explanation"].get("need") or {}).get("text") == LEXICAL_NEED]

    assert by_words(answer["current"])  # λ 0.9: the words rank a tool (DuckDuckGo's web search)
    assert not by_words(answer["proposed"])
    without_words = Searcher(client, workbench_settings.with_overrides(lexical_weight=0.0), embedder)
    assert [t["id"] for t in answer["proposed"]] == [t.doc_id for t in without_words.search(request, top_k=10).tools]


def test_train_planner_chooses_lambda_on_half_a_reports_half_b_and_pushes_what_searches_then_use(
    workbench_url: str, client: Any, workbench_settings: Any, embedder: Any, datasets: Path, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from toolsift.cli.main import cli
    from toolsift.ranker.artifact import load_artifact
    from toolsift.search import Searcher

    answer = CliRunner().invoke(cli, [
        "--opensearch-url", workbench_settings.opensearch_url, "--index", workbench_settings.index, "train", "planner",
        str(datasets / "livemcpbench"), "--lexical-weights", "0,0.9,2", "--out", str(tmp_path), "--push", "--json"])
    assert answer.exit_code == 0, answer.output
    found = json.loads(answer.stdout)
    try:
        points = {p["params"]["lexical_weight"]: p for p in found["points"]}
        assert sorted(points) == [0.0, 0.9, 2.0] and found["queries"]["half_a"] >= found["queries"]["half_b"] > 0
        assert found["current"] == points[0.9]  # the index plans at the default λ 0.9 until now
        best = max(p["half_a"]["ndcg@10"] for p in points.values())
        chosen = found["chosen"]["params"]["lexical_weight"]
        assert points[chosen]["half_a"]["ndcg@10"] == best  # chosen on half A; half B only reported
        assert load_artifact(Path(found["artifact"])).config["planner"]["lexical_weight"] == chosen
        # pushed: a searcher that knows nothing of the calibration plans with the chosen λ
        assert Searcher(client, workbench_settings, embedder).planner.lexical_weight == chosen
        assert found["pushed"]["version"] == found["version"]
    finally:
        post(workbench_url, "/api/weights/clear", {})


def test_the_precise_set_of_a_search_comes_from_its_index(workbench_url: str) -> None:
    answer = post(workbench_url, "/api/search", {"query": QUERY, "top_k": 10})
    tool_set = post(workbench_url, "/api/set", {"search_id": answer["search_id"]})
    assert 1 <= len(tool_set["tools"]) <= 3 and tool_set["needs"] == [QUERY]
    assert tool_set["tools"][0]["tool_id"] == "office-word-mcp-server/convert_to_pdf"
    assert "cold start" in tool_set["size_rule"]


def test_a_judgment_is_stored_replaced_and_forgotten(workbench_url: str, client: Any, workbench_settings: Any) -> None:
    index = workbench_settings.judgments_index
    body = {"query": QUERY, "tool_id": "office-word-mcp-server/convert_to_pdf", "relevant": True,
            "tool_name": "convert_to_pdf", "agent_id": "office-word-mcp-server"}
    post(workbench_url, "/api/judgments", body)
    post(workbench_url, "/api/judgments", {**body, "relevant": False})
    found = client.search(index=index, body={"query": {"term": {"tool_id": body["tool_id"]}}})["hits"]["hits"]
    assert len(found) == 1 and found[0]["_source"]["relevant"] is False and found[0]["_source"]["grade"] == 0
    assert found[0]["_source"]["index"] == workbench_settings.index and found[0]["_source"]["source"] == "ui"
    # a search shows the verdict on the judged result
    answer = post(workbench_url, "/api/search", {"query": QUERY, "top_k": 3})
    assert {t["id"]: t["judged"] for t in answer["current"]}[body["tool_id"]] is False
    assert post(workbench_url, "/api/judgments", {**body, "relevant": None}) == {"deleted": True}
    assert client.count(index=index, body={"query": {"term": {"tool_id": body["tool_id"]}}})["count"] == 0


def test_query_sets_from_a_benchmark_and_from_judgments_measure_a_weight_change(
    workbench_url: str, datasets: Path
) -> None:
    imported = post(workbench_url, "/api/querysets/import", {"path": str(datasets / "livemcpbench"), "name": "lmb"})
    assert imported["size"] > 5 and imported["notes"]["relevant_tools_not_in_index"] > 0
    config = get(workbench_url, "/api/config")
    assert "lmb" in [s["name"] for s in config["query_sets"]]
    same = post(workbench_url, "/api/compare", {"query_set": "lmb"})
    assert same["current"] == same["proposed"] and 0 < same["current"]["ndcg@10"] <= 1
    changed = post(workbench_url, "/api/compare", {"query_set": "lmb", "proposal": NEEDS_ONLY})
    assert changed["current"] == same["current"] and changed["proposed"]["ndcg@10"] != same["current"]["ndcg@10"]
    assert changed["delta"]["ndcg@10"] == pytest.approx(changed["proposed"]["ndcg@10"] - changed["current"]["ndcg@10"],
                                                         abs=1e-3)
    assert changed["movers"] and all(m["delta"] != 0 for m in changed["movers"])

    post(workbench_url, "/api/judgments", {"query": QUERY, "tool_id": "office-word-mcp-server/convert_to_pdf",
                                           "relevant": True})
    judged = post(workbench_url, "/api/querysets/from-judgments", {"name": "judged"})
    assert judged["origin"] == "judgments" and judged["size"] >= 1
    assert post(workbench_url, "/api/compare", {"query_set": "judged"})["current"]["ndcg@10"] > 0


def test_the_ndcg_delta_equals_the_one_ir_measures_gives_for_the_same_rankings(
    workbench_url: str, client: Any, workbench_settings: Any, datasets: Path, tmp_path: Path
) -> None:
    import json

    import ir_measures
    from ir_measures import Qrel, ScoredDoc, nDCG

    # LiveMCPBench's tasks whose question /api/search accepts (one is an 18 k-character base64 image)
    folder = tmp_path / "livemcpbench"
    folder.mkdir()
    (folder / "tools.json").write_bytes((datasets / "livemcpbench" / "tools.json").read_bytes())
    tasks = json.loads((datasets / "livemcpbench" / "all_annotations.json").read_text(encoding="utf-8"))
    (folder / "all_annotations.json").write_text(json.dumps([t for t in tasks if len(t["Question"]) <= 4000]),
                                                 encoding="utf-8")
    post(workbench_url, "/api/querysets/import", {"path": str(folder), "name": "lmb-delta"})
    proposal = NEEDS_ONLY
    compared = post(workbench_url, "/api/compare", {"query_set": "lmb-delta", "proposal": proposal})
    # independently: the stored query set, each query's two rankings as /api/search shows them, ir-measures
    client.indices.refresh(index=workbench_settings.query_sets_index)
    stored = client.search(index=workbench_settings.query_sets_index,
                           body={"query": {"term": {"name": "lmb-delta"}}})["hits"]["hits"][0]["_source"]
    cases = [c for c in stored["queries"]["cases"] if c["relevant"]]
    qrels = [Qrel(c["id"], tool, int(grade)) for c in cases for tool, grade in c["relevant"].items()]
    runs: dict[str, list[ScoredDoc]] = {"current": [], "proposed": []}
    for case in cases:
        answer = post(workbench_url, "/api/search", {"query": case["text"], "top_k": 10, "proposal": proposal})
        for side, run in runs.items():
            run += [ScoredDoc(case["id"], tool["id"], float(10 - rank)) for rank, tool in enumerate(answer[side])]
    ndcg = {side: ir_measures.calc_aggregate([nDCG @ 10], qrels, run)[nDCG @ 10] for side, run in runs.items()}

    assert compared["queries"] == len(cases) > 50
    assert compared["current"]["ndcg@10"] == pytest.approx(ndcg["current"], abs=1e-4)
    assert compared["proposed"]["ndcg@10"] == pytest.approx(ndcg["proposed"], abs=1e-4)
    assert compared["delta"]["ndcg@10"] == pytest.approx(ndcg["proposed"] - ndcg["current"], abs=2e-4)
    assert abs(compared["delta"]["ndcg@10"]) > 0.01  # the proposal really moves the set


def test_saved_weights_are_versioned_and_pushing_them_makes_every_searcher_use_them(
    workbench_url: str, client: Any, workbench_settings: Any, embedder: Any
) -> None:
    from toolsift.search import Searcher

    config = get(workbench_url, "/api/config")
    proposal = {**dense_only(config), "planner": {"server_weight": 1.0}}
    first = post(workbench_url, "/api/weights/save", {"name": "tuned", "proposal": proposal})
    second = post(workbench_url, "/api/weights/save", {"name": "tuned", "proposal": proposal})
    assert (first["version"], second["version"]) == ("tuned/v001", "tuned/v002") and Path(second["path"]).is_file()

    expected = post(workbench_url, "/api/search", {"query": QUERY, "top_k": 10, "proposal": proposal})["proposed"]
    pushed = post(workbench_url, "/api/weights/push", {"path": second["path"]})
    try:
        assert pushed["version"] == "tuned/v002" and pushed["pipelines"]
        described = get(workbench_url, "/api/config")
        assert described["weights_mode"] == "tuned" and described["weights_version"] == "tuned/v002"
        assert described["weights"]["planner"] == {"server_weight": 1.0, "prerequisite_tools": 1, "lexical_weight": 0.9}
        # a searcher that knows nothing of the workbench (the CLI's) ranks with the pushed weights
        searcher = Searcher(client, workbench_settings, embedder)
        assert searcher.weights_version == "tuned/v002"
        assert [t.doc_id for t in searcher.search(QUERY, top_k=10).tools] == [t["id"] for t in expected]
        # the plain hybrid pipeline now weighs the first stage's fields by the pushed weights
        from toolsift.plugin_scripts.pipelines import layout_weights
        from toolsift.ranker.artifact import load_artifact

        pid = f"{workbench_settings.index}-hybrid-minmax"
        stored = client.search_pipeline.get(id=pid)[pid]["phase_results_processors"][0]["normalization-processor"]
        expected_weights = layout_weights("hybrid-minmax", load_artifact(second["path"]).weights.first_stage_weights())
        assert stored["combination"]["parameters"]["weights"] == expected_weights
        # and `toolsift index status` names the pushed version
        status = _index_status(workbench_settings)
        assert status["weights"] == "tuned/v002"
    finally:
        cleared = post(workbench_url, "/api/weights/clear", {})
    assert cleared["weights_version"] is None
    assert Searcher(client, workbench_settings, embedder).weights_version is None


def _index_status(settings: Any) -> dict[str, Any]:
    import json

    from click.testing import CliRunner

    from toolsift.cli.main import cli
    from toolsift.config import get_settings

    env = {"TOOLSIFT_OPENSEARCH_URL": settings.effective_url, "TOOLSIFT_INDEX": settings.index}
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(cli, ["index", "status", "--json"], env=env)
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.output))


def test_bad_input_gets_a_clear_error_naming_what_is_wrong(workbench_url: str, tmp_path: Path) -> None:
    assert "type a request" in post(workbench_url, "/api/search", {"query": "   "}, 400)["error"]
    assert "no longer kept" in post(workbench_url, "/api/rerank", {"search_id": "nope"}, 400)["error"]
    answer = post(workbench_url, "/api/search", {"query": QUERY, "top_k": 3})
    bad = {"search_id": answer["search_id"], "proposal": {"weights": {"w_req": {"bm25": -1, "dense": 0}}}}
    assert "must not be negative" in post(workbench_url, "/api/rerank", bad, 400)["error"]
    assert "no query set 'missing'" in post(workbench_url, "/api/compare", {"query_set": "missing"}, 400)["error"]
    not_a_benchmark = post(workbench_url, "/api/querysets/import", {"path": str(tmp_path)},
                           ERROR_TABLE[CatalogError].http_status)  # one table for every edge: 422 bad_catalog
    assert str(tmp_path) in not_a_benchmark["error"] and not_a_benchmark["code"] == "bad_catalog"
    assert "weights name" in post(workbench_url, "/api/weights/save", {"name": "no spaces"}, 400)["error"]
    outside = httpx.post(workbench_url + "/api/search", json={"query": QUERY, "top_k": 0})
    assert (outside.status_code, outside.json()["code"], outside.json()["field"]) == (400, "bad_request", "top_k")
    assert "interval" in httpx.get(workbench_url + "/api/metrics/latency?interval=forever").json()["error"]


def test_the_metrics_come_from_the_query_log_and_the_recorded_eval_runs(
    workbench_url: str, client: Any, workbench_settings: Any
) -> None:
    from toolsift.evaluation.evalruns import EvalRunLog, EvalRunRow

    post(workbench_url, "/api/search", {"query": "read a csv file", "top_k": 5})
    latency = get(workbench_url, "/api/metrics/latency?interval=1m&since=now-1h")
    assert latency["searches"] >= 1 and latency["by_source"].get("ui", 0) >= 1
    assert 0 < latency["overall"]["p50"] <= latency["overall"]["p99"] and latency["buckets"]

    log = EvalRunLog.open(client, workbench_settings)
    for ndcg in (0.41, 0.44):
        log.record([EvalRunRow(query_set="livemcpbench", dataset_path="x", index="i", kind="tool", method="multi-field",
                               retriever="hybrid", row="multi-field · hybrid", main=True, queries=94,
                               metrics={"ndcg@10": ndcg, "recall@10": 0.5})])
    runs = get(workbench_url, "/api/metrics/evalruns?query_set=livemcpbench")
    points = runs["series"]["livemcpbench"]["multi-field · hybrid"]
    assert [p["ndcg_10"] for p in points] == [0.41, 0.44] and runs["runs"] == 2


# --- one ranking: what the workbench shows and tunes is what the search API and MCP return ----------------

#: Requests the multi-need search answers on the slice: one whose best tool brings a prerequisite.
PARITY_REQUESTS = ("find parking near the Forbidden City", "search the web for recent news about electric cars",
                   QUERY)


@pytest.fixture(scope="module")
def search_api(client: Any, workbench_settings: Any, embedder: Any, serve_app_for_session: Any) -> str:
    """``toolsift serve api``'s app over the workbench's index and settings, looking for pushed weights
    before every search (``weights_check_interval`` 0, so no test waits for it)."""
    from toolsift.api.app import create_app
    from toolsift.api.search_service import ToolSearchService

    def service(settings: Any) -> ToolSearchService:
        built = ToolSearchService(client, settings, embedder)
        built.warm()
        return built

    settings = workbench_settings.with_overrides(weights_check_interval=0.0)
    return str(serve_app_for_session(create_app(settings, service_factory=service)).url)


def _mcp_rankings(settings: Any, queries: tuple[str, ...]) -> dict[str, list[str]]:
    """Each query's tool ids from ``search_tools`` of ``toolsift serve mcp`` (stdio, the SDK's client)."""
    import json
    import sys

    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = subprocess_environment()
    env.update({"TOOLSIFT_OPENSEARCH_URL": settings.effective_url, "TOOLSIFT_INDEX": settings.index,
                "TOOLSIFT_LLM_CACHE_DIR": str(settings.llm_cache_dir), "TOOLSIFT_QUERY_LOG": "false"})
    command = str(Path(sys.executable).with_name("toolsift"))
    found: dict[str, list[str]] = {}

    async def session() -> None:
        params = StdioServerParameters(command=command, args=["serve", "mcp"], env=env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as mcp:
            await mcp.initialize()
            for query in queries:
                answer = await mcp.call_tool("search_tools", {"query": query, "top_k": 10})
                assert not answer.is_error, answer.content
                data = answer.structured_content or json.loads(answer.content[0].text)
                data = data.get("result", data)
                found[query] = [t["id"] for t in data["tools"]]

    anyio.run(session)
    return found


def _api_ids(url: str, query: str) -> list[str]:
    return [t["id"] for t in post(url, "/v1/search", {"query": query, "top_k": 10})["tools"]]


def _bench_ids(url: str, query: str) -> list[str]:
    return [t["id"] for t in post(url, "/api/search", {"query": query, "top_k": 10})["current"]]


def test_the_workbench_ranks_as_the_search_api_and_mcp_and_a_pushed_change_moves_the_api(
    workbench_url: str, search_api: str, workbench_settings: Any
) -> None:
    via_mcp = _mcp_rankings(workbench_settings, PARITY_REQUESTS)
    for query in PARITY_REQUESTS:  # the same request, the same settings: one ranking, ids and order
        assert _bench_ids(workbench_url, query) == _api_ids(search_api, query) == via_mcp[query], query

    query = PARITY_REQUESTS[0]
    before = _api_ids(search_api, query)
    proposed = [t["id"] for t in post(workbench_url, "/api/search",
                                      {"query": query, "top_k": 10, "proposal": NEEDS_ONLY})["proposed"]]
    assert proposed != before  # no server term, no prerequisite placed after the best tool
    saved = post(workbench_url, "/api/weights/save", {"name": "parity", "proposal": NEEDS_ONLY})
    post(workbench_url, "/api/weights/push", {"path": saved["path"]})
    try:
        # the API (running since before the push) now answers what the workbench proposed, and so does the workbench
        assert _api_ids(search_api, query) == proposed == _bench_ids(workbench_url, query)
    finally:
        post(workbench_url, "/api/weights/clear", {})
    assert _api_ids(search_api, query) == before == _bench_ids(workbench_url, query)
