"""The package's import graph follows ARCHITECTURE.md: no cycle of any kind (type-only
imports included), and one rule per folder saying which layers it may import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "sitemap_middleware"

# The top level: the face and adapters, and below them the shared vocabulary.
ADAPTERS = {"__init__", "__main__", "wsgi", "asgi", "flask", "starlette", "core"}
# Leaves import nothing of the package.
LEAVES = {
    "_types",
    "errors",
    "model",
    "reasons",
    "sitemaps",
    "tracking",
    "paths",
    "visible",
    "sections",
    "crawlers",
}
# The vocabulary every layer shares: leaves and what is built only on them
# (config/ is a folder of them).
VOCABULARY = LEAVES | {"urls", "render", "places", "config", "apps", "routes"}
# Each folder, and the layers it may import besides the shared vocabulary.
MAY_IMPORT: dict[str, set[str]] = {
    "page": set(),
    "stores": set(),
    "serving": {"stores"},
    "recording": {"page", "stores"},
    "watching": {"recording"},
    "reporting": {"watching", "recording", "stores"},
    "cli": {
        "adapters",
        "django",
        "reporting",
        "watching",
        "recording",
        "serving",
        "stores",
        "page",
    },
    # The Django adapter: a folder of the adapters' layer (its app, middleware
    # and management command).
    "django": {
        "adapters",
        "cli",
        "reporting",
        "watching",
        "recording",
        "serving",
        "stores",
    },
}
FRAMEWORKS = {
    "flask",
    "starlette",
    "fastapi",
    "anyio",
    "asyncio",
    "django",
    "asgiref",
    "quart",
    "litestar",
}
# The modules that may import a web framework (or asyncio): the adapters, the
# command line, which runs the app in process, and the reading of Django's
# URLconf (its patterns are Django's objects, found through its resolver).
FRAMEWORK_MODULES = {
    "asgi",
    "flask",
    "starlette",
    "__init__",
    "cli.replay",
    "cli.loading",
    "apps.django",
    "django.apps",
    "django.middleware",
    "django.management.commands.sitemap",
}


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


def _layer(module: str) -> str:
    """The folder a module lives in; at the top level, 'adapters' or the module."""
    head, dot, _ = module.partition(".")
    if dot or (PACKAGE / head).is_dir():
        return head
    return "adapters" if module in ADAPTERS else module


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


def test_every_top_level_module_has_a_layer() -> None:
    top = {
        _module(p) for p in PACKAGE.glob("*.py") if _module(p) not in ADAPTERS
    } - VOCABULARY
    assert not top, f"top-level modules in no layer: {sorted(top)}"


def test_leaves_import_nothing_of_the_package() -> None:
    graph = _graph()
    for leaf in sorted(LEAVES & set(graph)):
        assert graph[leaf] == set(), f"{leaf} imports {graph[leaf]}"


def _shared(module: str) -> bool:
    """Whether a module is of the shared vocabulary, or in its folder."""
    return _layer(module) in VOCABULARY


def test_the_vocabulary_imports_only_the_vocabulary() -> None:
    for name, edges in sorted(_graph().items()):
        if _shared(name):
            above = {target for target in edges if not _shared(target)}
            assert not above, f"{name} imports {above}"


@pytest.mark.parametrize("folder", sorted(MAY_IMPORT))
def test_each_folder_imports_only_the_layers_below_it(folder: str) -> None:
    allowed = MAY_IMPORT[folder] | {folder}
    for name, edges in sorted(_graph().items()):
        if _layer(name) != folder:
            continue
        for target in sorted(edges):
            layer = _layer(target)
            assert _shared(target) or layer in allowed, (
                f"{name} ({folder}/) imports {target} ({layer})"
            )


def test_the_core_imports_no_web_framework() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        name = _module(path)
        if name in FRAMEWORK_MODULES:
            continue
        assert not _externals(path) & FRAMEWORKS, f"{name} imports a framework"
