"""Flask's and Quart's routes (werkzeug's ``url_map``): the route table, the
route of a response from Flask's request in the environ, and the template
serving a path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from . import EnvironFinder, RouteTable, ScopeFinder


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
    """The route table of a Flask (or Quart) app. Its static routes are the
    app's ``static`` endpoint and the blueprints' ``<name>.static`` (or any
    rule whose view is a ``send_static_file``), wherever ``static_url_path``
    put them."""
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


def flask_matcher(app: Any, host: str) -> Callable[[str], str | None]:
    """The rule serving a GET of a path, as werkzeug's router matches it."""
    from werkzeug.exceptions import HTTPException

    adapter = app.url_map.bind(host or "localhost")

    def match(path: str) -> str | None:
        try:
            rule, _ = adapter.match(path, method="GET", return_rule=True)
        except HTTPException:  # no route, another method, a redirect
            return None
        return str(rule.rule)

    return match


def quart_finder(app: Any) -> ScopeFinder:
    """Finds the route of a response of a Quart app: its request is not in the
    scope, so the path is matched against its ``url_map`` (only for a
    response that may be recorded)."""
    from werkzeug.exceptions import HTTPException
    from werkzeug.routing import RequestRedirect

    views = app.view_functions

    def find_route(
        scope: Mapping[str, Any], root: str
    ) -> tuple[str | None, object] | None:
        path = scope["path"]
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        adapter = app.url_map.bind("localhost")
        try:
            rule, _ = adapter.match(path, method=scope["method"], return_rule=True)
        except (HTTPException, RequestRedirect):
            return None
        return rule.rule, views.get(rule.endpoint)

    return find_route
