"""The OpenSearch objects of ``toolsift deploy opensearch``: names, connectors, the pipeline, the template.

What the cluster does with them is specified on the real node (tests/integration/test_opensearch_pipeline.py);
these pin the shapes a search team reads and the guarantees that do not need a node.
"""

from __future__ import annotations

import json

import pytest

from toolsift.errors import ConfigError
from toolsift.plugin_scripts.native import (
    NativeModels,
    connector_body,
    native_names,
    pipeline_body,
    template_source,
)

NORMALIZATION = [{"normalization-processor": {"normalization": {"technique": "min_max"},
                                              "combination": {"technique": "arithmetic_mean",
                                                              "parameters": {"weights": [0.5, 0.2, 0.1, 0.1, 0.1]}}}}]


@pytest.mark.parametrize(("alias", "pipeline", "template"), [
    ("toolsift-tools", "toolsift", "toolsift-tools"),
    ("toolsift-eval-apibank", "toolsift-eval-apibank", "toolsift-eval-apibank-tools"),
    ("team-a-tools", "team-a", "team-a-tools"),
])
def test_the_default_alias_gets_the_pipeline_toolsift_and_the_template_toolsift_tools(
    alias: str, pipeline: str, template: str
) -> None:
    names = native_names(alias)
    assert (names.pipeline, names.template) == (pipeline, template)


def test_a_pipeline_name_is_checked() -> None:
    assert native_names("toolsift-tools", "mine").template == "mine-tools"
    with pytest.raises(ConfigError, match="pipeline name"):
        native_names("toolsift-tools", "Bad Name")


def test_the_token_travels_only_as_the_connectors_credential() -> None:
    body = connector_body("ranking", "http://127.0.0.1:8300/", "t0ken", 2.5)
    assert body["credential"] == {"token": "t0ken"}
    action = body["actions"][0]
    assert action["url"] == "http://127.0.0.1:8300/v1/opensearch/rank"
    assert action["headers"]["Authorization"] == "Bearer ${credential.token}"
    assert "t0ken" not in json.dumps({k: v for k, v in body.items() if k != "credential"})
    # ml-commons takes whole seconds: a fractional timeout rounds up, never to 0
    assert body["client_config"]["read_timeout"] == 3 and body["client_config"]["max_retry_times"] == 0
    assert connector_body("first-stage", "http://h:1", "t", 0.2)["client_config"]["connection_timeout"] == 1


def test_the_pipeline_chains_first_stage_learned_weights_ranking_and_order() -> None:
    names = native_names("toolsift-tools")
    body = pipeline_body(names, NativeModels("Q", "R"), NORMALIZATION, description="d")
    (request,) = body["request_processors"]
    assert request["ml_inference"]["model_id"] == "Q"
    assert request["ml_inference"]["query_template"] == "${toolsift_body}"
    assert request["ml_inference"]["model_config"] == {"index": "toolsift-tools"}
    assert body["phase_results_processors"] == NORMALIZATION
    ranking, order = body["response_processors"]
    assert ranking["ml_inference"]["model_id"] == "R" and ranking["ml_inference"]["one_to_one"] is False
    assert order["rerank"]["by_field"]["target_field"] == "toolsift_order"


def test_every_toolsift_processor_falls_back_instead_of_failing_the_search() -> None:
    """The setting that keeps a search answering in first-stage order when the ranker is down or slow."""
    body = pipeline_body(native_names("toolsift-tools"), NativeModels("Q", "R"), NORMALIZATION, description="d")
    processors = [*body["request_processors"], *body["response_processors"]]
    assert all(next(iter(p.values()))["ignore_failure"] is True for p in processors)


def test_the_template_defaults_to_the_configured_candidates_and_carries_the_request() -> None:
    source = template_source(100)
    assert "<<" not in source and "{{^candidates}}100{{/candidates}}" in source
    for param in ("text", "tool_needs", "extracted_arguments", "tenant", "agents", "tags", "candidates"):
        assert param in source.split('"ml_inference"')[1], param
