"""What the app declares: its route table (each template and its view, and the
framework's own pages), read from a Flask or Starlette app by their public
attributes, and the checks of the config's ``routes`` keys against it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .errors import ConfigError

# Layers walked at most: more than any real stack holds, and an end should a
# chain of ``app`` attributes lead round in a circle.
MAX_LAYERS = 100
# The spellings of route templates: werkzeug's (Flask) and Starlette's (FastAPI).
WERKZEUG = "werkzeug"
STARLETTE = "starlette"
# FastAPI's attributes holding the paths of its own pages (None when turned off).
_FASTAPI_PAGES = (
    "docs_url",
    "redoc_url",
    "swagger_ui_oauth2_redirect_url",
    "openapi_url",
)
_WERKZEUG_PART = re.compile(r"<(?:(\w+)(?:\([^)]*\))?:)?(\w+)>")
_STARLETTE_PART = re.compile(r"{(\w+)(?::(\w+))?}")

EnvironFinder = Callable[[Mapping[str, Any]], "tuple[str, object] | None"]
"""From a WSGI environ: the template and view of the route that served it."""


@dataclass(frozen=True, slots=True)
class RouteTable:
    """The routes an app declares, as the framework spells their templates."""

    views: Mapping[str, object]
    """Every route template -> its view (Flask's view function, Starlette's
    endpoint); the first route declared wins a template declared twice."""
    framework: frozenset[str]
    """The templates of the framework's own pages: FastAPI's docs, ReDoc,
    OAuth2 redirect and OpenAPI schema, Flask's static routes."""
    framework_views: tuple[object, ...] = ()
    """The views of those pages, and the apps mounted to serve files
    (Starlette's ``StaticFiles``): a response may name its view but not its
    template (a mount's pages, FastAPI's own routes)."""
    gets: frozenset[str] = frozenset()
    """The templates of routes that answer ``GET`` (the pages ``seed`` may
    request; websockets and ``POST``-only routes are not among them)."""

    def is_framework(self, template: str | None, view: object) -> bool:
        """Whether the route ``template`` served by ``view`` is the framework's."""
        if template is not None and template in self.framework:
            return True
        return view is not None and any(view is own for own in self.framework_views)


def find_flask(app: Any) -> Any | None:
    """The Flask app that ``app`` is, or whose ``wsgi_app`` it is (bound, so
    ``__self__``), or that it wraps through WSGI middleware exposing ``.app``
    (werkzeug's ``ProxyFix``, ``SharedDataMiddleware``...)."""
    layer = app
    for _ in range(MAX_LAYERS):
        if hasattr(layer, "url_map") and hasattr(layer, "view_functions"):
            return layer
        inner = getattr(layer, "__self__", None)
        layer = inner if inner is not None else getattr(layer, "app", None)
        if layer is None:
            return None
    return None


def sitemap_below(app: Any, kind: type) -> str | None:
    """Where a sitemap middleware of ``kind`` already serves ``app``, found
    down its layers (``.app``; a Flask app's ``wsgi_app``; a Starlette or
    FastAPI app's declared middleware, then its built stack), as the layers
    that lead to it: ``None`` when there is none. A bound ``wsgi_app`` is
    the bottom (the Flask app beneath any middleware): whatever its app's
    ``wsgi_app`` now holds wraps it, from above."""
    layer: Any = app
    names: list[str] = []
    for _ in range(MAX_LAYERS):
        if layer is None or getattr(layer, "__self__", None) is not None:
            return None
        name = type(layer).__name__
        if isinstance(layer, kind):
            return " > ".join([*names, name])
        if hasattr(layer, "url_map") and hasattr(layer, "view_functions"):  # Flask
            names.append(f"{name}.wsgi_app")
            layer = layer.wsgi_app
        elif hasattr(layer, "user_middleware"):  # Starlette, FastAPI
            for spec in layer.user_middleware:
                cls = getattr(spec, "cls", None)
                if isinstance(cls, type) and issubclass(cls, kind):
                    found = f"{cls.__name__} (add_sitemap or middleware())"
                    return " > ".join([*names, f"{name}.user_middleware", found])
            names.append(name)
            layer = layer.middleware_stack  # None until built: nothing more
        else:
            names.append(name)
            layer = getattr(layer, "app", None)
    return None


def refuse_second(app: Any, kind: type) -> None:
    """One sitemap middleware per app: a second records every page twice.

    :raises ConfigError: naming where the first is.
    """
    where = sitemap_below(app, kind)
    if where is not None:
        raise ConfigError(
            f"this app already has a sitemap middleware ({where}): install one"
            " only; for several origins, give it the 'sites' key"
        )


def flask_finder(app: Any) -> EnvironFinder:
    """Finds the route of a response from Flask's request in the environ."""
    views = app.view_functions

    def find_route(environ: Mapping[str, Any]) -> tuple[str, object] | None:
        # Flask's request sits in the environ while the response starts, its
        # URL rule matched: no per-request hook needed, and pages that are not
        # recorded pay nothing.
        rule = getattr(environ.get("werkzeug.request"), "url_rule", None)
        if rule is None:
            return None
        return rule.rule, views.get(rule.endpoint)

    return find_route


def flask_table(app: Any) -> RouteTable:
    """The route table of a Flask app. Its static routes are the app's
    ``static`` endpoint and the blueprints' ``<name>.static`` (or any rule whose
    view is a ``send_static_file``), wherever ``static_url_path`` put them."""
    views: dict[str, object] = {}
    framework: set[str] = set()
    gets: set[str] = set()
    for rule in app.url_map.iter_rules():
        view = app.view_functions.get(rule.endpoint)
        if "GET" in (rule.methods or ()):
            gets.add(rule.rule)
        views.setdefault(rule.rule, view)
        endpoint = rule.endpoint
        if (
            endpoint == "static"
            or endpoint.endswith(".static")
            or getattr(view, "__name__", None) == "send_static_file"
        ):
            framework.add(rule.rule)
    return RouteTable(
        MappingProxyType(views), frozenset(framework), gets=frozenset(gets)
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
        MappingProxyType(views), frozenset(framework), tuple(files), frozenset(gets)
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
        if app is None or hasattr(app, "routes"):
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


def check_spelling(routes: Iterable[str], spelling: str) -> None:
    """A ``routes`` key in the other framework's syntax is an error.

    :param spelling: ``WERKZEUG`` (the WSGI middleware, Flask) or
        ``STARLETTE`` (the ASGI middleware, Starlette and FastAPI).
    :raises ConfigError: naming the key and its spelling for this app.
    """
    for template in routes:
        if spelling == WERKZEUG and _STARLETTE_PART.search(template):
            right = _STARLETTE_PART.sub(_to_werkzeug, template)
            theirs, ours = "Starlette's", "werkzeug (Flask)"
        elif spelling == STARLETTE and _WERKZEUG_PART.search(template):
            right = _WERKZEUG_PART.sub(_to_starlette, template)
            theirs, ours = "werkzeug's (Flask)", "Starlette (and FastAPI)"
        else:
            continue
        raise ConfigError(
            f"'routes' key {template!r} is written in {theirs} syntax; "
            f"{ours} spells it {right!r}"
        )


def _to_werkzeug(match: re.Match[str]) -> str:
    name, convertor = match.groups()
    return f"<{convertor}:{name}>" if convertor and convertor != "str" else f"<{name}>"


def _to_starlette(match: re.Match[str]) -> str:
    convertor, name = match.groups()
    if convertor and convertor != "string":
        return f"{{{name}:{convertor}}}"
    return f"{{{name}}}"


def unknown_routes(routes: Iterable[str], table: RouteTable) -> list[str]:
    """The ``routes`` keys that name no route of the app."""
    return [template for template in routes if template not in table.views]
