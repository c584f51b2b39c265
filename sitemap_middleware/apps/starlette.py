"""Starlette's and FastAPI's routes, read by their public attributes: routes
and mounts walked with their prefixes, FastAPI's own pages, mounts that serve
files.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from types import MappingProxyType
from typing import Any

from . import MAX_LAYERS, STARLETTE, RouteTable, is_starlette

# FastAPI's attributes holding the paths of its own pages (None when turned off).
_FASTAPI_PAGES = (
    "docs_url",
    "redoc_url",
    "swagger_ui_oauth2_redirect_url",
    "openapi_url",
)


def starlette_table(app: Any) -> RouteTable | None:
    """The route table of a Starlette or FastAPI app (``None`` for an app
    without ``routes``): its routes, mounts walked with their prefixes, the
    pages at FastAPI's ``docs_url``, ``redoc_url``,
    ``swagger_ui_oauth2_redirect_url`` and ``openapi_url`` wherever the app
    put them, and mounts of apps that look files up (``StaticFiles``)."""
    routes = getattr(app, "routes", None)
    if routes is None:
        return None
    views: dict[str, object] = {}
    framework: set[str] = set()
    files: list[object] = []
    gets: set[str] = set()

    def walk(owner: Any, routes: Iterable[Any], prefix: str, depth: int) -> None:
        for name in _FASTAPI_PAGES:
            page = getattr(owner, name, None)
            if isinstance(page, str):
                framework.add(prefix + page)
        for route in _flat(routes):
            path = getattr(route, "path", "")
            children = getattr(route, "routes", None)
            if children is None:  # a Route or a WebSocketRoute
                if isinstance(path, str):
                    views.setdefault(prefix + path, getattr(route, "endpoint", None))
                    if "GET" in (getattr(route, "methods", None) or ()):
                        gets.add(prefix + path)
                continue
            mounted = getattr(route, "app", None)  # a Mount or a Host
            if children and depth < MAX_LAYERS:
                inner = routed(mounted)
                walk(inner, children, prefix + (path or ""), depth + 1)
            elif _serves_files(mounted):
                files.append(mounted)

    walk(app, routes, "", 0)
    files.extend(views[template] for template in framework if template in views)
    return RouteTable(
        MappingProxyType(views),
        frozenset(framework),
        tuple(files),
        frozenset(gets),
        spelling=STARLETTE,
    )


def _flat(routes: Iterable[Any]) -> Iterator[Any]:
    """The routes, an included router's own in its place: newer FastAPI
    releases keep ``include_router``'s routes as one route whose
    ``effective_route_contexts()`` give them with their full paths."""
    for route in routes:
        included = getattr(route, "effective_route_contexts", None)
        if callable(included):
            yield from included()
        else:
            yield route


def routed(app: Any) -> Any:
    """The first app with ``routes`` down a chain of ``.app`` attributes: the
    app under a mount's middleware (``Mount(middleware=...)``), or the one a
    middleware wraps from outside."""
    for _ in range(MAX_LAYERS):
        if app is None or is_starlette(app):
            return app
        app = getattr(app, "app", None)
    return None


def _serves_files(app: Any) -> bool:
    for _ in range(MAX_LAYERS):
        if app is None:
            return False
        if callable(getattr(app, "lookup_path", None)):  # StaticFiles
            return True
        app = getattr(app, "app", None)
    return False
