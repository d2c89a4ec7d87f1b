"""Search-pipeline templates: weights from the field weights, in the builder's layout, applied idempotently."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from opensearchpy.exceptions import NotFoundError

import toolsift.plugin_scripts.pipelines as pipelines_module
from toolsift.config import DEFAULT_FIELD_WEIGHTS
from toolsift.plugin_scripts.pipelines import (
    ensure_pipelines,
    layout_weights,
    pipeline_id,
    pipeline_templates,
    render_pipeline,
)
from toolsift.query.builder import QueryBuilder
from toolsift.plugin_scripts.pipelines import HYBRID_LAYOUT

TEMPLATE_DIR = Path(pipelines_module.__file__).parent / "search-pipelines"


def _weights(body: dict[str, Any]) -> list[float]:
    (proc,) = body["phase_results_processors"]
    return list(proc["normalization-processor"]["combination"]["parameters"]["weights"])


# --- templates ------------------------------------------------------------------------------------------


def test_every_json_template_parses_and_is_shipped() -> None:
    files = sorted(TEMPLATE_DIR.glob("*.json"))
    parsed = {f.stem: json.loads(f.read_text(encoding="utf-8")) for f in files}

    assert set(parsed) == {"fulldoc-hybrid", "hybrid-minmax", "hybrid-rrf", "joint-hybrid", "minilm-minmax"}
    assert pipeline_templates() == parsed
    for body in parsed.values():
        assert isinstance(body["description"], str) and body["description"]
        assert len(body["phase_results_processors"]) == 1


@pytest.mark.parametrize("retriever", ["hybrid", "minilm"])
def test_the_builder_pipeline_of_each_hybrid_mode_exists_with_one_weight_per_sub_query(retriever: str) -> None:
    name = QueryBuilder.pipeline_for(retriever)  # type: ignore[arg-type]

    assert name in pipeline_templates()
    assert len(_weights(pipeline_templates()[name])) == len(HYBRID_LAYOUT[retriever])  # type: ignore[index]


def test_pipeline_ids_are_prefixed_with_the_alias() -> None:
    assert pipeline_id("toolsift-tools", "hybrid-minmax") == "toolsift-tools-hybrid-minmax"


# --- layout_weights ----------------------------------------------------------------------------------------


def test_hybrid_weights_give_bm25_half_and_split_the_rest_by_field_weight() -> None:
    # layout: lexical, description, response, examples, parameters; field weights 1.0, 0.3, 0.5, 0.3 (sum 2.1)
    assert layout_weights("hybrid-minmax", DEFAULT_FIELD_WEIGHTS) == pytest.approx(
        [0.5, 0.5 * 1.0 / 2.1, 0.5 * 0.3 / 2.1, 0.5 * 0.5 / 2.1, 0.5 * 0.3 / 2.1], abs=1e-6
    )


def test_minilm_weights_follow_the_field_weights_with_a_small_full_doc_share() -> None:
    # layout: description, response, examples, parameters, full_doc; full_doc = 0.1 × 2.1 = 0.21 (sum 2.31)
    assert layout_weights("minilm-minmax", DEFAULT_FIELD_WEIGHTS) == pytest.approx(
        [1.0 / 2.31, 0.3 / 2.31, 0.5 / 2.31, 0.3 / 2.31, 0.21 / 2.31], abs=1e-6
    )


@pytest.mark.parametrize("name", ["hybrid-minmax", "minilm-minmax"])
@pytest.mark.parametrize(
    "field_weights",
    [
        DEFAULT_FIELD_WEIGHTS,
        {"description": 1.0, "parameters": 0.0, "response": 0.0, "examples": 0.0},
        {"description": 0.0, "parameters": 0.0, "response": 0.0, "examples": 0.0},
        {"description": 3.0, "parameters": 2.0, "response": 7.0, "examples": 0.1},
    ],
)
def test_weights_sum_to_one_and_are_all_positive(name: str, field_weights: dict[str, float]) -> None:
    weights = layout_weights(name, field_weights)

    assert weights is not None
    assert len(weights) == 5
    assert sum(weights) == pytest.approx(1.0, abs=1e-5)
    assert all(w > 0 for w in weights)


def test_a_zero_field_weight_is_floored_above_zero() -> None:
    weights = layout_weights("hybrid-minmax", {"description": 1.0, "parameters": 0.0, "response": 0.0, "examples": 0.0})

    # [0.5, 0.5, 0, 0, 0] floored to 0.001 each, renormalised by 1.003
    assert weights == pytest.approx([0.5 / 1.003, 0.5 / 1.003, 0.001 / 1.003, 0.001 / 1.003, 0.001 / 1.003], abs=1e-6)


@pytest.mark.parametrize("name", ["hybrid-minmax", "minilm-minmax"])
def test_doubling_the_description_weight_raises_its_share(name: str) -> None:
    retriever = name.split("-")[0]
    slot = HYBRID_LAYOUT[retriever].index("description")
    doubled = {**DEFAULT_FIELD_WEIGHTS, "description": 2 * DEFAULT_FIELD_WEIGHTS["description"]}

    before = layout_weights(name, DEFAULT_FIELD_WEIGHTS)
    after = layout_weights(name, doubled)

    assert before is not None and after is not None
    assert after[slot] > before[slot]
    # the other fields give up share; BM25's half and full_doc's tenth are fixed proportions
    others = [i for i, part in enumerate(HYBRID_LAYOUT[retriever]) if part in ("response", "examples", "parameters")]
    assert all(after[i] < before[i] for i in others)


@pytest.mark.parametrize("name", ["hybrid-minmax", "minilm-minmax"])
def test_each_field_weight_lands_in_its_own_layout_slot(name: str) -> None:
    retriever = name.split("-")[0]
    layout = HYBRID_LAYOUT[retriever]
    for field in ("description", "response", "examples", "parameters"):
        only = {f: (1.0 if f == field else 0.0) for f in DEFAULT_FIELD_WEIGHTS}
        weights = layout_weights(name, only)
        assert weights is not None
        dense_slots = [i for i, part in enumerate(layout) if part not in ("lexical", "full_doc")]
        assert max(dense_slots, key=lambda i: weights[i]) == layout.index(field), field


def test_templates_without_min_max_weights_have_none() -> None:
    assert layout_weights("hybrid-rrf", DEFAULT_FIELD_WEIGHTS) is None
    assert layout_weights("bm25-minmax", DEFAULT_FIELD_WEIGHTS) is None


# --- render_pipeline ----------------------------------------------------------------------------------------


def test_render_fills_the_weights_and_leaves_the_template_untouched() -> None:
    template = pipeline_templates()["hybrid-minmax"]
    original = json.loads(json.dumps(template))

    body = render_pipeline("hybrid-minmax", template, DEFAULT_FIELD_WEIGHTS)

    assert _weights(body) == layout_weights("hybrid-minmax", DEFAULT_FIELD_WEIGHTS)
    assert template == original
    (proc,) = body["phase_results_processors"]
    assert proc["normalization-processor"]["normalization"] == {"technique": "min_max"}
    assert proc["normalization-processor"]["combination"]["technique"] == "arithmetic_mean"


def test_render_leaves_a_template_without_weights_as_it_is() -> None:
    template = pipeline_templates()["hybrid-rrf"]

    assert render_pipeline("hybrid-rrf", template, DEFAULT_FIELD_WEIGHTS) == template


# --- ensure_pipelines ------------------------------------------------------------------------------------------


class _FakePipelines:
    """``client.search_pipeline`` with a dict for a cluster; records every call."""

    def __init__(self) -> None:
        self.stored: dict[str, Any] = {}
        self.puts: list[str] = []

    def get(self, *, id: str) -> dict[str, Any]:  # noqa: A002 - opensearch-py's keyword
        if id not in self.stored:
            raise NotFoundError(404, "not found", {})
        return {id: json.loads(json.dumps(self.stored[id]))}

    def put(self, *, id: str, body: dict[str, Any]) -> dict[str, Any]:  # noqa: A002
        self.puts.append(id)
        self.stored[id] = json.loads(json.dumps(body))
        return {"acknowledged": True}


class _FakeClient:
    def __init__(self) -> None:
        self.search_pipeline = _FakePipelines()


def test_ensure_installs_every_missing_template_under_the_alias() -> None:
    client = _FakeClient()

    ids = ensure_pipelines(client, "tools", DEFAULT_FIELD_WEIGHTS)  # type: ignore[arg-type]

    assert ids == {
        "fulldoc-hybrid": "tools-fulldoc-hybrid",
        "hybrid-minmax": "tools-hybrid-minmax",
        "hybrid-rrf": "tools-hybrid-rrf",
        "joint-hybrid": "tools-joint-hybrid",
        "minilm-minmax": "tools-minilm-minmax",
    }
    assert sorted(client.search_pipeline.puts) == sorted(ids.values())
    assert _weights(client.search_pipeline.stored["tools-hybrid-minmax"]) == layout_weights(
        "hybrid-minmax", DEFAULT_FIELD_WEIGHTS
    )


def test_ensure_writes_nothing_when_the_stored_bodies_are_current() -> None:
    client = _FakeClient()
    ensure_pipelines(client, "tools", DEFAULT_FIELD_WEIGHTS)  # type: ignore[arg-type]
    client.search_pipeline.puts.clear()

    ensure_pipelines(client, "tools", DEFAULT_FIELD_WEIGHTS)  # type: ignore[arg-type]

    assert client.search_pipeline.puts == []


def test_ensure_rewrites_only_the_pipelines_whose_weights_changed() -> None:
    client = _FakeClient()
    ensure_pipelines(client, "tools", DEFAULT_FIELD_WEIGHTS)  # type: ignore[arg-type]
    client.search_pipeline.puts.clear()

    ensure_pipelines(client, "tools", {**DEFAULT_FIELD_WEIGHTS, "response": 0.9})  # type: ignore[arg-type]

    assert sorted(client.search_pipeline.puts) == ["tools-hybrid-minmax", "tools-minilm-minmax"]


def test_ensure_keeps_aliases_apart() -> None:
    client = _FakeClient()
    ensure_pipelines(client, "one", DEFAULT_FIELD_WEIGHTS)  # type: ignore[arg-type]
    client.search_pipeline.puts.clear()

    ensure_pipelines(client, "two", DEFAULT_FIELD_WEIGHTS)  # type: ignore[arg-type]

    assert sorted(client.search_pipeline.puts) == [
        "two-fulldoc-hybrid", "two-hybrid-minmax", "two-hybrid-rrf", "two-joint-hybrid", "two-minilm-minmax"]
