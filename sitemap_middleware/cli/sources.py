"""Reading sitemaps that exist elsewhere: an XML sitemap, a sitemap index (its parts
followed), gzip or not, or a text sitemap, from a file or an http(s) URL, turned
into the entries of one site, each bad one reported rather than fatal.
"""

from __future__ import annotations

import gzip
import io
import os
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import IO, Protocol
from urllib.parse import parse_qsl, urlsplit
from xml.etree.ElementTree import Element, ParseError, iterparse

from .. import render
from ..model import UNDATED, Entry
from ..sitemaps import CHANGEFREQS, is_language_tag
from ..urls import canonical_target

SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
IMAGE_NS = "{http://www.google.com/schemas/sitemap-image/1.1}"
XHTML_NS = "{http://www.w3.org/1999/xhtml}"
# A read from a URL gives up after this many seconds without data.
TIMEOUT = 30.0
# The protocol's limit on an uncompressed sitemap (sitemaps.org: 50 MB), with
# room: what is larger is no sitemap and is not read to its end.
MAX_BYTES = 64 * 1024 * 1024
_GZIP_MAGIC = b"\x1f\x8b"

# W3C datetime forms (https://www.w3.org/TR/NOTE-datetime) that
# datetime.fromisoformat does not read on every supported Python: a year, a
# year and month, and a "Z" zone.
_SHORT_FORMS = ("%Y", "%Y-%m")


class SourceError(Exception):
    """A source that cannot be read at all (missing file, HTTP error, not XML)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """An entry of a source that is not imported, and why."""

    where: str
    """The source and, where known, the URL."""
    reason: str


Item = Entry | Problem


def read(
    source: str, base_url: str, query: frozenset[str] = frozenset()
) -> Iterator[Item]:
    """The entries of ``source`` (a path or an http(s) URL) for the site at
    ``base_url``, and a :class:`Problem` for each one left out: another site,
    an unreadable ``<loc>``, a bad ``lastmod``, ``changefreq`` or ``priority``.

    A sitemap index is followed one level down, as the protocol allows no
    deeper: its parts are fetched when ``source`` is a URL, looked for beside
    it (by file name) when it is a file. Query parameters are kept only when
    named in ``query``; a URL that would lose some is a problem.

    :raises SourceError: when ``source`` itself cannot be read.
    """
    with _opened(source) as stream:
        first = stream.peek(64).lstrip()[:1]
        if first != b"<":
            yield from _text(source, stream, base_url, query)
            return
        parts: list[str] = []
        yield from _xml(source, stream, base_url, query, parts)
    for loc in parts:
        part = _beside(source, loc)
        try:
            with _opened(part) as stream:
                yield from _xml(part, stream, base_url, query, None)
        except SourceError as exc:
            yield Problem(part, str(exc))


@contextmanager
def _opened(source: str) -> Iterator[io.BufferedReader[_Bounded]]:
    """``source`` as a buffered byte stream, gunzipped when it is gzip."""
    try:
        if urlsplit(source).scheme in ("http", "https"):
            request = urllib.request.Request(
                source, headers={"User-Agent": "sitemap-middleware"}
            )
            raw: IO[bytes] = urllib.request.urlopen(request, timeout=TIMEOUT)
        else:
            raw = open(source, "rb")  # noqa: SIM115 - closed below
    except urllib.error.HTTPError as exc:
        exc.close()  # it holds the error response's connection
        raise SourceError(f"cannot read {source}: {exc}") from None
    except (OSError, ValueError) as exc:
        raise SourceError(f"cannot read {source}: {exc}") from exc
    with raw:
        stream = io.BufferedReader(_Bounded(raw, source))
        if stream.peek(2)[:2] == _GZIP_MAGIC:
            unzipped = gzip.GzipFile(fileobj=stream)
            stream = io.BufferedReader(_Bounded(unzipped, source))
        try:
            yield stream
        except (OSError, EOFError, zlib.error) as exc:  # broken gzip, a reset
            raise SourceError(f"cannot read {source}: {exc}") from exc


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _Bounded(io.RawIOBase):
    """A raw stream that refuses to give more than :data:`MAX_BYTES`."""

    def __init__(self, raw: _Readable, source: str) -> None:
        self._raw = raw
        self._source = source
        self._left = MAX_BYTES

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self._raw.read(min(len(buffer), self._left + 1))
        if len(data) > self._left:
            raise SourceError(f"{self._source} is larger than {MAX_BYTES} bytes")
        self._left -= len(data)
        buffer[: len(data)] = data
        return len(data)


def _beside(source: str, loc: str) -> str:
    if urlsplit(source).scheme in ("http", "https"):
        return loc
    name = os.path.basename(urlsplit(loc).path)
    return os.path.join(os.path.dirname(source), name)


def _text(
    source: str, stream: IO[bytes], base_url: str, query: frozenset[str]
) -> Iterator[Item]:
    # A text sitemap: one URL a line, UTF-8 (sitemaps.org, "Text file").
    for number, raw in enumerate(stream, 1):
        line = raw.strip()
        if not line:
            continue
        where = f"{source}:{number}"
        try:
            url = line.decode("utf-8")
        except UnicodeDecodeError:
            yield Problem(where, "not UTF-8")
            continue
        path = _path(url, base_url, query)
        if isinstance(path, Problem):
            yield Problem(where, path.reason)
            continue
        # A text sitemap says no date: the URL has none (not the import's time).
        yield Entry(path, UNDATED)


def _xml(
    source: str,
    stream: IO[bytes],
    base_url: str,
    query: frozenset[str],
    parts: list[str] | None,
) -> Iterator[Item]:
    """The entries of a ``<urlset>``; the ``<loc>`` of each ``<sitemap>`` of a
    ``<sitemapindex>`` go to ``parts`` (``None``: an index is a problem here)."""
    try:
        events = iterparse(stream, events=("start", "end"))
        _, root = next(events)
        if root.tag == f"{SITEMAP_NS}sitemapindex":
            if parts is None:
                yield Problem(source, "a sitemap index inside a sitemap index")
                return
            for event, element in events:
                if event == "end" and element.tag == f"{SITEMAP_NS}sitemap":
                    loc = _child(element, "loc")
                    if loc:
                        parts.append(loc)
                    root.clear()
            return
        if root.tag != f"{SITEMAP_NS}urlset":
            raise SourceError(f"{source} is not a sitemap (root {root.tag!r})")
        for event, element in events:
            if event == "end" and element.tag == f"{SITEMAP_NS}url":
                yield _entry(source, element, base_url, query)
                root.clear()  # bounded memory on a 50,000-URL part
    except ParseError as exc:
        raise SourceError(f"{source} is not well-formed XML: {exc}") from exc


def _child(element: Element, name: str, ns: str = SITEMAP_NS) -> str | None:
    found = element.find(f"{ns}{name}")
    if found is None or found.text is None:
        return None
    return found.text.strip()


def _entry(source: str, url: Element, base_url: str, query: frozenset[str]) -> Item:
    loc = _child(url, "loc")
    if not loc:
        return Problem(source, "a <url> without <loc>")
    where = f"{source}: {loc}"
    path = _path(loc, base_url, query)
    if isinstance(path, Problem):
        return Problem(where, path.reason)
    try:
        lastmod = _lastmod(_child(url, "lastmod"))
    except ValueError:
        return Problem(where, f"lastmod {_child(url, 'lastmod')!r} is no W3C datetime")
    changefreq = _child(url, "changefreq")
    if changefreq is not None and changefreq not in CHANGEFREQS:
        return Problem(where, f"changefreq {changefreq!r} is not one of the protocol's")
    priority_text = _child(url, "priority")
    try:
        priority = None if priority_text is None else float(priority_text)
    except ValueError:
        return Problem(where, f"priority {priority_text!r} is no number")
    images: list[str] = []
    for image in url.iter(f"{IMAGE_NS}image"):
        src = _child(image, "loc", IMAGE_NS)
        if src:
            # Images on the site are stored as paths, others as given.
            own = _path(src, base_url, frozenset())
            images.append(src if isinstance(own, Problem) else own)
    alternates: list[tuple[str, str]] = []
    for link in url.iter(f"{XHTML_NS}link"):
        hreflang, href = link.get("hreflang"), link.get("href")
        if link.get("rel") != "alternate" or not hreflang or not href:
            continue
        target = _path(href, base_url, query)
        if not isinstance(target, Problem) and is_language_tag(hreflang):
            alternates.append((hreflang, target))
    entry = Entry(
        path,
        UNDATED if lastmod is None else lastmod,  # no <lastmod>: no date
        changefreq=changefreq,
        priority=priority,
        alternates=tuple(alternates),
        images=tuple(dict.fromkeys(images)),
    )
    try:
        render.fragment(entry, 0)  # what no sitemap may hold fails here
    except ValueError as exc:
        return Problem(where, str(exc))
    return entry


def _path(url: str, base_url: str, query: frozenset[str]) -> str | Problem:
    """The stored form of an absolute URL of the site, or why it has none."""
    if urlsplit(url).scheme not in ("http", "https"):
        return Problem(url, "not an absolute http(s) URL")
    path = canonical_target(url, base_url, "/", query)
    if path is None:
        return Problem(url, f"not a URL under {base_url}")
    given = _names(urlsplit(url).query)
    lost = given - _names(path.partition("?")[2])
    if lost:
        return Problem(
            url,
            f"its query parameters {', '.join(sorted(lost))} would be dropped "
            "(a sitemap keeps only those the config's 'query' names, never secrets)",
        )
    return path


def _names(query: str) -> set[str]:
    return {name for name, _ in parse_qsl(query, keep_blank_values=True)}


def _lastmod(text: str | None) -> datetime | None:
    """A W3C datetime as an aware datetime, never later than now."""
    if text is None:
        return None
    moment = None
    for form in _SHORT_FORMS:
        try:
            moment = datetime.strptime(text, form)
            break
        except ValueError:
            pass
    if moment is None:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        # A date alone names no zone; the protocol's examples read it as UTC.
        if len(text) > 10:
            raise ValueError(f"{text!r} has a time but no zone")
        moment = moment.replace(tzinfo=timezone.utc)
    return min(moment, datetime.now(timezone.utc))


def count_problems(
    items: Iterator[Item], report: Callable[[Problem], None]
) -> Iterator[Entry]:
    """The entries of ``items``, each problem passed to ``report`` on the way."""
    for item in items:
        if isinstance(item, Problem):
            report(item)
        else:
            yield item
