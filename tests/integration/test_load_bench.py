"""`toolsift bench load`'s runner end to end, briefly: the real API process and the floor process, driven by
Locust on loopback (timings are figures, never asserted)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from tests.integration.conftest import TenantCatalog

pytestmark = pytest.mark.integration


@pytest.mark.slow  # a benchmark command's full drill: `make test-slow` (CI time, docs/contributing.md)
def test_the_load_bench_measures_the_api_and_the_floor_in_one_run(tenant_catalog: TenantCatalog) -> None:
    from toolsift.bench.load import run_load

    figures = run_load(tenant_catalog.settings, tenant_catalog.queries, clients=(1, 2), step_s=5, hold_s=5)

    for name in ("api", "floor"):
        service = figures["services"][name]
        assert [s["clients"] for s in service["steps"]][:1] == [1]
        assert all(s["requests"] > 0 and s["errors"] == 0 for s in service["steps"])
        assert service["capacity"] is None or service["hold"]["clients"] == service["capacity"]["clients"]
    assert figures["services"]["api"]["path"] == "/v1/search" and figures["services"]["floor"]["path"] == "/v1/floor"
    assert figures["ratios"]["p50_at_1_client"] > 0


def test_a_step_in_which_no_request_completes_is_an_error_that_says_so(tmp_path: Path) -> None:
    from toolsift.bench.load import NoRequestCompletedError, locust_step

    with socket.socket() as silent:  # accepts connections and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        env = {**os.environ, "TOOLSIFT_LOAD_QUERIES": str(tmp_path / "queries.json")}
        (tmp_path / "queries.json").write_text('["find a weather tool"]', encoding="utf-8")

        with pytest.raises(NoRequestCompletedError, match="api: no request completed in 2 s with 1 client"):
            locust_step("api", url, "/v1/search", 1, 2, env, tmp_path)
