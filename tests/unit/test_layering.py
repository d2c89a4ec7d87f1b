"""The package layout is the pipeline, and the layering holds.

A request runs one way: front ends (CLI, search API and MCP server, workbench, dashboards) →
benchmarks → evaluation → the search backend → the ranker → ingest / query → plugin scripts → mappings
→ the ground (``toolsift/``: errors, config, records, the OpenSearch client; ``llm/``). Every import
in product code (lazy and type-checking ones included) must point down or sideways, no module may take
part in an import cycle, nothing imports another package's private (``_``) modules, every package
has a front door (``__all__`` in its ``__init__``), and library code raises toolsift's errors.

A capability that spans layers lives in one folder (``learning/``, ``encoders/``, ``sets/``,
``agents/``, ``screen/``, ``standardise/``): :data:`CAPABILITIES` places each of its modules at its
own layer, so a capability's folder never lets a lower layer reach up; its front door sits at the
highest layer of its modules, for the front ends.
"""

from __future__ import annotations

import ast
import tomllib
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Lowest first: a package may import its own modules and those of the layers below it.
LAYERS: list[str] = [
    "toolsift",  # the ground
    "mappings",
    "plugin_scripts",
    "query",
    "ingest",
    "ranker",
    "search",
    "evaluation",
    "bench",
    "dashboards",
    "workbench",
    "api",
    "cli",
    "integrations",
]
_GROUND = ("toolsift", "llm")
#: Each capability folder's modules, by the layer each sits at.
CAPABILITIES: dict[str, dict[str, str]] = {
    "encoders": {"embedding": "toolsift", "onnx_encoder": "toolsift", "shipped": "toolsift",
                 "vectorcache": "toolsift", "encoder_pairs": "ranker", "encoder_training": "ranker",
                 "encoder_artifact": "ranker", "encoder_eval": "evaluation"},
    "screen": {"unicode_fold": "ingest", "intent": "ingest", "intent_words": "ingest", "e5": "ingest", "meaning": "ingest",
               "screening": "ingest", "screen_bench": "evaluation", "adapter_training": "evaluation"},
    "standardise": {"tasks": "ingest", "answers": "ingest", "required": "ingest", "standardiser": "ingest",
                    "catalog": "ingest", "published": "ingest", "prompt_bench": "bench"},
    "agents": {"aggregation": "ranker", "agent_search": "search", "agent_eval": "evaluation"},
    "sets": {"history_doc": "mappings", "history_import": "ingest", "history_store": "ranker", "ptr": "ranker",
             "recommender": "search", "set_eval": "evaluation"},
    "learning": {"feedback_doc": "mappings", "querylog_doc": "mappings", "reembed": "ingest",
                 "feedback_pairs": "ranker", "experiments": "ranker", "querylog": "search", "feedback": "search",
                 "training_queries": "search", "ab_report": "search", "learner": "evaluation",
                 "feedback_sim": "bench"},
}
#: Exceptions a pydantic validator must raise (pydantic turns them into its ValidationError).
_VALIDATORS = {"field_validator", "model_validator", "validator"}
_BARE = {"ValueError", "RuntimeError", "TypeError", "KeyError", "Exception"}


def _setuptools() -> dict[str, Any]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["setuptools"]  # type: ignore[no-any-return]


def _package_dirs() -> dict[str, Path]:
    return {name: ROOT / folder for name, folder in _setuptools()["package-dir"].items()}


def _modules() -> dict[str, Path]:
    """Every product module by dotted name (``toolsift.search.backend``: search/backend.py), in every
    package the distribution installs."""
    found: dict[str, Path] = {}
    dirs = _package_dirs()
    for package in sorted({*dirs, *_setuptools()["packages"]}):
        folder = dirs.get(package, ROOT / package.replace(".", "/"))
        for file in folder.glob("*.py"):
            found[package if file.stem == "__init__" else f"{package}.{file.stem}"] = file
    return found


MODULES = _modules()


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in CAPABILITIES:
        layers = CAPABILITIES[parts[1]]
        if len(parts) == 2:  # the front door: the highest of its modules' layers
            return max(layers.values(), key=LAYERS.index)
        return layers[parts[2]]
    if len(parts) > 1 and parts[1] in _GROUND:
        return "toolsift"
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "toolsift"


def _imports(module: str) -> Iterator[tuple[str, int]]:
    """(imported toolsift module, line) of every import statement in ``module``, wherever it sits."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.startswith("toolsift"):
            yield node.module, node.lineno
            for alias in node.names:
                if f"{node.module}.{alias.name}" in MODULES:
                    yield f"{node.module}.{alias.name}", node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("toolsift"):
                    yield alias.name, node.lineno


def test_the_layers_name_every_top_level_package() -> None:
    assert {_layer(m) for m in MODULES} == set(LAYERS)
    packages = {m.split(".")[1] for m in MODULES if m.count(".") > 1 or MODULES[m].stem == "__init__" and "." in m}
    assert packages <= {*LAYERS, *CAPABILITIES, *_GROUND}


@pytest.mark.parametrize("capability", sorted(CAPABILITIES))
def test_every_module_of_a_capability_has_its_layer(capability: str) -> None:
    modules = {m.split(".")[2] for m in MODULES if m.startswith(f"toolsift.{capability}.")}
    assert modules == set(CAPABILITIES[capability]), f"toolsift.{capability}: place each module at a layer"
    assert set(CAPABILITIES[capability].values()) <= set(LAYERS)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down_the_layers(module: str) -> None:
    own = LAYERS.index(_layer(module))
    upward = [f"line {line}: {target}" for target, line in _imports(module)
              if LAYERS.index(_layer(target)) > own]
    assert not upward, f"{module} ({_layer(module)}) imports from a higher layer: {upward}"


def test_no_module_takes_part_in_an_import_cycle() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for module in MODULES:
        for target, _ in _imports(module):
            if target in MODULES and target != module:
                graph[module].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(MODULES):
        if module not in index:
            visit(module)
    assert not cycles, f"import cycles: {cycles}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_nothing_imports_another_packages_private_modules(module: str) -> None:
    package = module if MODULES[module].stem == "__init__" else module.rsplit(".", 1)[0]
    private = [f"line {line}: {target}" for target, line in _imports(module)
               if target.rsplit(".", 1)[-1].startswith("_") and target.rsplit(".", 1)[0] != package]
    assert not private, f"{module} imports private modules of other packages: {private}"


@pytest.mark.parametrize("package", sorted(m for m, f in MODULES.items() if f.stem == "__init__"))
def test_every_package_has_a_front_door(package: str) -> None:
    tree = ast.parse(MODULES[package].read_text(encoding="utf-8"))
    exported = [node for node in tree.body
                if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets))
                or (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "__all__")]
    assert exported, f"{MODULES[package].relative_to(ROOT)} declares no __all__"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_library_code_raises_toolsift_errors(module: str) -> None:
    """A user's mistake reaches the edges as a ToolsiftError (one table maps it to an exit code and an
    HTTP status), never as a bare ValueError's traceback; pydantic validators are the exception."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    validators: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = {d.func.id if isinstance(d, ast.Call) and isinstance(d.func, ast.Name) else
                     d.id if isinstance(d, ast.Name) else "" for d in node.decorator_list}
            if names & _VALIDATORS:
                validators |= {id(n) for n in ast.walk(node)}
    bare = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None and id(node) not in validators:
            called = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(called, ast.Name) and called.id in _BARE:
                bare.append(f"line {node.lineno}: raise {called.id}")
    assert not bare, f"{module} raises bare built-in errors: {bare}"
