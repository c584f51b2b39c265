"""Reading sitemaps that exist elsewhere: an XML sitemap, a sitemap index (its parts
followed, from the source's own origin or folder only), gzip or not, or a text
sitemap, from a file or an http(s) URL, turned into the entries of one site, each
bad one reported rather than fatal. Every document is read through once before any
entry is given, so a source refused half-way adds nothing.
"""

from __future__ import annotations

import codecs
import gzip
import io
import os
import shutil
import tempfile
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import IO, Any, Protocol
from urllib.parse import parse_qsl, urljoin, urlsplit
from xml.etree.ElementTree import Element, ParseError, XMLPullParser

from .. import render
from ..model import UNDATED, Entry
from ..sitemaps import CHANGEFREQS, is_language_tag
from ..urls import canonical_target

SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
URLSET = f"{SITEMAP_NS}urlset"
INDEX = f"{SITEMAP_NS}sitemapindex"
IMAGE_NS = "{http://www.google.com/schemas/sitemap-image/1.1}"
XHTML_NS = "{http://www.w3.org/1999/xhtml}"
# A read from a URL gives up after this many seconds without data.
TIMEOUT = 30.0
# The protocol's limit on an uncompressed sitemap (sitemaps.org: 50 MB), with
# room: what is larger is no sitemap and is not read to its end.
MAX_BYTES = 64 * 1024 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
# Bytes handed to the XML parser at a time while it reports elements; doubled
# while it reports none (see _events).
CHUNK = 64 * 1024
# Elements nest this deep at most: the deepest of the sitemap protocol and its
# extensions (urlset, url, news:news, news:publication, news:name) is 5.
MAX_DEPTH = 16
# Elements one <url> or <sitemap> holds at most: 1,000 images of a few
# elements each and the alternates of a large hreflang cluster fit.
MAX_ELEMENTS = 20_000
# Characters of a refused value a report shows.
SHOWN = 200

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
    deeper: its parts are fetched from the source's own origin when ``source``
    is a URL (a part elsewhere, or a redirect away, is a problem), looked for
    beside it (by file name) when it is a file. Query parameters are kept only
    when named in ``query``; a URL that would lose some is a problem.

    Every document is read through (a URL's into a temporary file) before the
    first entry is given: a part that cannot be read is a problem and gives
    nothing; ``source`` itself raises before anything is given.

    :raises SourceError: when ``source`` itself cannot be read.
    """
    with ExitStack() as stack:
        top = _fetch(source, None, stack)
        parts = _check(source, top)
        documents = [(source, top)]
        # Each part once, however often the index names it: read again, a
        # large part would cost its size once per <loc> of a small index.
        followed: set[str] = set()
        for loc in parts or ():
            part = _part(source, top, loc)
            if isinstance(part, Problem):
                yield part
                continue
            if part in followed:
                continue
            followed.add(part)
            try:
                local = _fetch(part, _origin(top.url), stack)
                if _check(part, local) is not None:
                    raise SourceError("a sitemap index inside a sitemap index")
            except SourceError as exc:
                yield Problem(part, str(exc))
                continue
            documents.append((part, local))
        for where, local in documents:
            with _opened(local.path, where) as stream:
                if _is_text(stream):
                    yield from _text(where, stream, base_url, query)
                else:
                    yield from _xml(where, stream, base_url, query)


@dataclass(frozen=True, slots=True)
class _Local:
    """A document as read: the file holding its bytes, and the URL it came
    from after redirects (``None`` for a file given as a path)."""

    path: str
    url: str | None


def _fetch(source: str, origin: str | None, stack: ExitStack) -> _Local:
    """``source`` as a local file: a path as it is, a URL's body copied into
    a temporary file (bounded by :data:`MAX_BYTES`). With ``origin``, a URL
    elsewhere, or a redirect to one, is refused before it is requested."""
    if urlsplit(source).scheme not in ("http", "https"):
        return _Local(source, None)
    if origin is not None and _origin(source) != origin:
        raise SourceError(f"not on the origin of the index ({origin})")
    request = urllib.request.Request(
        source, headers={"User-Agent": "sitemap-middleware"}
    )
    opener = urllib.request.build_opener(_Redirects(origin))
    try:
        response = opener.open(request, timeout=TIMEOUT)
    except urllib.error.HTTPError as exc:
        exc.close()  # it holds the error response's connection
        raise SourceError(f"cannot read {source}: {exc}") from None
    except (OSError, ValueError) as exc:
        raise SourceError(f"cannot read {source}: {exc}") from exc
    copy = stack.enter_context(tempfile.NamedTemporaryFile(suffix=".sitemap"))  # noqa: SIM115
    with response:
        try:
            shutil.copyfileobj(_Bounded(response, source), copy)
        except OSError as exc:  # a reset, a timeout
            raise SourceError(f"cannot read {source}: {exc}") from exc
        url = response.geturl()
    copy.flush()
    return _Local(copy.name, url)


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only within ``origin`` (any, without one)."""

    def __init__(self, origin: str | None) -> None:
        self._origin = origin

    def redirect_request(
        self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> Any:
        if self._origin is not None and _origin(newurl) != self._origin:
            raise SourceError(
                f"redirected to {_shown(newurl)}, off the origin of the index"
                f" ({self._origin})"
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _origin(url: str | None) -> str | None:
    """``scheme://host:port`` of an http(s) URL, the port spelt out."""
    if url is None:
        return None
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return "?"
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port}"


def _part(source: str, top: _Local, loc: str) -> str | Problem:
    """Where to read the part an index names: ``loc`` itself for an index
    read from a URL (resolved against it; its origin is checked when read),
    the file of the same name beside a file index."""
    if top.url is not None:
        return urljoin(top.url, loc)
    name = os.path.basename(urlsplit(loc).path)
    if name in ("", ".", ".."):
        return Problem(_shown(loc), "names no file to look for beside the index")
    return os.path.join(os.path.dirname(source), name)


def _check(source: str, local: _Local) -> list[str] | None:
    """Read the document through: the ``<loc>`` of its parts if it is a
    sitemap index, else ``None``.

    :raises SourceError: it cannot be read, or is no sitemap.
    """
    with _opened(local.path, source) as stream:
        if _is_text(stream):
            for _ in stream:  # gunzipped and bounded on the way
                pass
            return None
        elements = _children(source, stream)
        root = next(elements)
        if root.tag == INDEX:
            locs = (
                _child(e, "loc") for e in elements if e.tag == f"{SITEMAP_NS}sitemap"
            )
            return [loc for loc in locs if loc]
        for _ in elements:
            pass
        return None


def _is_text(stream: io.BufferedReader[Any]) -> bool:
    # A UTF-8 file may start with a byte order mark (editors on Windows).
    return stream.peek(64).removeprefix(codecs.BOM_UTF8).lstrip()[:1] != b"<"


@contextmanager
def _opened(path: str, source: str) -> Iterator[io.BufferedReader[_Bounded]]:
    """The file at ``path`` as a buffered byte stream, gunzipped when it is
    gzip; ``source`` names it in errors."""
    try:
        raw = open(path, "rb")  # noqa: SIM115 - closed below
    except (OSError, ValueError) as exc:
        raise SourceError(f"cannot read {source}: {exc}") from exc
    with raw:
        stream = io.BufferedReader(_Bounded(raw, source))
        if stream.peek(2)[:2] == _GZIP_MAGIC:
            unzipped = gzip.GzipFile(fileobj=stream)
            stream = io.BufferedReader(_Bounded(unzipped, source))
        try:
            yield stream
        except (OSError, EOFError, zlib.error) as exc:  # broken gzip
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


def _text(
    source: str, stream: IO[bytes], base_url: str, query: frozenset[str]
) -> Iterator[Item]:
    # A text sitemap: one URL a line, UTF-8 (sitemaps.org, "Text file").
    for number, raw in enumerate(stream, 1):
        line = (raw.removeprefix(codecs.BOM_UTF8) if number == 1 else raw).strip()
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
    source: str, stream: IO[bytes], base_url: str, query: frozenset[str]
) -> Iterator[Item]:
    """The entries of a ``<urlset>`` (none of an index: its parts give them)."""
    elements = _children(source, stream)
    if next(elements).tag == URLSET:
        for element in elements:
            if element.tag == f"{SITEMAP_NS}url":
                yield _entry(source, element, base_url, query)


def _children(source: str, stream: IO[bytes]) -> Iterator[Element]:
    """The root element of a sitemap or sitemap index, then each child of the
    root once read whole, cleared when the next is asked for: memory holds
    one ``<url>`` at a time, whatever the document's size.

    :raises SourceError: not well-formed, not a sitemap, nested deeper than
        :data:`MAX_DEPTH` or a child of more than :data:`MAX_ELEMENTS`.
    """
    try:
        events = _events(stream)
        _, root = next(events)
        if root.tag not in (URLSET, INDEX):
            raise SourceError(f"{source} is not a sitemap (root {root.tag!r})")
        yield root
        depth, elements = 1, 0
        for event, element in events:
            if event == "start":
                depth += 1
                elements += 1
                if depth > MAX_DEPTH or elements > MAX_ELEMENTS:
                    raise SourceError(
                        f"{source} is not a sitemap: elements nested deeper than"
                        f" {MAX_DEPTH} or more than {MAX_ELEMENTS:,} in one entry"
                    )
                continue
            depth -= 1
            if depth == 1:
                yield element
                root.clear()
                elements = 0
    except ParseError as exc:
        raise SourceError(f"{source} is not well-formed XML: {exc}") from exc


def _events(stream: IO[bytes]) -> Iterator[tuple[str, Element]]:
    """The parser's start and end events, fed :data:`CHUNK` bytes at a time,
    doubling while a feed brings no event: expat before 2.6 reads an
    unfinished token again from its start at every feed, so that equal feeds
    cost the square of a long token's size (a comment of megabytes took
    minutes) and doubling ones stay linear."""
    parser: XMLPullParser[Element] = XMLPullParser(events=("start", "end"))
    size = CHUNK
    while data := stream.read(size):
        parser.feed(data)
        size *= 2
        for event in parser.read_events():
            size = CHUNK
            yield event  # type: ignore[misc]
    parser.close()
    yield from parser.read_events()  # type: ignore[misc]


def _shown(value: str) -> str:
    """A value as a report shows it: cut to :data:`SHOWN` characters."""
    return value if len(value) <= SHOWN else value[: SHOWN - 1] + "…"


def _child(element: Element, name: str, ns: str = SITEMAP_NS) -> str | None:
    found = element.find(f"{ns}{name}")
    if found is None or found.text is None:
        return None
    return found.text.strip()


def _entry(source: str, url: Element, base_url: str, query: frozenset[str]) -> Item:
    loc = _child(url, "loc")
    if not loc:
        return Problem(source, "a <url> without <loc>")
    where = f"{source}: {_shown(loc)}"
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
