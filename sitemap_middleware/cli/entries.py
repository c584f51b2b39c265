"""The entries of one sitemap document: each ``<url>`` of a ``<urlset>`` (or each
line of a text sitemap) turned into an entry of one site, or a :class:`Problem`
saying why not; a plain document read by one regex, any other by the XML parser
fed as a checked document is (``cli/sources.py``).
"""

from __future__ import annotations

import codecs
import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import repeat
from typing import IO, Final, Literal
from urllib.parse import parse_qsl, urlsplit
from xml.etree.ElementTree import Element, ParseError, SubElement, XMLPullParser

from .. import render
from ..model import UNDATED, Entry, entries
from ..recording.clusters import declared
from ..render import MAX_PATH_LENGTH
from ..sitemaps import (
    CHANGEFREQS,
    MAX_URL_LENGTH,
    MAX_URLS_PER_PART,
    is_language_tag,
    iso_moment,
)
from ..urls import canonical_origin, canonical_target, split_base_url

SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
IMAGE_NS = "{http://www.google.com/schemas/sitemap-image/1.1}"
XHTML_NS = "{http://www.w3.org/1999/xhtml}"
# Bytes handed to the XML parser at a time while it reports elements; doubled
# while it reports none (see parse_events).
CHUNK = 64 * 1024
# Characters of a refused value a report shows.
SHOWN = 200
_HTTP = ("http", "https")

# W3C datetime forms (https://www.w3.org/TR/NOTE-datetime) that
# datetime.fromisoformat never reads: a year, a year and month.
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


def text_items(
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


def parse_events(
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


def cut_short(value: str) -> str:
    """A value as a report shows it: cut to :data:`SHOWN` characters."""
    return value if len(value) <= SHOWN else value[: SHOWN - 1] + "…"


def child_text(element: Element, name: str, ns: str = SITEMAP_NS) -> str | None:
    found = element.find(f"{ns}{name}")
    if found is None or found.text is None:
        return None
    return found.text.strip()


# A plain <url>, read by a regex where the parser would give the same: the
# sitemap's four elements, each at most once, in the protocol's order (its
# schema's sequence), without attributes, entities, comments or CDATA; their
# text of characters XML allows (§2.2) and no "\r" (which the parser would
# turn into "\n"), no "&" or ">" (an entity, "]]>"). A <loc> plainly of the
# site (see _PLAIN_PATH), and not too long for it, gives its path (group 1),
# any other its text (group 2). Whitespace between elements is anything XML
# calls so.
_TEXT = "[^<&>\r\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]*"
# The same for an ASCII document, where the two are never met: a class of
# ASCII alone is a table the regex engine looks a character up in, about
# twice as fast (the whole regex: 1.7 against 2.9 us a <url>).
_ASCII_TEXT = "[^<&>\r\x00-\x08\x0b\x0c\x0e-\x1f]*"
_GAP = "[ \t\r\n]*"
# An element that may be left out is a branch that takes it or nothing: the
# regex engine takes a branch faster than an optional group, a repeat to it
# (callgrind: 8.2k instructions a <url> against 10.2k).
_PLAIN_URL = (
    "<url>{gap}<loc>"
    "(?:[ \t\n]*{start}(/{path}{{0,{most}}})[ \t\n]*|({text}))</loc>{gap}"
    "(?:<lastmod>({text})</lastmod>{gap}|)"
    "(?:<changefreq>({text})</changefreq>{gap}|)"
    "(?:<priority>({text})</priority>{gap}|)</url>{gap}"
    # Else the rest of the document, from where the plain ones stop (the
    # root's end, or what is not plain): each match begins where the one
    # before ended, and the search never runs on past it.
    "|([\\s\\S]+)"
)
# What may follow the last <url> of a plain document: the root's end.
_PLAIN_END = re.compile(f"</urlset>{_GAP}").fullmatch

# The paths the fast path takes as they are: what normalise_path keeps
# unchanged (RFC 3986 pchar and "/", no percent-encoding, no query), its dot
# segments aside.
_PLAIN_PATH = re.compile(r"/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*").fullmatch


class _Reader:
    """The entries of one ``<urlset>`` document of ``source`` for the site at
    ``base_url``: a plain document's by one regex (:meth:`plain`), any
    other's, once checked by :func:`_shape`, each ``<url>`` taken whole from
    the parser's end events, then cleared, so that memory holds one at a
    time (:meth:`read`). The common ``<url>`` (``loc``, ``lastmod``,
    ``changefreq``, ``priority``, each once, an absolute URL on the base
    URL's origin with a plain path) takes a fast path (:meth:`entry`, and
    :meth:`plain`'s); the rest :meth:`full`, with the same result
    (tests/cli/test_sources.py proves it)."""

    def __init__(
        self,
        source: str,
        base_url: str,
        query: frozenset[str],
        ns: str,
        abroad: tuple[str, ...] = (),
    ) -> None:
        self.source, self.ns = source, ns
        # The site's base URL and the query it keeps; the base URLs of the
        # app's other sites, whose pages an alternate may name (abroad()).
        self.base_url, self.query, self.abroad = base_url, query, abroad
        self.now = datetime.now(timezone.utc)
        """No lastmod is later than this (the read's start)."""
        self._url = f"{ns}url"
        self._loc = f"{ns}loc"
        self._lastmod = f"{ns}lastmod"
        self._changefreq = f"{ns}changefreq"
        self._priority = f"{ns}priority"
        self._tags = (self._loc, self._lastmod, self._changefreq, self._priority)
        self._simple = set(self._tags)
        # The regex of a plain <url>, by whether the document is ASCII.
        self._plain_url: dict[bool, re.Pattern[str]] = {}
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
            for _, element in parse_events(stream, ("end",)):
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

    def plain(self, text: str, start: int) -> list[Item] | None:
        """The entries and problems of a plain ``<urlset>`` document whose
        ``<url>`` elements begin at ``start`` of ``text`` (what precedes
        checked by the caller), read by one regex and held; ``None`` when any
        part of it is not plain (the parser reads it then), or when it holds
        more than :data:`MAX_URLS_PER_PART` (the protocol's limit: what is
        held stays bounded). What the regex takes is well-formed by its
        shape, so that the document needs no checking pass of its own; a
        value the fast path does not take goes to :meth:`full`, as the
        parser's element would.

        The values are taken a column at a time (each distinct date,
        changefreq and priority read once, the entries made by one ``map``):
        a Python loop body per URL cost more than the regex."""
        # Every plain <url> starts so: more of them is no sitemap to hold,
        # counted before any is read.
        if text.count("<url>", start) > MAX_URLS_PER_PART:
            return None
        ascii = text.isascii()
        pattern = self._plain_url.get(ascii)
        if pattern is None:
            start_ = self._start
            # The characters a plain path may hold after its "/", within
            # the limits of a path and of the URL it makes.
            most = min(MAX_PATH_LENGTH, MAX_URL_LENGTH - len(self.base_url)) - 1
            pattern = self._plain_url[ascii] = re.compile(
                _PLAIN_URL.format(
                    gap=_GAP,
                    text=_ASCII_TEXT if ascii else _TEXT,
                    # _PLAIN_PATH's, without "&": XML spells it "&amp;".
                    path=r"[A-Za-z0-9\-._~!$'()*+,;=:@/]",
                    most=max(most, 0),
                    # No plain path without a canonical base URL (nor room
                    # for one): (?!) fails.
                    start="(?!)"
                    if start_ is None or most < 0
                    else re.escape(start_[:-1]),
                )
            )
        # Each match begins where the one before ended (what is not a plain
        # <url> is the rest of the document, the last match): a column of
        # each group, "" for one that took nothing.
        rows = pattern.findall(text, start)
        if not rows or _PLAIN_END(rows[-1][5]) is None:
            return None
        del rows[-1]
        if not rows:
            return []
        paths, _, lastmods, changefreqs, priorities, _ = zip(*rows, strict=True)
        # An empty element's text is None to the parser: no value.
        moments = _moments(lastmods, self.now)
        freqs = _changefreqs(changefreqs)
        numbers = _priorities(priorities)
        items: list[Item] = entries(
            paths,
            map(moments.__getitem__, lastmods),
            repeat(None),
            map(freqs.__getitem__, changefreqs),
            map(numbers.__getitem__, priorities),
        )  # type: ignore[assignment]
        # A value the fast path does not take (the row's element read in
        # full): a <loc> with no plain path (""), a dot segment, a date,
        # changefreq or priority not of the protocol's (a mark in its
        # column). The paths' own "\n" is no character of a plain path.
        if (
            "" in paths
            or "/." in "\n".join(paths)
            or None in moments.values()
            or _BAD in freqs.values()
            or _NO_NUMBER in numbers.values()
        ):
            full, element = self.full, self._element
            for index, entry in enumerate(items):
                assert type(entry) is Entry
                if (
                    not entry.path
                    or "/." in entry.path
                    or entry.lastmod is None
                    or entry.changefreq is _BAD
                    or entry.priority == _NO_NUMBER
                ):
                    items[index] = full(element(rows[index]))
        return items

    def _element(self, row: tuple[str, ...]) -> Element:
        """The ``<url>`` the parser would give for a plain one's ``row`` (an
        element absent and one empty alike: no text; a plain path's
        ``<loc>`` as the base URL and the path, its white space aside, as
        the full reading strips it)."""
        path, loc, *values = row[:5]
        if path:
            assert self._start is not None
            loc = self._start[:-1] + path
        url = Element(self._url)
        for tag, text in zip(self._tags, (loc, *values), strict=True):
            SubElement(url, tag).text = text or None
        return url

    def full(self, url: Element) -> Item:
        """The entry of any ``<url>``, read in full (images, alternates, any
        URL), or its problem."""
        source, base_url, query, ns = self.source, self.base_url, self.query, self.ns
        loc = child_text(url, "loc", ns)
        if not loc:
            return Problem(source, "a <url> without <loc>")
        where = f"{source}: {cut_short(loc)}"
        path = _path(loc, base_url, query)
        if isinstance(path, Problem):
            return Problem(where, path.reason)
        try:
            lastmod = _lastmod(child_text(url, "lastmod", ns), self.now)
        except ValueError:
            return Problem(
                where, f"lastmod {child_text(url, 'lastmod', ns)!r} is no W3C datetime"
            )
        changefreq = child_text(url, "changefreq", ns)
        if changefreq is not None and changefreq not in CHANGEFREQS:
            return Problem(
                where, f"changefreq {changefreq!r} is not one of the protocol's"
            )
        priority_text = child_text(url, "priority", ns)
        try:
            priority = None if priority_text is None else float(priority_text)
        except ValueError:
            return Problem(where, f"priority {priority_text!r} is no number")
        images: list[str] = []
        for image in url.iter(f"{IMAGE_NS}image"):
            src = child_text(image, "loc", IMAGE_NS)
            kept = None if src is None else _image(src, base_url)
            if kept is not None:
                images.append(kept)
        links: list[tuple[str, str]] = []
        for link in url.iter(f"{XHTML_NS}link"):
            hreflang, href = link.get("hreflang"), link.get("href")
            if link.get("rel") != "alternate" or not hreflang or not href:
                continue
            # A sitemap's links are absolute URLs (no page to resolve them on).
            if is_language_tag(hreflang) and urlsplit(href).scheme in _HTTP:
                links.append((hreflang, href))
        entry = Entry(
            path,
            UNDATED if lastmod is None else lastmod,  # no <lastmod>: no date
            changefreq=changefreq,
            priority=priority,
            # Kept as a visit keeps a page's: on the site or another of the
            # app's sites, the query the config keeps.
            alternates=declared(links, base_url, path, query, self.abroad),
            images=tuple(dict.fromkeys(images)),
        )
        try:
            render.fragment(entry, 0)  # what no sitemap may hold fails here
        except ValueError as exc:
            return Problem(where, str(exc))
        return entry


def _path(url: str, base_url: str, query: frozenset[str]) -> str | Problem:
    """The stored form of an absolute URL of the site, or why it has none."""
    if urlsplit(url).scheme not in _HTTP:
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


def _image(url: str, base_url: str) -> str | None:
    """An ``<image:loc>`` as an import keeps it, or ``None``: one on the site
    as its path, its query dropped (cache busters, signed URLs: as a page's
    images are recorded); another host's as given, unless it carries a
    credential (user info) or a query (a token, a signature)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return None
    own = canonical_target(url, base_url, "/", frozenset())
    if own is not None:
        return own
    if "@" in parts.netloc or parts.query:
        return None
    return url


def _names(query: str) -> set[str]:
    return {name for name, _ in parse_qsl(query, keep_blank_values=True)}


def _lastmod(text: str | None, now: datetime) -> datetime | None:
    """A W3C datetime as an aware datetime, never later than ``now``."""
    return None if text is None else _dated(text, now)


def _date(text: str, now: datetime) -> datetime:
    """:func:`_lastmod` of a text (white space around it aside)."""
    try:
        # The usual forms (a date, a datetime with a zone) as they are: one
        # call, where the checks of the rest cost twice what it does.
        moment = iso_moment(text)
    except ValueError:
        text = text.strip()
        moment = _unusual(text)
    if moment.tzinfo is None:
        # A date alone names no zone; the protocol's examples read it as UTC.
        if len(text) > 10:
            raise ValueError(f"{text!r} has a time but no zone")
        moment = moment.replace(tzinfo=timezone.utc)
    return moment if moment <= now else now


def _unusual(text: str) -> datetime:
    """A W3C datetime :func:`iso_moment` does not read as it is: a year, a
    year and month, white space around it (stripped by the caller)."""
    # A year, or a year and month: longer text is neither.
    if len(text) <= len("2024-01"):
        for form in _SHORT_FORMS:
            try:
                return datetime.strptime(text, form)
            except ValueError:
                pass
    return iso_moment(text)


# A sitemap's dates repeat: each text read once.
_dated = functools.lru_cache(maxsize=4096)(_date)


# A value of a column that the fast path does not take: its row is read in
# full. Never a value of an entry (a changefreq of the protocol's, a
# priority from 0 to 1).
_BAD: Final = "\x00"
_NO_NUMBER: Final = -1.0


def _moments(texts: Iterable[str], now: datetime) -> dict[str, datetime | None]:
    """Each distinct ``<lastmod>`` text of a column, as :func:`_date` reads
    it (``None`` where it refuses it); ``""`` (no value) is :data:`UNDATED`."""
    moments: dict[str, datetime | None] = {"": UNDATED}
    for text in set(texts).difference(moments):
        try:
            moments[text] = _date(text, now)
        except ValueError:
            moments[text] = None
    return moments


def _changefreqs(texts: Iterable[str]) -> dict[str, str | None]:
    """Each distinct ``<changefreq>`` text of a column as an entry holds it
    (``None`` for no value), or :data:`_BAD`."""
    found: dict[str, str | None] = {"": None}
    for text in set(texts).difference(found):
        value = text.strip()
        found[text] = value if value in CHANGEFREQS else _BAD
    return found


def _priorities(texts: Iterable[str]) -> dict[str, float | None]:
    """Each distinct ``<priority>`` text of a column as an entry holds it
    (``None`` for no value), or :data:`_NO_NUMBER`."""
    found: dict[str, float | None] = {"": None}
    for text in set(texts).difference(found):
        try:
            number = float(text)
        except ValueError:
            found[text] = _NO_NUMBER
            continue
        found[text] = number if 0.0 <= number <= 1.0 else _NO_NUMBER
    return found
