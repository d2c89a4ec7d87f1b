"""The docs site's reference is the code's: the generated pages are current, every setting is described,
every command is in the CLI reference, and the site builds with no warning.

After changing a command's help or a setting, `make docs` rewrites ``docs/reference/`` (commit it).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from toolsift.cli.reference import PAGES, cli_reference, settings_reference
from toolsift.config import Settings
from toolsift.errors import ERROR_TABLE

REPO = Path(__file__).resolve().parents[3]
REFERENCE = REPO / "docs" / "reference"


@pytest.mark.parametrize("name", sorted(PAGES))
def test_each_generated_reference_page_is_what_the_code_writes_now(name: str) -> None:
    committed = (REFERENCE / name).read_text(encoding="utf-8")

    assert committed == PAGES[name](), (
        f"docs/reference/{name} is stale: run `make docs` (python -m toolsift.cli.reference docs/reference) and commit it")


def test_every_setting_has_a_description_for_the_configuration_reference() -> None:
    undescribed = [name for name, field in Settings.model_fields.items() if not (field.description or "").strip()]

    assert undescribed == []
    page = settings_reference()
    assert all(f"| `{name}` | `TOOLSIFT_{name.upper()}` |" in page for name in Settings.model_fields)


def test_the_cli_reference_holds_every_command_and_every_exit_code() -> None:
    from toolsift.cli.main import cli

    page = cli_reference()

    assert all(f"## toolsift {name}\n" in page for name in cli.list_commands(None))  # type: ignore[arg-type]
    assert "## toolsift serve mcp\n" in page and "## toolsift learn ab start\n" in page
    assert all(f"| {kind.exit_code} | {kind.http_status} | `{kind.code}` |" in page for kind in ERROR_TABLE.values())


def test_the_docs_site_builds_with_no_warning(tmp_path: Path) -> None:
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    assert mkdocs, "mkdocs is a test dependency (pip install -e '.[test]')"

    built = subprocess.run([mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=REPO,
                           capture_output=True, text=True, timeout=300)

    assert built.returncode == 0, built.stderr[-4000:]
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()
