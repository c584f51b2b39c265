"""Pure rendering: entries to ``<urlset>``, pages to ``<sitemapindex>``, robots.txt.

Every value goes through :func:`escape`; documents are UTF-8 and follow the
sitemaps.org 0.9 schemas (https://www.sitemaps.org/protocol.html).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from datetime import datetime

from .stores.base import Entry, PageInfo

XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
# Entries are rendered and handed to gzip this many at a time.
_BATCH = 500


def escape(value: str) -> str:
    """Entity-escape all five XML metacharacters, quotes included."""
    if "&" in value:
        value = value.replace("&", "&amp;")
    if "<" in value:
        value = value.replace("<", "&lt;")
    if ">" in value:
        value = value.replace(">", "&gt;")
    if "'" in value:
        value = value.replace("'", "&apos;")
    if '"' in value:
        value = value.replace('"', "&quot;")
    return value


def w3c_datetime(moment: datetime) -> str:
    """W3C datetime to the second with an explicit zone (https://www.w3.org/TR/NOTE-datetime)."""
    return moment.isoformat(timespec="seconds")


def page_url(base_url: str, number: int) -> str:
    return f"{base_url}/sitemap-{number}.xml.gz"


def urlset(
    base_url: str,
    entries: Iterable[Entry],
    changefreq: str | None = None,
    priority: float | None = None,
) -> Iterator[str]:
    """The ``<urlset>`` document for entries, in pieces.

    ``changefreq`` and ``priority`` are defaults for entries that carry none;
    both are left out when unset (Google ignores them).
    """
    yield f'{XML_DECLARATION}<urlset xmlns="{SITEMAP_NS}">\n'
    prefix = escape(base_url)
    batch: list[str] = []
    for entry in entries:
        parts = [f"<url><loc>{prefix}{escape(entry.path)}</loc>"]
        if entry.lastmod is not None:
            parts.append(f"<lastmod>{w3c_datetime(entry.lastmod)}</lastmod>")
        if freq := entry.changefreq or changefreq:
            parts.append(f"<changefreq>{freq}</changefreq>")
        weight = entry.priority if entry.priority is not None else priority
        if weight is not None:
            parts.append(f"<priority>{weight:.1f}</priority>")
        parts.append("</url>\n")
        batch.append("".join(parts))
        if len(batch) >= _BATCH:
            yield "".join(batch)
            batch.clear()
    if batch:
        yield "".join(batch)
    yield "</urlset>\n"


def sitemapindex(base_url: str, pages: Iterable[PageInfo]) -> str:
    """The ``<sitemapindex>`` document listing each page with its newest lastmod."""
    lines = [f'{XML_DECLARATION}<sitemapindex xmlns="{SITEMAP_NS}">\n']
    for page in pages:
        lines.append(
            f"<sitemap><loc>{escape(page_url(base_url, page.number))}</loc>"
            f"<lastmod>{w3c_datetime(page.lastmod)}</lastmod></sitemap>\n"
        )
    lines.append("</sitemapindex>\n")
    return "".join(lines)


def gzip(pieces: Iterable[str], level: int = 6) -> bytes:
    """One gzip member of the UTF-8 pieces, compressed as they come.

    zlib's gzip header carries no file name and a zero mtime, so the same
    document gives the same bytes in every process (and the same ETag).
    """
    compressor = zlib.compressobj(level, zlib.DEFLATED, 31)
    out = [compressor.compress(piece.encode("utf-8")) for piece in pieces]
    out.append(compressor.flush())
    return b"".join(out)


def robots_txt(lines: Iterable[str], sitemap_url: str) -> str:
    """A generated robots.txt: allow everything, the configured lines, the sitemap."""
    body = ["User-agent: *", "Disallow:", *lines, "", f"Sitemap: {sitemap_url}", ""]
    return "\n".join(body)


def with_sitemap_line(robots: str, sitemap_url: str) -> str | None:
    """The app's own robots.txt with our ``Sitemap:`` line added, or ``None``
    when it already names that sitemap (RFC 9309 §2.2.4: other records may
    appear anywhere, so appending is enough).
    """
    for line in robots.splitlines():
        name, _, value = line.partition(":")
        if name.strip().lower() == "sitemap" and value.strip() == sitemap_url:
            return None
    if robots and not robots.endswith("\n"):
        robots += "\n"
    return f"{robots}\nSitemap: {sitemap_url}\n"
