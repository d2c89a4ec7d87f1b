"""The object every command receives: settings built once, a client created on first use."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import click

from toolsift.errors import ToolsiftError

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


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """The CLI's one translation point: toolsift and connection errors become clean messages."""
    try:
        yield
    except ToolsiftError as exc:
        raise click.ClickException(f"{type(exc).__name__}: {exc}") from exc
    except Exception as exc:
        from opensearchpy.exceptions import ConnectionError as OSConnectionError
        from opensearchpy.exceptions import TransportError

        if isinstance(exc, OSConnectionError):
            raise click.ClickException(f"OpenSearch is unreachable: {exc.info}") from exc
        if isinstance(exc, TransportError):
            raise click.ClickException(f"OpenSearch answered {exc.status_code}: {exc.error} {exc.info}") from exc
        raise
