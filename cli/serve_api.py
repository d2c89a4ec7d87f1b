"""``toolsift serve api`` and ``toolsift serve mcp``: the front ends agents call."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Literal

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli.options import index_option, retriever_option

__all__ = ["api", "mcp"]

_INSECURE = click.option("--insecure-no-auth", "insecure", is_flag=True,
                         help="Listen beyond loopback with no API keys configured (an open service, on purpose).")


@click.command("api")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), help="Port (default: the `api_port` setting, 8500).")
@index_option("Index alias to search (default: the configured one).")
@retriever_option()
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="uvicorn worker processes (each loads its own model).")
@_INSECURE
@pass_app
def api(app: AppContext, host: str, port: int | None, index_alias: str | None, retriever: str | None,
        workers: int, insecure: bool) -> None:
    """Serve the search API: POST /v1/search, /v1/toolset, /v1/feedback; GET /v1/tools/{id}, /health,
    /metrics; OpenAPI at /docs.

    Keys come from the `api_keys` setting (`toolsift keys create`); with none configured the API is
    open and binds loopback only. The embedding model and the index checks load before the port opens.
    """
    from toolsift.access import KeyRing, check_bind
    from toolsift.webguard import allowed_hosts_for
    from toolsift.webguard import serve as serve_http

    settings = app.settings(index=index_alias, retriever=retriever)
    keys = KeyRing(settings.api_keys)
    check_bind(host, keys, force=insecure, service="serve api")
    port = port or settings.api_port
    hosts = allowed_hosts_for(settings.allowed_hosts, host)
    auth = f"{len(keys)} API key(s) required" if keys.enabled else "no keys configured: open, every tenant"
    click.echo(f"search API: index {settings.index}, retriever {settings.retriever}; {auth}; "
               f"http://{host}:{port}/docs", err=True)
    if workers > 1:
        # each worker process builds its own app from the settings: hand them what the flags decided
        # (the config file travels as TOOLSIFT_CONFIG already)
        os.environ["TOOLSIFT_ALLOWED_HOSTS"] = json.dumps(hosts)
        os.environ["TOOLSIFT_INDEX"] = settings.index
        os.environ["TOOLSIFT_RETRIEVER"] = settings.retriever
        if settings.opensearch_url:  # --opensearch-url, a root flag
            os.environ["TOOLSIFT_OPENSEARCH_URL"] = settings.opensearch_url
        serve_http("toolsift.api.app:app_from_environment", factory=True, host=host, port=port, workers=workers,
                   read_timeout_s=settings.request_read_timeout_s, log_level="warning")
        return
    from toolsift.api.app import create_app

    serve_http(create_app(settings, allowed_hosts=hosts), host=host, port=port,
               read_timeout_s=settings.request_read_timeout_s, log_level="warning")


@click.command("mcp")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True,
              help="stdio: a child process of the MCP client; http: streamable HTTP at http://HOST:PORT/mcp.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on (http).")
@click.option("--port", type=click.IntRange(1, 65535), help="Port (http; default: the `mcp_port` setting, 8600).")
@index_option("Index alias to search (default: the configured one).")
@retriever_option()
@_INSECURE
@pass_app
def mcp(app: AppContext, transport: Literal["stdio", "http"], host: str, port: int | None, index_alias: str | None,
        retriever: str | None, insecure: bool) -> None:
    """Serve toolsift as an MCP server: tools search_tools, recommend_toolset, get_tool.

    Over stdio the key is read from TOOLSIFT_API_KEY (required when keys are configured) and fixes the
    tenant for the session; over HTTP every request sends `Authorization: Bearer <key>`.
    """
    from toolsift.access import KeyRing, check_bind
    from toolsift.api.app import default_service
    from toolsift.api.mcp_server import create_mcp_server, streamable_http_app
    from toolsift.webguard import allowed_hosts_for
    from toolsift.webguard import serve as serve_http

    settings = app.settings(index=index_alias, retriever=retriever)
    keys = KeyRing(settings.api_keys)
    if transport == "stdio":
        who = keys.authenticate(os.environ.get("TOOLSIFT_API_KEY"))  # a wrong key stops here, before loading
        with contextlib.redirect_stdout(sys.stderr):  # stdout carries the protocol: nothing else may print there
            service = default_service(settings)
        server = create_mcp_server(settings, lambda: service, principal=who)
        print(f"toolsift MCP server (stdio): index {settings.index}, tenant {who.tenant or 'all'}", file=sys.stderr)
        server.run("stdio")
        return
    check_bind(host, keys, force=insecure, service="serve mcp")
    service = default_service(settings)  # the model and the index checks, once, before the port opens
    port = port or settings.mcp_port
    hosts = allowed_hosts_for(settings.allowed_hosts, host)
    server = create_mcp_server(settings, lambda: service, http_url=f"http://{host}:{port}")
    auth = f"{len(keys)} API key(s) required" if keys.enabled else "no keys configured: open, every tenant"
    click.echo(f"toolsift MCP server: index {settings.index}; {auth}; http://{host}:{port}/mcp", err=True)
    serve_http(streamable_http_app(server, hosts, port, settings=settings), host=host, port=port,
               read_timeout_s=settings.request_read_timeout_s, log_level="warning")
