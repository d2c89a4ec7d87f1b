"""Query sets from judgments and from benchmark folders; judgment identity."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolsift.errors import BadQueryError, CatalogError
from toolsift.workbench.judgments import Judgment, judgment_id
from toolsift.workbench.querysets import QuerySet, from_benchmark, from_judgments

DATASETS = Path(__file__).resolve().parents[3] / ".." / "shared" / "datasets"


def test_judging_the_same_result_again_addresses_the_same_document() -> None:
    assert judgment_id("idx", "convert  a doc ", "t1") == judgment_id("idx", "convert a doc", "t1")
    assert judgment_id("idx", "convert a doc", "t1") != judgment_id("idx", "convert a doc", "t2")
    assert judgment_id("idx", "convert a doc", "t1") != judgment_id("other", "convert a doc", "t1")


def test_each_tenant_judges_a_result_in_a_document_of_its_own_and_shared_judgments_keep_their_id() -> None:
    shared = judgment_id("idx", "convert a doc", "t1", "*")
    assert shared == judgment_id("idx", "convert a doc", "t1")  # the id judgments had before tenants
    assert len({shared, judgment_id("idx", "convert a doc", "t1", "acme"),
                judgment_id("idx", "convert a doc", "t1", "globex")}) == 3


def test_a_query_set_from_judgments_has_one_query_per_judged_text_with_its_relevant_tools() -> None:
    judged = [
        Judgment("idx", "convert a doc", "t1", True), Judgment("idx", "convert a doc", "t2", False),
        Judgment("idx", "weather", "t9", False), Judgment("other", "weather", "t3", True),
    ]
    qs = from_judgments("judged", "idx", judged)
    assert {c.text: c.relevant for c in qs.queries} == {"convert a doc": {"t1": 1}, "weather": {}}
    assert qs.qrels() == {"j1": {"t1": 1}}  # a query nothing was relevant for is not scored
    assert qs.notes["without_relevant"] == 1
    with pytest.raises(BadQueryError, match="no judgments"):
        from_judgments("judged", "empty-index", judged)
    with pytest.raises(BadQueryError, match="query set name"):
        from_judgments("no spaces please", "idx", judged)


def test_a_query_set_survives_its_index_document() -> None:
    qs = from_judgments("judged", "idx", [Judgment("idx", "convert a doc", "t1", True)], tenant="acme")
    assert QuerySet.from_doc(qs.to_doc()).queries == qs.queries
    assert QuerySet.from_doc(qs.to_doc()).tenant == qs.summary()["tenant"] == "acme"
    legacy = {k: v for k, v in qs.to_doc().items() if k != "tenant"}  # written before tenants were recorded
    assert QuerySet.from_doc(legacy).tenant == "*"


@pytest.mark.skipif(not (DATASETS / "livemcpbench").exists(), reason="benchmark data not found")
def test_an_imported_benchmark_keeps_only_the_relevant_tools_the_index_holds() -> None:
    ids = {"office-word-mcp-server/convert_to_pdf", "office-word-mcp-server/add_paragraph"}
    qs = from_benchmark(DATASETS / "livemcpbench", "demo", ids)
    assert qs.queries and all(set(c.relevant) <= ids for c in qs.queries)
    assert qs.notes["relevant_tools_not_in_index"] > 0 and qs.origin.startswith("benchmark:")
    with pytest.raises(CatalogError, match="none of the benchmark's relevant tools"):
        from_benchmark(DATASETS / "livemcpbench", "demo", {"nothing/here"})
