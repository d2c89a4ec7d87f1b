"""Bad catalogs give clear errors, and strict ingest never leaves anything half-written.

Each bad catalog is a slice of real APIBank tools with one record spoiled in one way. With
``strict=True`` ingest raises naming the record (position and id) and the index gets no document;
without it every valid record is indexed and the report lists the bad one with its position and
reason; the ``toolsift ingest`` command exits non-zero and prints the reject.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolsift.cli.main import cli
from toolsift.errors import ERROR_TABLE, CatalogError, CatalogRecordError, CatalogRejectedError, ClusterError
from toolsift.ingest.pipeline import ingest_catalog

pytestmark = pytest.mark.integration

SLICE = 5
Records = list[dict[str, Any]]




@pytest.fixture()
def records(datasets: Path) -> Records:
    data = json.loads((datasets / "toolret" / "apibank" / "tools.json").read_text(encoding="utf-8"))
    return copy.deepcopy(data[:SLICE])


def write(folder: Path, data: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tools.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


# --- the spoiled catalogs ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Spoiled:
    """One way to spoil one record, and what the reject must say about it."""

    spoil: Callable[[Records], None]
    position: str
    record_id: str
    field: str | None
    reason: str  # a phrase the reason contains


def _drop_name(records: Records) -> None:
    del records[2]["documentation"]["name"]


def _name_is_a_number(records: Records) -> None:
    records[2]["documentation"]["name"] = 42


def _parameters_are_garbage_text(records: Records) -> None:
    records[2]["documentation"]["parameters"] = "@@ username & password, whatever &&"


def _parameters_are_broken_json(records: Records) -> None:
    records[2]["documentation"]["parameters"] = '[{"name": "token", "in": "query"'


def _duplicate_id(records: Records) -> None:
    records[3]["id"] = records[1]["id"]


def _one_megabyte_description(records: Records) -> None:
    records[2]["documentation"]["description"] = ("Deletes an account. " * 50_000)[:1_000_000]


CASES: dict[str, Spoiled] = {
    "missing-name": Spoiled(_drop_name, "record 2", "apibank_tool_2", "name", "has no name"),
    "name-is-a-number": Spoiled(_name_is_a_number, "record 2", "apibank_tool_2", "name", "must be a string, got a number"),
    "parameters-are-garbage-text": Spoiled(
        _parameters_are_garbage_text, "record 2", "apibank_tool_2", "parameters",
        "parameters must be a list, an object, a JSON schema or a signature",
    ),
    "parameters-are-broken-json": Spoiled(
        _parameters_are_broken_json, "record 2", "apibank_tool_2", "parameters", "parameters are not valid JSON"
    ),
    "duplicate-id": Spoiled(_duplicate_id, "record 3", "apibank_tool_1", None, "duplicate id 'apibank_tool_1' (first seen at record 1)"),
    "1mb-description": Spoiled(
        _one_megabyte_description, "record 2", "apibank_tool_2", "description", "at most 100,000 are allowed"
    ),
}


@pytest.fixture(params=sorted(CASES))
def bad(request: pytest.FixtureRequest, tmp_path: Path, records: Records) -> tuple[Path, Spoiled, set[str]]:
    """(catalog file, how it is spoiled, the ids of its valid records)."""
    case = CASES[request.param]
    valid_ids = [r["id"] for r in records]
    case.spoil(records)
    if request.param == "duplicate-id":
        valid_ids.remove("apibank_tool_3")  # record 3 now repeats record 1's id; the first one stands
    else:
        valid_ids.remove(case.record_id)
    return write(tmp_path / "apibank", records), case, set(valid_ids)


def alias_documents(client: Any, alias: str) -> int | None:
    """How many documents the alias holds; None when the alias does not exist."""
    if not client.indices.exists_alias(name=alias):
        return None
    return int(client.count(index=alias)["count"])


def run_cli(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=True)


# --- a bad record -----------------------------------------------------------------------------------


def test_strict_ingest_of_a_bad_record_raises_naming_it_and_writes_nothing(
    client: Any, settings: Any, model: Any, bad: tuple[Path, Spoiled, set[str]]
) -> None:
    path, case, _ = bad

    with pytest.raises(CatalogRejectedError) as raised:
        ingest_catalog(client, settings, model, path, strict=True)

    (error,) = raised.value.errors
    assert (error.position, error.record_id, error.field) == (case.position, case.record_id, case.field)
    assert case.reason in error.reason
    message = str(raised.value)
    assert case.position in message and case.record_id in message
    assert "nothing was written" in message
    assert alias_documents(client, settings.index) in (None, 0)


def test_lenient_ingest_indexes_every_valid_record_and_reports_the_bad_one(
    client: Any, settings: Any, model: Any, bad: tuple[Path, Spoiled, set[str]]
) -> None:
    path, case, valid_ids = bad

    report = ingest_catalog(client, settings, model, path)

    assert not report.ok
    assert report.tools == report.created == len(valid_ids) == SLICE - 1
    (reject,) = report.rejected
    assert (reject.position, reject.record_id, reject.field) == (case.position, case.record_id, case.field)
    assert case.reason in reject.reason
    assert reject.to_dict()["position"] == case.position
    indexed = client.search(index=settings.index, body={"size": 100, "_source": ["name"], "query": {"match_all": {}}})
    assert {h["_id"] for h in indexed["hits"]["hits"]} == valid_ids


def test_the_ingest_command_exits_nonzero_and_prints_the_rejected_record(
    base_settings: Any, settings: Any, client: Any, bad: tuple[Path, Spoiled, set[str]]
) -> None:
    path, case, valid_ids = bad

    result = run_cli("--opensearch-url", base_settings.opensearch_url, "ingest", str(path), "--index", settings.index, "--quiet")

    assert result.exit_code == ERROR_TABLE[CatalogRecordError].exit_code, result.output
    assert "Traceback" not in result.output
    assert "rejected 1" in result.stdout
    assert case.position in result.stderr
    assert case.record_id in result.stderr
    assert case.reason[:40] in result.stderr
    assert alias_documents(client, settings.index) == len(valid_ids)


def test_the_strict_ingest_command_exits_nonzero_writing_nothing(
    base_settings: Any, settings: Any, client: Any, bad: tuple[Path, Spoiled, set[str]]
) -> None:
    path, case, _ = bad

    result = run_cli(
        "--opensearch-url", base_settings.opensearch_url, "ingest", str(path), "--index", settings.index, "--strict"
    )

    assert result.exit_code == ERROR_TABLE[CatalogRejectedError].exit_code, result.output
    assert "Traceback" not in result.output
    assert "CatalogRejectedError" in result.output
    assert case.position in result.output and case.record_id in result.output
    assert alias_documents(client, settings.index) in (None, 0)


def test_duplicate_ids_keep_the_first_record(
    client: Any, settings: Any, model: Any, tmp_path: Path, records: Records
) -> None:
    first_name = records[1]["documentation"]["name"]
    _duplicate_id(records)

    ingest_catalog(client, settings, model, write(tmp_path / "apibank", records))

    kept = client.get(index=settings.index, id="apibank_tool_1", _source_includes=["name"])
    assert kept["_source"]["name"] == first_name == "RegisterUser"


def test_strict_ingest_of_a_bad_catalog_leaves_an_existing_index_as_it_was(
    client: Any, settings: Any, model: Any, tmp_path: Path, records: Records
) -> None:
    catalog = write(tmp_path / "apibank", records)
    ingest_catalog(client, settings, model, catalog)
    before = client.search(
        index=settings.index, body={"size": 100, "version": True, "_source": ["description"], "query": {"match_all": {}}}
    )["hits"]["hits"]

    records[0]["documentation"]["description"] = "A good edit that must not be written alone."
    _name_is_a_number(records)
    write(tmp_path / "apibank", records)
    with pytest.raises(CatalogRejectedError):
        ingest_catalog(client, settings, model, catalog, strict=True)

    after = client.search(
        index=settings.index, body={"size": 100, "version": True, "_source": ["description"], "query": {"match_all": {}}}
    )["hits"]["hits"]
    assert [(h["_id"], h["_version"], h["_source"]) for h in after] == [
        (h["_id"], h["_version"], h["_source"]) for h in before
    ]


# --- a file that is not a catalog at all ------------------------------------------------------------


TRUNCATIONS = {
    # The copy stopped at a record boundary: the file ends where the next value should start.
    "between-records": lambda text: text[: text.index("}, {", len(text) // 2) + 3],
    # The copy stopped inside a description.
    "inside-a-string": lambda text: text[: text.index('"description": "', len(text) // 2) + 30],
}


@pytest.fixture(params=sorted(TRUNCATIONS))
def truncated(request: pytest.FixtureRequest, tmp_path: Path, records: Records) -> tuple[Path, str]:
    """(a catalog file cut short, where it was cut)."""
    text = json.dumps(records, ensure_ascii=False)
    path = write(tmp_path / "apibank", [])
    path.write_text(TRUNCATIONS[request.param](text), encoding="utf-8")
    return path, request.param


def _about_the_file(message: str, path: Path) -> str:
    """The message after the file's name (tmp_path names repeat the test's own words)."""
    assert str(path) in message
    return message.split(str(path), 1)[1]


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "lenient"])
def test_a_cut_short_json_file_is_refused_saying_where_parsing_stopped(
    client: Any, settings: Any, model: Any, truncated: tuple[Path, str], strict: bool
) -> None:
    path, where = truncated

    with pytest.raises(CatalogError) as raised:
        ingest_catalog(client, settings, model, path, strict=strict)

    explained = _about_the_file(str(raised.value), path)
    assert "not valid JSON" in explained
    assert re.search(r"at line \d+ column \d+", explained)
    if where == "between-records":
        assert "the file ends early: truncated?" in explained
    assert alias_documents(client, settings.index) is None


def test_the_ingest_command_refuses_a_cut_short_file_without_a_traceback(
    base_settings: Any, settings: Any, client: Any, truncated: tuple[Path, str]
) -> None:
    path, _ = truncated

    result = run_cli("--opensearch-url", base_settings.opensearch_url, "ingest", str(path), "--index", settings.index)

    assert result.exit_code == ERROR_TABLE[CatalogError].exit_code
    assert "Traceback" not in result.output
    assert "Error: CatalogError: " in result.output
    assert re.search(r"not valid JSON: .* at line \d+ column \d+", _about_the_file(result.output, path))
    assert alias_documents(client, settings.index) is None


# --- no node ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [["ingest", "{catalog}", "--index", "toolsift-test-unreachable"], ["search", "delete my account", "--json"]],
    ids=["ingest", "search"],
)
def test_an_unreachable_node_gives_a_clean_error_naming_the_url(
    tmp_path: Path, records: Records, command: list[str]
) -> None:
    catalog = write(tmp_path / "apibank", records)
    args = [part.replace("{catalog}", str(catalog)) for part in command]

    result = run_cli("--opensearch-url", "http://127.0.0.1:9", *args)

    assert result.exit_code == ERROR_TABLE[ClusterError].exit_code
    assert "http://127.0.0.1:9" in result.output
    assert "Error:" in result.output
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)
