"""A name two tenants share is two documents: a tenant catalog's ids are scoped to its tenants.

The scoped id is what every store keyed by a document id keys on (catalog, approvals, versions,
judgments, feedback); no catalog can write one (its ids may not start with the scope mark), the
definition an approval pins is the same whatever the scope, and a record stored under a plain id
before ids were scoped moves to the scoped id only when the definition it pins is that scope's.
"""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from toolsift.errors import CatalogRecordError
from toolsift.ingest.approvals import _moved, definition_hash, visible_to
from toolsift.ingest.normalise import normalise_agent, normalise_tool
from toolsift.ingest.pipeline import normalised_records
from toolsift.ingest.raw_records import AGENT_ID_PREFIX, RawAgent, RawTool
from toolsift.mappings.scoped import AGENT_ID_PREFIX as SCOPED_AGENT_PREFIX
from toolsift.mappings.scoped import id_scope, is_scoped, plain_id, reserved, scope_label, scoped_doc, scoped_id
from toolsift.mappings import AgentDoc, ParameterDoc, ToolDoc
from toolsift.mappings.approvals_doc import ApprovalDoc
from toolsift.query.scope import Scope

TOOL = ToolDoc(tool_id="zorblax-payroll-2/run", name="run", source="mcp/zorblax", agent_id="agent:zorblax-payroll-2",
               description="Runs the payroll.", parameters=(ParameterDoc("cost_centre", "string"),),
               raw={"name": "run"}, prerequisites=("zorblax-payroll-2/login",))
AGENT = AgentDoc(agent_id="agent:zorblax-payroll-2", name="Zorblax Payroll 2", description="Payroll.",
                 source="mcp/zorblax")


def test_a_tenant_catalog_s_ids_carry_its_tenants_and_a_public_one_s_stay_as_given() -> None:
    assert scoped_id("zorblax-payroll-2/run", ("beta",)) == "@beta/zorblax-payroll-2/run"
    assert scoped_id("agent:zorblax-payroll-2", ("beta",)) == "agent:@beta/zorblax-payroll-2"
    assert scoped_id("x/run", ("gamma", "beta", "gamma")) == "@beta+gamma/x/run"  # order and repeats do not matter
    assert scoped_id("x/run", ()) == "x/run"
    assert scoped_id("@beta/x/run", ("gamma",)) == "@gamma/x/run"  # rescoped, never scoped twice


def test_a_scoped_id_reads_back_as_the_catalog_s_id_and_its_tenants() -> None:
    for plain in ("x/run", "agent:x", "a/b/c", "weird id with spaces"):
        scoped = scoped_id(plain, ("acme", "beta"))
        assert is_scoped(scoped) and plain_id(scoped) == plain and id_scope(scoped) == ("acme", "beta")
        assert not is_scoped(plain) and plain_id(plain) == plain and id_scope(plain) == ()
    assert scope_label(("b", "a")) == "a+b" and scope_label(()) == ""


def test_two_tenants_documents_of_one_server_are_two_documents_with_the_same_definition() -> None:
    beta, gamma = scoped_doc(TOOL, ("beta",)), scoped_doc(TOOL, ("gamma",))

    assert (beta.tool_id, beta.agent_id, beta.prerequisites, beta.tenants) == (
        "@beta/zorblax-payroll-2/run", "agent:@beta/zorblax-payroll-2", ("@beta/zorblax-payroll-2/login",), ("beta",))
    assert beta.tool_id != gamma.tool_id
    # what an approval pins is the definition: the same under any tenants, so a move keeps the pin
    assert definition_hash(beta) == definition_hash(gamma) == definition_hash(TOOL)
    assert scoped_doc(AGENT, ("beta",)).agent_id == "agent:@beta/zorblax-payroll-2"


def test_no_catalog_may_give_an_id_in_toolsift_s_scoped_form() -> None:
    assert AGENT_ID_PREFIX == SCOPED_AGENT_PREFIX  # the agent prefix, as the loaders write it
    assert reserved("@beta/x") and reserved("agent:@beta") and not reserved("x@beta") and not reserved("agent:x")
    with pytest.raises(CatalogRecordError) as tool:
        normalise_tool(RawTool("mcp/evil", "0", {"name": "run", "description": "x"}, "@beta/zorblax-payroll-2/run", None))
    with pytest.raises(CatalogRecordError) as agent:
        normalise_agent(RawAgent("mcp/evil", "0", "agent:@beta/zorblax-payroll-2", "Zorblax", "x", {}))
    assert tool.value.field == "id" and "@" in str(tool.value)
    assert agent.value.field == "agent_id"


def test_a_scoped_id_longer_than_an_id_may_be_rejects_its_record_alone() -> None:
    long_name = "t" * 500
    records = [RawTool("mcp/x", "0", {"name": long_name, "description": "long"}, long_name, None),
               RawTool("mcp/x", "1", {"name": "short", "description": "short"}, "short", None)]
    out = [item for _, item in normalised_records(records, 100_000, ("a-long-tenant-name",))]

    assert isinstance(out[0], CatalogRecordError) and out[0].field == "id"
    assert isinstance(out[1], ToolDoc) and out[1].tool_id == "@a-long-tenant-name/short"


def _record(approved: ToolDoc | None, pending: ToolDoc | None) -> ApprovalDoc:
    return ApprovalDoc(doc_id=TOOL.tool_id, status="pending" if pending else "approved", reason="changed",
                       approved_hash="h" if approved else "", approved_source="mcp/zorblax",
                       approved_doc=asdict(approved) if approved else {}, approved_definition="a",
                       pending_hash="p" if pending else "", pending_source="mcp/zorblax" if pending else "",
                       pending_doc=asdict(pending) if pending else {}, pending_definition="b" if pending else "")


def test_a_record_is_seen_only_by_a_tenant_that_may_see_every_definition_it_stores() -> None:
    gamma, beta = replace(TOOL, tenants=("gamma",)), replace(TOOL, tenants=("beta",), description="Beta's.")
    # the state issue 44 found: gamma's pin, beta's catalog held against it under one plain id
    collision = _record(gamma, beta)
    public = _record(TOOL, replace(TOOL, description="changed"))

    assert not visible_to(collision, "beta") and not visible_to(collision, "gamma")
    assert visible_to(collision, None)
    assert visible_to(public, "beta") and visible_to(public, "gamma")
    assert visible_to(_record(beta, replace(beta, description="again")), "beta")
    assert not visible_to(replace(_record(TOOL, None), tenants=("gamma",)), "beta")


def test_a_record_from_before_scoped_ids_moves_to_the_scoped_id_of_its_pin_s_tenants_only() -> None:
    gamma, beta = replace(TOOL, tenants=("gamma",)), replace(TOOL, tenants=("beta",), description="Beta's.")
    collision = _record(gamma, beta)
    scoped = scoped_id(TOOL.tool_id, ("gamma",))

    moved = _moved(collision, scoped, ("gamma",))
    assert moved is not None and moved.doc_id == scoped and moved.tenants == ("gamma",)
    assert moved.approved_doc["tool_id"] == scoped and moved.approved_doc["agent_id"] == "agent:@gamma/zorblax-payroll-2"
    assert (moved.status, moved.approved_hash, moved.pending_doc, moved.pending_hash) == ("approved", "h", {}, "")
    assert _moved(collision, scoped_id(TOOL.tool_id, ("beta",)), ("beta",)) is None  # gamma's pin is not beta's
    own_change = _moved(_record(gamma, replace(gamma, description="v2")), scoped, ("gamma",))
    assert own_change is not None and own_change.status == "pending" and own_change.pending_doc["tool_id"] == scoped


def test_a_server_filter_by_name_also_names_the_callers_own_server_of_that_name() -> None:
    assert Scope(tenant="beta", agents=("agent:zorblax-payroll-2",)).clauses()[1] == {
        "terms": {"agent_id": ["agent:zorblax-payroll-2", "agent:@beta/zorblax-payroll-2"]}}
    assert Scope(agents=("agent:zorblax-payroll-2",)).clauses() == [
        {"terms": {"agent_id": ["agent:zorblax-payroll-2"]}}]


def test_a_benchmark_s_tool_names_resolve_to_the_ids_a_tenant_sees(tmp_path: Path) -> None:
    from toolsift.workbench.querysets import from_benchmark

    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text(json.dumps({"_id": "x/run", "text": "run"}) + "\n", encoding="utf-8")
    (tmp_path / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "run it"}) + "\n", encoding="utf-8")
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tx/run\t1\n", encoding="utf-8")

    found = from_benchmark(tmp_path, "idx", {"@beta/x/run", "other"}, tenant="beta")

    assert [dict(c.relevant) for c in found.queries] == [{"@beta/x/run": 1}]

