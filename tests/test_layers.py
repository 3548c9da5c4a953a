"""The project's packages form layers: each imports only the ones below it, and no module
imports itself back through others. Read from the sources (every import statement, including
those inside functions), so a cycle fails here before it fails at import time."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Bottom to top. facts: what Azure, Kubernetes and NVIDIA say (no project imports).
# stackconfig: the config model. planning: pure plans over the validated config.
# validation: the relational checks and the loader. components: the Pulumi program.
# offline: the in-process engine; contracts: the golden-workload contracts; scripts, tests.
LAYERS = ["facts", "stackconfig", "planning", "validation", "components", "offline", "contracts", "scripts", "tests"]
# Layers that never import Pulumi: plain functions over plain values.
PULUMI_FREE = ["facts", "stackconfig", "planning"]


def _modules() -> dict[str, Path]:
    modules = {}
    for package in LAYERS:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            modules[name.removesuffix(".__init__")] = path
    return modules


def _imports(path: Path) -> set[str]:
    """Every absolute module name a source file imports, `from a import b` as `a.b` and `a`."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), i.e. import cycles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return cycles


def test_each_package_imports_only_the_layers_below_it():
    wrong = []
    for name, path in _modules().items():
        package = name.split(".", 1)[0]
        below = set(LAYERS[: LAYERS.index(package) + 1])
        for imported in _imports(path):
            top = imported.split(".", 1)[0]
            if top in LAYERS and top not in below:
                wrong.append(f"{name} imports {imported} ({top} is above {package})")
    assert wrong == []


def test_no_module_imports_itself_back():
    modules = _modules()
    graph = {name: {m for m in _imports(path) if m in modules and m != name} for name, path in modules.items()}
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_pure_layers_never_import_pulumi_and_the_model_only_facts():
    for name, path in _modules().items():
        if name.split(".", 1)[0] in PULUMI_FREE:
            assert not any(
                m == "pulumi" or m.startswith("pulumi.") or m.startswith("pulumi_") for m in _imports(path)
            ), name
    # The config model (one module per section) imports facts and its own sections, nothing else.
    sections = sorted((ROOT / "stackconfig" / "model").glob("*.py"))
    assert len(sections) > 10
    for path in sections:
        imported = _imports(path)
        assert {m.split(".", 1)[0] for m in imported} & set(LAYERS) <= {"facts", "stackconfig"}, path.name
        assert all(m.startswith("stackconfig.model") for m in imported if m.split(".", 1)[0] == "stackconfig"), (
            path.name
        )
