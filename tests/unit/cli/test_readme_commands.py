"""What the README and the getting-started page tell a newcomer to type is what the CLI takes: every
`toolsift …` line of their shell blocks names real commands and options, the MCP config names a real
command, and the Python example calls the client as it is."""

from __future__ import annotations

import inspect
import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolsift.cli.main import cli
from toolsift.client import ToolsiftClient

REPO = Path(__file__).resolve().parents[3]
PAGES = [REPO / "README.md", REPO / "docs" / "getting-started.md"]
_BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)


def _blocks(kind: str) -> list[tuple[str, str]]:
    return [(page.name, body) for page in PAGES for lang, body in _BLOCK.findall(page.read_text(encoding="utf-8"))
            if lang == kind]


def _command_lines() -> list[tuple[str, str]]:
    lines = []
    for page, body in _blocks("bash"):
        for line in body.replace("\\\n", " ").splitlines():
            line = line.split(" #", 1)[0].strip().rstrip("&").strip()
            if line.startswith("toolsift "):
                lines.append((page, line))
    return lines


def test_the_pages_show_commands_at_all() -> None:
    assert len(_command_lines()) >= 15


@pytest.mark.parametrize(("page", "line"), _command_lines(), ids=lambda v: v if len(v) < 60 else v[:60])
def test_every_command_line_shown_names_real_commands_and_options(page: str, line: str) -> None:
    args = shlex.split(line)[1:]

    result = CliRunner().invoke(cli, [*args, "--help"], prog_name="toolsift")

    assert result.exit_code == 0, f"{page}: `{line}` does not parse: {result.output[-600:]}"


def test_the_mcp_client_config_runs_toolsift_serve_mcp() -> None:
    (config,) = [json.loads(body) for _, body in _blocks("json") if "mcpServers" in body][:1]

    server = config["mcpServers"]["toolsift"]
    assert server["command"].endswith("/.venv/bin/toolsift") and server["args"] == ["serve", "mcp"]
    assert CliRunner().invoke(cli, [*server["args"], "--help"]).exit_code == 0


def test_the_python_example_calls_the_client_as_it_is() -> None:
    (example,) = [body for _, body in _blocks("python") if "ToolsiftClient" in body]

    assert "from toolsift.client import ToolsiftClient" in example
    search = inspect.signature(ToolsiftClient.search).parameters
    assert {"top_k", "brief"} <= set(search)
    assert re.search(r"\.tools:\n\s+print\(tool\.name, \"-\", tool\.description\)", example)
