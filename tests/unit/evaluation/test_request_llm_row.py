"""The whole-request evaluation's LLM row: refused without an LLM, and its cost counted per source."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolsift.config import Settings
from toolsift.errors import ConfigError
from toolsift.evaluation.request_eval import _llm_cost, run_request_eval


def test_an_llm_rewrite_row_with_no_llm_and_nothing_cached_is_refused_before_any_search(
    tmp_path: Path, datasets: Path
) -> None:
    settings = Settings(llm_base_url=None, llm_cache_dir=tmp_path / "empty-cache")
    with pytest.raises(ConfigError, match="llm_base_url") as refused:
        run_request_eval(None, settings, datasets / "livemcpbench", embedder=None, llm_rewrite=True)  # type: ignore[arg-type]
    assert "toolsift cache import" in str(refused.value)


def test_the_llm_cost_counts_only_the_requests_that_called_it() -> None:
    sources = {"a": "llm", "b": "cache", "c": "llm", "d": "fallback", "e": "invalid"}
    cost = _llm_cost(sources, [4000.0, 30.0, 6000.0, 20.0, 11000.0], "qwen")
    assert cost == {"model": "qwen", "sources": {"llm": 2, "invalid": 1, "cache": 1, "fallback": 1},
                    "seconds_per_llm_request": 7.0}


def test_the_llm_cost_of_a_run_answered_from_the_cache_has_no_per_request_figure() -> None:
    assert _llm_cost({"a": "cache"}, [12.0], "qwen")["seconds_per_llm_request"] is None
