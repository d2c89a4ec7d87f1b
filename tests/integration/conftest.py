"""Fixtures of the workbench's integration and browser tests: a LiveMCPBench slice behind a served workbench."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import drop_indices, ingest_tenant_slices

#: The workbench's own indices; outside ``toolsift-test-*`` so per-test cleanups leave them alone.
WB_PREFIX = "toolsift-wbtest-"
#: 22 LiveMCPBench servers: the first 20, the Word and the Excel servers (documents, PDFs, files).
WB_SERVERS = (*range(20), 48, 65)


def _drop_workbench_indices(client: Any) -> None:
    drop_indices(client, WB_PREFIX)


#: The tenant catalog is 24 benign LiveMCPBench servers that tests search, serve and administer: it is
#: ingested without the meaning screen (about 15 ms a sentence on two cores, 40 s of every CI run). The
#: pattern screen still runs; the screen's own tests (tests/security/test_hostile_catalogs.py,
#: tests/integration/test_hostile_tools.py, the screen benchmarks) and the workbench's catalog run it
#: as the product's default does.
TENANT_CATALOG_MEANING_SCREEN = False


@pytest.fixture(scope="session")
def workbench_settings(client: Any, base_settings: Any, embedder: Any, datasets: Path,
                       tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Settings of a workbench over a LiveMCPBench slice (ingested once), with the query log on."""
    from toolsift.ingest.pipeline import ingest_catalog

    servers = json.loads((datasets / "livemcpbench" / "tools.json").read_text(encoding="utf-8"))
    folder = tmp_path_factory.mktemp("workbench")
    catalog = folder / "tools.json"
    catalog.write_text(json.dumps([servers[i] for i in WB_SERVERS], ensure_ascii=False), encoding="utf-8")
    settings = base_settings.with_overrides(
        index=f"{WB_PREFIX}catalog", judgments_index=f"{WB_PREFIX}judgments", query_sets_index=f"{WB_PREFIX}querysets",
        query_log=True, query_log_index=f"{WB_PREFIX}querylog", eval_runs_index=f"{WB_PREFIX}evalruns",
        data_dir=folder / "data", llm_cache_dir=folder / "llm-cache",
    )
    _drop_workbench_indices(client)
    report = ingest_catalog(client, settings, embedder, catalog)
    assert report.ok and report.agents == len(WB_SERVERS)
    yield settings
    _drop_workbench_indices(client)


@pytest.fixture(scope="session")
def workbench_url(client: Any, workbench_settings: Any, embedder: Any, serve_app_for_session: Any, datasets: Path,
                  tmp_path_factory: pytest.TempPathFactory) -> str:
    """``toolsift serve ui``'s app over the slice, served on a loopback port for the session (no keys:
    open, as on loopback; the benchmark data and the tests' temporary folders are readable roots)."""
    from toolsift.workbench.app import create_app
    from toolsift.workbench.session import Workbench

    roots = (datasets, tmp_path_factory.getbasetemp())
    return str(serve_app_for_session(create_app(Workbench(client, workbench_settings, embedder, roots=roots))).url)


# --- tenants: one index, three slices of LiveMCPBench (two tenants and the public) -------------------

#: The tenants' index and side indices; outside ``toolsift-test-*`` so per-test cleanups leave them alone.
TENANT_PREFIX = "toolsift-tenanttest-"
TENANT_SLICES = {"acme": range(0, 8), "globex": range(8, 16), "": range(16, 24)}  # "": public


class TenantCatalog:
    """The tenant fixture: settings with keys, the raw keys by name, and who owns each document."""

    def __init__(self, settings: Any, keys: dict[str, str], owner: dict[str, str], queries: list[str],
                 folder: Path) -> None:
        self.settings = settings
        self.keys = keys
        #: document id (tool or agent) -> tenant ("" public)
        self.owner = owner
        self.queries = queries
        self.folder = folder

    def header(self, key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[key]}"}

    def foreign(self, tenant: str) -> set[str]:
        """Ids of the documents ``tenant`` must never see."""
        return {doc for doc, owner in self.owner.items() if owner and owner != tenant}

    def config_file(self) -> Path:
        """A TOML config holding the keys (as a deployment would), for server processes."""
        path = self.folder / "toolsift.toml"
        lines = []
        for entry in self.settings.api_keys:
            lines += ["[[api_keys]]", f'name = "{entry.name}"', f'tenant = "{entry.tenant}"',
                      f'role = "{entry.role}"', f'sha256 = "{entry.sha256}"', ""]
        path.write_text("\n".join(lines), encoding="utf-8")
        return path


def _drop_tenant_indices(client: Any) -> None:
    drop_indices(client, TENANT_PREFIX)


@pytest.fixture(scope="session")
def tenant_catalog(client: Any, base_settings: Any, embedder: Any, datasets: Path,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[TenantCatalog]:
    """LiveMCPBench servers 0-7 for tenant ``acme``, 8-15 for ``globex``, 16-23 public, in one index,
    with a history whose bundles mix the tenants' tools, and four keys: acme and globex search keys, an
    acme admin key and an all-tenant admin key."""
    from toolsift.access import ApiKey, hash_key
    from toolsift.sets.history_import import index_history
    from toolsift.records import Bundle, History, PastQuery

    servers = json.loads((datasets / "livemcpbench" / "tools.json").read_text(encoding="utf-8"))
    tasks = json.loads((datasets / "livemcpbench" / "all_annotations.json").read_text(encoding="utf-8"))
    folder = tmp_path_factory.mktemp("tenants")
    raw = {"acme": "tsk_acme-search-key", "globex": "tsk_globex-search-key", "acme-admin": "tsk_acme-admin-key",
           "root": "tsk_all-tenants-admin-key"}
    api_keys = [ApiKey(name="acme", tenant="acme", role="search", sha256=hash_key(raw["acme"])),
                ApiKey(name="globex", tenant="globex", role="search", sha256=hash_key(raw["globex"])),
                ApiKey(name="acme-admin", tenant="acme", role="admin", sha256=hash_key(raw["acme-admin"])),
                ApiKey(name="root", tenant="*", role="admin", sha256=hash_key(raw["root"]))]
    settings = base_settings.with_overrides(
        index=f"{TENANT_PREFIX}catalog", feedback_index=f"{TENANT_PREFIX}feedback", data_dir=folder / "data",
        llm_cache_dir=folder / "llm-cache", api_keys=api_keys, query_log=True,
        query_log_index=f"{TENANT_PREFIX}querylog",  # feedback is checked against the answers it records
        screen_meaning=TENANT_CATALOG_MEANING_SCREEN,
    )
    _drop_tenant_indices(client)
    docs = ingest_tenant_slices(client, settings, embedder, folder, servers, TENANT_SLICES)
    owner = {doc_id: doc["owner"] for doc_id, doc in docs.items()}
    by_tenant = {t: sorted(d for d, o in owner.items() if o == t and not d.startswith("agent:")) for t in TENANT_SLICES}
    # bundles: each tenant's own, the public one, and mixed ones no single tenant may see whole
    bundles = {
        "b-acme": Bundle("b-acme", tuple(by_tenant["acme"][:3])),
        "b-globex": Bundle("b-globex", tuple(by_tenant["globex"][:3])),
        "b-public": Bundle("b-public", tuple(by_tenant[""][:3])),
        "b-mixed": Bundle("b-mixed", (by_tenant["acme"][3], by_tenant["globex"][3], by_tenant[""][3])),
        "b-acme-public": Bundle("b-acme-public", (by_tenant["acme"][4], by_tenant[""][4])),
    }
    queries = [str(t["Question"]) for t in tasks[:40]]
    past = tuple(PastQuery(f"q{i}", q, list(bundles)[i % len(bundles)]) for i, q in enumerate(queries))
    index_history(client, settings.index, History(bundles, past, source="tenant fixture"), embedder)
    yield TenantCatalog(settings, raw, owner, queries, folder)
    _drop_tenant_indices(client)


@pytest.fixture(scope="session")
def tenant_api(tenant_catalog: TenantCatalog, client: Any, embedder: Any, serve_app_for_session: Any) -> str:
    """The search API over the tenant catalog, served by uvicorn on loopback (one server for the session):
    its base URL."""
    from toolsift.api.app import create_app
    from toolsift.api.search_service import ToolSearchService

    def service(settings: Any) -> ToolSearchService:
        built = ToolSearchService(client, settings, embedder)
        built.warm()
        return built

    return str(serve_app_for_session(create_app(tenant_catalog.settings, service_factory=service)).url)

