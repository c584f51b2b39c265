"""Django's routes, read from the project's URLconf: each URL pattern as the
request's ``resolver_match.route`` names it (``blog/<slug:slug>/``) and its
view; the framework's own pages (the admin, the auth views, static and media
files, its sitemaps); and the paths its ``django.contrib.sitemaps`` list.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from . import DJANGO, MAX_LAYERS, RouteTable

# The modules of Django's own pages: its admin, its auth views, the views that
# serve static and media files, and its sitemaps.
_OWN = (
    "django.contrib.admin",
    "django.contrib.auth.views",
    "django.contrib.staticfiles",
    "django.views.static",
    "django.contrib.sitemaps",
    "wagtail.contrib.sitemaps",
    "wagtail.admin",
    "wagtail.documents",
    "wagtail.images",
)
# The views of django.contrib.sitemaps (and Wagtail's) that take ``sitemaps``.
_SITEMAP_VIEWS = ("django.contrib.sitemaps.views", "wagtail.contrib.sitemaps.views")


# The Django middleware, as the MIDDLEWARE setting names it.
MIDDLEWARE = "sitemap_middleware.django.SitemapMiddleware"


def django_sitemap_declared(handler: Any, kind: type) -> str | None:
    """Where the settings install the Django middleware: a sitemap middleware
    of any kind around the project's handler would record its pages twice."""
    from django.conf import settings

    return "MIDDLEWARE" if MIDDLEWARE in getattr(settings, "MIDDLEWARE", ()) else None


def django_table(urlconf: str | None = None) -> RouteTable:
    """The route table of the project's URLconf (``ROOT_URLCONF``, or
    ``urlconf``): every pattern answers GET as far as the URLconf says."""
    from django.urls import get_resolver

    views: dict[str, object] = {}
    framework: set[str] = set()
    # By identity: a view need not be hashable.
    framework_views: dict[int, object] = {}
    lists: list[object] = []
    for route, pattern, own in _walk(get_resolver(urlconf).url_patterns, "", False, 0):
        view = getattr(pattern, "callback", None)
        views.setdefault(route, view)
        module = _module(view)
        if own or module.startswith(_OWN):
            framework.add(route)
            # Its view too: a request's route read otherwise than here (in a
            # language or a URLconf of its own) still names the view.
            if view is not None:
                framework_views.setdefault(id(view), view)
        if module.startswith(_SITEMAP_VIEWS):
            given = (getattr(pattern, "default_args", None) or {}).get("sitemaps")
            if given:
                lists.append(given)
            elif module.startswith("wagtail."):  # its view lists the page tree
                lists.append(None)
    listed = (lambda: _listed(lists)) if lists else None
    return RouteTable(
        MappingProxyType(views),
        frozenset(framework),
        framework_views=tuple(framework_views.values()),
        gets=frozenset(views),
        listed=listed,
        spelling=DJANGO,
    )


def _walk(
    patterns: Iterable[Any], prefix: str, own: bool, depth: int
) -> Iterator[tuple[str, Any, bool]]:
    """Each URL pattern with its route (as ``ResolverMatch.route`` joins
    them; under ``i18n_patterns()`` once per language) and whether it is
    under Django's own ``include`` (the admin's)."""
    from django.urls import LocalePrefixPattern

    for pattern in patterns:
        children = getattr(pattern, "url_patterns", None)
        if children is None:
            yield _join(prefix, str(pattern.pattern)), pattern, own
        elif depth < MAX_LAYERS:
            inner = own or _is_own(pattern)
            if isinstance(pattern.pattern, LocalePrefixPattern):
                yield from _each_language(pattern, prefix, inner, depth + 1)
            else:
                route = _join(prefix, str(pattern.pattern))
                yield from _walk(children, route, inner, depth + 1)


def _each_language(
    resolver: Any, prefix: str, own: bool, depth: int
) -> Iterator[tuple[str, Any, bool]]:
    """The patterns of ``i18n_patterns()`` once per language of
    ``settings.LANGUAGES``: a request's route has its language's prefix
    (``fr/about/``; none for the default one without
    ``prefix_default_language``), and a translated pattern its words."""
    from django.conf import settings
    from django.utils import translation

    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            # Read whole in the language: the generator yields outside it.
            route = _join(prefix, str(resolver.pattern))
            found = list(_walk(resolver.url_patterns, route, own, depth))
        yield from found


def _is_own(resolver: Any) -> bool:
    """Whether an ``include`` is Django's own: the admin's, or a URLconf of
    its own pages (``django.contrib.auth.urls``)."""
    if getattr(resolver, "app_name", None) == "admin":
        return True
    urlconf = getattr(resolver, "urlconf_name", None)
    name = urlconf if isinstance(urlconf, str) else getattr(urlconf, "__name__", "")
    return name.startswith(_OWN)


def _join(first: str, second: str) -> str:
    # As Django joins a resolver's route to its patterns'.
    return second if not first else first + second.removeprefix("^")


def _module(view: Any) -> str:
    """Where a view is defined (a class-based view's class)."""
    owner = getattr(view, "view_class", None) or getattr(view, "admin_site", None)
    found = getattr(owner or view, "__module__", None)
    return found if isinstance(found, str) else ""


def _listed(given: list[Any]) -> Iterator[str]:
    """The paths the project's ``sitemaps`` dicts list (each Sitemap's
    ``items()`` and ``location()``; ``None``: Wagtail's view without one,
    which lists the page tree), each once."""
    seen: set[str] = set()
    for sitemaps in given:
        if sitemaps is None:
            from wagtail.contrib.sitemaps import Sitemap

            sitemaps = {"wagtail": Sitemap}
        for sitemap in dict(sitemaps).values():
            instance = sitemap() if isinstance(sitemap, type) else sitemap
            for item in instance.items():
                location = str(instance.location(item))
                parts = urlsplit(location)
                path = parts.path + (f"?{parts.query}" if parts.query else "")
                if path.startswith("/") and path not in seen:
                    seen.add(path)
                    yield path
