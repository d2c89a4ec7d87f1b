"""The bundled OpenSearch Dashboards saved objects, checked offline against the import format and
against the real index mappings, and the importer's HTTP exchange.

No Dashboards instance runs here (no Docker engine, no download): the format checks are those of a
Dashboards 2.x (Kibana 7.10) saved-objects export — one JSON object a line, nested documents as JSON
strings, every index and panel reached through ``references`` — and every field a visualisation
aggregates, splits, sorts or filters on must exist in the index's mapping with a type that
aggregation accepts. The importer is exercised with ``httpx.MockTransport`` for the request it sends
and the answers Dashboards gives, and with a closed local port for the unreachable case.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from toolsift.cli.main import cli
from toolsift.config import Settings
from toolsift.dashboards import importer
from toolsift.dashboards.importer import (
    check_saved_objects,
    import_saved_objects,
    load_saved_objects,
    validate_saved_objects,
)
from toolsift.mappings.evalruns_doc import eval_runs_index_body
from toolsift.learning.querylog_doc import query_log_index_body
from toolsift.mappings.workbench import judgments_index_body
from toolsift.errors import ERROR_TABLE, ClusterError, ConfigError

CLOSED_PORT_URL = "http://127.0.0.1:9"  # discard port: nothing listens, connections are refused

#: index-pattern id -> (settings field holding the index name, the index's mapping body)
INDICES = {
    "toolsift-querylog": ("query_log_index", query_log_index_body),
    "toolsift-judgments": ("judgments_index", judgments_index_body),
    "toolsift-evalruns": ("eval_runs_index", eval_runs_index_body),
}
NUMERIC = {"long", "integer", "short", "byte", "double", "float", "half_float", "scaled_float", "unsigned_long"}
AGGREGATABLE = NUMERIC | {"keyword", "boolean", "date", "date_nanos", "ip"}
#: aggregation type -> field types it takes (Dashboards' agg-type field filters)
FIELD_TYPES = {
    "avg": NUMERIC, "sum": NUMERIC, "median": NUMERIC, "percentiles": NUMERIC,
    "min": NUMERIC | {"date"}, "max": NUMERIC | {"date"}, "cardinality": AGGREGATABLE,
    "date_histogram": {"date", "date_nanos"}, "histogram": NUMERIC,
    "terms": NUMERIC | {"keyword", "boolean", "date", "ip"}, "top_hits": AGGREGATABLE,
}
MIGRATION_VERSIONS = {"index-pattern": "7.6.0", "visualization": "7.10.0", "search": "7.9.3", "dashboard": "7.9.3"}


def field_types(body: dict[str, Any]) -> dict[str, str]:
    """``dotted field name -> mapping type`` of an index body, multi-fields (``request.raw``) included."""
    found: dict[str, str] = {}

    def walk(properties: dict[str, Any], prefix: str) -> None:
        for name, spec in properties.items():
            path = f"{prefix}{name}"
            if "properties" in spec:
                walk(spec["properties"], f"{path}.")
                continue
            found[path] = "disabled" if spec.get("enabled") is False else spec.get("type", "object")
            for sub, sub_spec in spec.get("fields", {}).items():
                found[f"{path}.{sub}"] = sub_spec["type"]

    walk(body["mappings"]["properties"], "")
    return found


@pytest.fixture(scope="module")
def objects() -> list[dict[str, Any]]:
    return load_saved_objects()


@pytest.fixture(scope="module")
def by_key(objects: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(o["type"], o["id"]): o for o in objects}


def of_type(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["type"] == kind]


def index_pattern_of(obj: dict[str, Any]) -> str:
    """The index-pattern id a visualisation or saved search reads (through its searchSourceJSON)."""
    source = json.loads(obj["attributes"]["kibanaSavedObjectMeta"]["searchSourceJSON"])
    (ref,) = [r for r in obj["references"] if r["name"] == source["indexRefName"]]
    assert ref["type"] == "index-pattern"
    return str(ref["id"])


# --- the file format -----------------------------------------------------------------------------------


def test_the_bundled_file_is_package_data_and_every_line_is_one_json_object() -> None:
    source, text = importer.read_saved_objects_file()
    lines = text.splitlines()

    assert source.endswith("saved_objects.ndjson")
    assert lines and all(line.strip() for line in lines)  # no blank lines in between
    for line in lines:
        assert isinstance(json.loads(line), dict)
    assert len(load_saved_objects()) == len(lines)


def test_the_file_passes_the_importers_own_format_checks(objects: list[dict[str, Any]]) -> None:
    assert validate_saved_objects(objects) == []
    source, checked = check_saved_objects()
    assert checked == objects and source.endswith("saved_objects.ndjson")


def test_every_object_has_the_export_keys_and_a_dashboards_2_migration_version(objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        assert set(obj) == {"id", "type", "attributes", "references", "migrationVersion"}, obj["id"]
        assert obj["migrationVersion"] == {obj["type"]: MIGRATION_VERSIONS[obj["type"]]}, obj["id"]
    kinds = [o["type"] for o in objects]
    assert kinds.count("index-pattern") == 3 and kinds.count("dashboard") == 1
    assert kinds.count("visualization") >= 9 and kinds.count("search") == 3


def test_nested_documents_are_json_strings_that_parse(objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        attributes = obj["attributes"]
        for name in ("fields", "visState", "uiStateJSON", "panelsJSON", "optionsJSON"):
            if name in attributes:
                assert isinstance(attributes[name], str), (obj["id"], name)
                json.loads(attributes[name])
        if "kibanaSavedObjectMeta" in attributes:
            source = json.loads(attributes["kibanaSavedObjectMeta"]["searchSourceJSON"])
            assert "index" not in source  # indices go through references, never by id
            if obj["type"] in ("visualization", "search"):
                assert source["indexRefName"] == "kibanaSavedObjectMeta.searchSourceJSON.index"
                assert source["query"]["language"] == "kuery"


def test_every_reference_resolves_to_an_object_in_the_file(
    objects: list[dict[str, Any]], by_key: dict[tuple[str, str], dict[str, Any]]
) -> None:
    for obj in objects:
        for ref in obj["references"]:
            assert (ref["type"], ref["id"]) in by_key, (obj["id"], ref)


def test_index_patterns_match_the_configured_indices_with_a_trailing_star(
    by_key: dict[tuple[str, str], dict[str, Any]]
) -> None:
    for pattern_id, (setting, body) in INDICES.items():
        attributes = by_key[("index-pattern", pattern_id)]["attributes"]
        index = Settings.model_fields[setting].default

        assert attributes["title"] == f"{index}*"
        assert field_types(body())[attributes["timeFieldName"]] == "date"
        assert json.loads(attributes.get("fields", "[]")) == []  # Dashboards reads the fields on first use


# --- fields against the mappings -----------------------------------------------------------------------


def test_every_aggregated_split_or_sorted_field_exists_and_is_aggregatable(objects: list[dict[str, Any]]) -> None:
    checked = 0
    for vis in of_type(objects, "visualization"):
        fields = field_types(INDICES[index_pattern_of(vis)][1]())
        state = json.loads(vis["attributes"]["visState"])
        for agg in state["aggs"]:
            params = agg["params"]
            if agg["type"] == "count":
                assert "field" not in params
                continue
            assert agg["type"] in FIELD_TYPES, (vis["id"], agg["type"])
            name = params["field"]
            assert name in fields, (vis["id"], name)
            assert fields[name] in FIELD_TYPES[agg["type"]], (vis["id"], agg["type"], name, fields[name])
            if "sortField" in params:
                assert fields[params["sortField"]] in NUMERIC | {"date", "keyword"}, (vis["id"], params["sortField"])
            checked += 1
    assert checked >= 20


def test_date_histograms_bucket_on_the_index_patterns_time_field(
    objects: list[dict[str, Any]], by_key: dict[tuple[str, str], dict[str, Any]]
) -> None:
    for vis in of_type(objects, "visualization"):
        time_field = by_key[("index-pattern", index_pattern_of(vis))]["attributes"]["timeFieldName"]
        for agg in json.loads(vis["attributes"]["visState"])["aggs"]:
            if agg["type"] == "date_histogram":
                assert agg["params"]["field"] == time_field, vis["id"]


def test_queries_and_saved_search_columns_name_mapped_fields(objects: list[dict[str, Any]]) -> None:
    for obj in of_type(objects, "visualization") + of_type(objects, "search"):
        fields = field_types(INDICES[index_pattern_of(obj)][1]())
        query = json.loads(obj["attributes"]["kibanaSavedObjectMeta"]["searchSourceJSON"])["query"]["query"]
        for name in re.findall(r"([A-Za-z_][\w.]*)\s*:", query):
            assert name in fields, (obj["id"], name)
        if obj["type"] == "search":
            for column in obj["attributes"]["columns"]:
                assert column in fields, (obj["id"], column)
            for name, _direction in obj["attributes"]["sort"]:
                assert fields[name] in AGGREGATABLE, (obj["id"], name)


def test_the_panels_the_brief_asks_for_are_there(objects: list[dict[str, Any]]) -> None:
    states = {v["id"]: json.loads(v["attributes"]["visState"]) for v in of_type(objects, "visualization")}

    def aggs(vid: str) -> list[tuple[str, str, str | None]]:
        return [(a["type"], a["schema"], a["params"].get("field")) for a in states[vid]["aggs"]]

    latency = states["toolsift-search-latency"]
    assert latency["type"] == "line"
    assert next(a for a in latency["aggs"] if a["type"] == "percentiles")["params"]["percents"] == [50, 95, 99]
    assert ("date_histogram", "segment", "timestamp") in aggs("toolsift-search-latency")
    assert ("terms", "group", "degraded") in aggs("toolsift-degraded-share")
    assert states["toolsift-degraded-share"]["params"]["valueAxes"][0]["scale"]["mode"] == "percentage"
    assert {("terms", "segment", "source"), ("terms", "group", "level")} <= set(aggs("toolsift-searches-by-source"))
    assert states["toolsift-top-requests"]["type"] == "table"
    assert ("terms", "bucket", "request.raw") in aggs("toolsift-top-requests")
    assert ("terms", "segment", "top_tool") in aggs("toolsift-top-tools")
    assert {("terms", "segment", "query_set"), ("terms", "group", "relevant")} <= set(aggs("toolsift-judgments-by-set"))
    for vid, metric in (("toolsift-eval-ndcg10", "ndcg_10"), ("toolsift-eval-recall10", "recall_10"),
                        ("toolsift-eval-tracc", "tracc")):
        assert states[vid]["type"] == "line"
        assert {("max", "metric", metric), ("date_histogram", "segment", "recorded_at"),
                ("terms", "group", "query_set")} <= set(aggs(vid))
    latest = aggs("toolsift-latest-eval-runs")
    assert {("terms", "bucket", "query_set"), ("terms", "bucket", "row")} <= set(latest)
    assert {("top_hits", "metric", f) for f in ("ndcg_10", "recall_10", "tracc")} <= set(latest)


def test_the_dashboard_shows_every_visualisation_once_on_a_48_column_grid(
    objects: list[dict[str, Any]]
) -> None:
    (dashboard,) = of_type(objects, "dashboard")
    attributes = dashboard["attributes"]
    panels = json.loads(attributes["panelsJSON"])
    refs = {r["name"]: r for r in dashboard["references"]}

    assert attributes["title"] == "toolsift — relevance tuning"
    assert all(p["panelRefName"] in refs for p in panels)
    shown = sorted(refs[p["panelRefName"]]["id"] for p in panels)
    assert shown == sorted(v["id"] for v in of_type(objects, "visualization"))
    assert len({p["panelIndex"] for p in panels}) == len(panels)
    cells: set[tuple[int, int]] = set()
    for panel in panels:
        grid = panel["gridData"]
        assert grid["i"] == panel["panelIndex"] and 0 <= grid["x"] and grid["x"] + grid["w"] <= 48
        area = {(x, y) for x in range(grid["x"], grid["x"] + grid["w"]) for y in range(grid["y"], grid["y"] + grid["h"])}
        assert not area & cells, panel  # no two panels overlap
        cells |= area
    assert json.loads(attributes["optionsJSON"]) == {"useMargins": True, "hidePanelTitles": False}


# --- the checks catch broken files ---------------------------------------------------------------------


def broken(objects: list[dict[str, Any]], kind: str, change: Any) -> list[dict[str, Any]]:
    copy = json.loads(json.dumps(objects))
    change(next(o for o in copy if o["type"] == kind))
    return copy


@pytest.mark.parametrize(("kind", "change", "expected"), [
    ("visualization", lambda o: o["references"].clear(), "indexRefName 'kibanaSavedObjectMeta.searchSourceJSON.index'"),
    ("visualization", lambda o: o["attributes"].update(visState="{not json"), "visState is not valid JSON"),
    ("visualization", lambda o: o["attributes"].update(visState={"type": "line"}), "visState must be a JSON string"),
    ("visualization", lambda o: o["references"][0].update(id="nowhere"), "index-pattern:nowhere, which the file lacks"),
    ("dashboard", lambda o: o["references"].pop(), "has no reference"),
    ("dashboard", lambda o: o["attributes"].pop("panelsJSON"), "attribute 'panelsJSON' missing"),
    ("index-pattern", lambda o: o.update(migrationVersion={}), "migrationVersion lacks 'index-pattern'"),
    ("search", lambda o: o.update(type="lens"), "unsupported type 'lens'"),
], ids=["no-index-reference", "visstate-not-json", "visstate-object", "dangling-reference", "panel-without-reference",
        "no-panels", "no-migration-version", "unsupported-type"])
def test_validation_names_each_kind_of_problem(objects: list[dict[str, Any]], kind: str, change: Any, expected: str) -> None:
    problems = validate_saved_objects(broken(objects, kind, change))

    assert any(expected in p for p in problems), problems


def test_a_malformed_file_is_a_config_error_naming_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ndjson"
    bad.write_text('{"id": "a", "type": "index-pattern"}\n[1, 2]\n', encoding="utf-8")

    with pytest.raises(ConfigError, match=r"bad\.ndjson line 2: a saved object must be a JSON object"):
        load_saved_objects(bad)
    bad.write_text("{nope\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 1: not JSON"):
        load_saved_objects(bad)


# --- the importer's HTTP exchange ----------------------------------------------------------------------


def test_the_import_posts_the_file_as_multipart_with_the_xsrf_header(objects: list[dict[str, Any]]) -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"success": True, "successCount": len(objects)})

    summary = import_saved_objects("http://dashboards.test:5601/", transport=httpx.MockTransport(answer))

    (request,) = seen
    assert request.method == "POST"
    assert request.url.path == "/api/saved_objects/_import"
    assert dict(request.url.params) == {"overwrite": "true"}
    assert request.headers["osd-xsrf"] == "true"
    assert request.headers["content-type"].startswith("multipart/form-data; boundary=")
    body = request.read().decode("utf-8")
    assert 'Content-Disposition: form-data; name="file"; filename="saved_objects.ndjson"' in body
    assert importer.read_saved_objects_file()[1] in body  # the file, byte for byte
    assert summary.success_count == len(objects) and summary.url == "http://dashboards.test:5601"
    assert ("dashboard", "toolsift-relevance-tuning", "toolsift — relevance tuning") in summary.objects


def test_no_overwrite_and_basic_auth_reach_the_request() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"success": True, "successCount": 17})

    import_saved_objects("http://d:5601", overwrite=False, auth=("admin", "secret"),
                         transport=httpx.MockTransport(answer))

    assert "overwrite" not in seen[0].url.params
    assert seen[0].headers["authorization"].startswith("Basic ")


def test_rejected_objects_are_listed_with_their_reasons() -> None:
    answer = {"success": False, "successCount": 15, "errors": [
        {"id": "toolsift-top-tools", "type": "visualization", "title": "toolsift — top tools returned",
         "error": {"type": "missing_references", "references": [{"type": "index-pattern", "id": "toolsift-querylog"}]}},
        {"id": "toolsift-relevance-tuning", "type": "dashboard", "meta": {"title": "toolsift — relevance tuning"},
         "error": {"type": "conflict"}},
    ]}
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=answer))

    with pytest.raises(ClusterError) as caught:
        import_saved_objects("http://d:5601", transport=transport)

    message = str(caught.value)
    assert "http://d:5601 rejected 2 of 17 saved object(s)" in message and "(15 imported)" in message
    assert "visualization:toolsift-top-tools 'toolsift — top tools returned': missing_references " \
           "(index-pattern:toolsift-querylog)" in message
    assert "dashboard:toolsift-relevance-tuning 'toolsift — relevance tuning': conflict" in message


def test_an_http_error_names_the_url_status_and_message() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(
        400, json={"statusCode": 400, "error": "Bad Request", "message": "Invalid file extension .txt"}))

    with pytest.raises(ClusterError, match=r"http://d:5601 answered HTTP 400 .*Invalid file extension \.txt"):
        import_saved_objects("http://d:5601", transport=transport)


def test_while_waiting_a_starting_dashboards_503_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importer, "_RETRY_PAUSE_S", 0.0)
    answers = iter([httpx.Response(503, text="OpenSearch Dashboards server is not ready yet"),
                    httpx.Response(200, json={"success": True, "successCount": 17})])
    transport = httpx.MockTransport(lambda request: next(answers))

    assert import_saved_objects("http://d:5601", wait=30, transport=transport).success_count == 17
    transport = httpx.MockTransport(lambda request: httpx.Response(503, text="not ready yet"))
    with pytest.raises(ClusterError, match="HTTP 503"):
        import_saved_objects("http://d:5601", transport=transport)  # wait=0: no retry


def test_an_unreachable_dashboards_is_a_cluster_error_naming_the_url() -> None:
    with pytest.raises(ClusterError, match=re.escape(f"OpenSearch Dashboards at {CLOSED_PORT_URL} is unreachable")):
        import_saved_objects(CLOSED_PORT_URL, timeout=5)


def test_an_invalid_file_is_refused_before_anything_is_sent(tmp_path: Path, objects: list[dict[str, Any]]) -> None:
    bad = tmp_path / "bad.ndjson"
    copy = broken(objects, "dashboard", lambda o: o["references"].clear())
    bad.write_text("\n".join(json.dumps(o) for o in copy) + "\n", encoding="utf-8")
    transport = httpx.MockTransport(lambda request: pytest.fail("nothing may be sent"))

    with pytest.raises(ConfigError, match="panelRefName 'panel_0' has no reference"):
        import_saved_objects("http://d:5601", file=bad, transport=transport)


# --- the command ---------------------------------------------------------------------------------------


@pytest.mark.usefixtures("clean_env")
def test_dashboards_import_check_lists_the_objects_offline() -> None:
    result = CliRunner().invoke(cli, ["dashboards", "import", "--check"])

    assert result.exit_code == 0, result.output
    first = result.output.splitlines()[0]
    assert "17 saved objects, valid (3 index-pattern, 10 visualization, 3 search, 1 dashboard); nothing sent" in first
    assert "toolsift-relevance-tuning" in result.output and "toolsift-querylog*" in result.output

    as_json = CliRunner().invoke(cli, ["dashboards", "import", "--check", "--json"])
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.output)["valid"] is True


@pytest.mark.usefixtures("clean_env")
def test_dashboards_import_check_fails_on_a_broken_file(tmp_path: Path, objects: list[dict[str, Any]]) -> None:
    bad = tmp_path / "bad.ndjson"
    copy = broken(objects, "visualization", lambda o: o["attributes"].update(visState="{"))
    bad.write_text("\n".join(json.dumps(o) for o in copy) + "\n", encoding="utf-8")

    result = CliRunner().invoke(cli, ["dashboards", "import", "--check", "--file", str(bad)])

    assert result.exit_code == ERROR_TABLE[ConfigError].exit_code
    assert "ConfigError" in result.output and "visState is not valid JSON" in result.output


@pytest.mark.usefixtures("clean_env")
def test_dashboards_import_to_an_unreachable_url_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIFT_DASHBOARDS_URL", CLOSED_PORT_URL)

    result = CliRunner().invoke(cli, ["dashboards", "import"])

    assert result.exit_code == ERROR_TABLE[ClusterError].exit_code
    assert f"ClusterError: OpenSearch Dashboards at {CLOSED_PORT_URL} is unreachable" in result.output
