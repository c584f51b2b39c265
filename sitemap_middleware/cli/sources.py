"""Reading sitemaps that exist elsewhere: an XML sitemap, a sitemap index (its parts
followed from the source's own origin or folder only: :func:`_part`, the one rule),
gzip or not, or a text sitemap, from a file or an http(s) URL, turned into the
entries of one site, each bad one reported rather than fatal. Every document is
read through once (by expat, counting, building nothing) before any entry is given,
so a source refused half-way adds nothing.
"""

from __future__ import annotations

import codecs
import functools
import gzip
import io
import os
import re
import tempfile
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import IO, Any, Literal, Protocol
from urllib.parse import parse_qsl, unquote, urljoin, urlsplit
from xml.etree.ElementTree import Element, ParseError, XMLPullParser
from xml.parsers import expat

from .. import render
from ..model import UNDATED, Entry
from ..render import MAX_PATH_LENGTH
from ..sitemaps import CHANGEFREQS, MAX_URL_LENGTH, is_language_tag
from ..urls import canonical_origin, canonical_target, redacted, split_base_url

SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
URLSET = f"{SITEMAP_NS}urlset"
INDEX = f"{SITEMAP_NS}sitemapindex"
# A root without the namespace is read the same way, its children without it
# too: some generators leave the xmlns out, and the document is plainly one.
ROOTS = {URLSET: SITEMAP_NS, INDEX: SITEMAP_NS, "urlset": "", "sitemapindex": ""}
IMAGE_NS = "{http://www.google.com/schemas/sitemap-image/1.1}"
XHTML_NS = "{http://www.w3.org/1999/xhtml}"
# A read from a URL gives up after this many seconds without data.
TIMEOUT = 30.0
# Seconds a URL may take to send in all (64 MiB at 220 KB/s): a server sending
# a byte now and then never trips TIMEOUT, and would hold an import forever.
FETCH_SECONDS = 300.0
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
# Bytes without a ">" at most: no tag of a sitemap, nor a value of one, comes
# near (a <loc> is under 2,048 characters). Past it the checking pass refuses
# the document before the parser holds the token whole: a start tag of
# 800,000 attributes (7 MB) would otherwise cost 40 times its size to read.
MAX_RUN = 1024 * 1024
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


@dataclass(frozen=True, slots=True)
class _Document:
    """A document read through: where it came from, its file, what its root
    says (the namespace of its elements), and the entries it holds."""

    where: str
    local: _Local
    ns: str
    urls: int


class Reading:
    """A source read through (every document checked): :attr:`total`, the
    entries its documents hold, and :meth:`items`."""

    def __init__(
        self,
        documents: list[_Document],
        problems: list[Problem],
        base_url: str,
        query: frozenset[str],
    ) -> None:
        self._documents = documents
        self._problems = problems
        self._base_url = base_url
        self._query = query
        self.total = sum(document.urls for document in documents)
        """The ``<url>`` elements (or lines) of the documents: the entries
        given, and the problems among them."""

    def items(self) -> Iterator[Item]:
        """The problems found checking, then each document's entries and
        problems, in order."""
        yield from self._problems
        for document in self._documents:
            with _opened(document.local.path, document.where) as stream:
                if _is_text(stream):
                    yield from _text(
                        document.where, stream, self._base_url, self._query
                    )
                else:
                    reader = _Reader(
                        document.where, self._base_url, self._query, document.ns
                    )
                    yield from reader.read(stream)


@contextmanager
def reading(
    source: str, base_url: str, query: frozenset[str] = frozenset()
) -> Iterator[Reading]:
    """``source`` (a path or an http(s) URL) read through, for the site at
    ``base_url``: its :class:`Reading` gives the entries and a
    :class:`Problem` for each one left out: another site, an unreadable
    ``<loc>``, a bad ``lastmod``, ``changefreq`` or ``priority``.

    A sitemap index is followed one level down, as the protocol allows no
    deeper, its parts where :func:`_part` allows: fetched over http(s) from the
    source's own origin when ``source`` is a URL (a redirect away is a
    problem too), read from the source's folder when it is a file; any other
    part is a problem. Query parameters are kept only when named in
    ``query``; a URL that would lose some is a problem.

    Every document is read through (a URL's into a temporary file) before the
    first entry is given: a part that cannot be read is a problem and gives
    nothing; ``source`` itself raises before anything is given.

    :raises SourceError: when ``source`` itself cannot be read.
    """
    with ExitStack() as stack:
        is_url = urlsplit(source).scheme in _HTTP
        top = _fetch(source, None, stack) if is_url else _Local(source, None)
        checked = _check(source, top)
        documents = [_Document(source, top, checked.ns, checked.urls)]
        problems: list[Problem] = []
        # Each part once, however often the index names it: read again, a
        # large part would cost its size once per <loc> of a small index.
        followed: set[str] = set()
        for loc in checked.parts or ():
            part = _part(source, top, loc)
            if isinstance(part, Problem):
                problems.append(part)
                continue
            if part in followed:
                continue
            followed.add(part)
            try:
                if top.url is None:
                    local = _Local(part, None)
                else:
                    local = _fetch(part, _origin(top.url), stack)
                found = _check(part, local)
                if found.parts is not None:
                    raise SourceError("a sitemap index inside a sitemap index")
            except SourceError as exc:
                problems.append(Problem(part, str(exc)))
                continue
            documents.append(_Document(part, local, found.ns, found.urls))
        yield Reading(documents, problems, base_url, query)


@dataclass(frozen=True, slots=True)
class _Local:
    """A document as read: the file holding its bytes, and the URL it came
    from after redirects (``None`` for a file given as a path)."""

    path: str
    url: str | None


_HTTP = ("http", "https")


def _fetch(source: str, origin: str | None, stack: ExitStack) -> _Local:
    """The http(s) URL ``source``, its body copied into a temporary file
    (bounded by :data:`MAX_BYTES`). With ``origin``, a redirect off it is
    refused before it is followed."""
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
            _download(response, copy, source)
        except OSError as exc:  # a reset, a timeout
            raise SourceError(f"cannot read {source}: {exc}") from exc
        url = response.geturl()
    copy.flush()
    return _Local(copy.name, url)


def _download(response: Any, copy: IO[bytes], source: str) -> None:
    """The body into ``copy``, as it comes (``read1``: what has arrived, not a
    full buffer, so that the deadline is looked at between arrivals), at most
    :data:`MAX_BYTES` in at most :data:`FETCH_SECONDS`."""
    deadline = time.monotonic() + FETCH_SECONDS
    left = MAX_BYTES
    while chunk := response.read1(CHUNK):
        left -= len(chunk)
        if left < 0:
            raise SourceError(f"{source} is larger than {MAX_BYTES} bytes")
        if time.monotonic() > deadline:
            raise SourceError(
                f"{source} took more than {FETCH_SECONDS:g} s to send: refused"
            )
        copy.write(chunk)


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only within ``origin`` (any, without one)."""

    def __init__(self, origin: str | None) -> None:
        self._origin = origin

    def redirect_request(
        self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> Any:
        where = f"redirected to {_shown(redacted(newurl))}"
        if urlsplit(newurl).scheme not in _HTTP:
            fp.close()  # the redirect's connection: not followed, not read
            raise SourceError(f"{where}, not http(s)")
        if self._origin is not None and _origin(newurl) != self._origin:
            fp.close()
            raise SourceError(f"{where}, off the origin of the index ({self._origin})")
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
    """The one rule of what a sitemap index may have read: where to read the
    part ``loc`` names, or why it is not read. An index read from a URL
    names URLs on its own origin (scheme, host and port), read over http(s)
    (``loc`` resolved against the index); an index read from a file names
    files in its folder or below (an http(s) URL's file name, or a relative
    path). Anything else, whatever its scheme or spelling, is a problem: an
    index is input from elsewhere, and must not have a file of this machine
    read, nor a request sent elsewhere."""
    try:
        if top.url is not None:
            return _remote_part(top.url, loc)
        return _local_part(source, loc)
    except ValueError:  # urlsplit: a bad IPv6 host, a bad port
        return Problem(_shown(redacted(loc)), "not a URL")


def _remote_part(index: str, loc: str) -> str | Problem:
    url = urljoin(index, loc)
    parts = urlsplit(url)
    origin = _origin(index)
    if parts.scheme not in _HTTP:
        return Problem(
            _shown(redacted(loc)),
            f"not an http(s) URL: an index's parts are read from its origin"
            f" ({origin}) only",
        )
    if "@" in parts.netloc:
        return Problem(
            _shown(redacted(url)),
            "holds user info: an index's parts are read without credentials",
        )
    if _origin(url) != origin:
        return Problem(_shown(url), f"not on the origin of the index ({origin})")
    return url


def _local_part(index: str, loc: str) -> str | Problem:
    parts = urlsplit(loc)
    if parts.scheme in _HTTP and parts.netloc:
        name = unquote(parts.path.rpartition("/")[2])  # its file name
    elif not (parts.scheme or parts.netloc or parts.path.startswith("/")):
        name = unquote(parts.path)
    else:
        return Problem(
            _shown(redacted(loc)),
            "neither an http(s) URL nor a relative path: a file index's parts"
            " are read from its folder only",
        )
    path = os.path.join(os.path.dirname(index), name)
    # Resolved, symbolic links too: ".." or a link must not lead out.
    folder = os.path.realpath(os.path.dirname(index) or ".")
    real = os.path.realpath(path)
    if real == folder or os.path.commonpath([folder, real]) != folder:
        return Problem(
            _shown(loc), "names no file to look for in the index's folder or below"
        )
    return path


@dataclass(frozen=True, slots=True)
class _Checked:
    """What the checking pass learns of a document."""

    parts: list[str] | None
    """The ``<loc>`` of its parts if it is a sitemap index, else ``None``."""
    ns: str
    """The namespace of its elements, as ElementTree spells it (``{...}``), or
    ``""`` for a root without one."""
    urls: int
    """Its ``<url>`` elements (lines of a text sitemap)."""


def _check(source: str, local: _Local) -> _Checked:
    """Read the document through, checking its shape (:func:`_shape`).

    :raises SourceError: it cannot be read, or is no sitemap.
    """
    with _opened(local.path, source) as stream:
        if _is_text(stream):
            # Gunzipped and bounded on the way.
            return _Checked(None, "", sum(1 for line in stream if line.strip()))
        root, urls = _shape(source, stream)
    ns = ROOTS[root]
    if root not in (INDEX, "sitemapindex"):
        return _Checked(None, ns, urls)
    # An index is small (50,000 parts at most): read again for its <loc>s.
    with _opened(local.path, source) as stream:
        elements = _children(source, stream)
        next(elements)
        locs = (_child(e, "loc", ns) for e in elements if e.tag == f"{ns}sitemap")
        return _Checked([loc for loc in locs if loc], ns, 0)


def _shape(source: str, stream: IO[bytes]) -> tuple[str, int]:
    """The root's tag (as ElementTree spells it) and the ``<url>`` children
    of a document read through by expat, which builds nothing: only start and
    end handlers count depth and elements, so that this pass costs a fraction
    of the entries' one. Fed as :func:`_events` feeds.

    :raises SourceError: not well-formed, not a sitemap, nested deeper than
        :data:`MAX_DEPTH`, a child of more than :data:`MAX_ELEMENTS`, a
        ``<url>`` below another element, or more than :data:`MAX_ELEMENTS`
        elements outside any ``<url>`` (the entries' pass keeps those).
    """
    parser = expat.ParserCreate(namespace_separator="}")
    root = url = ""
    depth = elements = urls = stray = starts = 0
    inside = False

    def start(name: str, attributes: object) -> None:
        nonlocal root, url, depth, elements, urls, stray, starts, inside
        depth += 1
        starts += 1
        if depth == 1:
            root = "{" + name if "}" in name else name
            if root not in ROOTS:
                raise SourceError(_not_a_sitemap(source, root))
            url = ROOTS[root][1:] + "url" if ROOTS[root] else "url"
            return
        elements += 1
        if depth == 2:
            inside = name == url
            urls += inside
        elif name == url:
            raise SourceError(f"{source} is not a sitemap: a <url> below the top")
        if not inside:
            stray += 1
        if depth > MAX_DEPTH or elements > MAX_ELEMENTS or stray > MAX_ELEMENTS:
            raise SourceError(
                f"{source} is not a sitemap: elements nested deeper than"
                f" {MAX_DEPTH} or more than {MAX_ELEMENTS:,} in one entry"
            )

    def end(name: str) -> None:
        nonlocal depth, elements
        depth -= 1
        if depth == 1:
            elements = 0

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    size = CHUNK
    run = 0  # bytes since the last ">"
    try:
        while data := stream.read(size):
            first, last = data.find(b">"), data.rfind(b">")
            longest = run + (len(data) if first < 0 else first)
            if first != last:
                longest = max(longest, *map(len, data[first + 1 : last].split(b">")))
            if longest > MAX_RUN:
                raise SourceError(
                    f"{source} is not a sitemap: {longest:,} bytes without a '>'"
                    f" (a tag or a value of a sitemap takes far less than {MAX_RUN:,})"
                )
            run = longest if first < 0 else len(data) - last - 1
            seen = starts
            parser.Parse(data, False)
            size = CHUNK if starts != seen else size * 2
        parser.Parse(b"", True)
    except expat.ExpatError as exc:
        raise SourceError(f"{source} is not well-formed XML: {exc}") from exc
    if not root:
        raise SourceError(f"{source} is not well-formed XML: no element found")
    return root, urls if root in (URLSET, "urlset") else 0


def _not_a_sitemap(source: str, root: str) -> str:
    ns, _, name = root[1:].rpartition("}") if root.startswith("{") else ("", "", root)
    if name in ("urlset", "sitemapindex"):
        return (
            f"{source} is not a sitemap: its root <{name}> is in the namespace "
            f"{ns!r}, not {SITEMAP_NS[1:-1]!r}"
        )
    return f"{source} is not a sitemap (root {root!r})"


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


def _children(source: str, stream: IO[bytes]) -> Iterator[Element]:
    """The root element of a sitemap index, then each child of the root once
    read whole, cleared when the next is asked for (the document was checked
    by :func:`_shape`).

    :raises SourceError: not well-formed.
    """
    try:
        events = _events(stream, ("start", "end"))
        _, root = next(events)
        yield root
        depth = 1
        for event, element in events:
            if event == "start":
                depth += 1
                continue
            depth -= 1
            if depth == 1:
                yield element
                root.clear()
    except ParseError as exc:
        raise SourceError(f"{source} is not well-formed XML: {exc}") from exc


def _events(
    stream: IO[bytes], events: tuple[Literal["start", "end"], ...]
) -> Iterator[tuple[str, Element]]:
    """The parser's ``events``, fed :data:`CHUNK` bytes at a time, doubling
    while a feed brings no event: expat before 2.6 reads an unfinished token
    again from its start at every feed, so that equal feeds cost the square of
    a long token's size (a comment of megabytes took minutes) and doubling
    ones stay linear."""
    parser: XMLPullParser[Element] = XMLPullParser(events=events)
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


# The paths the fast path takes as they are: what normalise_path keeps
# unchanged (RFC 3986 pchar and "/", no percent-encoding, no query), its dot
# segments aside.
_PLAIN_PATH = re.compile(r"/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*").fullmatch


class _Reader:
    """The entries of one ``<urlset>`` document of ``source`` (checked by
    :func:`_shape`) for the site at ``base_url``: each ``<url>`` taken whole
    from the parser's end events, then cleared, so that memory holds one at a
    time. The common ``<url>`` (``loc``, ``lastmod``, ``changefreq``,
    ``priority``, each once, an absolute URL on the base URL's origin with a
    plain path) takes :meth:`entry`'s fast path; the rest :meth:`full`, with
    the same result (tests/cli/test_sources.py proves it)."""

    def __init__(
        self, source: str, base_url: str, query: frozenset[str], ns: str
    ) -> None:
        self.source = source
        self.base_url = base_url
        self.query = query
        self.ns = ns
        self.now = datetime.now(timezone.utc)
        """No lastmod is later than this (the read's start)."""
        self._url = f"{ns}url"
        self._loc = f"{ns}loc"
        self._lastmod = f"{ns}lastmod"
        self._changefreq = f"{ns}changefreq"
        self._priority = f"{ns}priority"
        self._simple = {self._loc, self._lastmod, self._changefreq, self._priority}
        home, prefix = split_base_url(base_url)
        # The fast path compares text: only for a base URL in canonical form.
        canonical = canonical_origin(urlsplit(home)) == home
        self._start = f"{home}{prefix}/" if canonical else None
        self._cut = len(home) + len(prefix)

    def read(self, stream: IO[bytes]) -> Iterator[Item]:
        """The entries and problems of the document in ``stream``.

        :raises SourceError: not well-formed (it was when checked: the file
            changed).
        """
        url = self._url
        try:
            for _, element in _events(stream, ("end",)):
                if element.tag == url:
                    yield self.entry(element)
                    element.clear()
        except ParseError as exc:
            raise SourceError(f"{self.source} is not well-formed XML: {exc}") from exc

    def entry(self, url: Element) -> Item:
        """The entry of one ``<url>``, or its problem."""
        # Each element once, none but the four (the first of a repeated one
        # is what find() gives: the full path reads those).
        children = {child.tag: child.text for child in url}
        if len(children) != len(url) or not children.keys() <= self._simple:
            return self.full(url)
        loc = children.get(self._loc)
        path = None if loc is None else self._plain(loc.strip())
        if path is None:
            return self.full(url)
        text = children.get(self._lastmod)
        try:
            lastmod = None if text is None else _dated(text.strip(), self.now)
        except ValueError:
            return self.full(url)
        changefreq = children.get(self._changefreq)
        if changefreq is not None:
            changefreq = changefreq.strip()
            if changefreq not in CHANGEFREQS:
                return self.full(url)
        text = children.get(self._priority)
        try:
            priority = None if text is None else float(text)
        except ValueError:
            return self.full(url)
        if priority is not None and not 0.0 <= priority <= 1.0:
            return self.full(url)
        # Positional: a frozen dataclass's keywords cost more than the rest.
        return Entry(
            path, UNDATED if lastmod is None else lastmod, None, changefreq, priority
        )

    def _plain(self, loc: str) -> str | None:
        """The stored form of ``loc`` when it is plainly one of the site's
        (what :func:`canonical_target` would give, unchanged), else ``None``:
        the full path decides."""
        start = self._start
        if start is None or not loc.startswith(start):
            return None
        path = loc[self._cut :]
        if (
            "/." in path
            or len(path) > MAX_PATH_LENGTH
            or len(self.base_url) + len(path) > MAX_URL_LENGTH
            or not _PLAIN_PATH(path)
        ):
            return None
        return path

    def full(self, url: Element) -> Item:
        """The entry of any ``<url>``, read in full (images, alternates, any
        URL), or its problem."""
        source, base_url, query, ns = self.source, self.base_url, self.query, self.ns
        loc = _child(url, "loc", ns)
        if not loc:
            return Problem(source, "a <url> without <loc>")
        where = f"{source}: {_shown(loc)}"
        path = _path(loc, base_url, query)
        if isinstance(path, Problem):
            return Problem(where, path.reason)
        try:
            lastmod = _lastmod(_child(url, "lastmod", ns), self.now)
        except ValueError:
            return Problem(
                where, f"lastmod {_child(url, 'lastmod', ns)!r} is no W3C datetime"
            )
        changefreq = _child(url, "changefreq", ns)
        if changefreq is not None and changefreq not in CHANGEFREQS:
            return Problem(
                where, f"changefreq {changefreq!r} is not one of the protocol's"
            )
        priority_text = _child(url, "priority", ns)
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


def _lastmod(text: str | None, now: datetime) -> datetime | None:
    """A W3C datetime as an aware datetime, never later than ``now``."""
    return None if text is None else _dated(text, now)


@functools.lru_cache(maxsize=4096)
def _dated(text: str, now: datetime) -> datetime:
    """:func:`_lastmod` of a text, read once: a sitemap's dates repeat."""
    moment = None
    # A year, or a year and month: longer text is neither (and the common
    # date and datetime skip two failed strptime calls).
    if len(text) <= len("2024-01"):
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
    return min(moment, now)


def count_problems(
    items: Iterator[Item], report: Callable[[Problem], None]
) -> Iterator[Entry]:
    """The entries of ``items``, each problem passed to ``report`` on the way."""
    for item in items:
        if isinstance(item, Problem):
            report(item)
        else:
            yield item
