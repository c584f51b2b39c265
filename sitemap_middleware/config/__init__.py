"""The configuration: one plain dict, checked once and frozen into ``Config``.

Every problem raises ``ConfigError`` naming the key, the expected form and, for
a misspelt key, the closest valid one. Each key is a row of ``keys.KEYS``; the
options of a feature, and their checks, are in the module named after it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from ..errors import ConfigError
from ..paths import Documents
from ..sections import Sections
from .checks import known
from .cookies import DEFAULT_HARMLESS_COOKIES
from .crawlers import (
    CRAWL_CACHE,
    CRAWL_TIMEOUT,
    FORWARDED_HEADERS,
    CrawlerOptions,
    Network,
    Resolver,
)
from .documents import LLMS_MAX_LINKS, check_named_sections, distinct_paths
from .indexnow import (
    INDEXNOW_ENDPOINT,
    INDEXNOW_INTERVAL,
    MIN_INDEXNOW_INTERVAL,
    IndexNowOptions,
)
from .keys import KEYS, Key, Lists
from .listing import (
    DEFAULT_EXCLUDE,
    DEFAULT_MAX_URLS,
    DEFAULT_NEW_URLS_PER_MINUTE,
    DEFAULT_RECHECK_INTERVAL,
    DEFAULT_STALE_AFTER,
    LASTMOD_SOURCES,
    check_stale_after,
)
from .news import NewsOptions
from .routes import RouteOptions, route_options
from .sites import (
    DEFAULT_STORE,
    DEFAULT_STORE_FILE,
    SiteOptions,
    host_name,
    site_host,
    site_store,
    store_hint,
    with_sites,
)

__all__ = [
    "CRAWL_CACHE",
    "CRAWL_TIMEOUT",
    "DEFAULT_EXCLUDE",
    "DEFAULT_HARMLESS_COOKIES",
    "DEFAULT_MAX_URLS",
    "DEFAULT_NEW_URLS_PER_MINUTE",
    "DEFAULT_RECHECK_INTERVAL",
    "DEFAULT_STALE_AFTER",
    "DEFAULT_STORE",
    "DEFAULT_STORE_FILE",
    "FORWARDED_HEADERS",
    "INDEXNOW_ENDPOINT",
    "INDEXNOW_INTERVAL",
    "KEYS",
    "LASTMOD_SOURCES",
    "MIN_INDEXNOW_INTERVAL",
    "Config",
    "CrawlerOptions",
    "IndexNowOptions",
    "Key",
    "Lists",
    "Network",
    "NewsOptions",
    "Resolver",
    "RouteOptions",
    "SiteOptions",
    "host_name",
    "route_options",
    "site_host",
    "site_store",
    "store_hint",
]


@dataclass(frozen=True, slots=True)
class Config:
    """The validated configuration. Build it with :meth:`from_mapping`."""

    base_url: str
    """Public URL of the app's root, ``scheme://host[:port][/prefix]``."""
    store: Any = DEFAULT_STORE
    """Store URI or a ready store object."""
    allowed_hosts: tuple[str, ...] = ()
    """Hosts whose requests are recorded; defaults to the host of base_url."""
    default_exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    """The default exclusions in force: ``DEFAULT_EXCLUDE`` or the subset of it
    the config names (``[]``: none)."""
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    """Every exclusion in force: ``default_exclude``, then the config's own."""
    include: tuple[str, ...] = ()
    query: frozenset[str] = frozenset()
    changefreq: str | None = None
    priority: float | None = None
    cache_max_age: int = 3600
    gzip_level: int = 6
    """zlib level of the ``.xml.gz`` pages: 1 is fastest, 9 smallest."""
    robots_generate: bool = True
    robots_lines: tuple[str, ...] = ()
    session_cookies: frozenset[str] | None = None
    """Request cookies that make a request private. ``None`` (the default): any
    cookie but the harmless ones does. Named: only those names do (exact,
    case-sensitive), as for a site that knows its session cookies; a response
    with ``Vary: Cookie`` to a request with another cookie that is not harmless
    is still kept out. ``{"*"}``: any cookie at all does, harmless or not."""
    skip_set_cookie: bool = False
    """Skip every response that sets a cookie. ``False`` (the default): a
    response with ``Set-Cookie`` to a request without ``Authorization`` and
    without an identifying cookie is the page a crawler gets (a form's CSRF
    token in a new session), and is recorded by the other rules."""
    harmless_cookies: tuple[str, ...] = DEFAULT_HARMLESS_COOKIES
    """Cookie names (a trailing ``*``: a prefix) that never make a request
    private: ``DEFAULT_HARMLESS_COOKIES``, then the config's own. Never name a
    session or login cookie here: a request carrying it would be recorded as
    anonymous, and what a signed-in visitor sees could be published."""
    recheck_interval: float = DEFAULT_RECHECK_INTERVAL
    """Seconds during which an unchanged known page is not digested again."""
    stale_after: float = DEFAULT_STALE_AFTER
    """Seconds without a client served a listed page after which the health
    report calls it stale (the time a page was served is kept at most once a
    ``recheck_interval``, which it may not be shorter than)."""
    lastmod_source: str = "declared"
    """Where ``lastmod`` comes from. ``"declared"``: the date the page declares
    (``article:modified_time``, its JSON-LD ``dateModified``, else its
    ``Last-Modified``, when plausible), else the time a change of its content
    was seen; a page first seen without a date has no ``lastmod`` until its
    content changes. ``"article"`` and ``"last-modified"``: only those
    declarations (the head's, or the header), then changes seen.
    ``"changes"``: changes seen only. ``"first-seen"`` (``"content"``, its
    name before, is read as it): the releases before: the time a page is
    first seen counts as a change, so every page of a new store claims to
    have changed that day."""
    fingerprint_ignore: tuple[re.Pattern[bytes], ...] = ()
    """Patterns removed from a page's text before its fingerprint is taken."""
    routes: Mapping[str, RouteOptions] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """Options by route template, as the framework spells it."""
    max_urls: int | None = DEFAULT_MAX_URLS
    """Stored URLs beyond which new ones are refused (``None``: no cap)."""
    new_urls_per_minute: int | None = DEFAULT_NEW_URLS_PER_MINUTE
    """New URLs one process records a minute at most (``None``: no limit)."""
    text_sitemap: bool = False
    """Also serve each part as text, ``/sitemap-N.txt`` (and ``/sitemap.txt``
    while there is one part)."""
    schema_location: bool = False
    """Name the schemas in ``xsi:schemaLocation`` on the index and the parts."""
    images: bool = True
    """List each page's images (the ``<img src>`` of its ``<main>``, else of its
    ``<article>`` elements); ``False``: list none."""
    indexnow: IndexNowOptions | None = None
    """Push added, changed and removed URLs to IndexNow (``None``: off)."""
    html_sitemap: str | None = None
    """The path of the site map for people (``None``: none served)."""
    html_sitemap_lang: str = "en"
    """Its ``<html lang>``, a BCP 47 language tag."""
    html_sitemap_title: str = "Site map"
    """Its ``<h1>``, and its ``<title>`` before the site's name."""
    html_sitemap_site_name: str | None = None
    """The site's name in its ``<title>`` (``None``: the name the site's own
    titles repeat, as the writers learned it, if any)."""
    crawlers: CrawlerOptions | None = field(default_factory=CrawlerOptions)
    """Keep each search engine's verified crawls (``None``: off)."""
    html_sitemap_newest_first: tuple[str, ...] = ()
    """Globs of the sections (by their path, such as ``/blog``) listed newest
    first with their dates; the others go by title."""
    llms_txt: str | None = None
    """The path of the llms.txt file (``None``: none served)."""
    llms_txt_sections: tuple[str, ...] | None = None
    """The sections it lists (``default``: the pages no section names;
    ``None``: every one)."""
    llms_txt_max_links: int | None = LLMS_MAX_LINKS
    """Links it lists per section at most (``None``: every page)."""
    section_labels: Mapping[str, str] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """A heading in words per section name (``default``: the pages no section
    names), as the site map page and llms.txt show it; else a readable form of
    the name."""

    sections: Sections = field(default_factory=Sections)
    """Section name -> the route templates and path globs of its pages: each
    part holds one section's pages (``sections.py``)."""
    news: NewsOptions | None = None
    """The news sitemap, ``/sitemap-news.xml`` (``None``: off)."""
    sites: tuple[SiteOptions, ...] = ()
    """The sites the app serves, the default first (``()``: one, ``base_url``).
    Each has its own listing in the store; the ``Host`` header only selects one
    (:func:`site_host`)."""
    site: str = ""
    """The site this config is one of (:meth:`for_site`); ``""``: all of them."""
    documents: Documents = field(init=False, repr=False, compare=False)
    """The documents the middleware answers itself, in place of the app (and
    robots.txt, with the app's own answer), as these options turn them on."""

    def __post_init__(self) -> None:
        key_file = None if self.indexnow is None else self.indexnow.key_location
        options = {
            "text_sitemap": self.text_sitemap,
            "html_sitemap": self.html_sitemap,
            "llms_txt": self.llms_txt,
            "key_location": key_file,
            "news": self.news is not None,
        }
        object.__setattr__(self, "documents", Documents.of(options))

    def for_site(self, name: str) -> Config:
        """The config of one of the ``sites``: its ``base_url``, its hosts as
        ``allowed_hosts``, and its own listing in the store (the default site
        keeps the store as named, so that a store written with one site is
        its listing)."""
        site = next(site for site in self.sites if site.name == name)
        store = self.store
        if site is not self.sites[0]:
            store = site_store(store, name)
        return replace(
            self,
            base_url=site.base_url,
            allowed_hosts=site.hosts,
            store=store,
            site=name,
        )

    def abroad(self) -> tuple[str, ...]:
        """The ``base_url`` of each other site of ``sites``: the origins a
        page's hreflang alternates may name besides its own."""
        return tuple(
            site.base_url for site in self.sites if site.base_url != self.base_url
        )

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any] | Config) -> Config:
        """Check a config dict and return the frozen ``Config``."""
        if isinstance(mapping, Config):
            return mapping
        if not isinstance(mapping, Mapping):
            raise ConfigError(
                f"sitemap config must be a dict, got {type(mapping).__name__}"
            )
        known(mapping, KEYS, "unknown sitemap config key {!r}")
        if "sites" in mapping:
            mapping = with_sites(mapping)
        if "base_url" not in mapping:
            raise ConfigError(
                "sitemap config needs 'base_url', the public URL of the site, "
                "such as 'https://www.example.com'"
            )
        values = {key: KEYS[key].check(key, value) for key, value in mapping.items()}
        robots = values.pop("robots", None)
        if robots is not None:
            values["robots_generate"], values["robots_lines"] = robots
        html = values.pop("html_sitemap", None)
        if html is not None:
            (
                values["html_sitemap"],
                values["html_sitemap_lang"],
                values["html_sitemap_title"],
                values["html_sitemap_site_name"],
                values["html_sitemap_newest_first"],
            ) = html
        check_named_sections(values)
        llms = values.pop("llms_txt", None)
        if llms is not None:
            path, values["llms_txt_sections"], values["llms_txt_max_links"] = llms
            values["llms_txt"] = path
        if "section_labels" in values:
            values["section_labels"] = MappingProxyType(values["section_labels"])
        defaults = values.setdefault("default_exclude", DEFAULT_EXCLUDE)
        values["exclude"] = defaults + values.get("exclude", ())
        values["harmless_cookies"] = DEFAULT_HARMLESS_COOKIES + values.get(
            "harmless_cookies", ()
        )
        if not values.get("allowed_hosts"):
            host = urlsplit(values["base_url"]).hostname or ""
            values["allowed_hosts"] = (host,)
        check_stale_after(values)
        indexnow = values.get("indexnow")
        distinct_paths(
            ("html_sitemap", values.get("html_sitemap")),
            ("llms_txt.path", values.get("llms_txt")),
            ("indexnow.key_location", indexnow and indexnow.key_location),
        )
        news = values.get("news")
        if news is not None:
            unknown = news.sections - set(values.get("sections", Sections()).names)
            if unknown:
                raise ConfigError(
                    f"'news.sections' names {sorted(unknown)[0]!r}, which the"
                    " 'sections' key does not define"
                )
        return cls(**values)
