"""``toolsift keys create``: a bad name or tenant is one clear usage line; a good key is valid TOML config."""

from __future__ import annotations

import tomllib

import pytest
from click.testing import CliRunner

from toolsift.access import ApiKey, KeyRing
from toolsift.cli.main import cli
from toolsift.errors import ERROR_TABLE, ConfigError

pytestmark = pytest.mark.usefixtures("clean_env")


def create(*args: str) -> object:
    return CliRunner().invoke(cli, ["keys", "create", *args])


@pytest.mark.parametrize("tenant", ["../x", "", "a b", "x" * 65, "acme/../*", "-acme", "\x1b[2Jacme", "tenant\n"])
def test_a_bad_tenant_is_one_usage_line_naming_the_option(tenant: str) -> None:
    result = create("--name", "x", "--tenant", tenant)

    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "pydantic" not in result.output
    assert "Invalid value for '--tenant'" in result.output and "is not a tenant name" in result.output
    assert "\x1b" not in result.output
    assert "key (shown once)" not in result.output


@pytest.mark.parametrize("name", ["", " ", "x" * 101, "ops\nrole = \"admin\"", "bell\x07"])
def test_a_bad_name_is_one_usage_line_naming_the_option(name: str) -> None:
    result = create("--name", name, "--tenant", "acme")

    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "pydantic" not in result.output
    assert "Invalid value for '--name'" in result.output
    assert "\x07" not in result.output and "key (shown once)" not in result.output


def test_every_tenant_needs_an_admin_key() -> None:
    result = create("--name", "x", "--tenant", "*")

    assert result.exit_code == ERROR_TABLE[ConfigError].exit_code
    assert "Traceback" not in result.output
    assert "only an admin key may name every tenant" in result.output


@pytest.mark.parametrize(("name", "tenant", "role"), [
    ("acme search", "acme", "search"), ('ops "night" team \\ on call', "*", "admin"), ("ünïcode", "t.1_-x", "search"),
])
def test_a_new_key_is_printed_once_with_a_config_table_that_reads_back(name: str, tenant: str, role: str) -> None:
    result = create("--name", name, "--tenant", tenant, "--role", role)

    assert result.exit_code == 0, result.output
    key = result.stderr.split("key (shown once): ", 1)[1].strip()
    (entry,) = tomllib.loads(result.stdout)["api_keys"]
    configured = ApiKey(**entry)
    assert (configured.name, configured.tenant, configured.role) == (name, tenant, role)
    assert KeyRing([configured]).authenticate(key).name == name


@pytest.mark.parametrize("tenant", ["acme\n", "acme\r\n"])
def test_a_tenant_name_with_a_line_break_is_refused_wherever_it_is_given(tenant: str) -> None:
    from toolsift.access import valid_tenant

    with pytest.raises(ConfigError, match="is not a tenant name"):
        valid_tenant(tenant, where="--tenant")
