"""The workbench's API tried as an attacker would, on a real node over real HTTP: anonymous and
search-key writes are refused and change nothing (no pipeline, weights file or judgment), a foreign
``Host`` is refused before the route runs, paths outside the roots get one answer whether or not
they exist, and every read runs in the caller's tenant."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from toolsift.access import ApiKey, KeyRing, hash_key

pytestmark = pytest.mark.integration

QUERY = "convert a word document to pdf"
WORD_TOOL = "office-word-mcp-server/convert_to_pdf"
#: The Word tool of the catalog ingested for tenant globex: its id scoped to globex.
GLOBEX_WORD_TOOL = f"@globex/{WORD_TOOL}"
SEARCH_KEY, GLOBEX_KEY, ADMIN_KEY = "tsk_acme-search-key", "tsk_globex-search-key", "tsk_ops-admin-key"
KEYS = KeyRing([ApiKey(name="acme", tenant="acme", role="search", sha256=hash_key(SEARCH_KEY)),
                ApiKey(name="globex", tenant="globex", role="search", sha256=hash_key(GLOBEX_KEY)),
                ApiKey(name="ops", tenant="*", role="admin", sha256=hash_key(ADMIN_KEY))])
WB_PREFIX = "toolsift-wbtest-"  # dropped with the session's workbench indices (tests/integration/conftest.py)


def call(url: str, path: str, body: dict[str, Any] | None = None, *, key: str | None = None,
         host: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    if host:
        headers["Host"] = host
    if body is None:
        return httpx.get(url + path, headers=headers, timeout=120)
    return httpx.post(url + path, json=body, headers=headers, timeout=120)


def ok(answer: httpx.Response) -> dict[str, Any]:
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


@pytest.fixture(scope="module")
def keyed(client: Any, workbench_settings: Any, embedder: Any, datasets: Path, serve_app_for_session: Any) -> str:
    """A workbench with keys over the session's slice; the benchmark data is its one extra root."""
    from toolsift.workbench.app import create_app
    from toolsift.workbench.session import Workbench

    workbench = Workbench(client, workbench_settings, embedder, roots=(datasets,))
    return str(serve_app_for_session(create_app(workbench, keys=KEYS)).url)


def _pipelines(client: Any, alias: str) -> dict[str, Any]:
    return {pid: body for pid, body in client.search_pipeline.get(ignore=404).items() if pid.startswith(alias)}


def _state(client: Any, settings: Any) -> dict[str, Any]:
    """What a write would change: the index's pipelines, saved weights, judgments, query sets."""
    for index in (settings.judgments_index, settings.query_sets_index):
        client.indices.refresh(index=index)
    weights = settings.data_dir / "weights"
    return {
        "pipelines": _pipelines(client, settings.index),
        "weights": sorted(str(p) for p in weights.rglob("*")) if weights.exists() else [],
        "judgments": client.count(index=settings.judgments_index)["count"],
        "query_sets": client.count(index=settings.query_sets_index)["count"],
    }


def _writes(datasets: Path, artifact: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("/api/weights/save", {"name": "attacker", "proposal": {"weights": {}}}),
        ("/api/weights/push", {"path": artifact}),
        ("/api/weights/clear", {}),
        ("/api/judgments", {"query": QUERY, "tool_id": WORD_TOOL, "relevant": False}),
        ("/api/querysets/import", {"path": str(datasets / "livemcpbench"), "name": "attacker"}),
        ("/api/querysets/from-judgments", {"name": "attacker"}),
    ]


def test_anonymous_and_search_key_writes_are_refused_and_change_nothing(
    keyed: str, client: Any, workbench_settings: Any, datasets: Path
) -> None:
    saved = ok(call(keyed, "/api/weights/save", {"name": "guarded", "proposal": {"weights": {}}}, key=ADMIN_KEY))
    before = _state(client, workbench_settings)

    for path, body in _writes(datasets, saved["path"]):
        for key in (None, "tsk_guessed-key"):
            anonymous = call(keyed, path, body, key=key)
            assert anonymous.status_code == 401, (path, anonymous.text)
            assert anonymous.json()["code"] == "unauthorized"
        searcher = call(keyed, path, body, key=SEARCH_KEY)
        assert searcher.status_code == 403, (path, searcher.text)
        assert searcher.json()["code"] == "forbidden" and "needs an admin key" in searcher.json()["error"]

    assert _state(client, workbench_settings) == before
    assert ok(call(keyed, "/api/config", key=ADMIN_KEY))["weights_version"] is None
    # reads need a key too; the page itself loads without one and asks for it
    assert call(keyed, "/api/config").status_code == 401
    assert call(keyed, "/api/search", {"query": QUERY}).status_code == 401
    assert httpx.get(keyed + "/").status_code == 200 and httpx.get(keyed + "/health").status_code == 200


def test_a_foreign_host_is_refused_and_the_push_does_not_happen_then_an_admin_push_does(
    keyed: str, client: Any, workbench_settings: Any
) -> None:
    saved = ok(call(keyed, "/api/weights/save", {"name": "guarded", "proposal": {"weights": {}}}, key=ADMIN_KEY))
    before = _pipelines(client, workbench_settings.index)

    rebound = call(keyed, "/api/weights/push", {"path": saved["path"]}, key=ADMIN_KEY,
                   host="attacker.example:8400")
    assert rebound.status_code == 403
    assert rebound.json() == {"error": "this service does not answer to host 'attacker.example:8400'",
                              "code": "forbidden", "field": "Host"}
    assert call(keyed, "/", host="attacker.example").status_code == 403
    assert _pipelines(client, workbench_settings.index) == before
    assert ok(call(keyed, "/api/config", key=ADMIN_KEY))["weights_version"] is None

    try:
        pushed = ok(call(keyed, "/api/weights/push", {"path": saved["path"]}, key=ADMIN_KEY, host="localhost"))
        assert pushed["version"] == saved["version"] and pushed["pipelines"]
        # the push happened: the index serves the saved version (its pipelines may equal those before:
        # empty weights give the default pipelines, which an earlier test may have left in place)
        assert ok(call(keyed, "/api/config", key=ADMIN_KEY))["weights_version"] == saved["version"]
        assert set(pushed["pipelines"]) <= set(_pipelines(client, workbench_settings.index))
    finally:
        cleared = ok(call(keyed, "/api/weights/clear", {}, key=ADMIN_KEY))
    assert cleared["weights_version"] is None


def test_an_admin_key_writes_judgments_and_imports_from_the_roots(keyed: str, datasets: Path) -> None:
    body = {"query": QUERY, "tool_id": WORD_TOOL, "relevant": True}
    assert "id" in ok(call(keyed, "/api/judgments", body, key=ADMIN_KEY))
    assert ok(call(keyed, "/api/judgments", {**body, "relevant": None}, key=ADMIN_KEY)) == {"deleted": True}
    imported = ok(call(keyed, "/api/querysets/import", {"path": str(datasets / "livemcpbench"), "name": "access-lmb"},
                       key=ADMIN_KEY))
    assert imported["size"] > 5


def test_a_path_outside_the_roots_gets_the_same_answer_whether_or_not_it_exists(
    keyed: str, workbench_settings: Any, datasets: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "benchmark"  # a real benchmark folder, but outside the roots
    outside.mkdir()
    (outside / "tools.json").write_bytes((datasets / "livemcpbench" / "tools.json").read_bytes())
    (outside / "all_annotations.json").write_bytes((datasets / "livemcpbench" / "all_annotations.json").read_bytes())
    (tmp_path / "weights.json").write_text('{"secret": "do not echo me"}', encoding="utf-8")
    data = workbench_settings.data_dir
    data.mkdir(parents=True, exist_ok=True)
    link = data / "escape"
    if not link.is_symlink():
        os.symlink(tmp_path, link)  # a symlink inside the data dir that points out of it

    answers = []
    for route, existing, missing in [
        ("/api/querysets/import", outside, tmp_path / "no-such-benchmark"),
        ("/api/weights/push", tmp_path / "weights.json", tmp_path / "no-such" / "weights.json"),
        ("/api/weights/push", link / "weights.json", link / "nothing.json"),
        ("/api/querysets/import", data / ".." / ".." / tmp_path.name, "/etc"),
    ]:
        for path in (existing, missing):
            answer = call(keyed, route, {"path": str(path)}, key=ADMIN_KEY)
            assert answer.status_code == 400, (route, path, answer.text)
            assert "do not echo me" not in answer.text and str(path) not in answer.text
            answers.append(answer.json())
    assert all(a == answers[0] for a in answers)
    assert answers[0]["code"] == "bad_query" and answers[0]["field"] == "path"
    assert answers[0]["error"].startswith("path is outside the folders this workbench may read: ")
    assert str(datasets.resolve()) in answers[0]["error"] and str(data.resolve()) in answers[0]["error"]


# --- tenants ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tenants_url(client: Any, workbench_settings: Any, embedder: Any, datasets: Path, serve_app_for_session: Any,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A workbench over three public LiveMCPBench servers and the Word server, which only tenant
    ``globex`` may see."""
    from toolsift.ingest.pipeline import ingest_catalog
    from toolsift.workbench.app import create_app
    from toolsift.workbench.session import Workbench

    servers = json.loads((datasets / "livemcpbench" / "tools.json").read_text(encoding="utf-8"))
    folder = tmp_path_factory.mktemp("tenants")
    (folder / "public.json").write_text(json.dumps(servers[:3], ensure_ascii=False), encoding="utf-8")
    (folder / "globex.json").write_text(json.dumps([servers[48]], ensure_ascii=False), encoding="utf-8")
    settings = workbench_settings.with_overrides(
        index=f"{WB_PREFIX}tenants", judgments_index=f"{WB_PREFIX}tenants-judgments",
        query_sets_index=f"{WB_PREFIX}tenants-querysets", query_log=False)
    assert ingest_catalog(client, settings, embedder, folder / "public.json").ok
    assert ingest_catalog(client, settings, embedder, folder / "globex.json", tenants=["globex"]).ok
    yield str(serve_app_for_session(create_app(Workbench(client, settings, embedder, rewrite=False),
                                               keys=KEYS)).url)


def test_searches_sets_comparisons_and_judgments_run_in_the_keys_tenant(tenants_url: str) -> None:
    def ids(key: str) -> list[str]:
        return [t["id"] for t in ok(call(tenants_url, "/api/search", {"query": QUERY, "top_k": 10}, key=key))["current"]]

    assert ids(GLOBEX_KEY)[0] == GLOBEX_WORD_TOOL
    assert GLOBEX_WORD_TOOL in ids(ADMIN_KEY)  # an all-tenant admin key sees every tenant
    acme = ids(SEARCH_KEY)
    assert acme and not any("office-word-mcp-server/" in t for t in acme)
    counts = {key: ok(call(tenants_url, "/api/config", key=key))["tools"] for key in (SEARCH_KEY, GLOBEX_KEY)}
    assert counts[GLOBEX_KEY] > counts[SEARCH_KEY] > 0

    # a kept search answers only the tenant that made it
    globex_search = ok(call(tenants_url, "/api/search", {"query": QUERY, "top_k": 5}, key=GLOBEX_KEY))
    stolen = call(tenants_url, "/api/rerank", {"search_id": globex_search["search_id"]}, key=SEARCH_KEY)
    assert stolen.status_code == 400 and "no longer kept" in stolen.json()["error"]
    acme_search = ok(call(tenants_url, "/api/search", {"query": QUERY, "top_k": 5}, key=SEARCH_KEY))
    tool_set = ok(call(tenants_url, "/api/set", {"search_id": acme_search["search_id"]}, key=SEARCH_KEY))
    assert not any("office-word-mcp-server/" in t["tool_id"] for t in tool_set["tools"])

    # the admin judges the Word tool relevant: only those who may see it see the judgment, and a
    # comparison on the set counts it only for them
    ok(call(tenants_url, "/api/judgments", {"query": QUERY, "tool_id": GLOBEX_WORD_TOOL, "relevant": True},
            key=ADMIN_KEY))
    ok(call(tenants_url, "/api/querysets/from-judgments", {"name": "judged"}, key=ADMIN_KEY))
    judged = {key: [j["tool_id"] for j in ok(call(tenants_url, "/api/judgments", key=key))["judgments"]]
              for key in (SEARCH_KEY, GLOBEX_KEY)}
    assert judged == {SEARCH_KEY: [], GLOBEX_KEY: [GLOBEX_WORD_TOOL]}
    ndcg = {key: ok(call(tenants_url, "/api/compare", {"query_set": "judged"}, key=key))["current"]["ndcg@10"]
            for key in (SEARCH_KEY, GLOBEX_KEY)}
    assert ndcg[GLOBEX_KEY] == 1.0 and ndcg[SEARCH_KEY] == 0.0


# --- other sites' pages and oversized bodies ----------------------------------------------------------


def _version(url: str) -> Any:
    return ok(call(url, "/api/config"))["weights_version"]


def test_a_page_of_another_site_cannot_clear_the_weights_a_keyless_workbench_pushed(workbench_url: str) -> None:
    saved = ok(call(workbench_url, "/api/weights/save", {"name": "csrf", "proposal": {"weights": {}}}))
    own_page = {"Origin": workbench_url, "Sec-Fetch-Site": "same-origin"}  # what the workbench's own page sends
    pushed = httpx.post(f"{workbench_url}/api/weights/push", json={"path": saved["path"]}, headers=own_page, timeout=120)
    try:
        assert pushed.status_code == 200, pushed.text
        other_port = workbench_url.rsplit(":", 1)[0] + ":1"  # another server on the same loopback host
        attacks = {
            "foreign-origin": {"Origin": "https://attacker.example", "Sec-Fetch-Site": "cross-site"},
            "origin-only": {"Origin": "https://attacker.example"},
            "fetch-metadata-only": {"Sec-Fetch-Site": "cross-site"},
            "same-site-other-port": {"Origin": other_port, "Sec-Fetch-Site": "same-site"},
            "opaque-origin": {"Origin": "null"},
        }
        for name, headers in attacks.items():
            answer = httpx.post(f"{workbench_url}/api/weights/clear", content=b"{}", timeout=120,
                                headers={**headers, "Content-Type": "text/plain;charset=UTF-8"})
            assert answer.status_code == 403, (name, answer.text)
            assert answer.json()["code"] == "forbidden" and answer.json()["field"] in ("Origin", "Sec-Fetch-Site")
            assert _version(workbench_url) == saved["version"], name
        as_text = httpx.post(f"{workbench_url}/api/weights/clear", content=b"{}", timeout=120,
                             headers={**own_page, "Content-Type": "text/plain"})
        assert as_text.status_code == 415 and as_text.json()["field"] == "Content-Type"
        assert _version(workbench_url) == saved["version"]
    finally:
        cleared = httpx.post(f"{workbench_url}/api/weights/clear", json={}, headers=own_page, timeout=120)
    assert cleared.status_code == 200 and cleared.json()["weights_version"] is None


def test_invalid_json_names_no_field_and_deep_nesting_says_so(workbench_url: str) -> None:
    json_type = {"Content-Type": "application/json"}
    broken = httpx.post(f"{workbench_url}/api/search", content=b'{"query": x}', headers=json_type, timeout=60)
    deep = httpx.post(f"{workbench_url}/api/search", content=b"[" * 100_000 + b"]" * 100_000, headers=json_type,
                      timeout=60)

    assert broken.status_code == 400 and broken.json()["field"] is None
    assert "not valid JSON at character 10" in broken.json()["error"]
    assert deep.status_code == 400 and deep.json()["field"] is None
    assert "nested too deeply" in deep.json()["error"] and "UTF-8" not in deep.json()["error"]


CAP = 1_000_000  # the capped workbench's max_body_bytes


@pytest.fixture(scope="module")
def capped(client: Any, workbench_settings: Any, embedder: Any, serve_app_for_session: Any) -> tuple[str, Any]:
    """A workbench with keys and a 1 MB body cap, behind a counter of the body bytes it pulls from the server."""
    from tests.conftest import BodyCounter
    from toolsift.workbench.app import create_app
    from toolsift.workbench.session import Workbench

    workbench = Workbench(client, workbench_settings.with_overrides(max_body_bytes=CAP), embedder, rewrite=False)
    counter = BodyCounter(create_app(workbench, keys=KEYS))
    return str(serve_app_for_session(counter).url), counter


def _stream(total: int) -> Iterator[bytes]:
    chunk = b" " * 65_536
    for _ in range(total // len(chunk)):
        yield chunk


def test_a_large_body_is_401_without_a_key_and_413_with_one_before_it_is_read(capped: tuple[str, Any]) -> None:
    url, counter = capped
    json_type = {"Content-Type": "application/json"}

    counter.consumed = 0
    anonymous = httpx.post(f"{url}/api/search", content=_stream(20_000_000), headers=json_type, timeout=120)
    anonymous_read = counter.consumed
    counter.consumed = 0
    keyed_big = httpx.post(f"{url}/api/search", content=_stream(20_000_000), timeout=120,
                           headers={**json_type, "Authorization": f"Bearer {SEARCH_KEY}"})
    keyed_read = counter.consumed

    assert anonymous.status_code == 401 and anonymous.json()["code"] == "unauthorized"
    assert anonymous_read == 0
    assert keyed_big.status_code == 413 and keyed_big.json()["code"] == "request_too_large"
    assert keyed_read <= CAP + 1_000_000
