"""sitemap_middleware: learn a site's sitemap from the pages it serves.

Wrap a WSGI app with :class:`SitemapMiddleware` or an ASGI app with
:class:`ASGISitemapMiddleware`; both take one config dict. Views may declare
their options with :func:`sitemap` and keep one response out with :func:`skip`.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from .asgi import ASGISitemapMiddleware
from .config import DEFAULT_EXCLUDE, DEFAULT_HARMLESS_COOKIES, Config
from .errors import ConfigError, SitemapError, StoreError
from .routes import sitemap, skip
from .serving.site_map import IndexEntry, Link, Section, SiteMap, site_map
from .stores import Entry, PageInfo, PartInfo, Store, open_store, register_store
from .wsgi import SitemapMiddleware

try:
    __version__ = version("sitemap-middleware")
except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0+unknown"

# In sorted() order (tests/test_public_api.py), constants among the rest.
__all__ = [  # noqa: RUF022
    "ASGISitemapMiddleware",
    "Config",
    "ConfigError",
    "DEFAULT_EXCLUDE",
    "DEFAULT_HARMLESS_COOKIES",
    "Entry",
    "IndexEntry",
    "Link",
    "PageInfo",
    "PartInfo",
    "Section",
    "SiteMap",
    "SitemapError",
    "SitemapMiddleware",
    "Store",
    "StoreError",
    "open_store",
    "register_store",
    "site_map",
    "sitemap",
    "skip",
]
