"""What the app declares: its route table (each template and its view, and the
framework's own pages) and the checks of the config's ``routes`` keys against
it. Each framework's reading is a module of this folder; ``frameworks.py`` is
the table that says which one an app is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError

# Layers walked at most: more than any real stack holds, and an end should a
# chain of ``app`` attributes lead round in a circle.
MAX_LAYERS = 100
# The spellings of route templates: werkzeug's (Flask, Quart), Starlette's
# (FastAPI, Litestar) and Django's URL patterns (``blog/<slug:slug>/``, no
# leading slash; werkzeug's parameters).
WERKZEUG = "werkzeug"
STARLETTE = "starlette"
DJANGO = "django"
# A regular expression route that is one path: no group, class or repetition.
_LITERAL = re.compile(r"\^((?:[\w\-/~.,;=@!]|\\.)*)\$")
# A parameter of a template, as each spelling writes it: werkzeug's
# ``<convertor:name>`` (Django's too), Starlette's ``{name:convertor}``.
WERKZEUG_PARAM = re.compile(r"<(?:(\w+)(?:\([^)]*\))?:)?(\w+)>")
STARLETTE_PARAM = re.compile(r"{(\w+)(?::(\w+))?}")

EnvironFinder = Callable[[Mapping[str, Any]], "tuple[str, object] | None"]
"""From a WSGI environ: the template and view of the route that served it."""
ScopeFinder = Callable[[Mapping[str, Any], str], "tuple[str | None, object] | None"]
"""From an ASGI scope and the mount prefix the middleware saw: the template and
view of the route that served it."""


# How each framework's app is recognised: by what it has, never by importing
# the framework (frameworks.py asks them in its order).


def is_flask(app: Any) -> bool:
    """Flask's app (or Quart's: the same ``url_map`` and views)."""
    return hasattr(app, "url_map") and hasattr(app, "view_functions")


def is_django(app: Any) -> bool:
    """Django's WSGI or ASGI handler (``get_wsgi_application()``,
    ``get_asgi_application()``): it loads the settings' ``MIDDLEWARE``."""
    return hasattr(app, "load_middleware") and hasattr(app, "get_response")


def is_litestar(app: Any) -> bool:
    """A Litestar app: its routes and the router that serves them."""
    return hasattr(app, "asgi_router") and hasattr(app, "routes")


def is_starlette(app: Any) -> bool:
    """A Starlette or FastAPI app, or a router of theirs: a list of
    ``routes`` (Datasette's routes are an object of its own)."""
    return isinstance(getattr(app, "routes", None), list)


@dataclass(frozen=True, slots=True)
class RouteTable:
    """The routes an app declares, as the framework spells their templates."""

    views: Mapping[str, object]
    """Every route template -> its view (Flask's view function, Starlette's
    endpoint); the first route declared wins a template declared twice."""
    framework: frozenset[str]
    """The templates of the framework's own pages: FastAPI's and Litestar's
    docs and OpenAPI schema, Flask's static routes, Django's admin, auth
    views, static and media files."""
    framework_views: tuple[object, ...] = ()
    """The views of those pages, and the apps mounted to serve files
    (Starlette's ``StaticFiles``): a response may name its view but not its
    template (a mount's pages, FastAPI's own routes)."""
    gets: frozenset[str] = frozenset()
    """The templates of routes that answer ``GET`` (the pages ``seed`` may
    request; websockets and ``POST``-only routes are not among them)."""

    listed: Callable[[], Iterable[str]] | None = None
    """The paths the app lists itself elsewhere (Django's ``sitemaps`` of
    ``django.contrib.sitemaps``), for ``seed``; ``None``: none."""

    spelling: str = WERKZEUG
    """How the templates are spelled: ``WERKZEUG``, ``STARLETTE``, ``DJANGO``."""

    def path_of(self, template: str) -> str | None:
        """The one path ``template`` serves, ``None`` for one with
        parameters."""
        if self.spelling != DJANGO:
            return (
                None
                if WERKZEUG_PARAM.search(template) or STARLETTE_PARAM.search(template)
                else template
            )
        if template.startswith("^"):  # re_path(): a plain string, anchored
            found = _LITERAL.fullmatch(template)
            return None if found is None else "/" + re.sub(r"\\(.)", r"\1", found[1])
        return None if "<" in template else "/" + template

    def is_framework(self, template: str | None, view: object) -> bool:
        """Whether the route ``template`` served by ``view`` is the framework's."""
        if template is not None and template in self.framework:
            return True
        return view is not None and any(view is own for own in self.framework_views)


def check_spelling(routes: Iterable[str], spelling: str) -> None:
    """A ``routes`` key in the other framework's syntax is an error, and so
    is one that does not start as the framework's templates do (``/``, but
    none of Django's patterns).

    :param spelling: ``WERKZEUG`` (the WSGI middleware, Flask), ``DJANGO``
        or ``STARLETTE`` (the ASGI middleware, Starlette and FastAPI).
    :raises ConfigError: naming the key and its spelling for this app.
    """
    for template in routes:
        if (spelling == DJANGO) == template.startswith("/"):
            raise ConfigError(
                "'routes' keys are route templates as the app declares them, "
                + (
                    f"without a leading '/' in Django, got {template!r}"
                    if spelling == DJANGO
                    else f"starting with '/', got {template!r}"
                )
            )
        if spelling == DJANGO and template.startswith("^"):
            continue  # a regular expression's {4} is no parameter
        if spelling in (WERKZEUG, DJANGO) and STARLETTE_PARAM.search(template):
            right = STARLETTE_PARAM.sub(_to_werkzeug, template)
            theirs, ours = "Starlette's", "werkzeug (Flask)"
        elif spelling == STARLETTE and WERKZEUG_PARAM.search(template):
            right = WERKZEUG_PARAM.sub(_to_starlette, template)
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
