"""Pure rendering: entries to ``<url>`` fragments, fragments to ``<urlset>``
pages, pages to ``<sitemapindex>``, and robots.txt.

Every value goes through :func:`escape`; documents are UTF-8 and follow the
sitemaps.org 0.9 schemas (https://www.sitemaps.org/protocol.html) and Google's
image and hreflang extensions.
"""

from __future__ import annotations

import functools
import re
import zlib
from collections.abc import Iterable
from datetime import datetime, timezone
from types import ModuleType

from .model import UNDATED_SECONDS, Entry, PartInfo, dated
from .paths import NEWS, PART
from .sitemaps import (
    CHANGEFREQS,
    MAX_IMAGES,
    MAX_URL_LENGTH,
    escape,
    is_language_tag,
    is_news_language,
)
from .visible import visible


def release() -> str:
    """The package's version (``__version__``, what ``--version`` prints): the
    bytes rendered depend on it too (``serving.validators.looks``)."""
    # importlib.metadata costs more to import than the rest of the package.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sitemap-middleware")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0+unknown"


DEFLATE: ModuleType = zlib
try:  # optional, "sitemap-middleware[fast]": the same gzip, deflated ~2.5x faster
    from zlib_ng import zlib_ng

    DEFLATE = zlib_ng
except ImportError:  # pragma: no cover - depends on the environment
    pass

XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
XHTML_NS = "http://www.w3.org/1999/xhtml"
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"
NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"
# Where each namespace's schema lives (xsi:schemaLocation pairs, XML Schema
# Part 1 §4.3.2): the ones the protocol and the extensions publish.
SITEMAP_XSD = f"{SITEMAP_NS} {SITEMAP_NS}/sitemap.xsd"
INDEX_XSD = f"{SITEMAP_NS} {SITEMAP_NS}/siteindex.xsd"
IMAGE_XSD = f"{IMAGE_NS} {IMAGE_NS}/sitemap-image.xsd"
XHTML_XSD = f"{XHTML_NS} http://www.w3.org/2002/08/xhtml/xhtml1-strict.xsd"
NEWS_XSD = f"{NEWS_NS} {NEWS_NS}/sitemap-news.xsd"
_URLSET = (
    f'<urlset xmlns="{SITEMAP_NS}" xmlns:xhtml="{XHTML_NS}" xmlns:image="{IMAGE_NS}"'
)
URLSET_OPEN = f"{XML_DECLARATION}{_URLSET}>\n".encode()
URLSET_OPEN_SCHEMA = (
    f'{XML_DECLARATION}{_URLSET} xmlns:xsi="{XSI_NS}"'
    f' xsi:schemaLocation="{SITEMAP_XSD} {XHTML_XSD} {IMAGE_XSD}">\n'
).encode()
URLSET_CLOSE = b"</urlset>\n"
# Stored fragments hold this byte where the escaped base URL goes: a NUL can
# never appear in XML, and one replace() per chunk puts the origin back.
ORIGIN = b"\x00"
# What a stored path looks like after normalisation (RFC 3986 pchar and "?").
_is_path = re.compile(r"/[!$&'()*+,;=:@%/?A-Za-z0-9._~-]*").fullmatch
_ABSOLUTE = re.compile(r"https?://[!$&'()*+,;=:@%/?\[\]A-Za-z0-9._~-]+")
# The longest path that fits after the shortest origin ("http://a") within
# the 2,048-character limit on <loc>; the recorder checks the real origin.
MAX_PATH_LENGTH = MAX_URL_LENGTH - len("http://a")


def w3c_datetime(moment: datetime) -> str:
    """W3C datetime to the second with an explicit zone (https://www.w3.org/TR/NOTE-datetime)."""
    return moment.isoformat(timespec="seconds")


def _path(value: str, what: str) -> str:
    if len(value) > MAX_PATH_LENGTH or not _is_path(value):
        raise ValueError(
            f"{what} must be a normalised path starting with '/' (ASCII, "
            f"percent-encoded, at most {MAX_PATH_LENGTH} characters), got {value!r}"
        )
    # Of the five metacharacters only & and ' are left in a normalised path.
    if "&" in value or "'" in value:
        value = escape(value)
    return "\x00" + value


def _reference(value: str, what: str) -> str:
    """An image's or an alternate's URL as a fragment holds it: a path on the
    site's origin, or an absolute http(s) URL written as it is."""
    if value.startswith("/"):
        return _path(value, what)
    if len(value) > MAX_URL_LENGTH or not _ABSOLUTE.fullmatch(value):
        raise ValueError(f"{what} must be a path or an http(s) URL, got {value!r}")
    return escape(value)


# A stamp's clock by minute of the day ("07:05:") and its seconds and zone
# by second ("07+00:00"): tables, so that a stamp costs a date looked up.
_CLOCK = tuple(f"{minute // 60:02d}:{minute % 60:02d}:" for minute in range(1440))
_SECONDS = tuple(f"{second:02d}+00:00" for second in range(60))


def _stamp(lastmod: int) -> str:
    """``w3c_datetime`` of epoch seconds in UTC. Entries written together
    mostly share a day (a bulk load's lastmods close together, or spread
    over a few years, where a cache by minute missed every time): the date
    is formatted once a day."""
    return (
        _day(lastmod // 86400) + _CLOCK[lastmod // 60 % 1440] + _SECONDS[lastmod % 60]
    )


@functools.lru_cache(maxsize=4096)
def _day(day: int) -> str:
    """``"YYYY-MM-DDT"`` of a day since the epoch, UTC."""
    return datetime.fromtimestamp(day * 86400, timezone.utc).date().isoformat() + "T"


def fragment(entry: Entry, lastmod: int) -> bytes:
    """The finished ``<url>`` element of an entry, written once when stored.

    ``lastmod`` is epoch seconds; :data:`~.model.UNDATED_SECONDS` (or less)
    writes no ``<lastmod>``: the page claims no date. Paths are written after
    :data:`ORIGIN`, the place of the base URL, so that serving a page costs a
    join and a replace per chunk, not per URL. Raises ``ValueError`` for
    values no sitemap may hold.
    """
    loc = _path(entry.path, "a path")
    if lastmod > UNDATED_SECONDS:
        head = f"<url><loc>{loc}</loc><lastmod>{_stamp(lastmod)}</lastmod>"
    else:
        head = f"<url><loc>{loc}</loc>"
    if (
        entry.changefreq is None
        and entry.priority is None
        and not entry.alternates
        and not entry.images
    ):
        return f"{head}</url>\n".encode()
    parts = [head]
    if entry.changefreq is not None:
        if entry.changefreq not in CHANGEFREQS:
            raise ValueError(
                f"changefreq must be one of {', '.join(CHANGEFREQS)},"
                f" got {entry.changefreq!r}"
            )
        parts.append(f"<changefreq>{entry.changefreq}</changefreq>")
    if entry.priority is not None:
        if not 0.0 <= entry.priority <= 1.0:
            raise ValueError(f"priority must be 0.0 to 1.0, got {entry.priority!r}")
        parts.append(f"<priority>{entry.priority:.1f}</priority>")
    if entry.alternates:
        parts.append(links(entry.alternates))
    if len(entry.images) > MAX_IMAGES:
        raise ValueError(f"at most {MAX_IMAGES} images a URL, got {len(entry.images)}")
    for image in entry.images:
        url = _reference(image, "an image")
        parts.append(f"<image:image><image:loc>{url}</image:loc></image:image>")
    parts.append("</url>\n")
    return "".join(parts).encode()


def links(alternates: Iterable[tuple[str, str]]) -> str:
    """The ``xhtml:link`` elements of ``(hreflang, path)`` pairs, as a
    fragment holds them: a path is on the site's origin; an absolute URL is
    a page of another of the app's sites, written as it is (a sitemap may
    name another host's pages when that host's robots.txt names its own,
    sitemaps.org's cross-submission rule). Raises ``ValueError`` for values
    no sitemap may hold."""
    out = []
    for hreflang, href in alternates:
        if not is_language_tag(hreflang):
            raise ValueError(f"hreflang must be a language tag, got {hreflang!r}")
        out.append(
            f'<xhtml:link rel="alternate" hreflang="{hreflang}"'
            f' href="{_reference(href, "an alternate")}"/>'
        )
    return "".join(out)


_LINK = b"<xhtml:link "
_IMAGE = b"<image:image>"
_URL_CLOSE = b"</url>"


def relink(piece: bytes, elements: str) -> bytes:
    """A finished fragment with its ``xhtml:link`` elements replaced by
    ``elements`` (from :func:`links`; empty: none): the bytes
    :func:`fragment` gives for the same entry with those alternates. The
    markers cannot occur inside values, which are escaped."""
    start = piece.find(_LINK)
    end = piece.find(_IMAGE)
    if end < 0:
        end = piece.rfind(_URL_CLOSE)
    if start < 0:
        start = end
    return piece[:start] + elements.encode() + piece[end:]


def part_url(base_url: str, number: int) -> str:
    """The URL of part ``number``, as the index lists it."""
    return base_url + PART.build(number)


def urlset(
    base_url: str,
    chunks: Iterable[bytes],
    level: int = 6,
    deflate: ModuleType = DEFLATE,
    *,
    schema: bool = False,
) -> bytes:
    """The gzip ``<urlset>`` page of stored fragments, compressed as they come.

    ``chunks`` are runs of finished fragments; each costs one replace (to put
    the origin in) and one deflate call, so a page is rendered at close to
    the speed of deflate alone and memory holds one chunk at a time. The gzip
    header carries no file name and a zero mtime, so the same page gives the
    same bytes in every process with the same ``deflate`` module (zlib-ng
    when installed, else zlib); it is one gzip member. zlib-ng's bytes at
    levels 1, 5 and 6 also depend on where its input is cut: every process
    reads a part version in the same runs (``layout.run_rows`` of its
    summary). ``schema`` adds the ``xsi:schemaLocation`` of the three
    namespaces.
    """
    origin = escape(base_url).encode()
    compressor = deflate.compressobj(level, deflate.DEFLATED, 31)
    out = [compressor.compress(URLSET_OPEN_SCHEMA if schema else URLSET_OPEN)]
    for chunk in chunks:
        out.append(compressor.compress(chunk.replace(ORIGIN, origin)))
    out.append(compressor.compress(URLSET_CLOSE))
    out.append(compressor.flush())
    return b"".join(out)


def sitemapindex(
    base_url: str,
    pages: Iterable[PartInfo],
    schema: bool = False,
    news: datetime | None = None,
) -> str:
    """The ``<sitemapindex>`` document listing each part with when it changed,
    then the news sitemap when there is one, ``news`` being when it changed.

    An index's ``<lastmod>`` is the time the sitemap file was modified
    (sitemaps.org, "Sitemap index XML tag definitions"): the part's
    ``changed``, its ``Last-Modified`` too. Not its entries' newest lastmod:
    a page added without a date of its own, or one removed, changes the file
    and moves no entry's lastmod, and a crawler that trusts the index would
    not fetch the part again to learn of it.
    """
    located = (
        f' xmlns:xsi="{XSI_NS}" xsi:schemaLocation="{INDEX_XSD}"' if schema else ""
    )
    lines = [f'{XML_DECLARATION}<sitemapindex xmlns="{SITEMAP_NS}"{located}>\n']
    for page in pages:
        changed = dated(page.changed)
        stamp = "" if changed is None else f"<lastmod>{w3c_datetime(changed)}</lastmod>"
        lines.append(
            f"<sitemap><loc>{escape(part_url(base_url, page.number))}</loc>"
            f"{stamp}</sitemap>\n"
        )
    if news is not None:
        lines.append(
            f"<sitemap><loc>{escape(base_url + NEWS.build())}</loc>"
            f"<lastmod>{w3c_datetime(news)}</lastmod></sitemap>\n"
        )
    lines.append("</sitemapindex>\n")
    return "".join(lines)


def news_urlset(urls: Iterable[str], schema: bool = False) -> bytes:
    """A Google News sitemap of ``<url>`` elements from :func:`news_url`."""
    located = (
        f' xmlns:xsi="{XSI_NS}" xsi:schemaLocation="{SITEMAP_XSD} {NEWS_XSD}"'
        if schema
        else ""
    )
    opening = f'<urlset xmlns="{SITEMAP_NS}" xmlns:news="{NEWS_NS}"{located}>\n'
    body = "".join((XML_DECLARATION, opening, *urls, "</urlset>\n"))
    return body.encode("utf-8")


def news_url(
    path: str, published: int, title: str, language: str, name: str, origin: str
) -> str:
    """One article's ``<url>`` in a Google News sitemap, with its
    ``<news:news>``: publication name and language, publication date (a W3C
    datetime from epoch seconds) and title; ``origin`` is the escaped base
    URL. Titles and names are written as visible text (:func:`~.visible.
    visible`: no control or invisible characters, which XML 1.0 may not
    hold), escaped. Raises ``ValueError`` for an article no news sitemap may
    hold (a language that is no ISO 639 code, an empty title or name, a path
    that is none): the caller leaves those out."""
    loc = _path(path, "a path").replace("\x00", origin)
    title, name = visible(title), visible(name)
    if not title or not name:
        raise ValueError(f"a news article needs a title and a name, got {path!r}")
    if not is_news_language(language):
        raise ValueError(f"a news language is an ISO 639 code, got {language!r}")
    when = w3c_datetime(datetime.fromtimestamp(published, timezone.utc))
    return (
        f"<url><loc>{loc}</loc><news:news><news:publication>"
        f"<news:name>{escape(name)}</news:name>"
        f"<news:language>{language}</news:language></news:publication>"
        f"<news:publication_date>{when}</news:publication_date>"
        f"<news:title>{escape(title)}</news:title></news:news></url>\n"
    )


def text(base_url: str, paths: Iterable[str]) -> bytes:
    """A text sitemap: one absolute URL a line, UTF-8 (sitemaps.org, "Text file").
    Stored paths are percent-encoded ASCII, so nothing needs escaping."""
    return "".join(f"{base_url}{path}\n" for path in paths).encode("utf-8")


def robots_txt(lines: Iterable[str], sitemap_url: str) -> str:
    """A generated robots.txt: allow everything, the configured lines, the sitemap."""
    body = ["User-agent: *", "Disallow:", *lines, "", f"Sitemap: {sitemap_url}", ""]
    return "\n".join(body)


def with_sitemap_line(robots: str, sitemap_url: str) -> str | None:
    """The app's own robots.txt with our ``Sitemap:`` line added, or ``None``
    when it already names that sitemap (RFC 9309 §2.2.4: other records may
    appear anywhere, so appending is enough).
    """
    # A byte order mark (UTF-8 files may start with one) is no part of the
    # first line's name.
    for line in robots.removeprefix("\ufeff").splitlines():
        name, _, value = line.partition(":")
        if name.strip().lower() == "sitemap" and value.strip() == sitemap_url:
            return None
    if robots and not robots.endswith("\n"):
        robots += "\n"
    return f"{robots}\nSitemap: {sitemap_url}\n"
