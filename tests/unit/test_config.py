"""Settings: CLI overrides > TOOLSIFT_* environment > TOML file > defaults; errors name the setting."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from toolsift.config import DEFAULT_FIELD_WEIGHTS, Settings, get_settings
from toolsift.errors import ConfigError


pytestmark = pytest.mark.usefixtures("clean_env")


def _use_config_file(path: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``text`` written to ``path``, the TOML file ``TOOLSIFT_CONFIG`` names."""
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("TOOLSIFT_CONFIG", str(path))
    return path


@pytest.fixture()
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "conf" / "toolsift.toml"
    path.parent.mkdir()
    return _use_config_file(
        path,
        'index = "from-file"\n'
        "candidates = 20\n"
        'retriever = "bm25"\n'
        "\n"
        "[field_weights]\n"
        "description = 2.0\n"
        "parameters = 0.5\n"
        "response = 0.25\n"
        "examples = 1.0\n",
        monkeypatch,
    )


# --- defaults and precedence ------------------------------------------------------------------------------


def test_defaults_apply_without_environment_or_file() -> None:
    s = Settings()

    assert s.index == "toolsift-tools"
    assert s.retriever == "hybrid"
    assert s.candidates == 100
    assert s.field_weights == DEFAULT_FIELD_WEIGHTS
    assert s.opensearch_url is None
    assert s.uses_managed_node
    assert s.effective_url == "http://127.0.0.1:9200"


def test_the_toml_file_overrides_the_defaults(config_file: Path) -> None:
    s = Settings()

    assert (s.index, s.candidates, s.retriever) == ("from-file", 20, "bm25")
    assert s.field_weights == {"description": 2.0, "parameters": 0.5, "response": 0.25, "examples": 1.0}
    assert s.node_port == 9200  # not in the file: default


def test_a_toolsift_toml_in_the_working_directory_is_read_without_toolsift_config(tmp_path: Path) -> None:
    (tmp_path / "toolsift.toml").write_text('index = "local-file"\n', encoding="utf-8")

    assert Settings().index == "local-file"


def test_the_environment_overrides_the_toml_file(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIFT_INDEX", "from-env")
    monkeypatch.setenv("TOOLSIFT_FIELD_WEIGHTS", '{"description": 3.0, "parameters": 0.0, "response": 0.0, "examples": 0.0}')

    s = Settings()

    assert s.index == "from-env"
    assert s.candidates == 20  # still from the file
    assert s.field_weights == {"description": 3.0, "parameters": 0.0, "response": 0.0, "examples": 0.0}


def test_cli_overrides_beat_the_environment_and_the_file(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIFT_INDEX", "from-env")
    monkeypatch.setenv("TOOLSIFT_OPENSEARCH_URL", "http://env:9200")

    s = Settings().with_overrides(index="from-cli", candidates=None, opensearch_url="https://cli:9200")

    assert s.index == "from-cli"
    assert s.candidates == 20  # None means "flag not given"
    assert s.opensearch_url == "https://cli:9200"
    assert s.effective_url == "https://cli:9200"
    assert not s.uses_managed_node


def test_overrides_that_are_all_none_return_the_same_settings() -> None:
    s = Settings()

    assert s.with_overrides(index=None, retriever=None) is s


def test_overrides_keep_secrets_and_other_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIFT_OPENSEARCH_PASSWORD", "hunter2")

    s = Settings(node_port=9250).with_overrides(index="other")

    assert s.opensearch_password is not None
    assert s.opensearch_password.get_secret_value() == "hunter2"
    assert "hunter2" not in repr(s)
    assert s.node_port == 9250
    assert s.node_url == "http://127.0.0.1:9250"


# --- validation ------------------------------------------------------------------------------------------------


def test_unknown_field_weight_keys_are_rejected() -> None:
    with pytest.raises(ValidationError, match=r"unknown field\(s\) \['title'\]"):
        Settings(field_weights={"description": 1.0, "title": 1.0})


@pytest.mark.parametrize("name", ["Bad Name", "UPPER", "-leading-dash", "has/slash", ""])
def test_bad_index_names_are_rejected(name: str) -> None:
    with pytest.raises(ValidationError, match="index"):
        Settings(index=name)


def test_a_bad_override_is_rejected_as_a_config_error_naming_the_setting() -> None:
    with pytest.raises(ConfigError, match="index"):
        Settings().with_overrides(index="Bad Name")


def test_field_weights_left_out_keep_their_defaults() -> None:
    s = Settings(field_weights={"description": 2.0})

    assert s.field_weights == {**DEFAULT_FIELD_WEIGHTS, "description": 2.0}


def test_unknown_settings_in_the_file_are_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use_config_file(tmp_path / "typo.toml", 'indx = "oops"\n', monkeypatch)

    with pytest.raises(ValidationError, match="indx"):
        Settings()


# --- get_settings -------------------------------------------------------------------------------------------


def test_get_settings_wraps_a_bad_environment_value_as_a_config_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIFT_CANDIDATES", "0")

    with pytest.raises(ConfigError, match="candidates") as info:
        get_settings()
    assert isinstance(info.value.__cause__, ValidationError)


def test_get_settings_wraps_a_malformed_toml_file_as_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use_config_file(tmp_path / "broken.toml", "index = \n", monkeypatch)

    with pytest.raises(ConfigError, match="invalid toolsift configuration"):
        get_settings()


def test_get_settings_builds_the_settings_once(monkeypatch: pytest.MonkeyPatch) -> None:
    first = get_settings()
    monkeypatch.setenv("TOOLSIFT_INDEX", "changed")

    assert get_settings() is first
    get_settings.cache_clear()
    assert get_settings().index == "changed"


def test_an_mcp_source_is_a_stdio_command_or_an_http_url_never_both_and_names_are_distinct() -> None:
    ok = Settings(mcp_sources=[{"name": "files", "command": ["python", "server.py"]},
                               {"name": "web", "url": "https://tools.example/mcp", "headers": {"Authorization": "Bearer x"},
                                "tenants": ["acme"], "approval": "manual"}])
    assert [s.name for s in ok.mcp_sources] == ["files", "web"]
    assert "Bearer x" not in repr(ok.mcp_sources[1])  # header values are secrets
    for bad, words in (({"name": "x"}, "either command"), ({"name": "x", "command": ["a"], "url": "http://h"}, "either command"),
                       ({"name": "Bad Name", "command": ["a"]}, "name"), ({"name": "x", "url": "ftp://h"}, "url")):
        with pytest.raises(ValidationError, match=words):
            Settings(mcp_sources=[bad])
    with pytest.raises(ValidationError, match="more than once"):
        Settings(mcp_sources=[{"name": "x", "command": ["a"]}, {"name": "x", "command": ["b"]}])
