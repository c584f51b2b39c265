"""The package's import graph follows ARCHITECTURE.md: no cycle of any kind (type-only
imports included), leaves that import nothing of the package, a config that depends
on leaves only, and a core that imports no web framework.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "sitemap_middleware"
LEAVES = {"errors", "model", "sitemaps", "reasons", "_types", "tracking"}
# May import leaves and each other only.
LOW = LEAVES | {"urls", "links"}
# The command layer (cli, and replay: the app in process) runs the app itself.
ADAPTERS = {
    "wsgi",
    "asgi",
    "flask",
    "starlette",
    "__init__",
    "__main__",
    "cli",
    "replay",
}
FRAMEWORKS = {"flask", "starlette", "fastapi", "anyio"}


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts) or "__init__"


def _graph() -> dict[str, set[str]]:
    """module -> the package modules it imports, at run time or for types."""
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.split(".") if package and package != "__init__" else []
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *(node.module or "").split(".")]).strip(".")
                for alias in node.names:
                    full = f"{target}.{alias.name}".strip(".")
                    if full in modules:
                        edges.add(full)
                    elif target in modules:
                        edges.add(target)
                    elif not target:
                        edges.add("__init__")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "sitemap_middleware"
            ):
                edges.add(node.module.partition(".")[2] or "__init__")  # type: ignore[union-attr]
        edges.discard(name)
        graph[name] = edges
    return graph


def _externals(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.partition(".")[0])
    return found


def test_there_is_no_import_cycle() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt) :], nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_leaves_import_nothing_of_the_package() -> None:
    graph = _graph()
    for leaf in sorted(LEAVES):
        assert graph[leaf] == set(), f"{leaf} imports {graph[leaf]}"
    for low in sorted(LOW - LEAVES):
        assert graph[low] <= LOW, f"{low} imports {graph[low] - LOW}"


def test_config_depends_on_leaves_only() -> None:
    assert _graph()["config"] <= LOW


def test_the_core_imports_no_web_framework() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        name = _module(path)
        if name in ADAPTERS:
            continue
        assert not _externals(path) & FRAMEWORKS, f"{name} imports a framework"
