"""``toolsift serve ui`` and ``serve ranker`` refuse to listen beyond loopback with no keys configured,
unless ``--insecure-no-auth``; the refusal is a one-line error with the table's exit code, no traceback.

Nothing is served here: a command that passes the check runs on to connecting to an unreachable
cluster (``serve ui``: exit 5) or to a stand-in for the service (``serve ranker``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolsift.access import KeyRing, check_bind, hash_key
from toolsift.cli.main import cli
from toolsift.errors import ERROR_TABLE, ClusterError, ConfigError

UNREACHABLE = "http://127.0.0.1:9"

pytestmark = pytest.mark.usefixtures("clean_env")


def _with_a_key(folder: Path) -> None:
    (folder / "toolsift.toml").write_text(
        f'[[api_keys]]\nname = "ops"\ntenant = "*"\nrole = "admin"\nsha256 = "{hash_key("tsk_ops")}"\n',
        encoding="utf-8")


def _ui(*args: str) -> Any:
    return CliRunner().invoke(cli, ["--opensearch-url", UNREACHABLE, "serve", "ui", *args])


def test_serve_ui_on_every_interface_without_keys_is_refused_with_a_clear_message() -> None:
    result = _ui("--host", "0.0.0.0")

    assert result.exit_code == ERROR_TABLE[ConfigError].exit_code == 3
    assert result.output.startswith("Error: ConfigError: serve ui: refusing to listen on 0.0.0.0 with no API keys")
    assert "--insecure-no-auth" in result.output and "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("args", [["--host", "0.0.0.0", "--insecure-no-auth"], ["--host", "127.0.0.1"],
                                  ["--host", "::1"]], ids=["forced", "loopback", "loopback-v6"])
def test_serve_ui_passes_the_check_when_forced_or_on_loopback(args: list[str]) -> None:
    result = _ui(*args)

    # past the bind check: it went on to connect to the cluster
    assert result.exit_code == ERROR_TABLE[ClusterError].exit_code, result.output
    assert "ClusterError" in result.output and "refusing" not in result.output


def test_serve_ui_with_keys_configured_may_listen_on_every_interface(tmp_path: Path) -> None:
    _with_a_key(tmp_path)  # ./toolsift.toml (clean_env runs the test in tmp_path)

    result = _ui("--host", "0.0.0.0", "--root", str(tmp_path))

    assert result.exit_code == ERROR_TABLE[ClusterError].exit_code, result.output


def test_serve_ui_lists_its_new_options() -> None:
    text = CliRunner().invoke(cli, ["serve", "ui", "--help"]).output
    assert "--insecure-no-auth" in text and "--root" in text


def test_check_bind_refuses_only_an_open_network_that_was_not_forced() -> None:
    keys = KeyRing([])
    with pytest.raises(ConfigError, match="serve ui: refusing to listen on 10.0.0.5"):
        check_bind("10.0.0.5", keys, force=False, service="serve ui")
    check_bind("10.0.0.5", keys, force=True, service="serve ui")
    check_bind("localhost", keys, force=False, service="serve ui")


@pytest.fixture()
def ranker_service(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """``toolsift.ranker.ranker_service.serve`` replaced by a recorder (no model, no port)."""
    import toolsift.ranker.ranker_service

    started: list[dict[str, Any]] = []
    monkeypatch.setattr(toolsift.ranker.ranker_service, "serve", lambda settings, **kw: started.append({"settings": settings,
                                                                                                   **kw}))
    return started


def test_serve_ranker_on_every_interface_needs_keys_a_token_or_the_flag(
    ranker_service: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from toolsift.config import get_settings

    def ranker(*args: str) -> Any:
        get_settings.cache_clear()  # the environment and ./toolsift.toml change between calls
        return CliRunner().invoke(cli, ["serve", "ranker", "--host", "0.0.0.0", *args])

    refused = ranker()
    assert refused.exit_code == 3 and "serve ranker: refusing to listen on 0.0.0.0" in refused.output
    assert "Traceback" not in refused.output and ranker_service == []

    assert ranker("--insecure-no-auth").exit_code == 0
    monkeypatch.setenv("TOOLSIFT_RANKER_TOKEN", "a-token")  # the token guards the service as keys do
    assert ranker().exit_code == 0
    monkeypatch.delenv("TOOLSIFT_RANKER_TOKEN")
    _with_a_key(tmp_path)
    assert ranker().exit_code == 0
    assert [len(s["keys"]) for s in ranker_service] == [0, 0, 1]
