"""What a watched page says about itself, read in the writer thread: whether it may
be listed (its head and ``Link`` header), its content fingerprint, the date it
declares it was modified (when the configured source reads one and it is
plausible), and its images.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import NamedTuple

from werkzeug.http import parse_date, parse_options_header

from ..config import Config
from ..reasons import Skipped
from ..sitemaps import MAX_IMAGES, MAX_URL_LENGTH, iso_moment
from ..urls import canonical_target, split_base_url
from .content import fingerprint
from .head import Head, merge, scan_head, scan_link_header

NO_QUERY: frozenset[str] = frozenset()
# A path with nothing to normalise: no escapes, query, fragment or empty segment.
_is_plain = re.compile(r"(?:/[A-Za-z0-9._~!$&'()*+,;=:@-]+)+").fullmatch
# An absolute or scheme-relative URL whose host is written plainly (lower
# case, no user, no port): its origin is its scheme and host as written, or
# none (canonical_origin), so one that is not the site's names no image of
# it. Most foreign images (a CDN's) are told so at a tenth of the cost.
_plain_origin = re.compile(r"(?:(https?):)?//([a-z0-9.-]+)(?=[/?#]|\Z)").match

Headers = Iterable[tuple[str, str]] | Iterable[tuple[bytes, bytes]]

# A declared date before the web is a placeholder, not a modification: the
# first web pages went up in 1991, and CMS defaults (the epoch, 1900, year 1)
# all fall before it.
EARLIEST = datetime(1991, 1, 1, tzinfo=timezone.utc)
# A declared date this close to the moment the page was seen, or later, is no
# evidence of a change. Frameworks and CMS templates stamp each response with
# the time it is made (Last-Modified: now, a theme's modified_time of the
# render); taken as the page's date, it would move lastmod at every visit,
# the very pattern that makes search engines stop trusting it. A genuine edit
# made this recently is read at a later visit, once older than this; a date in
# the future (a wrong clock) is no date either. The app and the middleware
# share one clock, so a minute covers slow responses and whole-second dates.
RECENT = 60.0
# Which declared dates each lastmod_source reads, in order: the first plausible
# one counts. The page's own words about its content first; Last-Modified
# last, as servers set it for a whole site as often as for the page.
_SOURCES = {
    "declared": ("article", "json-ld", "last-modified"),
    "article": ("article", "json-ld"),
    "last-modified": ("last-modified",),
}
_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}").fullmatch


@dataclass(frozen=True, slots=True)
class Facts:
    """A listable page's content fingerprint, its ``lastmod`` when the configured
    source gives one, and its same-origin images as stored paths."""

    fingerprint: str
    lastmod: datetime | None
    """The date the page declares it was modified, when the configured source
    reads one and it is plausible (:func:`declared_date`); else ``None``."""
    images: tuple[str, ...]


def read_head(
    config: Config,
    path: str,
    query: frozenset[str],
    body: list[bytes],
    headers: Headers,
) -> tuple[Head, str | None]:
    """The page's head (tags and ``Link`` header together) and why it must not
    be listed (``"noindex"``, ``"head_too_long"``, ``"canonical_other"``), or
    ``None``. ``query`` is the query parameters kept for the page's route.
    Never raises on what the page says."""
    fields = _header_values(headers)
    links = fields.links
    head = scan_head(body, charset=fields.charset)
    if links:
        head = merge(head, scan_link_header(links))
    if head.noindex:
        return head, Skipped.NOINDEX
    if head.truncated:
        # A noindex may follow what was read: fail safe.
        return head, Skipped.HEAD_TOO_LONG
    for href in head.canonicals:
        # Another page, or another site: either way not this URL's entry.
        # One that cannot be read names no page: not this one either.
        if canonical_target(href, config.base_url, path, query) != path:
            return head, Skipped.CANONICAL_OTHER
    return head, None


def read_content(
    config: Config,
    path: str,
    body: list[bytes],
    headers: Headers,
    head: Head,
    seen: float | None = None,
) -> Facts:
    """The fingerprint, declared date and images of a page that may be
    listed; ``seen`` is when it was served (epoch seconds, default now)."""
    limit = MAX_IMAGES if config.images else 0
    content = fingerprint(
        body, config.fingerprint_ignore, max_images=limit, encoding=head.encoding
    )
    sources = _SOURCES.get(config.lastmod_source, ())
    lastmod = None
    if sources:
        when = time.time() if seen is None else seen
        lastmod = declared_date(sources, head, _header_values(headers).modified, when)
    return Facts(content.digest, lastmod, _images(config, path, content.images))


# The two dates a page declares of itself, each read by _declared from its
# sources: the one reading of them, for lastmod and the news sitemap alike.
MODIFIED = "modified"
PUBLISHED = "published"


def declared_date(
    sources: Iterable[str], head: Head, last_modified: str | None, seen: float
) -> datetime | None:
    """When the page says it was last modified: the newest plausible date of
    the first of ``sources`` that declares one (``"article"``: the
    ``article:modified_time`` meta tag; ``"json-ld"``: the head's JSON-LD
    ``dateModified``; ``"last-modified"``: the header), in UTC; else ``None``.
    Plausible: not before :data:`EARLIEST`, not within :data:`RECENT`
    seconds of ``seen`` nor after it. Never raises on what the page says."""
    for source in sources:
        plausible = _declared(source, MODIFIED, head, last_modified, seen, RECENT)
        if plausible:
            return max(plausible)
    return None


def published_date(head: Head, seen: float) -> datetime | None:
    """When the page says it was published: the earliest plausible date of
    its ``article:published_time``, else of its JSON-LD ``datePublished``
    (a ``NewsArticle``'s, a ``BlogPosting``'s, at the top level, in an array
    or in an ``@graph``), in UTC; else ``None``. Plausible as for
    :func:`declared_date`, but a moment ago counts: a news article is read as
    soon as it is published, so unlike a modified time it is no stamp of the
    response. Never raises on what the page says."""
    for source in ("article", "json-ld"):
        plausible = _declared(source, PUBLISHED, head, None, seen, 0.0)
        if plausible:
            return min(plausible)
    return None


def _declared(
    source: str,
    kind: str,
    head: Head,
    last_modified: str | None,
    seen: float,
    recent: float,
) -> list[datetime]:
    """The plausible dates of ``kind`` that ``source`` declares (see
    :func:`_plausible`)."""
    dates: list[datetime | None] = []
    if source == "article":
        said = head.modified if kind == MODIFIED else head.published
        dates = [_iso_datetime(said)] if said else []
    elif source == "json-ld":
        texts = head.date_modified if kind == MODIFIED else head.date_published
        dates = [_iso_datetime(text) for text in texts]
    elif kind == MODIFIED and last_modified:
        # The response's header: a modified time, never a published one;
        # parse_date gives None for a malformed one.
        dates = [_instant(parse_date(last_modified))]
    return [d for d in dates if d is not None and _plausible(d, seen, recent)]


def _plausible(moment: datetime, seen: float, recent: float = RECENT) -> bool:
    """Whether a date a page declares can be true: not before the web, and
    at least ``recent`` seconds before the page was ``seen``."""
    return moment >= EARLIEST and moment.timestamp() <= seen - recent


def _images(config: Config, path: str, sources: Iterable[str]) -> tuple[str, ...]:
    """The site's own images as stored paths: a foreign one may come from a
    visitor's comment. Their query is dropped (cache busters, signed URLs),
    and so is an image whose URL no ``<image:loc>`` can hold."""
    home, prefix = split_base_url(config.base_url)
    scheme = home.partition(":")[0]
    start = prefix + "/"
    # sitemaps.org: a <loc> is less than 2,048 characters.
    longest = MAX_URL_LENGTH - len(config.base_url)
    images: dict[str, None] = {}
    for source in sources:
        if "\\" in source:
            # A browser reads "\" as "/" in an http(s) URL (WHATWG URL
            # standard): "\\cdn.example\a.png" is another host's image.
            source = source.replace("\\", "/")
        if source.startswith(start) and _is_plain(source) and "/." not in source:
            # Already a normalised absolute path: the common case, ten times
            # cheaper than resolving it.
            image: str | None = source[len(prefix) :]
            if len(source) - len(prefix) > longest:
                image = None
        elif (origin := _plain_origin(source)) is not None and (
            f"{origin[1] or scheme}://{origin[2]}" != home
        ):
            continue
        else:
            # None too when the result is too long for a <loc>.
            image = canonical_target(source, config.base_url, path, NO_QUERY)
        if image is not None:
            images[image] = None
    return tuple(images)


class _Fields(NamedTuple):
    links: list[str]
    """Every ``Link`` field value."""
    modified: str | None
    """The ``Last-Modified`` value."""
    charset: str | None
    """The ``charset`` parameter of the ``Content-Type``."""


def _header_values(headers: Headers) -> _Fields:
    """The header fields the page's facts are read from."""
    links: list[str] = []
    modified = charset = None
    for raw_name, raw_value in headers:
        name = raw_name.decode("latin-1") if isinstance(raw_name, bytes) else raw_name
        name = name.lower()
        if name not in ("link", "last-modified", "content-type"):
            continue
        value = (
            raw_value.decode("latin-1") if isinstance(raw_value, bytes) else raw_value
        )
        if name == "link":
            links.append(value)
        elif name == "last-modified":
            modified = value
        else:
            charset = _charset(value)
    return _Fields(links, modified, charset)


@functools.lru_cache(maxsize=64)
def _charset(content_type: str) -> str | None:
    """The ``charset`` parameter of a ``Content-Type`` value: a site sends
    a handful of them, each parsed once (as render's minutes are formatted)."""
    return parse_options_header(content_type)[1].get("charset") or None


def _iso_datetime(text: str) -> datetime | None:
    """An ISO 8601 date-time with a zone, as ``article:modified_time`` holds,
    or a date alone (schema.org's ``dateModified`` is a Date or a DateTime),
    taken as its midnight in UTC; ``None`` for anything else (a time without
    a zone is no instant)."""
    text = text.strip()
    if _DATE_ONLY(text):
        try:
            return iso_moment(text).replace(tzinfo=timezone.utc)
        except ValueError:
            return None
    try:
        moment = iso_moment(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return _instant(moment)


def _instant(moment: datetime | None) -> datetime | None:
    """``moment`` in UTC, or ``None`` when UTC cannot hold it (year 1 at
    +01:00 is year 0, which datetime has not)."""
    if moment is None:
        return None
    try:
        return moment.astimezone(timezone.utc)
    except (OverflowError, ValueError):
        return None
