"""``toolsift --help`` stays fast: the root group imports no heavy library (like click's test_imports.py).

Each probe runs in a fresh interpreter, invokes the CLI in-process and reports ``sys.modules``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HEAVY = {"torch", "sentence_transformers", "transformers", "opensearchpy"}
MODEL_STACK = {"torch", "sentence_transformers", "transformers"}

PROBE = """
import json, sys
import toolsift.cli.main as main
reports = []
for args in {calls!r}:
    try:
        main.cli(args)
    except SystemExit as exc:
        code = exc.code
    else:
        code = None
    reports.append({{"args": args, "code": code, "modules": sorted({{m.split(".")[0] for m in sys.modules}})}})
print(json.dumps(reports))
"""


def _probe(*calls: list[str]) -> tuple[list[dict[str, object]], str]:
    """Run ``cli(args)`` for each call in one fresh interpreter; the modules loaded after each."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLSIFT_")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(calls=list(calls))], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    reports: list[dict[str, object]] = json.loads(done.stdout.strip().splitlines()[-1])
    return reports, done.stdout


@pytest.mark.parametrize("args", [["--help"], ["--version"]], ids=" ".join)
def test_root_help_loads_no_heavy_library(args: list[str]) -> None:
    (report,), output = _probe(args)
    loaded = set(report["modules"])  # type: ignore[call-overload]

    assert report["code"] == 0
    assert {"click", "toolsift"} <= loaded  # the probe does see what was imported
    assert sorted(loaded & HEAVY) == []
    if args == ["--help"]:
        for name in ("bench", "demo", "eval", "index", "ingest", "node", "search", "serve"):
            assert f"  {name} " in output, name


def test_subcommand_help_loads_no_model_library() -> None:
    # Subcommands may import opensearch-py, but the embedding stack loads only when a command runs.
    commands = ["ingest", "search", "eval", "bench", "demo", "index", "node", "serve"]
    reports, _ = _probe(*([c, "--help"] for c in commands))

    for command, report in zip(commands, reports):
        assert report["code"] == 0, command
        assert sorted(set(report["modules"]) & MODEL_STACK) == [], command  # type: ignore[call-overload]
