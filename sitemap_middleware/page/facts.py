"""What a watched page says about itself, read in the writer thread: whether it may
be listed (its head and ``Link`` header), its content fingerprint, the ``lastmod``
its configured source gives, and its images.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone

from werkzeug.http import parse_date

from ..config import Config
from ..reasons import Skipped
from ..sitemaps import MAX_IMAGES, MAX_URL_LENGTH
from ..urls import canonical_target, split_base_url
from .content import fingerprint
from .head import Head, merge, scan_head, scan_link_header

NO_QUERY: frozenset[str] = frozenset()
# A path with nothing to normalise: no escapes, query, fragment or empty segment.
_is_plain = re.compile(r"(?:/[A-Za-z0-9._~!$&'()*+,;=:@-]+)+").fullmatch

Headers = Iterable[tuple[str, str]] | Iterable[tuple[bytes, bytes]]


@dataclass(frozen=True, slots=True)
class Facts:
    """A listable page's content fingerprint, its ``lastmod`` when the configured
    source gives one, and its same-origin images as stored paths."""

    fingerprint: str
    lastmod: datetime | None
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
    links, _ = _header_values(headers)
    head = scan_head(body)
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
    config: Config, path: str, body: list[bytes], headers: Headers, head: Head
) -> Facts:
    """The fingerprint, lastmod and images of a page that may be listed."""
    limit = MAX_IMAGES if config.images else 0
    content = fingerprint(body, config.fingerprint_ignore, max_images=limit)
    lastmod = None
    if config.lastmod_source == "last-modified":
        _, modified = _header_values(headers)
        lastmod = _instant(parse_date(modified))  # None when absent or malformed
    elif config.lastmod_source == "article" and head.modified:
        lastmod = _iso_datetime(head.modified)
    return Facts(content.digest, lastmod, _images(config, path, content.images))


def _images(config: Config, path: str, sources: Iterable[str]) -> tuple[str, ...]:
    """The site's own images as stored paths: a foreign one may come from a
    visitor's comment. Their query is dropped (cache busters, signed URLs),
    and so is an image whose URL no ``<image:loc>`` can hold."""
    _, prefix = split_base_url(config.base_url)
    start = prefix + "/"
    # sitemaps.org: a <loc> is less than 2,048 characters.
    longest = MAX_URL_LENGTH - len(config.base_url)
    images: dict[str, None] = {}
    for source in sources:
        if source.startswith(start) and _is_plain(source) and "/." not in source:
            # Already a normalised absolute path: the common case, ten times
            # cheaper than resolving it.
            image: str | None = source[len(prefix) :]
            if len(source) - len(prefix) > longest:
                image = None
        else:
            # None too when the result is too long for a <loc>.
            image = canonical_target(source, config.base_url, path, NO_QUERY)
        if image is not None:
            images[image] = None
    return tuple(images)


def _header_values(headers: Headers) -> tuple[list[str], str | None]:
    """Every ``Link`` field value, and the ``Last-Modified`` one."""
    links: list[str] = []
    modified = None
    for raw_name, raw_value in headers:
        name = raw_name.decode("latin-1") if isinstance(raw_name, bytes) else raw_name
        name = name.lower()
        if name not in ("link", "last-modified"):
            continue
        value = (
            raw_value.decode("latin-1") if isinstance(raw_value, bytes) else raw_value
        )
        if name == "link":
            links.append(value)
        else:
            modified = value
    return links, modified


def _iso_datetime(text: str) -> datetime | None:
    """An ISO 8601 date-time with a zone, as ``article:modified_time`` holds;
    ``None`` for anything else (a time without a zone is no instant)."""
    if text.endswith(("Z", "z")):  # fromisoformat() reads "Z" from Python 3.11 on
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
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
