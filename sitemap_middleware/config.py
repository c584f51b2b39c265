"""The configuration: one plain dict, checked once and frozen into ``Config``.

Every problem raises ``ConfigError`` naming the key, the expected form and, for
a misspelt key, the closest valid one.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlsplit

from .crawlers import ENGINES, Engine
from .errors import ConfigError
from .paths import RESERVED, SITEMAP, Documents, reserved
from .sections import DEFAULT_LABEL, Section, Sections
from .sections import NAME as SECTION_NAME
from .sitemaps import CHANGEFREQS, MAX_ORIGIN_BYTES, escape, is_news_language
from .urls import DEFAULT_PORTS, canonical_origin, is_secret_name, normalise_path
from .visible import visible

# The embedded store's file: in the working directory, or in a Flask app's
# instance folder.
DEFAULT_STORE_FILE = "sitemap.sqlite3"
DEFAULT_STORE = f"sqlite:///{DEFAULT_STORE_FILE}"

# Paths that are personal, private or not pages on almost every site. A pattern
# ending in "/*" also covers the bare prefix ("/api/*" covers "/api"); one of the
# form "*/word/*" matches "word" as a whole path segment anywhere ("/auth/login",
# "/en/account/settings", "/admin"; not "/login-tips" or "/blogin"). "api" is
# anchored at the root: "/docs/api/..." is public documentation on many sites.
DEFAULT_EXCLUDE = (
    "*/admin/*",
    "*/account/*",
    "*/accounts/*",
    "*/login/*",
    "*/logout/*",
    "*/signin/*",
    "*/sign_in/*",
    "*/sign-in/*",
    "*/signout/*",
    "*/sign_out/*",
    "*/sign-out/*",
    "*/signup/*",
    "*/sign_up/*",
    "*/sign-up/*",
    "*/register/*",
    "*/password/*",
    "*/auth/*",
    "*/oauth/*",
    "*/cart/*",
    "*/basket/*",
    "*/wishlist/*",
    "*/checkout/*",
    "/api/*",
    "/static/*",
    "/_*",
    "/.well-known/*",
)

# Request cookies that say nothing about who the visitor is: the analytics and
# consent cookies that tools set on anonymous visitors. Any other cookie makes
# a request private (invariant 22), unless ``session_cookies`` names the ones
# that do. A trailing "*" matches a prefix. Names as the tools set them:
# Google Analytics (_ga, _ga_<container>, _gid, _gat and _gat_<id>, and the
# legacy urchin __utma/__utmb/__utmc/__utmt/__utmz), Google Ads' conversion
# linker (_gcl_au, _gcl_aw, ...), the Meta pixel (_fbp, _fbc), Hotjar (_hjid,
# _hjSession_<id>, ...), Microsoft Clarity (_clck, _clsk), Matomo (_pk_id.*,
# _pk_ses.*, _pk_ref.*), Osano's cookieconsent (cookieconsent_status),
# OneTrust (OptanonConsent, OptanonAlertBoxClosed), Cookiebot (CookieConsent)
# and the IAB TCF v2 consent string (euconsent-v2).
DEFAULT_HARMLESS_COOKIES = (
    "_ga",
    "_ga_*",
    "_gid",
    "_gat*",
    "__utm*",
    "_gcl_*",
    "_fbp",
    "_fbc",
    "_hj*",
    "_clck",
    "_clsk",
    "_pk_*",
    "cookieconsent_status",
    "OptanonConsent",
    "OptanonAlertBoxClosed",
    "CookieConsent",
    "euconsent-v2",
)
# The cardinality bounds (invariant 7). A million URLs is twenty full sitemap
# pages: more than nearly any site has, few enough that a slug explosion
# cannot fill a disk. A thousand new URLs a minute per process is far more
# than a site publishes and lets a first crawl teach the store a large site
# within hours, while an attack adds at most that much before the caps hold.
DEFAULT_MAX_URLS = 1_000_000
DEFAULT_NEW_URLS_PER_MINUTE = 1000
DEFAULT_RECHECK_INTERVAL = 300.0
# A listed page no client was served for 30 days is stale in the health
# report: a crawler revisits a page it keeps indexed within weeks, and a
# visitor-less month is when a site owner asks whether the page should stay.
DEFAULT_STALE_AFTER = 30 * 86_400.0


@dataclass(frozen=True, slots=True)
class RouteOptions:
    """What the config's ``routes`` or the ``sitemap`` decorator says about one
    route; ``None`` means "not said", so that the two can be merged."""

    changefreq: str | None = None
    priority: float | None = None
    exclude: bool | None = None
    """``True``: the route's pages are never recorded."""
    max_urls: int | None = None
    """Per-route cap on stored URLs."""
    query: frozenset[str] | None = None
    """Query parameters kept for this route, on top of the global ``query``."""
    public_ids: bool | None = None
    """``True``: random-looking identifiers in the route's paths (UUIDs, long
    hex, tokens) name public pages, not secret links."""


# The shared IndexNow endpoint, which passes each submission on to every
# participating search engine (indexnow.org, "Documentation").
INDEXNOW_ENDPOINT = "https://api.indexnow.org/indexnow"
# Seconds between two pushes of one process, at least: changes made meanwhile
# go in one request (and a URL changed twice, once). The floor keeps a process
# from claiming from the store and posting in a loop.
INDEXNOW_INTERVAL = 60.0
MIN_INDEXNOW_INTERVAL = 1.0


@dataclass(frozen=True, slots=True)
class IndexNowOptions:
    """The ``indexnow`` key: where and how changed URLs are pushed."""

    key: str
    """The site's key: 8 to 128 of a-z, A-Z, 0-9 and "-"."""
    endpoint: str = INDEXNOW_ENDPOINT
    key_location: str = ""
    """The path the key file is served at, under the base URL (``/{key}.txt``
    unless set)."""
    interval: float = INDEXNOW_INTERVAL


Network = ipaddress.IPv4Network | ipaddress.IPv6Network
# How long one verification of a crawler's address may take (its reverse and
# forward lookups), and how many addresses' verdicts are kept.
CRAWL_TIMEOUT = 2.0
CRAWL_CACHE = 10_000
FORWARDED_HEADERS = ("x-forwarded-for", "forwarded")


@runtime_checkable
class Resolver(Protocol):
    """The DNS lookups that verify a crawler (``crawlers.resolver``; the
    system's resolver by default). Each may block; the writer runs them on
    threads of their own and waits for none."""

    def reverse(self, address: str) -> str:
        """The host name of an IP address (PTR); ``OSError`` when it has none."""

    def forward(self, host: str) -> Iterable[str]:
        """The IP addresses of a host name; ``OSError`` when it has none."""


@dataclass(frozen=True, slots=True)
class CrawlerOptions:
    """The ``crawlers`` key: which search engines' crawls are kept and how a
    client claiming to be one is verified."""

    engines: tuple[Engine, ...] = tuple(ENGINES.values())
    dns: bool = True
    """Verify by reverse DNS and a forward lookup confirming it."""
    ranges: Mapping[str, tuple[Network, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """Engine name -> the networks of its published IP-range file."""
    trusted_proxies: tuple[Network, ...] = ()
    """The proxies whose forwarded header names the client."""
    forwarded_header: str = "x-forwarded-for"
    timeout: float = CRAWL_TIMEOUT
    cache_size: int = CRAWL_CACHE
    resolver: Resolver | None = field(default=None, compare=False)
    """``None``: the system's (``socket``)."""


@dataclass(frozen=True, slots=True)
class NewsOptions:
    """The ``news`` key: which pages are news articles, listed in
    ``/sitemap-news.xml`` while recent, and the publication they appear in."""

    pages: Section
    """The route templates and path globs of the articles."""
    sections: frozenset[str] = frozenset()
    """The sections (the ``sections`` key) whose pages are articles."""
    name: str | None = None
    """The publication's name (``None``: each page's ``og:site_name``)."""
    language: str | None = None
    """Its ``<news:language>`` (``None``: each page's ``<html lang>``)."""

    def holds(self, sections: Sections, path: str, route: str | None) -> bool:
        """Whether the page at ``path`` served by ``route`` is an article."""
        if self.pages.holds(path.partition("?")[0], route):
            return True
        return bool(self.sections) and sections.of(path, route) in self.sections


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
        _known(mapping, _KEYS, "unknown sitemap config key {!r}")
        if "sites" in mapping:
            mapping = _with_sites(mapping)
        if "base_url" not in mapping:
            raise ConfigError(
                "sitemap config needs 'base_url', the public URL of the site, "
                "such as 'https://www.example.com'"
            )
        values = {key: _KEYS[key](key, value) for key, value in mapping.items()}
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
        defaults = values.setdefault("default_exclude", DEFAULT_EXCLUDE)
        values["exclude"] = defaults + values.get("exclude", ())
        values["harmless_cookies"] = DEFAULT_HARMLESS_COOKIES + values.get(
            "harmless_cookies", ()
        )
        if not values.get("allowed_hosts"):
            host = urlsplit(values["base_url"]).hostname or ""
            values["allowed_hosts"] = (host,)
        _check_stale_after(values)
        indexnow = values.get("indexnow")
        if indexnow is not None and indexnow.key_location == values.get("html_sitemap"):
            raise ConfigError(
                f"'indexnow.key_location' {indexnow.key_location!r} is the"
                " 'html_sitemap' path; give the key file a path of its own"
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


@dataclass(frozen=True, slots=True)
class SiteOptions:
    """One of the sites the app serves (the ``sites`` key)."""

    name: str
    """Its name: its listing in the store, the CLI's ``--site``."""
    base_url: str
    """Its public origin (and prefix): every URL of its documents."""
    hosts: tuple[str, ...]
    """The ``Host`` values that reach it (lower case, without port)."""


# A site's name is part of table and key names: lower-case letters and digits.
_SITE_NAME = re.compile(r"[a-z][a-z0-9]{0,15}")


def _sites(key: str, value: Any) -> tuple[SiteOptions, ...]:
    form = (
        "a dict of site name -> {'base_url': ..., 'hosts': [...]}, such as"
        " {'de': {'base_url': 'https://example.de', 'hosts': ['example.de',"
        " 'www.example.de']}}"
    )
    if not isinstance(value, Mapping) or not value:
        raise ConfigError(f"{key!r} must be {form}, got {value!r}")
    sites: list[SiteOptions] = []
    owner: dict[str, str] = {}
    for name, options in value.items():
        if not isinstance(name, str) or not _SITE_NAME.fullmatch(name):
            raise ConfigError(
                f"{key!r} names sites with 1 to 16 lower-case letters and digits,"
                f" a letter first (they name its listing in the store), got {name!r}"
            )
        where = f"{key}.{name}"
        if not isinstance(options, Mapping):
            raise ConfigError(f"{where!r} must be a dict, got {options!r}")
        _known(options, {"base_url": 0, "hosts": 0}, f"unknown key {{!r}} in {where!r}")
        if "base_url" not in options:
            raise ConfigError(f"{where!r} needs 'base_url', the site's public URL")
        base_url = _base_url(f"{where}.base_url", options["base_url"])
        hosts = options.get("hosts")
        if hosts is None:
            hosts = (urlsplit(base_url).hostname or "",)
        hosts = _hosts(f"{where}.hosts", hosts)
        for host in hosts:
            if host.startswith(".") or "*" in host or host != site_host(host):
                raise ConfigError(
                    f"{where + '.hosts'!r} holds host names as a Host header"
                    f" names them, without port, '*' or a leading dot, got {host!r}"
                )
            if host in owner:
                raise ConfigError(
                    f"host {host!r} is in the hosts of both {owner[host]!r} and"
                    f" {name!r} in {key!r}; a host reaches one site"
                )
            owner[host] = name
        sites.append(SiteOptions(name, base_url, hosts))
    return tuple(sites)


def _with_sites(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """A config with ``sites``: its first site is the default, whose
    ``base_url`` the key may repeat; each site names its own hosts."""
    sites = _sites("sites", mapping["sites"])
    if "allowed_hosts" in mapping:
        raise ConfigError(
            "'allowed_hosts' and 'sites' do not go together: each site names"
            " the hosts that reach it ('sites.<name>.hosts')"
        )
    values = dict(mapping)
    if "base_url" in mapping and _base_url("base_url", mapping["base_url"]) != (
        sites[0].base_url
    ):
        raise ConfigError(
            f"'base_url' {mapping['base_url']!r} is not the base_url of the first"
            f" of 'sites' ({sites[0].name!r}, the default site); leave it out"
        )
    if len(sites) > 1 and not isinstance(mapping.get("store", DEFAULT_STORE), str):
        raise ConfigError(
            "with several 'sites', 'store' must be a store URI, from which each"
            " site's listing is named (a store object holds one listing)"
        )
    values["base_url"] = sites[0].base_url
    values["allowed_hosts"] = list(sites[0].hosts)
    return values


def host_name(host: str) -> str:
    """The host a ``Host`` value names, as ``allowed_hosts`` spell it: lower
    case, without port; an IPv6 literal without its brackets."""
    host = host.lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.partition(":")[0]


def site_host(host: str) -> str:
    """The host a ``Host`` value names, as ``sites`` spell it: its
    :func:`host_name` without a trailing dot. Only ever compared with the
    configured hosts: it selects a site, it never builds a URL (invariant 1)."""
    host = host_name(host)
    return host[:-1] if host.endswith(".") else host


def site_store(store: str, name: str) -> str:
    """The URI of site ``name``'s listing in the store ``store`` names: the
    store option ``site`` (``stores.open_store``)."""
    if not _SITE_NAME.fullmatch(name):
        raise ConfigError(
            "a site's name is 1 to 16 lower-case letters and digits, a letter"
            f" first, got {name!r}"
        )
    # Appended as written: urlunsplit would shorten "sqlite:///file".
    return f"{store}{'&' if '?' in store else '?'}site={name}"


# Characters no URL may hold as written (RFC 3986 §2, Appendix C): controls,
# space, and the delimiters that XML, HTML or a log would take as the end of
# a URL. Each would make every <loc> built on the base URL unparsable.
_NOT_IN_URL = re.compile(r'[\x00-\x20\x7f<>"{}|\\^`]')


def _base_url(key: str, value: Any) -> str:
    expected = "an absolute http(s) URL such as 'https://www.example.com'"
    if not isinstance(value, str):
        raise ConfigError(f"{key!r} must be {expected}, got {value!r}")
    text = value.strip()
    bad = _NOT_IN_URL.search(text)
    if bad is not None:
        raise ConfigError(
            f"{key!r} must be {expected}, without spaces, control characters "
            f'or any of <>"{{}}|\\^`; got {bad.group()!r} in {value!r}'
        )
    try:
        parts = urlsplit(text)
    except ValueError as exc:  # "https://[x", a host NFKC changes
        raise ConfigError(f"{key!r} must be {expected}, got {value!r}") from exc
    if parts.scheme.lower() not in DEFAULT_PORTS or not parts.hostname:
        raise ConfigError(f"{key!r} must be {expected}, got {value!r}")
    if "@" in parts.netloc or "?" in text or "#" in text:
        raise ConfigError(
            f"{key!r} must hold no user, query or fragment, got {value!r}"
        )
    origin = canonical_origin(parts)
    if origin is None:
        raise ConfigError(
            f"{key!r} has an invalid host or port (a host name, an IPv4 address "
            f"or a bracketed IPv6 one, and a port from 1 to 65535): {value!r}"
        )
    prefix = parts.path.rstrip("/")
    if prefix:
        if not prefix.isascii():
            raise ConfigError(f"{key!r} path must be percent-encoded ASCII: {value!r}")
        # Stored and compared in the spelling every request path gets.
        normalised = normalise_path(prefix)
        if normalised is None:
            raise ConfigError(
                f"{key!r} path must be percent-encoded UTF-8 text without "
                f"control characters: {value!r}"
            )
        prefix = normalised.rstrip("/")
    url = f"{origin}{prefix}"
    # Stores size pages with this much room for the origin of each URL.
    if len(escape(url)) > MAX_ORIGIN_BYTES:
        raise ConfigError(f"{key!r} must be at most {MAX_ORIGIN_BYTES} characters")
    return url


def _store(key: str, value: Any) -> Any:
    if isinstance(value, str) and "://" in value:
        return value
    if hasattr(value, "upsert") and hasattr(value, "part"):
        return value
    raise ConfigError(
        f"{key!r} must be a store URI such as {DEFAULT_STORE!r} or "
        f"'memory://', or a store object, got {value!r}"
    )


def store_hint(uri: str) -> str | None:
    """The fix of a store URI with a known slip, in words, or ``None``: an
    SQLite file named as a host (``sqlite://x.db``, two slashes where a
    relative path takes three)."""
    parts = urlsplit(uri)
    if parts.scheme.lower() == "sqlite" and parts.netloc:
        fixed = f"sqlite:///{parts.netloc}{parts.path}"
        if parts.query:
            fixed += f"?{parts.query}"
        return f"did you mean {fixed!r} (three slashes before a relative path)?"
    return None


def _strings(key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list | tuple | set | frozenset):
        raise ConfigError(f"{key!r} must be a list of strings, got {value!r}")
    for item in value:
        if not isinstance(item, str) or not item:
            raise ConfigError(f"{key!r} must hold non-empty strings, got {item!r}")
    return tuple(value)


def _patterns(key: str, value: Any) -> tuple[str, ...]:
    patterns = _strings(key, value)
    for pattern in patterns:
        # "*/word/*", the defaults' form, is a whole segment anywhere.
        if not pattern.startswith(("/", "*/")):
            raise ConfigError(
                f"{key!r} patterns are globs on the path and start with '/' (or"
                f" '*/' for a segment anywhere, as '*/admin/*'), got {pattern!r}"
            )
    return patterns


def _hosts(key: str, value: Any) -> tuple[str, ...]:
    return tuple(host.lower() for host in _strings(key, value))


def _names(key: str, value: Any) -> frozenset[str]:
    return frozenset(_strings(key, value))


def _cookies(key: str, value: Any) -> frozenset[str]:
    # "*": a visitor with any cookie at all may see a personal page (the
    # paranoid mode of an app whose cookies are not known).
    if value == "*":
        return frozenset({"*"})
    if isinstance(value, str):
        raise ConfigError(
            f"{key!r} must be a list of cookie names, or '*' for any cookie, "
            f"got {value!r}"
        )
    names = _names(key, value)
    for name in sorted(names):
        if not _is_cookie_name(name):
            raise ConfigError(
                f"{key!r} holds cookie names as browsers send them (letters, "
                f"digits and !#$%&'*+-.^_`|~), got {name!r}"
            )
    return names


# A cookie name is an RFC 9110 §5.6.2 token (RFC 6265 §4.1.1).
_is_cookie_name = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+").fullmatch


def _harmless(key: str, value: Any) -> tuple[str, ...]:
    names = _strings(key, value)
    for name in names:
        if not _is_cookie_name(name) or "*" in name[:-1]:
            raise ConfigError(
                f"{key!r} holds cookie names, or a prefix followed by '*' "
                f"(such as '_ga_*'), got {name!r}"
            )
    return names


def _default_exclude(key: str, value: Any) -> tuple[str, ...]:
    patterns = _strings(key, value)
    for pattern in patterns:
        if pattern not in DEFAULT_EXCLUDE:
            raise ConfigError(
                f"{key!r} turns defaults off and may only keep some of them "
                f"({', '.join(DEFAULT_EXCLUDE)}); put patterns of your own in "
                f"'exclude', got {pattern!r}"
            )
    return patterns


def _query(key: str, value: Any) -> frozenset[str]:
    names = _names(key, value)
    for name in sorted(names):
        if is_secret_name(name):
            raise ConfigError(
                f"{key!r} lists {name!r}, which looks like a credential; such "
                "parameters are never published in a sitemap"
            )
    return names


def _changefreq(key: str, value: Any) -> str | None:
    if value is None or value in CHANGEFREQS:
        return value  # type: ignore[no-any-return]
    raise ConfigError(f"{key!r} must be one of {', '.join(CHANGEFREQS)}, got {value!r}")


def _priority(key: str, value: Any) -> float | None:
    if value is None:
        return None
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and 0.0 <= value <= 1.0:
        return float(value)
    raise ConfigError(f"{key!r} must be a number from 0.0 to 1.0, got {value!r}")


def _flag(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise ConfigError(f"{key!r} must be true or false, got {value!r}")


def _limit(key: str, value: Any) -> int | None:
    if value is None or (
        isinstance(value, int) and not isinstance(value, bool) and value >= 0
    ):
        return value
    raise ConfigError(
        f"{key!r} must be a whole number >= 0, or None for no limit, got {value!r}"
    )


def _seconds(key: str, value: Any) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return value
    raise ConfigError(f"{key!r} must be a number of seconds >= 0, got {value!r}")


def _check_stale_after(values: Mapping[str, Any]) -> None:
    # A page served within a recheck_interval is not seen again: a shorter
    # stale_after would call pages stale that visitors read every minute.
    stale = values.get("stale_after", DEFAULT_STALE_AFTER)
    recheck = values.get("recheck_interval", DEFAULT_RECHECK_INTERVAL)
    if stale < recheck:
        raise ConfigError(
            f"'stale_after' ({stale:g} s) must be at least 'recheck_interval' "
            f"({recheck:g} s): the time a page was served is kept once a "
            "recheck_interval"
        )


def _max_age(key: str, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise ConfigError(f"{key!r} must be a whole number of seconds >= 0, got {value!r}")


def _gzip_level(key: str, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 9:
        return value
    raise ConfigError(f"{key!r} must be a whole number from 1 to 9, got {value!r}")


def _robots(key: str, value: Any) -> tuple[bool, tuple[str, ...]]:
    expected = "a dict with 'generate' (bool) and 'lines' (list of strings)"
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key!r} must be {expected}, got {value!r}")
    for sub in value:
        if sub not in ("generate", "lines"):
            raise ConfigError(f"unknown key {sub!r} in {key!r}; expected {expected}")
    generate = value.get("generate", True)
    if not isinstance(generate, bool):
        raise ConfigError(f"'{key}.generate' must be true or false, got {generate!r}")
    lines = _strings(f"{key}.lines", value.get("lines", []))
    if any("\n" in line or "\r" in line for line in lines):
        raise ConfigError(f"'{key}.lines' must hold single lines, got {lines!r}")
    return generate, lines


# The IndexNow protocol's key: 8 to 128 characters of a-z, A-Z, 0-9 and "-"
# (indexnow.org, "Documentation").
_is_indexnow_key = re.compile(r"[a-zA-Z0-9-]{8,128}").fullmatch
# The sitemap ping endpoints Google and Bing retired in 2023: never sent to.
# Unreserved characters only (RFC 3986 §2.3): the path the adapters see is the
# path as written.
_is_key_path = re.compile(r"(/[A-Za-z0-9._~-]+)+").fullmatch
_RETIRED_PINGS = re.compile(r"(www\.)?(google|bing)\.com")


_INDEXNOW_KEYS = dict.fromkeys(("key", "endpoint", "key_location", "interval"))


def _indexnow(key: str, value: Any) -> IndexNowOptions:
    expected = (
        "a dict with 'key' (8 to 128 of a-z, A-Z, 0-9 and '-') and optionally"
        f" 'endpoint' (default {INDEXNOW_ENDPOINT!r}), 'key_location' (a path"
        " such as '/indexnow-key.txt') and 'interval' (seconds)"
    )
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key!r} must be {expected}, got {value!r}")
    _known(value, _INDEXNOW_KEYS, f"unknown key {{!r}} in {key!r}")
    secret = value.get("key")
    if not isinstance(secret, str) or not _is_indexnow_key(secret):
        raise ConfigError(
            f"'{key}.key' must be 8 to 128 characters of a-z, A-Z, 0-9 and '-'"
            f" (the IndexNow protocol's key), got {secret!r}"
        )
    endpoint = value.get("endpoint", INDEXNOW_ENDPOINT)
    parts = urlsplit(endpoint) if isinstance(endpoint, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"'{key}.endpoint' must be an http(s) URL such as"
            f" {INDEXNOW_ENDPOINT!r}, got {endpoint!r}"
        )
    if _RETIRED_PINGS.fullmatch(parts.hostname) and "indexnow" not in parts.path:
        raise ConfigError(
            f"'{key}.endpoint' {endpoint!r} is not an IndexNow endpoint (the"
            f" sitemap ping endpoints are retired); use {INDEXNOW_ENDPOINT!r}"
        )
    location = value.get("key_location", f"/{secret}.txt")
    if not isinstance(location, str) or not _is_key_path(location):
        raise ConfigError(
            f"'{key}.key_location' must be a path under the base URL of"
            f" letters, digits and ._~-, such as '/{secret}.txt', got {location!r}"
        )
    # Kept out of the sitemaps' whole prefix, not only their paths.
    if reserved(location) or location.startswith(SITEMAP):
        raise ConfigError(
            f"'{key}.key_location' {location!r} is a path the sitemap answers"
        )
    interval = _seconds(f"{key}.interval", value.get("interval", INDEXNOW_INTERVAL))
    if interval < MIN_INDEXNOW_INTERVAL:
        raise ConfigError(
            f"'{key}.interval' must be at least {MIN_INDEXNOW_INTERVAL:g} second"
            f" (a process's pushes are that far apart at least), got {interval!r}"
        )
    return IndexNowOptions(secret, endpoint, location, float(interval))


# A path spelt as every request gets it (RFC 3986 §3.3 pchar), with nothing to
# decode: unreserved characters and sub-delims, no "%", no empty segment.
_SITE_MAP_PATH = re.compile(r"(/[A-Za-z0-9._~!$&'()*+,;=:@-]+)+/?")
# A BCP 47 tag as <html lang> takes it (RFC 5646 §2.1, its common forms).
_LANGUAGE_TAG = re.compile(r"[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*")


_SITE_MAP_OPTIONS = ("path", "lang", "title", "site_name", "newest_first")
# path, lang, title, site_name, newest_first
_SiteMapPage = tuple[str, str, str, str | None, tuple[str, ...]]


def _html_sitemap(key: str, value: Any) -> _SiteMapPage | None:
    expected = (
        "a path such as '/site-map', or a dict with 'path', 'lang' (such as "
        "'en'), 'title', 'site_name' and 'newest_first' (section paths such as"
        " ['/blog'])"
    )
    if value is None or value is False:
        return None
    options = {"path": value} if isinstance(value, str) else value
    if not isinstance(options, Mapping):
        raise ConfigError(f"{key!r} must be {expected}, got {value!r}")
    for sub in options:
        if sub not in _SITE_MAP_OPTIONS:
            raise ConfigError(f"unknown key {sub!r} in {key!r}; expected {expected}")
    path = options.get("path")
    if not isinstance(path, str) or not _SITE_MAP_PATH.fullmatch(path):
        raise ConfigError(
            f"'{key}.path' must be a path such as '/site-map': it starts with '/',"
            f" is not '/' and holds only letters, digits and -._~!$&'()*+,;=:@ "
            f"between single slashes, got {path!r}"
        )
    segments = path.strip("/").split("/")
    # Reserved whatever the options: turning text_sitemap on later cannot
    # take the page's path.
    if reserved(path) or {".", ".."} & set(segments):
        raise ConfigError(
            f"'{key}.path' must not be one of the sitemap's own paths "
            f"({', '.join(RESERVED)}) nor hold a dot segment, got {path!r}"
        )
    lang = options.get("lang", "en")
    if not isinstance(lang, str) or not _LANGUAGE_TAG.fullmatch(lang):
        raise ConfigError(
            f"'{key}.lang' must be a language tag such as 'en' or 'nb-NO', got {lang!r}"
        )
    title = _line(f"{key}.title", options.get("title", "Site map"))
    site_name = options.get("site_name")
    if site_name is not None:
        site_name = _line(f"{key}.site_name", site_name)
    newest = _patterns(f"{key}.newest_first", options.get("newest_first", []))
    return path, lang, title, site_name, newest


def _line(key: str, value: Any) -> str:
    if (
        not isinstance(value, str)
        or not value.strip()
        or "\n" in value
        or "\r" in value
    ):
        raise ConfigError(f"{key!r} must be a non-empty single line, got {value!r}")
    return value.strip()


_CRAWLER_KEYS = dict.fromkeys(
    (
        "engines",
        "dns",
        "ranges",
        "trusted_proxies",
        "forwarded_header",
        "timeout",
        "cache_size",
        "resolver",
    )
)


def _crawlers(key: str, value: Any) -> CrawlerOptions | None:
    if value is False or value is None:
        return None
    if value is True:
        return CrawlerOptions()
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{key!r} must be false (off), true (the defaults) or a dict with"
            f" any of {', '.join(_CRAWLER_KEYS)}, got {value!r}"
        )
    _known(value, _CRAWLER_KEYS, f"unknown key {{!r}} in {key!r}")
    names = value.get("engines", list(ENGINES))
    if isinstance(names, str) or not isinstance(names, Iterable):
        names = [names]
    engines = []
    for name in names:
        if name not in ENGINES:
            raise ConfigError(
                f"'{key}.engines' names {name!r}, which is not one of"
                f" {', '.join(map(repr, ENGINES))}"
            )
        engines.append(ENGINES[name])
    ranges = value.get("ranges", {})
    if not isinstance(ranges, Mapping):
        raise ConfigError(
            f"'{key}.ranges' must map an engine name to the path of its IP-range"
            " file, such as {'google': 'googlebot.json'}, got {ranges!r}"
        )
    networks = {}
    for name, where in ranges.items():
        if name not in {engine.name for engine in engines}:
            raise ConfigError(
                f"'{key}.ranges' names {name!r}, which is not one of the engines"
                f" of '{key}.engines'"
            )
        networks[name] = _range_file(f"{key}.ranges.{name}", where)
    dns = _flag(f"{key}.dns", value.get("dns", True))
    if not dns and set(networks) != {engine.name for engine in engines}:
        missing = sorted({engine.name for engine in engines} - set(networks))
        raise ConfigError(
            f"'{key}.dns' is false, so every engine needs its IP-range file in"
            f" '{key}.ranges' (none for {', '.join(missing)}); give them, or"
            " list fewer 'engines'"
        )
    header = value.get("forwarded_header", "x-forwarded-for")
    if not isinstance(header, str) or header.lower() not in FORWARDED_HEADERS:
        raise ConfigError(
            f"'{key}.forwarded_header' must be 'X-Forwarded-For' or 'Forwarded'"
            f" (the header the trusted proxies set), got {header!r}"
        )
    timeout = _seconds(f"{key}.timeout", value.get("timeout", CRAWL_TIMEOUT))
    if timeout <= 0:
        raise ConfigError(f"'{key}.timeout' must be more than 0 seconds")
    size = _limit(f"{key}.cache_size", value.get("cache_size", CRAWL_CACHE))
    if not size:
        raise ConfigError(f"'{key}.cache_size' must be at least 1")
    resolver = value.get("resolver")
    if resolver is not None and not isinstance(resolver, Resolver):
        raise ConfigError(
            f"'{key}.resolver' must have the methods reverse(address) -> host"
            f" and forward(host) -> addresses, got {resolver!r}"
        )
    return CrawlerOptions(
        tuple(engines),
        dns,
        MappingProxyType(networks),
        _networks(f"{key}.trusted_proxies", value.get("trusted_proxies", ())),
        header.lower(),
        float(timeout),
        size,
        resolver,
    )


def _networks(key: str, value: Any) -> tuple[Network, ...]:
    if isinstance(value, str):
        value = [value]
    found = []
    for item in value if isinstance(value, Iterable) else [value]:
        try:
            if not isinstance(item, str):
                raise TypeError("not a string")
            found.append(ipaddress.ip_network(item))
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"{key!r} must list IP addresses or networks such as '10.0.0.0/8'"
                f" or '::1' (host bits unset), got {item!r}: {exc}"
            ) from exc
    return tuple(found)


def _range_file(key: str, where: Any) -> tuple[Network, ...]:
    """An engine's published IP ranges: ``{"prefixes": [{"ipv4Prefix":
    "66.249.64.0/27"}, {"ipv6Prefix": "2001:4860:4801:10::/64"}]}``."""
    expected = (
        "the path of a JSON file such as Google's googlebot.json:"
        ' {"prefixes": [{"ipv4Prefix": "66.249.64.0/27"}, ...]}'
    )
    if not isinstance(where, str | os.PathLike):
        raise ConfigError(f"{key!r} must be {expected}, got {where!r}")
    try:
        with open(where, encoding="utf-8") as file:
            data = json.load(file)
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{key!r}: cannot read {where!r} ({exc}): {expected}"
        ) from exc
    prefixes = data.get("prefixes") if isinstance(data, dict) else None
    if not isinstance(prefixes, list):
        raise ConfigError(f"{key!r}: {where!r} has no 'prefixes' list: {expected}")
    networks = []
    for item in prefixes:
        prefix = None
        if isinstance(item, dict):
            prefix = item.get("ipv4Prefix", item.get("ipv6Prefix"))
        try:
            networks.append(ipaddress.ip_network(prefix))  # type: ignore[arg-type]
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"{key!r}: {where!r} holds {item!r}, not an ipv4Prefix or"
                f" ipv6Prefix network: {expected}"
            ) from exc
    return tuple(networks)


_ROUTE_KEYS: dict[str, Callable[[str, Any], Any]] = {
    "changefreq": _changefreq,
    "priority": _priority,
    "exclude": _flag,
    "max_urls": _limit,
    "query": _query,
    "public_ids": _flag,
}


def _known(mapping: Mapping[str, Any], keys: Mapping[str, Any], unknown: str) -> None:
    """Refuse a key not in ``keys``, suggesting the closest one for a typo."""
    for key in mapping:
        if key not in keys:
            import difflib  # only a typo needs it

            close = difflib.get_close_matches(str(key), keys, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"{unknown.format(key)}{hint} (valid keys: {', '.join(sorted(keys))})"
            )


def route_options(where: str, options: Mapping[str, Any]) -> RouteOptions:
    """Check one route's options; ``where`` names them in error messages."""
    _known(options, _ROUTE_KEYS, f"unknown key {{!r}} in {where}")
    return RouteOptions(
        **{
            name: _ROUTE_KEYS[name](f"{where}.{name}", value)
            for name, value in options.items()
        }
    )


def _routes(key: str, value: Any) -> Mapping[str, RouteOptions]:
    expected = (
        "a dict of route template -> options, such as "
        "{'/blog/<slug>': {'changefreq': 'weekly', 'max_urls': 50000}}"
    )
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key!r} must be {expected}, got {value!r}")
    routes: dict[str, RouteOptions] = {}
    for template, options in value.items():
        if not isinstance(template, str) or not template.startswith("/"):
            raise ConfigError(
                f"{key!r} keys are route templates as the app declares them, "
                f"starting with '/', got {template!r}"
            )
        where = f"{key}[{template!r}]"
        if not isinstance(options, Mapping):
            raise ConfigError(f"{where} must be a dict of options, got {options!r}")
        routes[template] = route_options(where, options)
    return MappingProxyType(routes)


LASTMOD_SOURCES = ("declared", "article", "last-modified", "changes", "first-seen")
# Names kept for configs written for an earlier release.
_LASTMOD_ALIASES = {"content": "first-seen"}


def _lastmod_source(key: str, value: Any) -> str:
    if value in _LASTMOD_ALIASES:
        return _LASTMOD_ALIASES[value]
    if value in LASTMOD_SOURCES:
        return str(value)
    raise ConfigError(
        f"{key!r} must be one of {', '.join(map(repr, LASTMOD_SOURCES))}, got {value!r}"
    )


def _regexes(key: str, value: Any) -> tuple[re.Pattern[bytes], ...]:
    patterns = []
    for text in _strings(key, value):
        try:
            patterns.append(re.compile(text.encode("utf-8")))
        except re.error as exc:
            raise ConfigError(
                f"{key!r}: {text!r} is not a regular expression: {exc}"
            ) from exc
    return tuple(patterns)


def _sections(key: str, value: Any) -> Sections:
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{key!r} must map a section name to a list of route templates"
            " and path globs, such as {'posts': ['/blog/<slug>', '/news/*']}"
        )
    checked: dict[str, tuple[str, ...]] = {}
    for name, patterns in value.items():
        if not isinstance(name, str) or not SECTION_NAME.match(name):
            raise ConfigError(
                f"{key!r}: section name {name!r} must be a short lower-case word"
                " (letters, digits, '-' and '_', at most 40)"
            )
        if name == DEFAULT_LABEL:
            raise ConfigError(
                f"{key!r}: {DEFAULT_LABEL!r} is the section of pages no section"
                " names; give this section another name"
            )
        where = f"{key}.{name}"
        if isinstance(patterns, str):
            patterns = [patterns]
        listed = _strings(where, patterns)
        if not listed:
            raise ConfigError(f"{where!r} names no route template or path glob")
        for pattern in listed:
            if not pattern.startswith("/"):
                raise ConfigError(
                    f"{where!r}: {pattern!r} must start with '/' (a route"
                    " template such as '/blog/<slug>' or a path glob such as"
                    " '/blog/*')"
                )
        checked[name] = listed
    return Sections.of_mapping(checked)


_NEWS_KEYS = dict.fromkeys(("pages", "sections", "name", "language"))


def _news(key: str, value: Any) -> NewsOptions | None:
    expected = (
        "a dict with 'pages' (route templates and path globs of the articles,"
        " such as ['/news/<slug>', '/20*']) and/or 'sections' (names of the"
        " 'sections' key), and optionally 'name' (the publication's name) and"
        " 'language' (an ISO 639 code such as 'en', or 'zh-cn' / 'zh-tw')"
    )
    if value is None or value is False:
        return None
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key!r} must be {expected}, got {value!r}")
    _known(value, _NEWS_KEYS, f"unknown key {{!r}} in {key!r}")
    pages = value.get("pages", [])
    pages = _strings(f"{key}.pages", [pages] if isinstance(pages, str) else pages)
    for pattern in pages:
        if not pattern.startswith("/"):
            raise ConfigError(
                f"'{key}.pages': {pattern!r} must start with '/' (a route"
                " template such as '/news/<slug>' or a path glob such as"
                " '/news/*')"
            )
    sections = value.get("sections", [])
    named = _strings(
        f"{key}.sections", [sections] if isinstance(sections, str) else sections
    )
    if not pages and not named:
        raise ConfigError(f"{key!r} names no articles; it must be {expected}")
    name = value.get("name")
    if name is not None:
        name = _line(f"{key}.name", name)
        if visible(name) != name:
            raise ConfigError(
                f"'{key}.name' must be visible text (no control or invisible"
                f" characters, single spaces), got {name!r}"
            )
    language = value.get("language")
    # Google News: "zh-cn" or "zh-tw" for Chinese, never "zh" alone.
    if language is not None and (
        not isinstance(language, str)
        or not is_news_language(language)
        or language == "zh"
    ):
        raise ConfigError(
            f"'{key}.language' must be an ISO 639 language code of 2 or 3"
            " lower-case letters such as 'en', or 'zh-cn' / 'zh-tw' for"
            f" Chinese (Google News), got {language!r}"
        )
    articles = Sections.of_mapping({"news": pages}).sections[0]
    return NewsOptions(articles, frozenset(named), name, language)


_KEYS: dict[str, Callable[[str, Any], Any]] = {
    "base_url": _base_url,
    "store": _store,
    "allowed_hosts": _hosts,
    "default_exclude": _default_exclude,
    "exclude": _patterns,
    "include": _patterns,
    "query": _query,
    "changefreq": _changefreq,
    "priority": _priority,
    "cache_max_age": _max_age,
    "gzip_level": _gzip_level,
    "robots": _robots,
    "session_cookies": _cookies,
    "harmless_cookies": _harmless,
    "skip_set_cookie": _flag,
    "recheck_interval": _seconds,
    "stale_after": _seconds,
    "routes": _routes,
    "max_urls": _limit,
    "new_urls_per_minute": _limit,
    "lastmod_source": _lastmod_source,
    "fingerprint_ignore": _regexes,
    "text_sitemap": _flag,
    "schema_location": _flag,
    "images": _flag,
    "indexnow": _indexnow,
    "html_sitemap": _html_sitemap,
    "sections": _sections,
    "news": _news,
    "crawlers": _crawlers,
    "sites": _sites,
}
