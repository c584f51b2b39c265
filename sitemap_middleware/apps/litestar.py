"""Litestar's routes, read by its public attributes: each route's path and
handler, and the framework's own pages (the OpenAPI schema and its viewers,
static files), which are its own code's handlers.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from . import STARLETTE, RouteTable, ScopeFinder

# The framework's own handlers live in its own modules.
_OWN = "litestar."


def litestar_table(app: Any) -> RouteTable:
    """The route table of a Litestar app: each HTTP route's template as the
    scope names it (``/blog/{slug}``) and its GET handler's function; the
    OpenAPI pages (``/schema``, ``/schema/swagger``...) wherever
    ``openapi_config`` put them, and static files, are the framework's."""
    views: dict[str, object] = {}
    framework: set[str] = set()
    gets: set[str] = set()
    for route in app.routes:
        template = getattr(route, "path_format", None)
        if not isinstance(template, str):
            continue
        for handler in getattr(route, "route_handlers", ()):
            methods = getattr(handler, "http_methods", None) or ()
            if "GET" not in methods:
                continue
            view = getattr(handler, "fn", handler)
            views.setdefault(template, view)
            gets.add(template)
            if getattr(view, "__module__", "").startswith(_OWN):
                framework.add(template)
    return RouteTable(
        MappingProxyType(views),
        frozenset(framework),
        gets=frozenset(gets),
        spelling=STARLETTE,
    )


def litestar_finder(app: Any) -> ScopeFinder:
    """Litestar notes the route of a response in the scope."""
    return litestar_route


def litestar_route(scope: Mapping[str, Any], root: str) -> tuple[str, object] | None:
    """The template and view of the route that served a response: Litestar
    puts the matched template and handler in the scope."""
    template = scope.get("path_template")
    handler = scope.get("route_handler")
    if not isinstance(template, str):
        return None
    return template, getattr(handler, "fn", handler)
