"""Two tenants, one server name: two servers, and neither tenant learns or changes anything of the other's.

Issue 44, finding 1: tenant gamma ingested a catalog with a server named "Zorblax Payroll 2"; tenant
beta then ingested a catalog of its own reusing that name, and beta's admin key read gamma's approved
description and parameters in the workbench's review queue — beta's server had been held as "a second
catalog claiming the same server", against gamma's pin. Here globex plays gamma and acme plays beta,
each catalog ingested with `toolsift ingest --tenant …` (the operator's command, its own process), the
two files named alike so the catalogs' sources are too, acme's with ``--prune``.

A name two tenants share is two documents: acme's ingest holds nothing; acme's admin reads none of
globex's text in the review queue (nor does anything wait there for either server); each tenant's
keys are served its own definition of the server's tools, by search and by id; and acme's prune
leaves globex's tools alone.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import httpx
import pytest

from tests.security.conftest import TOOLSIFT, Deployment

pytestmark = [pytest.mark.integration, pytest.mark.security]

SERVER = "Zorblax Payroll 2"
#: Words only globex's catalog holds: none may reach an acme key.
GLOBEX_SECRETS = ("GLOBEX-ONLY", "layoff_list_q3", "quietly exports the ledger")


def _catalog(tenant: str) -> list[dict[str, Any]]:
    if tenant == "globex":
        tools = [
            {"name": "run_payroll", "description": "GLOBEX-ONLY payroll run: pays the staff on the layoff list first.",
             "inputSchema": {"type": "object", "properties": {
                 "layoff_list_q3": {"type": "string", "description": "the confidential layoff list"}},
                 "required": ["layoff_list_q3"]}},
            {"name": "export_ledger", "description": "GLOBEX-ONLY: quietly exports the ledger to the auditors.",
             "inputSchema": {"type": "object", "properties": {"year": {"type": "integer"}}}},
        ]
    else:
        tools = [
            {"name": "run_payroll", "description": "Runs the monthly payroll for every acme employee.",
             "inputSchema": {"type": "object", "properties": {
                 "cost_centre": {"type": "string", "description": "the acme cost centre to pay from"}},
                 "required": ["cost_centre"]}},
        ]
    return [{"name": SERVER, "description": f"Payroll server of {tenant}.", "tools": tools}]


def _ingest(dep: Deployment, tenant: str, *extra: str) -> dict[str, Any]:
    folder = dep.folder / "shared-names" / tenant
    folder.mkdir(parents=True, exist_ok=True)
    catalog = folder / "zorblax.json"  # both catalogs' source: mcp/zorblax
    catalog.write_text(json.dumps(_catalog(tenant)), encoding="utf-8")
    done = subprocess.run([TOOLSIFT, "ingest", str(catalog), "--tenant", tenant, "--json", *extra],
                          capture_output=True, text=True, timeout=900, env=dep.environment())
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    return dict(json.loads(done.stdout))


def _search(dep: Deployment, key: str, query: str) -> list[dict[str, Any]]:
    answer = httpx.post(f"{dep.url('api')}/v1/search", json={"query": query, "top_k": 30}, headers=dep.header(key),
                        timeout=120)
    assert answer.status_code == 200, answer.text
    return list(answer.json()["tools"])


def _payroll(tools: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [t for t in tools if t["name"] == name and "zorblax" in t["id"]]


@pytest.fixture(scope="module")
def shared(deployment: Deployment) -> dict[str, dict[str, Any]]:
    """Globex's catalog, then acme's reusing its server's name (and pruning what acme's catalog lacks)."""
    return {"globex": _ingest(deployment, "globex"), "acme": _ingest(deployment, "acme", "--prune")}


def test_the_second_tenant_s_server_is_a_server_of_its_own_not_a_change_held_against_the_first(
        shared: dict[str, dict[str, Any]]) -> None:
    assert shared["globex"]["held"] == [] and shared["globex"]["approved"] == 3  # its server and 2 tools, pinned
    assert shared["acme"]["held"] == [] and shared["acme"]["refused"] == []
    assert shared["acme"]["approved"] == 2 and shared["acme"]["created"] == 2
    assert shared["acme"]["deleted"] == 0  # acme's prune: nothing of globex's


def test_the_review_queue_shows_an_admin_nothing_of_another_tenant_s_server_of_the_same_name(
        deployment: Deployment, shared: dict[str, dict[str, Any]]) -> None:
    url = deployment.url("ui")
    acme = httpx.get(f"{url}/api/approvals", headers=deployment.header("acme-admin"), timeout=60)
    root = httpx.get(f"{url}/api/approvals", headers=deployment.header("root"), timeout=60)

    assert acme.status_code == root.status_code == 200, acme.text
    for secret in GLOBEX_SECRETS:
        assert secret not in acme.text
    assert not [e for e in root.json()["pending"] if "zorblax" in e["id"]]  # nothing waits for either server


def test_each_tenant_is_served_its_own_definition_and_acme_s_prune_left_globex_s_tools(
        deployment: Deployment, shared: dict[str, dict[str, Any]]) -> None:
    query = "run the payroll for the staff"
    [acme_tool] = _payroll(_search(deployment, "acme", query), "run_payroll")
    globex_found = _search(deployment, "globex", query)
    [globex_tool] = _payroll(globex_found, "run_payroll")
    [ledger] = _payroll(_search(deployment, "globex", "export the ledger to the auditors"), "export_ledger")

    assert acme_tool["id"] != globex_tool["id"]
    assert "cost_centre" in json.dumps(acme_tool) and "GLOBEX-ONLY" not in json.dumps(acme_tool)
    assert "layoff_list_q3" in json.dumps(globex_tool)
    assert ledger["id"] != acme_tool["id"]
    for tool, key, words in ((acme_tool, "acme", "acme employee"), (globex_tool, "globex", "GLOBEX-ONLY")):
        one = httpx.get(f"{deployment.url('api')}/v1/tools/{tool['id']}", headers=deployment.header(key), timeout=60)
        assert one.status_code == 200 and words in one.text, one.text
    # by id, the other tenant's server of the same name is a tool that does not exist
    for tool, key in ((globex_tool, "acme"), (ledger, "acme"), (acme_tool, "globex")):
        foreign = httpx.get(f"{deployment.url('api')}/v1/tools/{tool['id']}", headers=deployment.header(key),
                            timeout=60)
        assert foreign.status_code == 404 and "GLOBEX-ONLY" not in foreign.text


def test_the_operator_sees_two_pinned_records_each_naming_its_tenant(
        deployment: Deployment, shared: dict[str, dict[str, Any]]) -> None:
    queue = subprocess.run([TOOLSIFT, "approvals", "list", "--json"], capture_output=True, text=True, timeout=300,
                           env=deployment.environment())
    assert queue.returncode == 0, queue.stderr
    assert not [e for e in json.loads(queue.stdout) if "zorblax" in e["id"]]
    records = {}
    for tenant in ("acme", "globex"):
        [tool] = _payroll(_search(deployment, tenant, "run the payroll for the staff"), "run_payroll")
        shown = subprocess.run([TOOLSIFT, "approvals", "show", tool["id"], "--json"], capture_output=True, text=True,
                               timeout=300, env=deployment.environment())
        assert shown.returncode == 0, shown.stderr
        records[tenant] = json.loads(shown.stdout)
    assert {t: (r["status"], r["tenants"]) for t, r in records.items()} == {
        "acme": ("approved", ["acme"]), "globex": ("approved", ["globex"])}
