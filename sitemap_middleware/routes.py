"""Route metadata: the ``sitemap`` decorator and the config's ``routes``, merged
into the :class:`Route` a recorded page carries; and :func:`skip`, a view's
opt-out for one response.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

from .apps import RouteTable
from .config import Config, RouteOptions, route_options
from .errors import ConfigError

V = TypeVar("V")

Params = Callable[[], Iterable[Mapping[str, object]]]
"""What ``@sitemap(params=...)`` takes: called with no arguments, it yields
the path parameters of each page of the route (``{"slug": "hello"}``)."""

# The key a view's skip() sets in the WSGI environ or the ASGI scope.
SKIP_KEY = "sitemap_middleware.skip"
# The environ key through which a WSGI app without the Flask extension may name
# the route template that served the request.
ROUTE_KEY = "sitemap_middleware.route"
# The attributes the decorator sets on a view function or class.
ATTRIBUTE = "sitemap_route"
PARAMS = "sitemap_params"
# How many (template, view) pairs keep their resolved Route: an app has a
# fixed set of routes, so this bound is only a safeguard.
_CACHED_ROUTES = 4096


@dataclass(frozen=True, slots=True)
class Route:
    """What recording needs to know about the route that served a page: its
    options merged with the top-level ones."""

    template: str | None
    """The route template as the framework spells it, ``None`` if unknown."""
    changefreq: str | None
    priority: float | None
    exclude: bool
    max_urls: int | None
    query: frozenset[str]
    """Query parameters kept: the global ``query`` plus the route's own."""
    public_ids: bool = False
    """Random-looking identifiers in its paths are public (``strip_secrets``)."""
    framework: bool = False
    """One of the framework's own pages (docs, static files): never recorded."""


def sitemap(
    *,
    changefreq: str | None = None,
    priority: float | None = None,
    exclude: bool | None = None,
    max_urls: int | None = None,
    query: Iterable[str] | None = None,
    public_ids: bool | None = None,
    params: Params | None = None,
) -> Callable[[V], V]:
    """Declare a view's sitemap options next to its code, on Flask, Starlette
    and FastAPI alike. The options are those of a ``routes`` entry in the
    config; for each option the config sets, the config wins.

    The view is returned unchanged, with the options in an attribute, so the
    decorator may go above or below the framework's route decorator. On a
    class-based view, decorate the class.

    .. code-block:: python

        @app.route("/blog/<slug>")
        @sitemap(changefreq="weekly", priority=0.7)
        def post(slug): ...

    ``public_ids=True`` declares the identifiers in the route's paths public
    (``/orders/<uuid>`` of a public catalogue): by default a path segment
    holding a UUID, long hex or a token is taken for a secret link.

    ``params`` lists the pages of a route with parameters for
    ``sitemap-middleware seed``: a function of no arguments yielding one dict
    of path parameters per page. Seed requests each page through the app, and
    lists it only if it answers as a public page.

    .. code-block:: python

        @app.route("/blog/<slug>")
        @sitemap(params=lambda: ({"slug": post.slug} for post in Post.query))
        def post(slug): ...

    :raises ConfigError: for an invalid option, when the module is imported.
    """
    if params is not None and not callable(params):
        raise ConfigError(
            f"sitemap() 'params' must be a function of no arguments, got {params!r}"
        )
    given: dict[str, Any] = {
        "changefreq": changefreq,
        "priority": priority,
        "exclude": exclude,
        "max_urls": max_urls,
        # A lone string is refused by the check, not split into letters.
        "query": query if query is None or isinstance(query, str) else list(query),
        "public_ids": public_ids,
    }
    options = route_options(
        "sitemap()", {name: value for name, value in given.items() if value is not None}
    )

    def mark(view: V) -> V:
        try:
            setattr(view, ATTRIBUTE, options)
            if params is not None:
                setattr(view, PARAMS, params)
        except (AttributeError, TypeError) as exc:
            raise ConfigError(
                f"sitemap() decorates functions and classes, not {view!r}"
            ) from exc
        return view

    return mark


def params_of(view: object) -> Params | None:
    """The ``params`` a view's decorator declared, if any."""
    found = getattr(view, PARAMS, None)
    if found is None:  # Flask's class-based views: the class holds it
        found = getattr(getattr(view, "view_class", None), PARAMS, None)
    return found if callable(found) else None


def skip(request: Any) -> None:
    """Keep the current response out of the sitemap: it is neither recorded nor,
    if already stored, removed. The response itself is not changed.

    Call it before the view returns its response, with Flask's or werkzeug's
    ``request``, Starlette's or FastAPI's ``Request``, or a raw WSGI environ or
    ASGI scope.

    .. code-block:: python

        if draft_preview:
            sitemap_middleware.skip(request)
    """
    target = getattr(request, "environ", None)
    if target is None:
        target = getattr(request, "scope", request)
    if not isinstance(target, MutableMapping):
        raise TypeError(
            f"skip() takes a request, a WSGI environ or an ASGI scope, "
            f"not {type(request).__name__}"
        )
    target[SKIP_KEY] = True


class Routes:
    """Resolves the route that served a response into its :class:`Route`."""

    def __init__(self, config: Config) -> None:
        self._config = config
        self._cache: dict[tuple[str | None, object], Route] = {}
        self._table: RouteTable | None = None
        self.unknown = self._merge(None, RouteOptions())
        """The route of a page served by no known route."""
        every = set(config.query)
        for options in config.routes.values():
            every.update(options.query or ())
        # public_ids: a path that looks secret was stored only if its route
        # said its ids are public, and removing a path never stored is a no-op.
        self.any = Route(None, None, None, False, None, frozenset(every), True)
        """For removals without a known route (a 404 no route matched): a
        stored URL may have kept any parameter that a configured route keeps,
        and any identifier a route declared public (the decorator's are not
        known before their views answer)."""

    def use(self, table: RouteTable) -> None:
        """The app's route table is known: its framework pages are marked."""
        self._table = table
        self._cache.clear()  # routes resolved before it knew nothing of them

    def resolve(self, template: str | None, view: object = None) -> Route:
        """The route of ``template`` served by ``view`` (either may be None)."""
        key = (template, view)
        try:
            return self._cache[key]
        except KeyError:
            pass
        except TypeError:  # an unhashable view
            return self._build(template, view)
        route = self._build(template, view)
        if len(self._cache) < _CACHED_ROUTES:
            self._cache[key] = route
        return route

    def _build(self, template: str | None, view: object) -> Route:
        declared = getattr(view, ATTRIBUTE, None)
        if declared is None:  # Flask's class-based views: the class holds it
            declared = getattr(getattr(view, "view_class", None), ATTRIBUTE, None)
        configured = None if template is None else self._config.routes.get(template)
        if not isinstance(declared, RouteOptions):
            declared = RouteOptions()
        if configured is not None:
            # The config wins, option by option, over the decorator.
            said = {
                option.name: getattr(configured, option.name)
                for option in fields(RouteOptions)
                if getattr(configured, option.name) is not None
            }
            declared = replace(declared, **said)
        route = self._merge(template, declared)
        table = self._table
        if table is not None and table.is_framework(template, view):
            route = replace(route, framework=True)
        return route

    def _merge(self, template: str | None, options: RouteOptions) -> Route:
        config = self._config
        return Route(
            template,
            config.changefreq if options.changefreq is None else options.changefreq,
            config.priority if options.priority is None else options.priority,
            bool(options.exclude),
            options.max_urls,
            config.query | (options.query or frozenset()),
            bool(options.public_ids),
        )
