"""The table of frameworks: for each one, how its app is recognised, where its
routes and its own pages are read, and where a sitemap middleware sits in it.
The adapters, the command line and seeding ask this table; a new framework is
one entry here (and its reading, a module of this folder).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from . import (
    DJANGO,
    MAX_LAYERS,
    STARLETTE,
    WERKZEUG,
    RouteTable,
    ScopeFinder,
    is_django,
    is_flask,
    is_litestar,
    is_starlette,
)

WSGI = "wsgi"
ASGI = "asgi"


@dataclass(frozen=True, slots=True)
class Framework:
    """One row of the table."""

    name: str
    protocol: str
    """``WSGI`` or ``ASGI``: how the command line asks the app."""
    owns: Callable[[Any], bool]
    """Whether an object is this framework's app (a layer of a stack)."""
    routes: Callable[[Any], RouteTable | None]
    """The app's route table (``None``: its routes are unknown)."""
    spelling: str = WERKZEUG
    inner: str = ""
    """The attribute where the middleware wraps the app's own callable
    (Flask's ``wsgi_app``, Quart's ``asgi_app``); "": it wraps the app."""
    declared: Callable[[Any, type], str | None] | None = None
    """Where a sitemap middleware is declared in the app's own settings
    (Starlette's ``user_middleware``, Django's ``MIDDLEWARE``), if any."""
    install: str = ""
    """How the middleware is put in this framework's app: said when none is."""
    scope_finder: Callable[[Any], ScopeFinder] | None = None
    """For an ASGI app, given the app: where the ASGI middleware finds the
    route of a response (``None``: in the keys Starlette's router sets)."""


def _none(app: Any) -> None:
    return None


def _reading(module: str, name: str) -> Callable[..., Any]:
    """``name`` of this folder's ``module``, imported when first called: an
    app loads the reading of its own framework, not the others'."""

    def read(*args: Any) -> Any:
        return getattr(importlib.import_module(f"{__package__}.{module}"), name)(*args)

    return read


def _starlette_declared(app: Any, kind: type) -> str | None:
    for spec in getattr(app, "user_middleware", None) or ():
        cls = getattr(spec, "cls", None)
        if isinstance(cls, type) and issubclass(cls, kind):
            found = f"{cls.__name__} (add_sitemap or middleware())"
            return f"{type(app).__name__}.user_middleware > {found}"
    return None


def _pallets(
    name: str,
    protocol: str,
    inner: str,
    install: str,
    scope_finder: Callable[[Any], ScopeFinder] | None = None,
) -> Framework:
    """Flask or Quart: an app of Flask's kind, told apart by the callable it
    wraps (``inner``), its routes read as Flask's."""
    return Framework(
        name,
        protocol,
        lambda app: is_flask(app) and hasattr(app, inner),
        _reading("flask", "flask_table"),
        inner=inner,
        install=install,
        scope_finder=scope_finder,
    )


FLASK = _pallets(
    "Flask",
    WSGI,
    "wsgi_app",
    "Sitemap(app), or app.wsgi_app = SitemapMiddleware(app.wsgi_app, config)",
)
QUART = _pallets(
    "Quart",
    ASGI,
    "asgi_app",
    "app.asgi_app = ASGISitemapMiddleware(app.asgi_app, config)",
    scope_finder=_reading("flask", "quart_finder"),
)
DJANGO_APP = Framework(
    "Django",
    WSGI,
    is_django,
    lambda handler: _reading("django", "django_table")(),
    spelling=DJANGO,
    declared=_reading("django", "django_sitemap_declared"),
    install="'sitemap_middleware.django.SitemapMiddleware' first in MIDDLEWARE",
)
LITESTAR = Framework(
    "Litestar",
    ASGI,
    is_litestar,
    _reading("litestar", "litestar_table"),
    spelling=STARLETTE,
    install="ASGISitemapMiddleware(app, config) around the app",
    scope_finder=_reading("litestar", "litestar_finder"),
)
STARLETTE_APP = Framework(
    "Starlette",
    ASGI,
    is_starlette,
    _reading("starlette", "starlette_table"),
    spelling=STARLETTE,
    declared=_starlette_declared,
    install="add_sitemap(app, config)",
)
ANY_WSGI = Framework(
    "WSGI", WSGI, lambda app: False, _none, install="SitemapMiddleware(app, config)"
)
ANY_ASGI = Framework(
    "ASGI",
    ASGI,
    lambda app: False,
    _none,
    spelling=STARLETTE,
    install="ASGISitemapMiddleware(app, config)",
)

# In the order asked: an app is the first that owns it (Quart's app looks like
# Flask's but for its asgi_app; Litestar's has routes as Starlette's has).
FRAMEWORKS = (FLASK, QUART, DJANGO_APP, LITESTAR, STARLETTE_APP)


def owner(layer: Any) -> Framework | None:
    """The framework whose app ``layer`` is, if any."""
    return next((row for row in FRAMEWORKS if row.owns(layer)), None)


def framework_of(app: Any) -> tuple[Framework, Any]:
    """The framework of ``app`` and its app object, found down its layers
    (``.app``, a bound method's ``__self__``: Flask's ``wsgi_app``); else any
    WSGI or ASGI app (its app ``None``), told apart by an ``async``
    ``__call__``."""
    layer = app
    for _ in range(MAX_LAYERS):
        if layer is None:
            break
        row = owner(layer)
        if row is not None:
            return row, layer
        inner = getattr(layer, "__self__", None)
        layer = inner if inner is not None else getattr(layer, "app", None)
    call = app if inspect.isfunction(app) else getattr(app, "__call__", None)  # noqa: B004
    return (ANY_ASGI if inspect.iscoroutinefunction(call) else ANY_WSGI), None


def table_of(app: Any) -> RouteTable | None:
    """The route table of ``app`` (the first layer whose framework reads
    one: a mount's app, or the app a middleware wraps), ``None`` unknown."""
    row, found = framework_of(app)
    if found is None:
        from .starlette import routed, starlette_table

        found = routed(app)  # a Starlette router beneath a plain middleware
        return None if found is None else starlette_table(found)
    return row.routes(found)


def sitemap_below(app: Any, kind: type) -> str | None:
    """Where a sitemap middleware of ``kind`` already serves ``app``, found
    down its layers (``.app``; a framework's ``inner`` callable; its
    declared middleware, then its built stack), as the layers that lead to
    it: ``None`` when there is none. A bound ``wsgi_app`` is the bottom (the
    Flask app beneath any middleware): whatever its app's ``wsgi_app`` now
    holds wraps it, from above."""
    layer: Any = app
    names: list[str] = []
    for _ in range(MAX_LAYERS):
        if layer is None or getattr(layer, "__self__", None) is not None:
            return None
        name = type(layer).__name__
        if isinstance(layer, kind):
            return " > ".join([*names, name])
        row = owner(layer)
        if row is not None and row.declared is not None:
            found = row.declared(layer, kind)
            if found is not None:
                return " > ".join([*names, found])
        if row is not None and row.inner:
            names.append(f"{name}.{row.inner}")
            layer = getattr(layer, row.inner)
        elif hasattr(layer, "middleware_stack"):  # Starlette: built at startup
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
