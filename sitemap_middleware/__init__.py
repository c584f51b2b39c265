"""sitemap_middleware: learn a site's sitemap from the pages it serves.

Wrap a WSGI app with :class:`SitemapMiddleware` or an ASGI app with
:class:`ASGISitemapMiddleware`; both take one config dict. Views may declare
their options with :func:`sitemap` and keep one response out with :func:`skip`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .config import DEFAULT_EXCLUDE, DEFAULT_HARMLESS_COOKIES, Config
from .errors import ConfigError, SitemapError, StoreError, StoreFault, StoreReadOnly
from .routes import sitemap, skip
from .stores import Entry, PageInfo, PartInfo, Store, open_store, register_store

if TYPE_CHECKING:  # the names __getattr__ imports, as mypy and IDEs see them
    from .asgi import ASGISitemapMiddleware
    from .reporting.health import Health, SectionHealth, site_health
    from .reporting.metrics import SitemapCollector
    from .serving.arrangement import IndexEntry, Link, Section, SiteMap
    from .serving.site_map import site_map
    from .wsgi import SitemapMiddleware

    __version__: str

# Each adapter is imported when its name is first asked for: a WSGI app never
# loads asyncio and the ASGI adapter, an ASGI app never loads the WSGI adapter;
# nor does an app load the health report or the site map page before it asks
# for one.
_LAZY = {
    "ASGISitemapMiddleware": ".asgi",
    "SitemapMiddleware": ".wsgi",
    "Health": ".reporting.health",
    "SectionHealth": ".reporting.health",
    "site_health": ".reporting.health",
    "SitemapCollector": ".reporting.metrics",
    "IndexEntry": ".serving.arrangement",
    "Link": ".serving.arrangement",
    "Section": ".serving.arrangement",
    "SiteMap": ".serving.arrangement",
    "site_map": ".serving.site_map",
}


def __getattr__(name: str) -> object:
    """The adapters, the health report, the site map, and ``__version__``, on
    first use (PEP 562)."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    if name == "__version__":
        from .render import release

        return release()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "__version__"})


# In sorted() order (tests/test_public_api.py), constants among the rest.
__all__ = [  # noqa: RUF022
    "ASGISitemapMiddleware",
    "Config",
    "ConfigError",
    "DEFAULT_EXCLUDE",
    "DEFAULT_HARMLESS_COOKIES",
    "Entry",
    "Health",
    "IndexEntry",
    "Link",
    "PageInfo",
    "PartInfo",
    "Section",
    "SectionHealth",
    "SiteMap",
    "SitemapCollector",
    "SitemapError",
    "SitemapMiddleware",
    "Store",
    "StoreError",
    "StoreFault",
    "StoreReadOnly",
    "open_store",
    "register_store",
    "site_health",
    "site_map",
    "sitemap",
    "skip",
]
