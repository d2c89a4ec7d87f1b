"""What the CLI prints from catalogs and requests cannot drive the terminal it is printed to."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from toolsift.cli._output import FLAGGED_SHOWN, flagged_table, rejected_table, safe_lines, table, terminal_safe


def test_control_and_bidi_characters_are_written_as_escapes() -> None:
    assert terminal_safe("a\x1b[2Jb\u202ec\x00d\x9be\u2066") == "a\\x1b[2Jb\\u202ec\\x00d\\x9be\\u2066"
    assert terminal_safe("plain text, ünïcode and 中文") == "plain text, ünïcode and 中文"


def test_table_cells_are_made_terminal_safe() -> None:
    printed = table(["name"], [["evil\x1b]0;owned\x07name"]])
    assert "\x1b" not in printed and "\x07" not in printed
    assert "evil\\x1b]0;owned\\x07name" in printed


def test_rejected_and_flagged_tables_escape_catalog_text() -> None:
    reject = SimpleNamespace(position="record 1", record_id="x\x1by", field="name", reason="bad \u202e")
    flagged = SimpleNamespace(position="record 2", record_id="t\x1b", quality="text", notes=("note \x1b[31m",))
    for printed in (rejected_table([reject]), flagged_table([flagged])):
        assert "\x1b" not in printed and "\u202e" not in printed


def test_a_long_flagged_list_is_cut_with_a_count_of_the_rest() -> None:
    many = [SimpleNamespace(position=f"record {i}", record_id=str(i), quality="inferred", notes=("n",))
            for i in range(FLAGGED_SHOWN + 3)]
    printed = flagged_table(many)
    assert printed.endswith("… and 3 more flagged (--json lists them all)")
    assert f"record {FLAGGED_SHOWN - 1}" in printed and f"record {FLAGGED_SHOWN}\n" not in printed


def test_several_lines_keep_their_newlines_and_lose_their_escapes() -> None:
    assert safe_lines("query: a\x1b[31m\nrow\u202e two") == "query: a\\x1b[31m\nrow\\u202e two"


def test_a_search_request_that_is_not_clean_text_is_one_clear_line_without_the_raw_character() -> None:
    from click.testing import CliRunner

    from toolsift.cli.main import cli
    from toolsift.errors import ERROR_TABLE, BadQueryError

    for request, shown in (("find \x1b[2J tools", "\\x1b"), ("bad \udcff bytes", "\\udcff")):
        result = CliRunner().invoke(cli, ["--opensearch-url", "http://127.0.0.1:9", "search", request])
        assert result.exit_code == ERROR_TABLE[BadQueryError].exit_code
        assert result.output.count("\n") == 1 and shown in result.output and "Traceback" not in result.output
        assert "\x1b" not in result.output and "\udcff" not in result.output


def test_progress_written_to_a_log_is_one_plain_line_per_stage_without_cursor_escapes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from toolsift.cli._progress import progress_bars

    log = io.StringIO()  # not a terminal, as when the output is redirected to a file or a CI log
    monkeypatch.setattr(sys, "stderr", log)
    with progress_bars(True) as progress:
        for done in range(0, 101, 10):
            progress("embed", done, 100)
        progress("index", 3, 0)  # a stage whose total is not known
        for done in range(0, 51, 5):
            progress("index", done, 50)
    written = log.getvalue()
    assert "\x1b" not in written and "\r" not in written
    assert written.splitlines() == ["embed: 100 of 100", "index: 50 of 50"]


def test_progress_stays_silent_when_disabled(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from toolsift.cli._progress import progress_bars

    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    with progress_bars(False) as progress:
        progress("embed", 5, 10)
    assert log.getvalue() == ""
