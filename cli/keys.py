"""``toolsift keys``: make API keys for the services (the config stores only their digests)."""

from __future__ import annotations

import click

__all__ = ["keys"]


@click.group()
def keys() -> None:
    """Make API keys for `serve api`, `serve mcp`, `serve ui` and `serve ranker`."""


@keys.command("create")
@click.option("--name", required=True, help="A label for logs and metrics (not secret).")
@click.option("--tenant", required=True, help="The tenant the key searches as ('*': every tenant, admin keys only).")
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
    click.echo(f'name = "{entry.name}"\ntenant = "{entry.tenant}"\nrole = "{entry.role}"\nsha256 = "{entry.sha256}"')
