"""docker/: the compose files, the GPU override and the Dockerfile, read as files (no Docker engine here).

Checks what a typo would break without an engine to tell: the services and their ports (loopback
only), the health checks the ``depends_on`` conditions wait for, the GPU reservation living only in
the override, every ``TOOLSIFT_*`` variable naming a real setting, and every ``toolsift …`` command
resolving to a real CLI command whose options parse.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from toolsift.cli.main import cli
from toolsift.config import Settings

REPO = Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"
SERVICES = {"opensearch", "opensearch-dashboards", "dashboards-import", "ranker", "workbench", "api", "mcp"}
TOOLSIFT_SERVICES = {"dashboards-import", "ranker", "workbench", "api", "mcp"}
#: Variables read by a CLI option (click ``envvar``) rather than by Settings.
CLI_ENVVARS = {"TOOLSIFT_DASHBOARDS_URL", "TOOLSIFT_DASHBOARDS_USER", "TOOLSIFT_DASHBOARDS_PASSWORD", "TOOLSIFT_CONFIG"}


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DOCKER / name).read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load("docker-compose.yml")


@pytest.fixture(scope="module")
def gpu() -> dict[str, Any]:
    return load("docker-compose.gpu.yml")


def test_the_compose_file_runs_the_whole_product(compose: dict[str, Any]) -> None:
    services = compose["services"]

    assert set(services) == SERVICES
    assert services["opensearch"]["image"] == "opensearchproject/opensearch:2.19.1"
    assert services["opensearch-dashboards"]["image"] == "opensearchproject/opensearch-dashboards:2.19.1"
    for name in TOOLSIFT_SERVICES:
        assert services[name]["build"] == {"context": "..", "dockerfile": "docker/Dockerfile"}, name
        assert (DOCKER / services[name]["build"]["context"] / services[name]["build"]["dockerfile"]).is_file()
        assert services[name]["image"] == "toolsift:local", name


def test_every_published_port_is_bound_to_loopback(compose: dict[str, Any], gpu: dict[str, Any]) -> None:
    published = [(name, port) for data in (compose, gpu) for name, service in data["services"].items()
                 for port in service.get("ports", [])]

    assert {name for name, _ in published} == {"opensearch", "opensearch-dashboards", "ranker", "workbench", "api",
                                               "mcp"}
    for name, port in published:
        assert isinstance(port, str) and port.startswith("127.0.0.1:"), (name, port)


def test_the_services_listen_where_they_are_published_and_checked(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name, port in (("ranker", 8300), ("workbench", 8400), ("api", 8500)):
        service = services[name]
        command = service["command"]
        assert command[command.index("--host") + 1] == "0.0.0.0"  # reachable from the other containers
        assert command[command.index("--port") + 1] == str(port)
        assert service["ports"] == [f"127.0.0.1:${{{name.upper()}_PORT:-{port}}}:{port}"]
        assert f"http://127.0.0.1:{port}/health" in " ".join(service["healthcheck"]["test"])


def test_services_listening_beyond_loopback_inside_say_so_and_are_published_on_loopback_only(
        compose: dict[str, Any]) -> None:
    for name in ("ranker", "workbench", "api", "mcp"):
        command = compose["services"][name]["command"]
        assert "--insecure-no-auth" in command, name  # refused otherwise: 0.0.0.0 with no keys configured
    assert "ranker" in compose["services"]["ranker"]["environment"]["TOOLSIFT_ALLOWED_HOSTS"]  # called by name


def test_the_workbench_uses_the_cluster_the_ranker_and_the_query_log(compose: dict[str, Any]) -> None:
    workbench = compose["services"]["workbench"]

    assert workbench["environment"] == {"TOOLSIFT_OPENSEARCH_URL": "http://opensearch:9200",
                                        "TOOLSIFT_RANKER_URL": "http://ranker:8300", "TOOLSIFT_QUERY_LOG": "true"}
    assert workbench["depends_on"] == {"opensearch": {"condition": "service_healthy"},
                                       "ranker": {"condition": "service_healthy"}}


def test_the_dashboards_import_runs_once_after_dashboards_is_healthy(compose: dict[str, Any]) -> None:
    service = compose["services"]["dashboards-import"]

    assert service["depends_on"] == {"opensearch-dashboards": {"condition": "service_healthy"}}
    assert service["restart"] == "no"
    command = service["command"]
    assert command[:3] == ["toolsift", "dashboards", "import"]
    assert command[command.index("--url") + 1] == "http://opensearch-dashboards:5601"


def test_every_service_waited_for_as_healthy_has_a_health_check(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name, service in services.items():
        for dependency, condition in service.get("depends_on", {}).items():
            if condition["condition"] == "service_healthy":
                assert "healthcheck" in services[dependency], (name, dependency)


def test_the_gpu_reservation_is_only_in_the_override(compose: dict[str, Any], gpu: dict[str, Any]) -> None:
    assert all("deploy" not in service for service in compose["services"].values())
    assert set(gpu["services"]) == {"ranker"}
    ranker = gpu["services"]["ranker"]
    assert ranker["deploy"]["resources"]["reservations"]["devices"] == [
        {"driver": "nvidia", "count": "all", "capabilities": ["gpu"]}
    ]
    assert ranker["environment"] == {"TOOLSIFT_RERANKER_DEVICE": "cuda"}
    # the override's environment is a mapping like the base file's, so compose merges the two
    assert isinstance(compose["services"]["ranker"]["environment"], dict)


def test_every_toolsift_variable_names_a_setting(compose: dict[str, Any], gpu: dict[str, Any]) -> None:
    names = [key for data in (compose, gpu) for service in data["services"].values()
             for key in service.get("environment", {}) if key.startswith("TOOLSIFT_")]
    names += re.findall(r"\b(TOOLSIFT_[A-Z_]+)=", (DOCKER / "Dockerfile").read_text(encoding="utf-8"))

    assert len(names) >= 6
    for name in names:
        assert name in CLI_ENVVARS or name.removeprefix("TOOLSIFT_").lower() in Settings.model_fields, name


def _resolve(args: list[str]) -> tuple[list[str], click.Command | None]:
    """Walk ``toolsift ARGS`` down the click groups: the command path and the command, parsed with the rest
    of the arguments (``None`` when a name does not resolve)."""
    ctx = click.Context(cli, info_name="toolsift")
    command: click.Command = cli
    path: list[str] = []
    rest = list(args)
    while isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
        name = rest.pop(0)
        found = command.get_command(ctx, name)
        if found is None:
            return [*path, name], None
        path.append(name)
        command = found
        ctx = click.Context(command, info_name=name, parent=ctx)
    command.make_context(path[-1], rest, parent=ctx.parent)  # raises on an unknown option or a bad value
    return path, command


def test_every_toolsift_command_in_the_compose_file_is_a_real_command(compose: dict[str, Any]) -> None:
    commands = {name: service["command"] for name, service in compose["services"].items()
                if service.get("command", [None])[0] == "toolsift"}

    assert set(commands) == TOOLSIFT_SERVICES
    for name, command in commands.items():
        path, resolved = _resolve(command[1:])
        assert resolved is not None, f"{name}: `toolsift {' '.join(path)}` is not a command"
        assert not isinstance(resolved, click.Group), (name, path)


def test_the_resolver_refuses_unknown_commands_and_options() -> None:
    assert _resolve(["serve", "nonsense"]) == (["serve", "nonsense"], None)
    with pytest.raises(click.UsageError):
        _resolve(["serve", "ranker", "--no-such-option"])


def test_pytest_docker_starts_only_the_cluster(request: pytest.FixtureRequest, compose: dict[str, Any]) -> None:
    setup = request.getfixturevalue("docker_setup")

    assert setup == ["up --wait opensearch"]
    assert "healthcheck" in compose["services"]["opensearch"]  # what --wait waits for


def test_the_dockerfile_installs_toolsift_from_the_repository() -> None:
    text = (DOCKER / "Dockerfile").read_text(encoding="utf-8")
    instructions = [line for line in text.splitlines() if line and not line.startswith(("#", " "))]

    assert instructions[0] == "FROM python:3.11-slim"
    assert "COPY . /src" in instructions
    assert re.search(r"pip install /src\b", text)
    assert instructions[-1] == 'CMD ["toolsift", "--help"]'
    assert "java" not in text.lower().replace("no java here", "")


def test_the_build_context_keeps_every_package_folder() -> None:
    """docker/Dockerfile.dockerignore must not drop what ``pip install /src`` builds from."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    needed = ["pyproject.toml", "README.md", *pyproject["tool"]["setuptools"]["package-dir"].values()]
    patterns = [line.strip() for line in (DOCKER / "Dockerfile.dockerignore").read_text(encoding="utf-8").splitlines()
                if line.strip() and not line.startswith("#")]

    assert ".venv" in patterns and ".git" in patterns and "build" in patterns
    for path in needed:
        assert (REPO / path).exists(), path
        prefixes = ["/".join(Path(path).parts[:n]) for n in range(1, len(Path(path).parts) + 1)]
        for pattern in patterns:
            assert not pattern.startswith("!"), pattern  # exceptions would make this check meaningless
            assert not any(fnmatch.fnmatchcase(prefix, pattern) for prefix in prefixes), (path, pattern)
