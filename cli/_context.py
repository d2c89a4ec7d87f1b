"""The object every command receives: settings built once, a client created on first use."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import click

from toolsift.cli._output import safe_lines
from toolsift.errors import ToolsiftError, error_kind

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from toolsift.config import Settings

__all__ = ["AppContext", "pass_app", "translate_errors"]


@dataclass
class AppContext:
    config_path: str | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    _settings: Settings | None = None
    _client: OpenSearch | None = None

    def settings(self, **overrides: Any) -> Settings:
        """The settings, with the root flags and then ``overrides`` (command flags) applied."""
        if self._settings is None:
            from toolsift.config import get_settings

            if self.config_path:
                os.environ["TOOLSIFT_CONFIG"] = self.config_path
                get_settings.cache_clear()
            self._settings = get_settings().with_overrides(**self.overrides)
        return self._settings.with_overrides(**overrides) if overrides else self._settings

    def client(self) -> OpenSearch:
        """A connected client for the configured cluster (checked for the required plugins)."""
        if self._client is None:
            from toolsift.opensearch import connect

            self._client = connect(self.settings())
        return self._client


pass_app = click.make_pass_decorator(AppContext, ensure=True)


class ToolsiftClickError(click.ClickException):
    """A toolsift error as click shows it: the message, and the exit code of :data:`~toolsift.errors.ERROR_TABLE`."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code  # type: ignore[misc]  # click declares it on the class


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """The CLI's one translation point: toolsift and OpenSearch errors become a clean message and
    the exit code of :func:`~toolsift.errors.error_kind`; anything else is a bug and keeps its traceback."""
    try:
        yield
    except Exception as exc:
        kind = error_kind(exc)
        if kind is None:
            raise
        if isinstance(exc, ToolsiftError):
            message = f"{type(exc).__name__}: {exc}"
        elif kind.code == "opensearch_unavailable":
            message = f"OpenSearch is unreachable: {getattr(exc, 'info', exc)}"
        else:
            message = f"OpenSearch answered {getattr(exc, 'status_code', '?')}: {getattr(exc, 'error', '')} {getattr(exc, 'info', '')}"
        # Catalog and request text inside a message is shown, never obeyed, by the terminal.
        raise ToolsiftClickError(safe_lines(message), kind.exit_code) from exc
