"""Who may call the workbench's API (no node: the routes over a recording stand-in for the Workbench).

With keys configured every ``/api`` route needs one and every write an admin key; reads run in the
key's tenant; a foreign ``Host`` is refused before any route; paths in requests stay inside the
roots; errors keep one body shape. The same routes over a real node: tests/integration/test_workbench_access.py.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from toolsift.access import ApiKey, KeyRing, hash_key
from toolsift.config import Settings
from toolsift.errors import BadQueryError
from toolsift.workbench.app import create_app
from toolsift.workbench.session import OutsideRootsError, confine

SEARCH_KEY, ADMIN_KEY, ACME_ADMIN_KEY = "tsk_acme-search", "tsk_ops-admin", "tsk_acme-admin"
KEYS = [ApiKey(name="acme-search", tenant="acme", role="search", sha256=hash_key(SEARCH_KEY)),
        ApiKey(name="ops", tenant="*", role="admin", sha256=hash_key(ADMIN_KEY)),
        ApiKey(name="acme-admin", tenant="acme", role="admin", sha256=hash_key(ACME_ADMIN_KEY))]

PROPOSAL = {"weights": {}, "rerank_weight": None}
READS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", "/api/config", None),
    ("POST", "/api/search", {"query": "convert a doc", "top_k": 3}),
    ("POST", "/api/rerank", {"search_id": "s1", "proposal": PROPOSAL}),
    ("POST", "/api/set", {"search_id": "s1"}),
    ("GET", "/api/judgments", None),
    ("GET", "/api/querysets", None),
    ("POST", "/api/compare", {"query_set": "lmb"}),
    ("GET", "/api/metrics/evalruns", None),
    ("GET", "/api/metrics/latency", None),
]
WRITES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("POST", "/api/judgments", {"query": "convert a doc", "tool_id": "t1", "relevant": True}),
    ("POST", "/api/querysets/import", {"path": "inside", "name": "lmb"}),
    ("POST", "/api/querysets/from-judgments", {"name": "judged"}),
    ("POST", "/api/weights/save", {"name": "tuned"}),
    ("POST", "/api/weights/push", {"path": "inside"}),
    ("POST", "/api/weights/clear", {}),
]


class RecordingWorkbench:
    """The Workbench's surface the routes use; every call is recorded with the tenant it ran in."""

    def __init__(self, settings: Settings, roots: tuple[Path, ...]) -> None:
        self.settings = settings
        self.alias = settings.index
        self.roots = roots
        self.calls: list[tuple[str, Any]] = []
        self.query_sets = self

    def _did(self, name: str, tenant: Any = "n/a") -> dict[str, Any]:
        self.calls.append((name, tenant))
        return {"done": name}

    def describe(self, tenant: str | None = None) -> dict[str, Any]:
        return self._did("describe", tenant)

    def search(self, query: str, *, top_k: int, proposal: Any, tenant: str | None = None) -> dict[str, Any]:
        return self._did("search", tenant)

    def rerank(self, search_id: str, proposal: Any, tenant: str | None = None) -> dict[str, Any]:
        return self._did("rerank", tenant)

    def recommend_set(self, search_id: str, tenant: str | None = None) -> dict[str, Any]:
        return self._did("set", tenant)

    def list_judgments(self, limit: int, tenant: str | None = None) -> list[Any]:
        self._did("judgments", tenant)
        return []

    def list(self, alias: str, tenant: str | None) -> list[Any]:
        self._did("querysets", tenant)
        return []

    def compare(self, query_set: str, proposal: Any, tenant: str | None = None) -> dict[str, Any]:
        return self._did("compare", tenant)

    def eval_runs(self, query_set: str | None, tenant: str | None = None) -> dict[str, Any]:
        return self._did("evalruns", tenant)

    def latency(self, interval: str, since: str, source: str | None, tenant: str | None = None) -> dict[str, Any]:
        return self._did("latency", tenant)

    def judge(self, *args: Any, tenant: str | None, **kwargs: Any) -> dict[str, Any]:
        return self._did("judge", tenant)

    def import_query_set(self, path: str, name: str | None, tenant: str | None) -> dict[str, Any]:
        confine(self.roots[0] / path if path == "inside" else path, self.roots)
        return self._did("import", tenant)

    def query_set_from_judgments(self, name: str, tenant: str | None) -> dict[str, Any]:
        return self._did("from-judgments", tenant)

    def save_weights(self, name: str, proposal: Any, query_set: str | None, tenant: str | None = None) -> dict[str, Any]:
        return self._did("save", tenant)

    def push(self, path: str) -> dict[str, Any]:
        confine(self.roots[0] / path if path == "inside" else path, self.roots)
        return self._did("push")

    def clear_pushed(self) -> dict[str, Any]:
        return self._did("clear")


@pytest.fixture()
def workbench(tmp_path: Path) -> RecordingWorkbench:
    root = tmp_path / "data"
    root.mkdir()
    return RecordingWorkbench(Settings(index="idx", data_dir=root), (root.resolve(),))


def _client(workbench: RecordingWorkbench, keys: list[ApiKey] | None = KEYS, hosts: list[str] | None = None) -> TestClient:
    app = create_app(workbench, keys=KeyRing(keys or []),  # type: ignore[arg-type]
                     allowed_hosts=["testserver", "127.0.0.1"] if hosts is None else hosts)
    return TestClient(app)


def _call(http: TestClient, method: str, path: str, body: dict[str, Any] | None, key: str | None = None,
          **headers: str) -> Any:
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    return http.request(method, path, json=body, headers=headers)


def test_without_a_key_every_api_route_answers_401_and_runs_nothing(workbench: RecordingWorkbench) -> None:
    http = _client(workbench)
    for method, path, body in READS + WRITES:
        for key in (None, "tsk_not-a-configured-key"):
            answer = _call(http, method, path, body, key)
            assert answer.status_code == 401, (path, answer.text)
            assert answer.json()["code"] == "unauthorized" and set(answer.json()) == {"error", "code", "field"}
            assert answer.headers["WWW-Authenticate"].startswith("Bearer")
    assert workbench.calls == []
    # the page, its assets and the health check load without a key (the page then asks for one)
    for path in ("/", "/static/app.js", "/health"):
        assert http.get(path).status_code == 200, path


def test_a_search_key_reads_in_its_tenant_and_may_not_write(workbench: RecordingWorkbench) -> None:
    http = _client(workbench)
    for method, path, body in READS:
        assert _call(http, method, path, body, SEARCH_KEY).status_code == 200, path
    assert {tenant for _, tenant in workbench.calls} <= {"acme", "n/a"}
    assert [name for name, tenant in workbench.calls if tenant == "acme"] == [
        "describe", "search", "rerank", "set", "judgments", "querysets", "compare", "evalruns", "latency"]
    workbench.calls.clear()
    for method, path, body in WRITES:
        answer = _call(http, method, path, body, SEARCH_KEY)
        assert answer.status_code == 403, (path, answer.text)
        assert answer.json()["code"] == "forbidden" and "admin key" in answer.json()["error"]
    assert workbench.calls == []
    # X-API-Key works as well as Authorization: Bearer
    assert http.get("/api/config", headers={"X-API-Key": SEARCH_KEY}).json()["caller"] == {
        "name": "acme-search", "role": "search", "tenant": "acme", "keys": True}


def test_an_admin_key_writes_and_an_all_tenant_key_reads_every_tenant(workbench: RecordingWorkbench) -> None:
    http = _client(workbench)
    for method, path, body in WRITES:
        answer = _call(http, method, path, body, ADMIN_KEY)
        assert answer.status_code == 200, (path, answer.text)
    assert _call(http, "POST", "/api/search", {"query": "q"}, ADMIN_KEY).status_code == 200
    assert _call(http, "POST", "/api/weights/save", {"name": "tuned"}, ACME_ADMIN_KEY).status_code == 200
    assert ("search", None) in workbench.calls and ("save", "acme") in workbench.calls
    # judgments and query sets are written as the writer's tenant's (None: an all-tenant key's, shared)
    assert {("judge", None), ("import", None), ("from-judgments", None)} <= set(workbench.calls)
    workbench.calls.clear()
    for method, path, body in WRITES[:3]:
        assert _call(http, method, path, body, ACME_ADMIN_KEY).status_code == 200, path
    assert workbench.calls == [("judge", "acme"), ("import", "acme"), ("from-judgments", "acme")]


def test_only_an_all_tenant_admin_may_push_or_clear_weights_every_tenant_ranks_with(
        workbench: RecordingWorkbench) -> None:
    http = _client(workbench)
    for path, body in (("/api/weights/push", {"path": "inside"}), ("/api/weights/clear", {})):
        refused = _call(http, "POST", path, body, ACME_ADMIN_KEY)
        assert refused.status_code == 403 and "every tenant" in refused.json()["error"], path
    assert not [c for c in workbench.calls if c[0] in ("push", "clear")]
    assert _call(http, "POST", "/api/weights/clear", {}, ADMIN_KEY).status_code == 200


def test_without_keys_configured_every_caller_may_do_everything(workbench: RecordingWorkbench) -> None:
    http = _client(workbench, keys=None)
    for method, path, body in READS + WRITES:
        assert _call(http, method, path, body).status_code == 200, path
    assert {tenant for _, tenant in workbench.calls} <= {None, "n/a"}
    assert http.get("/api/config").json()["caller"]["keys"] is False


def test_a_foreign_host_is_refused_before_any_route(workbench: RecordingWorkbench) -> None:
    http = _client(workbench, hosts=["127.0.0.1", "localhost"])
    for method, path, body in [("GET", "/", None), ("GET", "/health", None), *WRITES]:
        answer = _call(http, method, path, body, ADMIN_KEY, Host="rebound.attacker.example:8400")
        assert answer.status_code == 403, path
        assert answer.json() == {"error": "this service does not answer to host 'rebound.attacker.example:8400'",
                                 "code": "forbidden", "field": "Host"}
    assert workbench.calls == []
    assert _call(http, "POST", "/api/weights/clear", {}, ADMIN_KEY, Host="localhost:8400").status_code == 200


def test_the_default_hosts_are_the_configured_ones(tmp_path: Path) -> None:
    settings = Settings(index="idx", data_dir=tmp_path, allowed_hosts=["wb.internal"])
    http = TestClient(create_app(RecordingWorkbench(settings, (tmp_path,)), keys=KeyRing([])))  # type: ignore[arg-type]
    assert http.get("/health").status_code == 403  # TestClient's own Host, testserver
    for host in ("wb.internal", "wb.internal:8400", "127.0.0.1:8400"):
        assert http.get("/health", headers={"Host": host}).status_code == 200, host


def test_a_path_outside_the_roots_is_400_with_one_message_whether_or_not_it_exists(
    workbench: RecordingWorkbench, tmp_path: Path
) -> None:
    http = _client(workbench)
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "tools.json").write_text("[]", encoding="utf-8")
    answers = []
    for route in ("/api/querysets/import", "/api/weights/push"):
        for path in (str(secret), str(tmp_path / "no-such-folder"), "/etc/passwd", "/no/such/file"):
            answer = _call(http, "POST", route, {"path": path}, ADMIN_KEY)
            assert answer.status_code == 400 and answer.json()["code"] == "bad_query"
            assert answer.json()["field"] == "path" and path not in answer.text
            answers.append(answer.json())
    assert all(a == answers[0] for a in answers)
    assert answers[0]["error"] == f"path is outside the folders this workbench may read: {workbench.roots[0]}"


def test_confine_follows_symlinks_and_dot_dots(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sets").mkdir(parents=True)
    outside.mkdir()
    os.symlink(outside, root / "escape")
    os.symlink(root / "sets", root / "alias")
    roots = (root.resolve(),)

    assert confine(root / "sets", roots) == (root / "sets").resolve()
    assert confine(str(root / "alias"), roots) == (root / "sets").resolve()  # a link that stays inside
    assert confine(root / "sets" / "not-yet", roots) == (root / "sets" / "not-yet").resolve()
    for bad in (root / "escape", root / "escape" / "x", root / "sets" / ".." / ".." / "outside", "/", "a\0b",
                "~nosuchuser12345/x"):
        with pytest.raises(OutsideRootsError, match="outside the folders") as caught:
            confine(bad, roots)
        assert isinstance(caught.value, BadQueryError) and str(outside) not in str(caught.value)


def test_errors_keep_one_body_shape(workbench: RecordingWorkbench) -> None:
    http = _client(workbench, keys=None)
    invalid = http.post("/api/search", json={"query": "q", "top_k": 0})
    assert invalid.status_code == 400  # a body outside the schema: the search API's and the ranker's answer
    assert invalid.json()["code"] == "bad_request" and invalid.json()["field"] == "top_k"
    assert invalid.json()["error"].startswith("top_k: ")
    loose = http.post("/api/search", json={"query": "q", "top_k": "10"})  # strict types: no coercion
    assert (loose.status_code, loose.json()["code"], loose.json()["field"]) == (400, "bad_request", "top_k")
    missing = http.get("/api/nothing")
    assert missing.status_code == 404 and missing.json() == {"error": "Not Found", "code": "not_found", "field": None}


@pytest.mark.parametrize("headers", [
    {"Origin": "https://attacker.example", "Sec-Fetch-Site": "cross-site"},
    {"Origin": "https://attacker.example"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Origin": "null"},
], ids=["origin-and-fetch-metadata", "origin", "fetch-metadata", "opaque-origin"])
def test_a_page_of_another_site_cannot_write_to_a_keyless_workbench(workbench: RecordingWorkbench,
                                                                   headers: dict[str, str]) -> None:
    http = _client(workbench, keys=None)

    for body, content_type in ((b"{}", "text/plain"), (b"{}", "application/json"), (b"", None)):
        sent = {**headers, **({"Content-Type": content_type} if content_type else {})}
        answer = http.post("/api/weights/clear", content=body, headers=sent)
        assert answer.status_code == 403 and answer.json()["code"] == "forbidden", answer.text
    assert workbench.calls == []


def test_a_write_not_sent_as_json_is_415_and_the_own_pages_json_is_taken(workbench: RecordingWorkbench) -> None:
    http = _client(workbench, keys=None)

    as_text = http.post("/api/weights/clear", content=b"{}", headers={"Content-Type": "text/plain"})
    as_form = http.post("/api/judgments", content=b"query=q&tool_id=t&relevant=true",
                        headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert (as_text.status_code, as_form.status_code) == (415, 415)
    assert as_text.json()["code"] == "unsupported_media_type" and as_text.json()["field"] == "Content-Type"
    assert workbench.calls == []

    own_page = {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}  # TestClient's own origin
    assert http.post("/api/weights/clear", json={}, headers=own_page).status_code == 200
    assert http.post("/api/weights/clear").status_code == 200  # a program, no body
    assert [name for name, _ in workbench.calls] == ["clear", "clear"]


def test_invalid_json_names_no_field_and_deep_nesting_says_so(workbench: RecordingWorkbench) -> None:
    http = _client(workbench, keys=None)
    json_type = {"Content-Type": "application/json"}

    broken = http.post("/api/search", content=b'{"query": x}', headers=json_type)
    deep = http.post("/api/search", content=b"[" * 100_000 + b"]" * 100_000, headers=json_type)

    assert broken.status_code == 400 and broken.json()["field"] is None
    assert broken.json() == {"error": "the body is not valid JSON at character 10: Expecting value (send UTF-8 JSON)",
                             "code": "bad_request", "field": None}
    assert deep.status_code == 400 and deep.json()["field"] is None
    assert "nested too deeply" in deep.json()["error"] and "UTF-8" not in deep.json()["error"]
