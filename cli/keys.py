"""``toolsift keys``: make API keys for the services (the config stores only their digests)."""

from __future__ import annotations

import json
import unicodedata

import click

__all__ = ["keys"]

_MAX_NAME = 100  # ApiKey.name's limit


def _tenant(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    """A tenant name or ``*``, else a usage error saying what a tenant name is."""
    from toolsift.access import ALL_TENANTS, valid_tenant
    from toolsift.errors import ConfigError

    if value == ALL_TENANTS:
        return value
    try:
        return valid_tenant(value, where="tenant")
    except ConfigError as exc:
        raise click.BadParameter(f"{str(exc).removeprefix('tenant: ')}, or '*' for every tenant (admin keys only)") from None


def _name(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    """A label of 1 to 100 characters with a letter or digit and no control characters."""
    if not value.strip() or len(value) > _MAX_NAME or any(unicodedata.category(c) == "Cc" for c in value):
        raise click.BadParameter(f"{value[:_MAX_NAME + 1]!r} is not a key name (1 to {_MAX_NAME} characters, "
                                 "not only spaces, no control characters)")
    return value


def _toml(value: str) -> str:
    """``value`` as a TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(value, ensure_ascii=False)


@click.group()
def keys() -> None:
    """Make API keys for `serve api`, `serve mcp`, `serve ui` and `serve ranker`."""


@keys.command("create")
@click.option("--name", required=True, callback=_name, help="A label for logs and metrics (not secret).")
@click.option("--tenant", required=True, callback=_tenant,
              help="The tenant the key searches as ('*': every tenant, admin keys only).")
@click.option("--role", type=click.Choice(["search", "admin"]), default="search", show_default=True,
              help="search: search and feedback; admin: also every write (weights, judgments, query sets).")
def create(name: str, tenant: str, role: str) -> None:
    """Print a new key once, and the [[api_keys]] table to add to the TOML config.

    The key itself is not stored anywhere: keep it in the caller's secret store.
    """
    from toolsift.access import ApiKey, KeyRing, hash_key, new_key

    key = new_key()
    entry = ApiKey(name=name, tenant=tenant, role=role, sha256=hash_key(key))
    KeyRing([entry])  # the same checks as at startup ('*' only for admin keys)
    click.echo(f"key (shown once): {key}", err=True)
    click.echo("[[api_keys]]")
    click.echo("\n".join(f"{field} = {_toml(value)}" for field, value in
                         (("name", entry.name), ("tenant", entry.tenant), ("role", entry.role), ("sha256", entry.sha256))))
