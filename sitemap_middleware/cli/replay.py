"""The app in process: loaded from ``module:attr``, its sitemap middleware found
(or replaced to use another store or base URL), and anonymous GET requests
replayed through both, for ``seed`` and ``verify``, or asked of the app alone, for
``explain``. No network is involved.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast
from urllib.parse import quote, urlsplit

from ..apps import (
    DJANGO,
    MAX_LAYERS,
    STARLETTE,
    STARLETTE_PARAM,
    WERKZEUG,
    WERKZEUG_PARAM,
    RouteTable,
)
from ..apps.flask import flask_matcher
from ..apps.frameworks import (
    ASGI,
    DJANGO_APP,
    FLASK,
    Framework,
    framework_of,
    table_of,
)
from ..config import Config
from ..core import SitemapBase
from ..recording.refusal import Refusal, refuse
from ..routes import Route, params_of
from ..stores import Store
from ..urls import canonical_target, split_base_url
from .loading import AppError
from .site import check_exists, linked, overridden

if TYPE_CHECKING:
    from ..wsgi import SitemapMiddleware

# A path parameter in either spelling: werkzeug's <conv(args):name>, and
# Starlette's {name:conv}; the groups give the name and the convertor.
# What a path segment keeps as it is (RFC 3986 §3.3, pchar): the rest is
# percent-encoded, as a browser does; "path" convertors keep "/" too.
_PCHAR = "!$&'()*+,;=:@-._~"


Answer = tuple[int, list[tuple[str, str]]]
"""A response's status and headers."""


Hold = Callable[[Config, Store | None], Config]
"""What a run that removes does to the config it replays with: its store put
behind one that holds the removals (``cli.held``); given the store of the
site's listing, linked to the other sites' (the app's middleware's, or one
opened for another ``--store``: :func:`.site.linked`), ``None`` for another
store of a config of one site."""


class UnknownSite(LookupError):
    """``--site`` names no site of the app's config: a usage error."""


class Asked(NamedTuple):
    """What a replay asks of the app: what it changes of its config
    (:func:`.site.overridden`), the site whose middleware answers (``None``: the
    one the app holds), whether its store must hold a sitemap, and what keeps
    a store it opens until the command is done (a held run's removals are
    applied once the replay is over), then closes it."""

    store: str | None
    base_url: str | None
    limited: bool
    hold: Hold | None
    site: str | None
    existing: bool
    keep: Callable[[Store], object]

    def config(self, found: SitemapBase) -> Config:
        """``found``'s config changed as asked; called before anything is
        requested or flushed, which would make a store that holds none. A
        middleware of its own answers then: on the app's own store of the
        site (its sites linked) when the listing is the same, else on the
        listing asked, linked to the other sites' in that store."""
        config = overridden(found.config, self.store, self.base_url, self.limited)
        if self.existing:
            check_exists(config.store)
        if config is found.config and self.hold is None:
            return config
        own = (
            found.store
            if config.store == found.config.store
            else linked(config, self.store, self.keep)
        )
        if self.hold is not None:
            return self.hold(config, own)
        return config if own is None else dataclasses.replace(config, store=own)


@dataclasses.dataclass
class Replay:
    """The app ready to be asked: its middleware, its routes, and ``get``."""

    sitemap: SitemapBase
    table: RouteTable | None
    """The app's routes, ``None`` when its framework's are unknown."""
    framework: Framework
    get: Callable[[str], Answer]
    """Request a stored path (query included) anonymously, through the
    middleware: the status and headers answered."""
    match: Callable[[str], str | None]
    """The route template serving a path, if any."""
    answer: Callable[[str], Answer]
    """Request a stored path anonymously of the app beneath the middleware
    (nothing recorded): the status and headers the middleware would see."""

    def __post_init__(self) -> None:
        # The one rule of every command that loads the app: the store changes
        # only as the command says. The middleware's own re-check would remove
        # what the config refuses at its first flush, a dry run's included.
        self.sitemap.hold_recheck()

    def route(self, path: str) -> Route | None:
        """The route serving ``path`` as the middleware resolves it."""
        template = self.match(path)
        if template is None:
            return None
        return self.sitemap.routes.resolve(template, self._view(template))

    def _view(self, template: str) -> object:
        return None if self.table is None else self.table.views.get(template)

    def refused(self, template: str, target: str) -> tuple[Refusal, Route] | None:
        """Why the config refuses ``target`` (a stored spelling) served by the
        route ``template``, and that route; ``None`` when no rule refuses it.
        The one rule recording follows (``refusal.refuse``): seed asks it
        before requesting a page, so that a GET it could never record (an
        excluded route with side effects: /auth/logout) is never sent."""
        sitemap = self.sitemap
        route = sitemap.routes.resolve(template, self._view(template))
        path, _, query = target.partition("?")
        found = refuse(sitemap.policy, sitemap.config.base_url, path, query, route)
        return None if found is None else (found, route)

    def target(self, path: str) -> str | None:
        """The stored spelling of an app path, ``None`` outside the site."""
        # Relative, so that base_url's prefix is kept: "./" + "about".
        return canonical_target(
            "." + path, self.sitemap.config.base_url, "/", frozenset()
        )

    def seeds(self) -> Iterator[tuple[str, str | None]]:
        """``(template, path)`` of every page the routes declare: GET routes
        without parameters, those the ``params`` of a route's decorator
        yields, and the paths the app lists itself (Django's ``sitemaps``);
        ``path`` is ``None`` when the parameters do not fit.

        :raises AppError: when the app's routes are unknown.
        """
        table = self.table
        if table is None:
            raise AppError(
                f"seed needs the app's routes, and those of this {self.framework.name}"
                " app are unknown (Flask, Quart, Django, Starlette, FastAPI and"
                " Litestar apps have them)"
            )
        return self._seeds(table)

    def _seeds(self, table: RouteTable) -> Iterator[tuple[str, str | None]]:
        for template in sorted(table.gets - table.framework):
            path = table.path_of(template)
            if path is not None:
                yield template, path
                continue
            params = params_of(table.views.get(template))
            if params is None:
                continue
            for values in params():
                yield template, fill(template, values, table.spelling)
        if table.listed is not None:
            for path in table.listed():
                yield self.match(path.partition("?")[0]) or path, path

    def unlisted(self) -> list[str]:
        """The GET routes with parameters whose pages no ``params`` lists:
        :meth:`seeds` gives none of their pages."""
        table = self.table
        if table is None:
            return []
        # Django's patterns spell their parameters as werkzeug does.
        starlette = table.spelling == STARLETTE
        pattern = STARLETTE_PARAM if starlette else WERKZEUG_PARAM
        return [
            template
            for template in sorted(table.gets - table.framework)
            if pattern.search(template) and params_of(table.views.get(template)) is None
        ]


def fill(template: str, values: Mapping[str, object], spelling: str) -> str | None:
    """The path of ``template`` with ``values`` in place, percent-encoded as a
    browser would; ``None`` if a parameter has no value. Django's patterns
    spell parameters as werkzeug does, without the leading slash."""
    if spelling == DJANGO:
        if template.startswith("^"):  # a regular expression: no template
            return None
        path = fill(template, values, WERKZEUG)
        return None if path is None else "/" + path
    werkzeug = spelling == WERKZEUG
    pattern = WERKZEUG_PARAM if werkzeug else STARLETTE_PARAM
    missing = False

    def value(match: re.Match[str]) -> str:
        nonlocal missing
        first, second = match.groups()
        name, convertor = (second, first) if werkzeug else (first, second)
        if name not in values:
            missing = True
            return ""
        safe = _PCHAR + "/" if convertor == "path" else _PCHAR
        return quote(str(values[name]), safe=safe)

    path = pattern.sub(value, template)
    return None if missing else path


@contextmanager
def replay(
    app: object,
    store: str | None = None,
    base_url: str | None = None,
    limited: bool = True,
    hold: Hold | None = None,
    site: str | None = None,
    existing: bool = False,
    keep: Callable[[Store], object] | None = None,
) -> Iterator[Replay]:
    """The app ready for replayed requests: any app the table of frameworks
    knows (``apps.frameworks``), any WSGI or ASGI app holding a sitemap
    middleware, or the middleware; with ``site``, the middleware of
    that site of its config's ``sites``. With ``store`` or ``base_url``, a
    middleware with those replaces the app's own, in this process only; so
    does one without the rate of new URLs (``new_urls_per_minute``) unless
    ``limited``, and one with the config ``hold`` gives; ``existing``: a
    store holding no sitemap is refused before anything makes it; ``keep``
    closes a store opened for the site when the command is done (by default,
    when this returns). Everything recorded is flushed before this returns.

    :raises AppError: when no sitemap middleware is found, or the app is
        neither WSGI nor ASGI.
    :raises UnknownSite: when ``site`` names no site of the app's config.
    """
    # The adapters are imported here, not with the module: ``flask sitemap``
    # loads this command line with every Flask app, which must not import the
    # ASGI adapter (and asyncio) for it.
    from ..asgi import ASGISitemapMiddleware
    from ..wsgi import SitemapMiddleware

    with ExitStack() as stack:
        kept = keep or (lambda store: stack.callback(store.close))
        asked = Asked(store, base_url, limited, hold, site, existing, kept)
        row, layer = framework_of(app)
        if row is DJANGO_APP:
            with _django(layer, asked) as ready:
                yield ready
        elif isinstance(app, SitemapMiddleware) or (
            row.protocol != ASGI and not isinstance(app, ASGISitemapMiddleware)
        ):
            with _wsgi(app, row, layer, asked) as ready:
                yield ready
        else:
            with _asgi(app, row, layer, asked) as ready:
                yield ready


def _origin(config: Config) -> tuple[str, str]:
    return split_base_url(config.base_url)


@contextmanager
def _wsgi(app: Any, row: Framework, layer: Any, asked: Asked) -> Iterator[Replay]:
    from werkzeug.test import Client

    from ..wsgi import SitemapMiddleware

    if not callable(app):
        raise AppError(f"{app!r} is neither a WSGI nor an ASGI app")
    flask = layer if row is FLASK else None
    root: Any = app
    if isinstance(app, SitemapMiddleware):
        found = app
    elif flask is not None:
        found = _flask_sitemap(flask)
    else:
        found = _below(app, SitemapMiddleware, row)
    if asked.site is not None:
        # The site's own middleware answers the replayed requests, as the
        # Host of its base_url selects it.
        root = found = site_of(found, asked.site)
    config = asked.config(found)
    made = config is not found.config
    if made:
        replacement = SitemapMiddleware(found.app, config)
        if root is found:
            root = replacement
        elif flask is not None:
            _swap(flask, "wsgi_app", found, replacement)
            flask.extensions["sitemap"] = replacement
        else:
            _swap(root, "app", found, replacement)
        found = replacement
    row, layer = framework_of(found.app)
    table = None if layer is None else row.routes(layer)
    if table is not None:
        # The routes are final: the re-check of stored pages (prune) needs them.
        found._learn(table, final=False)
    # No cookie jar: every request is anonymous, whatever an answer set.
    client = Client(root, use_cookies=False)
    home, prefix = _origin(config)

    def get(path: str) -> Answer:
        try:
            with client.get(path, base_url=home + prefix + "/") as response:
                response.get_data()  # read in full: the response was sent
                return response.status_code, list(response.headers.items())
        except Exception:  # the app raised (Flask propagates when testing)
            return 500, []  # as its server would answer: nothing is recorded

    # The app beneath the middleware: what the middleware is answered.
    bare = Client(found.app, use_cookies=False)

    def answer(path: str) -> Answer:
        try:
            with bare.get(path, base_url=home + prefix + "/") as response:
                response.get_data()
                return response.status_code, list(response.headers.items())
        except Exception:  # the app raised: its server answers 500
            return 500, []

    match = flask_matcher(layer, urlsplit(home).netloc) if row is FLASK else _unknown
    try:
        yield Replay(found, table, row, get, match, answer)
    finally:
        found.flush(None)
        if made:
            found.close()


def _unknown(path: str) -> str | None:
    """The route of a path in an app whose routes are unknown: none."""
    return None


_Found = TypeVar("_Found")


def _below(app: Any, kind: type[_Found], row: Framework) -> _Found:
    """The sitemap middleware down ``app``'s ``.app`` layers.

    :raises AppError: saying how this framework installs one.
    """
    layer = app
    for _ in range(MAX_LAYERS):
        if layer is None:
            break
        if isinstance(layer, kind):
            return layer
        inner = getattr(layer, row.inner, None) if row.owns(layer) else None
        layer = inner if inner is not None else getattr(layer, "app", None)
    raise AppError(f"this {row.name} app has no sitemap middleware ({row.install})")


def _flask_sitemap(flask: Any) -> SitemapMiddleware:
    from ..wsgi import SitemapMiddleware

    found = flask.extensions.get("sitemap")
    layer = flask.wsgi_app
    for _ in range(MAX_LAYERS):
        if found is not None or layer is None:
            break
        if isinstance(layer, SitemapMiddleware):
            found = layer
        layer = getattr(layer, "app", None)
    if not isinstance(found, SitemapMiddleware):
        raise AppError(
            "this Flask app has no sitemap middleware (Sitemap(app), or "
            "app.wsgi_app = SitemapMiddleware(app.wsgi_app, config))"
        )
    return found


_Sitemap = TypeVar("_Sitemap", bound=SitemapBase)


def site_of(found: _Sitemap, name: str) -> _Sitemap:
    """The middleware of the site ``name`` of ``found``'s config (else
    :class:`UnknownSite`); ``found`` and its every site held as a replayed
    one is (:class:`Replay`), since closing the app flushes them all."""
    found.hold_recheck()
    try:
        return cast(_Sitemap, found.site(name))
    except KeyError:
        names = [site.name for site in found.config.sites]
        raise UnknownSite(
            f"the app's sitemap config has no site {name!r}"
            f" (its sites: {', '.join(names) or 'none, only base_url'})"
        ) from None


def _swap(owner: Any, attribute: str, old: object, new: object) -> None:
    """Put ``new`` where ``old`` is, in the chain of ``.app`` layers that
    starts at ``owner.attribute``."""
    for _ in range(MAX_LAYERS):
        layer = getattr(owner, attribute, None)
        if layer is None:
            break
        if layer is old:
            setattr(owner, attribute, new)
            return
        owner, attribute = layer, "app"
    raise AppError("the sitemap middleware cannot be replaced in this app")


@contextmanager
def _asgi(app: Any, row: Framework, layer: Any, asked: Asked) -> Iterator[Replay]:
    # Imported here: the package needs no framework, and the test client needs
    # httpx (FastAPI and Starlette installs for testing have it).
    from starlette.routing import compile_path
    from starlette.testclient import TestClient

    from ..asgi import ASGISitemapMiddleware
    from ..starlette import get_sitemap

    site = asked.site
    if site is not None and isinstance(app, ASGISitemapMiddleware):
        app = site_of(app, site)
        site = None
    root = app
    # Where the middleware sits when the app holds it: Quart's asgi_app,
    # else Starlette's built stack.
    place = (layer, row.inner) if row.inner else (root, "middleware_stack")
    made: list[SitemapBase] = []
    if isinstance(app, ASGISitemapMiddleware):
        config = asked.config(app)
        if config is not app.config:
            root = ASGISitemapMiddleware(app.app, config)
            made.append(root)
    with TestClient(root):  # lifespan startup: the middleware exists, routes known
        try:
            found = get_sitemap(root)
        except LookupError:
            raise AppError(
                f"this {row.name} app has no sitemap middleware ({row.install})"
            ) from None
        # Held as a replayed one is (Replay): it had the lifespan's startup,
        # and flushes at its shutdown, even once replaced below.
        found.hold_recheck()
        known = found.table()
        if site is not None:
            # The site's own middleware answers the replayed requests, as the
            # Host of its base_url selects it (its routes learned at startup).
            root = found = site_of(found, site)
            known = found.table()
        config = found.config if made else asked.config(found)
        replaced = config is not found.config
        # The app's middleware learned its routes at its start-up, and said
        # its warnings then.
        quiet = replaced and known is not None
        if replaced:
            # Starlette builds its middleware at startup: it is replaced now.
            replacement = ASGISitemapMiddleware(found.app, config)
            if root is found:
                root = replacement
            else:
                _swap(*place, found, replacement)
            found = replacement
            made.append(found)
        table = found.table() or known or table_of(root) or table_of(found.app)
        if table is not None:
            found._learn(table, final=False, quiet=quiet)
        home, prefix = _origin(config)
        # The Host the config allows, and its prefix as the root path; a 500
        # is an answer like any other (the page is not public).
        client = TestClient(
            root, base_url=home, root_path=prefix, raise_server_exceptions=False
        )

        # Newer Starlette puts the root path in the scope's path (and its
        # router strips it); older releases leave it out of the path.
        sent = prefix if prefix and _path_holds_root(TestClient) else ""

        def get(path: str) -> Answer:
            client.cookies.clear()  # anonymous, whatever an answer set
            response = client.get(sent + path, follow_redirects=False)
            return response.status_code, list(response.headers.multi_items())

        # The app beneath the middleware, asked through the layers above it
        # (they put the app and its state in the scope): the middleware is
        # out of the chain while it answers, so nothing is recorded.
        outer = root is not found
        bare = (
            client
            if outer
            else TestClient(
                found.app,
                base_url=home,
                root_path=prefix,
                raise_server_exceptions=False,
            )
        )

        def answer(path: str) -> Answer:
            bare.cookies.clear()
            if outer:
                _swap(*place, found, found.app)
            try:
                response = bare.get(sent + path, follow_redirects=False)
            finally:
                if outer:
                    _swap(*place, found.app, found)
            return response.status_code, list(response.headers.multi_items())

        match: Callable[[str], str | None] = _unknown
        if table is not None and table.spelling == WERKZEUG:  # Quart's
            match = flask_matcher(layer, urlsplit(home).netloc)
        elif table is not None:
            templates = [(compile_path(t)[0], t) for t in sorted(table.views)]

            def match(path: str) -> str | None:
                return next((t for regex, t in templates if regex.match(path)), None)

        try:
            yield Replay(found, table, row, get, match, answer)
        finally:
            found.flush(None)
            for own in made:
                own.close()


def _path_holds_root(client_class: Any) -> bool:
    """Whether this Starlette takes ``root_path`` as part of the scope's
    ``path`` (newer releases: the router matches what follows it) or beside
    it (older ones): asked of a one-route app, once per replay."""
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route, Router

    async def probe(request: Any) -> PlainTextResponse:
        return PlainTextResponse("")

    client = client_class(Router([Route("/x", probe)]), root_path="/root")
    return bool(client.get("/root/x").status_code == 200)


@contextmanager
def _django(handler: Any, asked: Asked) -> Iterator[Replay]:
    """The project ``handler`` serves (its WSGI or ASGI handler: the settings
    are loaded), ready for replayed requests."""
    from django.apps import apps
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.test import Client, override_settings
    from django.urls import Resolver404, resolve

    from ..apps.django import MIDDLEWARE, django_table
    from ..django.middleware import LABEL, DjangoSitemap, headers

    chain = list(settings.MIDDLEWARE)
    if MIDDLEWARE not in chain or not apps.is_installed("sitemap_middleware.django"):
        raise AppError(
            f"this Django project has no sitemap middleware ({DJANGO_APP.install},"
            " 'sitemap_middleware.django' in INSTALLED_APPS)"
        )
    owner = apps.get_app_config(LABEL)
    try:
        own = owner.sitemap()
    except ImproperlyConfigured as exc:
        raise AppError(str(exc)) from exc
    own.hold_recheck()
    found = own if asked.site is None else site_of(own, asked.site)
    config = asked.config(found)
    made = config is not found.config
    if made:
        found = DjangoSitemap(config)
        owner.replace(found)
    table = django_table()
    # The project's middleware was built with its handler: its warnings said.
    found._learn(table, final=False, quiet=made)
    home, prefix = split_base_url(config.base_url)
    parts = urlsplit(home)
    extra = {"HTTP_HOST": parts.netloc, "SCRIPT_NAME": prefix}
    secure = parts.scheme == "https"
    client = Client(raise_request_exception=False)
    # The project beneath the middleware: its handler without it.
    bare = Client(raise_request_exception=False)
    with override_settings(MIDDLEWARE=[m for m in chain if m != MIDDLEWARE]):
        bare.handler.load_middleware()

    def ask(asked: Any, path: str) -> Answer:
        import warnings

        asked.cookies.clear()  # anonymous, whatever an answer set
        try:
            response = asked.get(path, secure=secure, **extra)
            with warnings.catch_warnings():
                # An async stream read here, as a WSGI server reads one (Django
                # warns that it is consumed synchronously).
                warnings.simplefilter("ignore")
                for _ in response:  # read in full: the response was sent
                    pass
            response.close()
        except Exception:  # the project raised: its server answers 500
            return 500, []
        return response.status_code, headers(response)

    def match(path: str) -> str | None:
        try:
            return str(resolve(path).route)
        except Resolver404:
            return None

    try:
        yield Replay(
            found,
            table,
            DJANGO_APP,
            lambda path: ask(client, path),
            match,
            lambda path: ask(bare, path),
        )
    finally:
        found.flush(None)
        if made:
            owner.replace(own)
            found.close()
