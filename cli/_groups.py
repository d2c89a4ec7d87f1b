"""A click group with a default subcommand, so adding subcommands keeps old command lines working."""

from __future__ import annotations

from typing import Any

import click

__all__ = ["DefaultSubcommandGroup"]


class DefaultSubcommandGroup(click.Group):
    """``toolsift <group> ARGS`` runs ``toolsift <group> <default> ARGS`` unless ARGS start with a
    subcommand name or ``--help`` (e.g. ``toolsift bench DIR`` is ``toolsift bench latency DIR``)."""

    def __init__(self, *args: Any, default: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.default = default

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [self.default, *args]
        return super().parse_args(ctx, args)
