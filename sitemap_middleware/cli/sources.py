"""Reading sitemaps that exist elsewhere: an XML sitemap, a sitemap index (its parts
followed from the source's own origin or folder only: :func:`_part`, the one rule),
gzip or not, or a text sitemap, from a file or an http(s) URL, turned into the
entries of one site (``cli/entries.py``), each bad one reported rather than fatal.
Every document is read through before any of its entries is given, so a document
refused half-way adds nothing: a plain one (:func:`_staged`) read once and held,
any other checked through first (by expat, counting, building nothing), then read.
"""

from __future__ import annotations

import codecs
import gzip
import io
import os
import re
import tempfile
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import IO, Any, Protocol
from urllib.parse import unquote, urljoin, urlsplit
from xml.etree.ElementTree import Element, ParseError
from xml.parsers import expat

from ..urls import redacted
from .entries import (
    CHUNK,
    SITEMAP_NS,
    Item,
    Problem,
    SourceError,
    _Reader,
    child_text,
    cut_short,
    parse_events,
    text_items,
)

URLSET = f"{SITEMAP_NS}urlset"
INDEX = f"{SITEMAP_NS}sitemapindex"
# A root without the namespace is read the same way, its children without it
# too: some generators leave the xmlns out, and the document is plainly one.
ROOTS = {URLSET: SITEMAP_NS, INDEX: SITEMAP_NS, "urlset": "", "sitemapindex": ""}
# A read from a URL gives up after this many seconds without data.
TIMEOUT = 30.0
# Seconds a URL may take to send in all (64 MiB at 220 KB/s): a server sending
# a byte now and then never trips TIMEOUT, and would hold an import forever.
FETCH_SECONDS = 300.0
# The protocol's limit on an uncompressed sitemap (sitemaps.org: 50 MB), with
# room: what is larger is no sitemap and is not read to its end.
MAX_BYTES = 64 * 1024 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
# Elements nest this deep at most: the deepest of the sitemap protocol and its
# extensions (urlset, url, news:news, news:publication, news:name) is 5.
MAX_DEPTH = 16
# Elements one <url> or <sitemap> holds at most: 1,000 images of a few
# elements each and the alternates of a large hreflang cluster fit.
MAX_ELEMENTS = 20_000
# The uncompressed bytes of a document read whole for its plain reading
# (_staged): a sitemap of the protocol's 50,000 URLs takes a fraction of it.
# A larger document is checked, then read as it comes.
PLAIN_BYTES = 32 * 1024 * 1024
# What may precede the first <url> of a plain document: a byte order mark, an
# XML declaration of version 1.0 and UTF-8 (the bytes are decoded as such), and
# the root's start tag with plain attributes (expat checks them: _staged).
_GAP = "[ \t\r\n]"
_PLAIN_HEAD = re.compile(
    f"\ufeff?(?:<\\?xml{_GAP}+version=([\"'])1\\.0\\1"
    f"(?:{_GAP}+encoding=([\"'])(?i:utf-8)\\2)?"
    f"(?:{_GAP}+standalone=([\"'])(?:yes|no)\\3)?{_GAP}*\\?>)?{_GAP}*"
    f"<urlset(?:{_GAP}+[^\\s<>&\"'=/]+{_GAP}*={_GAP}*(?:\"[^<&\"]*\"|'[^<&']*'))*{_GAP}*>"
    f"{_GAP}*"
).match
# Bytes without a ">" at most: no tag of a sitemap, nor a value of one, comes
# near (a <loc> is under 2,048 characters). Past it the checking pass refuses
# the document before the parser holds the token whole: a start tag of
# 800,000 attributes (7 MB) would otherwise cost 40 times its size to read.
MAX_RUN = 1024 * 1024


@dataclass(frozen=True, slots=True)
class _Document:
    """A document read through: where it came from, its file, what its root
    says (the namespace of its elements), and the entries it holds; with
    ``items``, those entries, held (a plain document's, read once)."""

    where: str
    local: _Local
    ns: str
    urls: int
    items: list[Item] | None = None


class Reading:
    """A source read through: :attr:`total`, the entries its documents hold
    (``None`` for an index, whose parts are read in turn), and
    :meth:`items`."""

    def __init__(
        self,
        documents: list[_Document],
        problems: list[Problem],
        base_url: str,
        query: frozenset[str],
        parts: tuple[_Local, list[str]] | None = None,
        abroad: tuple[str, ...] = (),
    ) -> None:
        self._documents = documents
        self._problems = problems
        self._base_url = base_url
        self._query = query
        self._parts = parts
        self._abroad = abroad
        self.total = None if parts else sum(d.urls for d in documents)
        """The ``<url>`` elements (or lines) of the documents: the entries
        given, and the problems among them."""

    def items(self) -> Iterator[Item]:
        """The problems found reading the source, then each document's
        entries and problems, in order: an index's parts one at a time, each
        read through before its first entry (a part that cannot be read, a
        problem in its turn)."""
        yield from self._problems
        for document in self._documents:
            yield from self._read(document)
        if self._parts is None:
            return
        top, parts = self._parts
        for part in parts:
            # A part's copy goes once it is read: an index of many large
            # parts holds one on disk at a time.
            with ExitStack() as stack:
                try:
                    if top.url is None:
                        local = _Local(part, None)
                    else:
                        local = _fetch(part, _origin(top.url), stack)
                    document = _document(part, local, self._base_url, self._query)
                except SourceError as exc:
                    yield Problem(part, str(exc))
                    continue
                yield from self._read(document)

    def _read(self, document: _Document) -> Iterator[Item]:
        if document.items is not None:
            yield from document.items
            return
        with _opened(document.local.path, document.where) as stream:
            if _is_text(stream):
                yield from text_items(
                    document.where, stream, self._base_url, self._query
                )
            else:
                reader = _Reader(
                    document.where,
                    self._base_url,
                    self._query,
                    document.ns,
                    self._abroad,
                )
                yield from reader.read(stream)


@contextmanager
def reading(
    source: str,
    base_url: str,
    query: frozenset[str] = frozenset(),
    abroad: tuple[str, ...] = (),
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
    ``query``; a URL that would lose some is a problem. An hreflang
    alternate is kept as a visit keeps it (``recording.clusters.declared``):
    on the site, or on one of ``abroad``, the other sites' base URLs.

    Every document is read through (a URL's into a temporary file) before the
    first of its entries is given: a part that cannot be read is a problem
    and gives nothing; ``source`` itself raises before anything is given.

    :raises SourceError: when ``source`` itself cannot be read.
    """
    with ExitStack() as stack:
        is_url = urlsplit(source).scheme in _HTTP
        top = _fetch(source, None, stack) if is_url else _Local(source, None)
        document = _document(source, top, base_url, query, index=True)
        if document.items is not None or document.ns != _INDEX:
            yield Reading([document], [], base_url, query, None, abroad)
            return
        problems: list[Problem] = []
        # Each part once, however often the index names it: read again, a
        # large part would cost its size once per <loc> of a small index.
        parts: dict[str, None] = {}
        for loc in _locs(source, top):
            part = _part(source, top, loc)
            if isinstance(part, Problem):
                problems.append(part)
            else:
                parts[part] = None
        yield Reading([], problems, base_url, query, (top, list(parts)), abroad)


# The namespace a _Document of an index is given: its parts are read apart.
_INDEX = "index"


def _document(
    source: str,
    local: _Local,
    base_url: str,
    query: frozenset[str],
    index: bool = False,
) -> _Document:
    """The document at ``local`` read through: a plain one held
    (:func:`_staged`), any other checked (:func:`_check`); an index, where
    ``index`` allows one (else it is refused), as a document of namespace
    :data:`_INDEX`.

    :raises SourceError: it cannot be read, or is no sitemap.
    """
    staged = _staged(source, local, base_url, query)
    if staged is not None:
        return _Document(source, local, "", len(staged), staged)
    found = _check(source, local)
    if found.parts is None:
        return _Document(source, local, found.ns, found.urls)
    if not index:
        raise SourceError("a sitemap index inside a sitemap index")
    return _Document(source, local, _INDEX, 0)


def _staged(
    source: str, local: _Local, base_url: str, query: frozenset[str]
) -> list[Item] | None:
    """The entries and problems of a plain ``<urlset>`` (``_Reader.plain``):
    UTF-8, at most :data:`PLAIN_BYTES`, its head what :data:`_PLAIN_HEAD`
    takes and expat finds well-formed, every ``<url>`` plain; read once and
    held, so that it needs no checking pass. ``None`` for any other document.

    :raises SourceError: it cannot be read (as :func:`_check` would).
    """
    with _opened(local.path, source) as stream:
        if _is_text(stream):
            return None
        data = stream.read(PLAIN_BYTES + 1)
    if len(data) > PLAIN_BYTES:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    head = _PLAIN_HEAD(text)
    if head is None:
        return None
    try:
        root, _ = _shape(source, io.BytesIO(f"{head.group()}</urlset>".encode()))
    except SourceError:
        return None  # the checking pass says why
    reader = _Reader(source, base_url, query, ROOTS[root])
    return reader.plain(text, head.end())


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
        where = f"redirected to {cut_short(redacted(newurl))}"
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
        return Problem(cut_short(redacted(loc)), "not a URL")


def _remote_part(index: str, loc: str) -> str | Problem:
    url = urljoin(index, loc)
    parts = urlsplit(url)
    origin = _origin(index)
    if parts.scheme not in _HTTP:
        return Problem(
            cut_short(redacted(loc)),
            f"not an http(s) URL: an index's parts are read from its origin"
            f" ({origin}) only",
        )
    if "@" in parts.netloc:
        return Problem(
            cut_short(redacted(url)),
            "holds user info: an index's parts are read without credentials",
        )
    if _origin(url) != origin:
        return Problem(cut_short(url), f"not on the origin of the index ({origin})")
    return url


def _local_part(index: str, loc: str) -> str | Problem:
    parts = urlsplit(loc)
    if parts.scheme in _HTTP and parts.netloc:
        name = unquote(parts.path.rpartition("/")[2])  # its file name
    elif not (parts.scheme or parts.netloc or parts.path.startswith("/")):
        name = unquote(parts.path)
    else:
        return Problem(
            cut_short(redacted(loc)),
            "neither an http(s) URL nor a relative path: a file index's parts"
            " are read from its folder only",
        )
    path = os.path.join(os.path.dirname(index), name)
    # Resolved, symbolic links too: ".." or a link must not lead out.
    folder = os.path.realpath(os.path.dirname(index) or ".")
    real = os.path.realpath(path)
    if real == folder or os.path.commonpath([folder, real]) != folder:
        return Problem(
            cut_short(loc), "names no file to look for in the index's folder or below"
        )
    return path


@dataclass(frozen=True, slots=True)
class _Checked:
    """What the checking pass learns of a document."""

    parts: list[str] | None
    """``[]`` if it is a sitemap index (:func:`_locs` reads its parts),
    else ``None``."""
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
    return _Checked([], ns, 0)


def _locs(source: str, local: _Local) -> list[str]:
    """The ``<loc>`` of each part of a checked sitemap index: an index is
    small (50,000 parts at most), read again for them."""
    with _opened(local.path, source) as stream:
        elements = _children(source, stream)
        root = next(elements)
        ns = ROOTS[root.tag]
        locs = (child_text(e, "loc", ns) for e in elements if e.tag == f"{ns}sitemap")
        return [loc for loc in locs if loc]


def _shape(source: str, stream: IO[bytes]) -> tuple[str, int]:
    """The root's tag (as ElementTree spells it) and the ``<url>`` children
    of a document read through by expat, which builds nothing: only start and
    end handlers count depth and elements, so that this pass costs a fraction
    of the entries' one. Fed as :func:`parse_events` feeds.

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


def _children(source: str, stream: IO[bytes]) -> Iterator[Element]:
    """The root element of a sitemap index, then each child of the root once
    read whole, cleared when the next is asked for (the document was checked
    by :func:`_shape`).

    :raises SourceError: not well-formed.
    """
    try:
        events = parse_events(stream, ("start", "end"))
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
