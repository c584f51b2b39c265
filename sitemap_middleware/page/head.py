"""The head scanner: what a page's ``<head>`` and its ``Link`` header declare
about it (robots noindex, the canonical, hreflang alternates, the modified and
published times, the title, the site's name and language), read within a
budget in the character encoding the page declares: a plain head by a few
regexes, any other with the standard library's HTML tokenizer, whose reading
the regexes keep.
"""

from __future__ import annotations

import codecs
import functools
import json
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from html import unescape
from html.parser import HTMLParser
from urllib.parse import urljoin

from ..sitemaps import is_language_tag, is_noindex
from .links import link_values, param

# The head is read no further than this. A head that goes on past it is
# flagged (Head.truncated) and its page not recorded: a noindex may follow.
# 64 KiB holds the heads of nearly every page, inline scripts and styles
# included, and bounds the tokenizer's time (about 30 ms for 64 KiB of tags).
HEAD_BUDGET = 64 * 1024
# Characters of Link header read per response, all field lines together.
LINK_BUDGET = 32 * 1024
# Alternates kept per page: more than any real set of locales, few enough to
# bound a record.
MAX_ALTERNATES = 100
ROBOTS_NAMES = frozenset({"robots", "googlebot", "bingbot"})
# Open Graph's article property (https://ogp.me/#type_article). Not
# og:updated_time: it is not in the protocol, and themes fill it with the
# whole site's last change, which says nothing about this page.
MODIFIED_PROPERTY = "article:modified_time"
# What a news sitemap says of an article (Open Graph's article and website
# properties): when it was published, and the name of the site.
PUBLISHED_PROPERTY = "article:published_time"
SITE_NAME_PROPERTY = "og:site_name"
# JSON-LD in the head (https://www.w3.org/TR/json-ld11/#embedding-json-ld-in-html-documents):
# schema.org's dateModified and datePublished of a top-level object or of the
# items of its @graph (the way Yoast and most CMS plugins write a page's
# WebPage and Article). At most this many values of each are kept a page.
MAX_DATES = 16
JSON_LD_DATES = ("dateModified", "datePublished")
# The quick scan decodes this much of the body first: most heads end within
# it, and decoding the whole budget would cost more than reading them.
QUICK_BYTES = 8 * 1024
# HTML, "prescan a byte stream to determine its encoding": a <meta> charset
# counts in the first 1024 bytes only (where HTML requires it to be).
PRESCAN_BYTES = 1024


@dataclass(frozen=True, slots=True)
class Head:
    """What a response declares about its page.

    ``noindex``: a robots, googlebot or bingbot meta tag says ``noindex`` or
    ``none``. ``canonicals``: the canonical hrefs declared, the first of each
    source (see :func:`merge`); the page is its own canonical only if every
    one names it. ``alternates``: ``(hreflang, href)`` pairs, the first per
    language, at most :data:`MAX_ALTERNATES`. ``modified``: the unparsed
    ``article:modified_time``. Hrefs are as written; a head's are resolved
    against its ``<base href>`` if it has one. ``truncated``: the head goes
    on past the budget, so what it declares is not all known (never set with
    ``noindex``, which no later tag can undo). ``title``: the text of the
    first ``<title>``, entities decoded, as written (see ``titles.clean``).
    ``date_modified`` and ``date_published``: the unparsed ``dateModified``
    and ``datePublished`` values of the head's JSON-LD, in order.
    ``encoding``: the Python codec the head was read with
    (:func:`encoding_of`), for whatever else reads the body's text.
    ``published``: the unparsed ``article:published_time``; ``site_name``:
    the ``og:site_name``; ``lang``: the ``<html lang>`` (each the first one,
    as written, ``None`` when absent or blank).
    """

    noindex: bool = False
    canonicals: tuple[str, ...] = ()
    alternates: tuple[tuple[str, str], ...] = ()
    modified: str | None = None
    truncated: bool = False
    title: str | None = None
    date_modified: tuple[str, ...] = ()
    encoding: str = "utf-8"
    published: str | None = None
    site_name: str | None = None
    lang: str | None = None
    date_published: tuple[str, ...] = ()

    @property
    def canonical(self) -> str | None:
        """The first canonical href declared, or ``None``."""
        return self.canonicals[0] if self.canonicals else None


NOTHING = Head()


def scan_head(
    chunks: Iterable[bytes],
    budget: int = HEAD_BUDGET,
    charset: str | None = None,
    *,
    quick: bool = True,
) -> Head:
    """Read the ``<head>`` at the start of an HTML body.

    The bytes are decoded as the page declares (:func:`encoding_of`, given
    ``charset``, the ``Content-Type`` header's parameter, if any).

    Only the head counts: the same tags in the body are content (user text,
    say), not declarations. The head ends at ``</head>``, ``<body>``, text, or
    any other element a head may not hold (where Google stops reading it
    too). The first canonical link and the first ``<base href>`` win. A head
    still open where the budget cuts the body is ``truncated``. Attribute
    values are read as HTML decodes them (``&#110;oindex`` is ``noindex``).
    The result depends on the bytes only, not on how they are split into
    chunks. ``quick=False`` reads every head with html.parser (what the
    quick scan is checked against).
    Raises on no markup: where the tokenizer gives up (see
    :func:`_tokenizer_gave_up`), what it read before stands. Any other
    exception is a bug in the scanner and propagates.
    """
    pieces: list[bytes] = []
    left = budget
    for chunk in chunks:
        pieces.append(chunk[: max(left, 0)])
        left -= len(pieces[-1])
        if left <= 0:
            break
    start = b"".join(pieces)
    # The budget is spent: the body may go on (no chunk more is pulled to
    # know, and a head open at exactly the budget's end counts as cut).
    cut = left <= 0
    encoding = encoding_of(charset, start)
    plain = encoding == "utf-8"
    # Without a declaration or a title in the part read, a body that goes on past it
    # still needs the tokenizer: only it tells where the head ends. The search
    # is on bytes: it holds for an encoding that writes ASCII as ASCII.
    # A "<title" as most pages write it sends the page on without the
    # lowering (a copy of the whole budget) that the searches need.
    if _ascii_compatible(encoding) and not cut and b"<title" not in start:
        lowered = start.lower()
        if not _may_declare(lowered) and b"<title" not in lowered and not cut:
            return NOTHING if plain else Head(encoding=encoding)
    # The plain head most pages have is read by a few regexes, from the
    # first few KiB decoded, then from all if the head goes on; whatever they
    # are not sure to read as html.parser does goes to html.parser itself.
    ended = False
    text = None
    if quick:
        parser = _HeadParser()
        ended = _quick_scan(parser, decode(start[:QUICK_BYTES], encoding))
        if not ended and len(start) > QUICK_BYTES:
            text = decode(start, encoding)
            parser = _HeadParser()
            ended = _quick_scan(parser, text)
    if not ended:
        text = decode(start, encoding) if text is None else text
        parser = _HeadParser()
        ended = False
        try:
            parser.feed(text)
        except _HeadEnd:
            ended = True
        except AssertionError as exc:
            if not _tokenizer_gave_up(exc):
                raise
    head = parser.result()
    if not plain:
        head = replace(head, encoding=encoding)
    if cut and not ended and not head.noindex:
        return replace(head, truncated=True)
    return head


# A byte order mark and the encoding it names (HTML, "BOM sniff").
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_META_CHARSET = re.compile(
    rb"<meta\b[^>]*?\bcharset\s*=\s*[\"']?\s*([A-Za-z0-9_.:()+-]+)", re.IGNORECASE
)
# Codecs that are no character encoding of the web, though Python names them:
# read as one, a page could say what no browser reads in it (UTF-7 decodes
# "+ADw-" as "<"; the WHATWG Encoding Standard maps it to nothing).
_NOT_WEB = frozenset(
    {
        "utf-7",
        "idna",
        "punycode",
        "unicode-escape",
        "raw-unicode-escape",
        "undefined",
        "charmap",
    }
)


def encoding_of(charset: str | None, start: bytes) -> str:
    """The Python codec a page is read with, in the order of HTML's
    "encoding sniffing algorithm": a byte order mark, else ``charset`` (the
    ``Content-Type`` header's), else a ``<meta charset>`` or ``<meta
    http-equiv="Content-Type" content="...; charset=...">`` within the first
    :data:`PRESCAN_BYTES`, else UTF-8. A charset no codec knows counts as
    none. Never raises."""
    for bom, name in _BOMS:
        if start.startswith(bom):
            return name
    if charset is not None:
        found = _codec(charset)
        if found is not None:
            # HTML: a "utf-16" label without a byte order mark is little-endian.
            return "utf-16-le" if found == "utf-16" else found
    match = _META_CHARSET.search(start, 0, PRESCAN_BYTES)
    if match is not None:
        found = _codec(match.group(1).decode("ascii"))
        if found is not None:
            # HTML, "prescan": a page read in ASCII to find its <meta> is no
            # UTF-16 page, whatever the tag says.
            return "utf-8" if found.startswith("utf-16") else found
    return "utf-8"


# The codecs the WHATWG Encoding Standard reads a label's pages with, where
# Python's codec of that name is narrower: browsers read each label as the
# superset its sites write in (ISO-8859-1 and ASCII as windows-1252,
# Shift_JIS with the NEC and IBM characters of windows-31j, EUC-KR as
# windows-949, GB2312 and GBK as GB18030, Big5 with HKSCS), so a page
# labelled with the narrower name holds characters only the wider one reads.
_WHATWG = {
    "iso8859-1": "cp1252",
    "ascii": "cp1252",
    "iso8859-9": "cp1254",
    "tis-620": "cp874",
    "iso8859-11": "cp874",
    "shift_jis": "cp932",
    "euc_kr": "cp949",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "big5": "big5hkscs",
}
# Labels of the Encoding Standard that Python does not know by that name.
_LABELS = {
    "windows-31j": "cp932",
    "x-sjis": "cp932",
    "x-euc-jp": "euc_jp",
    "x-gbk": "gb18030",
    "windows-874": "cp874",
    "x-cp1252": "cp1252",
    "x-mac-cyrillic": "mac-cyrillic",
    "iso-8859-8-i": "iso8859-8",
    "unicode-1-1-utf-8": "utf-8",
}


@functools.lru_cache(maxsize=64)
def _codec(label: str) -> str | None:
    """The codec of a charset label, or ``None`` (unknown, not text, not
    the web's), read as browsers read it (:data:`_WHATWG`)."""
    label = label.strip()
    label = _LABELS.get(label.lower(), label)
    try:
        name = codecs.lookup(label).name
        "<".encode(name)  # LookupError for a codec of bytes to bytes (base64)
    except (LookupError, ValueError):  # ValueError: a NUL in the label
        return None
    if name in _NOT_WEB or name.startswith("utf-32"):
        return None
    return _WHATWG.get(name, name)


@functools.lru_cache(maxsize=64)
def _ascii_compatible(encoding: str) -> bool:
    """Whether ``encoding`` writes the ASCII of markup as ASCII bytes, so
    that the markup can be searched for in the undecoded bytes."""
    probe = "<meta name=robots content=noindex>&#;_:"
    try:
        return probe.encode(encoding) == probe.encode("ascii")
    except (UnicodeError, LookupError):
        return False


def decode(data: bytes, encoding: str) -> str:
    """``data`` as text in ``encoding`` (from :func:`encoding_of`), a byte
    it cannot read replaced, a UTF-8 byte order mark dropped (it is not
    text, HTML "decode"). Never raises."""
    if encoding == "utf-8":
        # utf-8-sig: a byte order mark is not text (HTML, "decode").
        return data.decode("utf-8-sig", "replace")
    try:
        text = data.decode(encoding, "replace")
    except (UnicodeError, LookupError):  # a codec without "replace"
        return data.decode("utf-8", "replace")
    return text[1:] if text.startswith("\ufeff") else text


def scan_link_header(values: Iterable[str | bytes], budget: int = LINK_BUDGET) -> Head:
    """Read the ``Link`` header field lines of a response (RFC 8288).

    Gives the canonical (``rel=canonical``) and the alternates
    (``rel=alternate`` with ``hreflang``) declared there, with targets as
    written: they are relative to the request URL, not to any ``<base>``
    (RFC 8288 §3.1). Pass every field line, as bytes (ASGI) or as latin-1
    text (WSGI). Never raises.
    """
    canonical: str | None = None
    alternates: dict[str, tuple[str, str]] = {}
    for target, params in link_values(values, budget):
        rel = param(params, "rel")
        # A link with an anchor is about another resource (RFC 8288 §3.2).
        if rel is None or param(params, "anchor") or not target.strip():
            continue
        relations = _tokens(rel)
        if "canonical" in relations and canonical is None:
            canonical = target
        if "alternate" in relations and _is_html(param(params, "type")):
            # Several hreflang parameters are several languages (RFC 8288 §3.4.1).
            for name, lang in params:
                if name == "hreflang":
                    _add_alternate(alternates, lang, target)
    if canonical is None and not alternates:
        return NOTHING
    return Head(
        canonicals=() if canonical is None else (canonical,),
        alternates=tuple(alternates.values()),
    )


def merge(page: Head, header: Head) -> Head:
    """The declarations of a response: its head and its ``Link`` header.

    Google takes a canonical from the tag and from the header alike
    (https://developers.google.com/search/docs/crawling-indexing/consolidate-duplicate-urls)
    and asks that they agree. Neither wins here: the result keeps both (the
    tag's first), and the page is its own canonical only if each names it.
    Alternates are the head's, then the header's for other languages; Google
    reads hreflang from either alike too.
    """
    canonicals = page.canonicals + tuple(
        href for href in header.canonicals if href not in page.canonicals
    )
    alternates: dict[str, tuple[str, str]] = {}
    for lang, href in page.alternates + header.alternates:
        _add_alternate(alternates, lang, href)
    noindex = page.noindex or header.noindex
    return Head(
        noindex=noindex,
        canonicals=canonicals,
        alternates=tuple(alternates.values()),
        modified=page.modified if page.modified is not None else header.modified,
        truncated=(page.truncated or header.truncated) and not noindex,
        title=page.title,
        date_modified=page.date_modified,
        date_published=page.date_published,
        encoding=page.encoding,
        published=page.published,
        site_name=page.site_name,
        lang=page.lang,
    )


_ROBOTS_WORDS = tuple(name.encode() for name in ROBOTS_NAMES)
# One pass for both: re finds a literal prefix faster than two `in` scans.
_NO_WORDS = re.compile(rb"no(?:index|ne)")
_JSON_LD_DATE = re.compile(rb"date(?:modified|published)")
# A character reference that may stand for a letter, a digit, "_" or ":" of
# the words below (HTML, "named character references": &lowbar; and
# &UnderBar; are "_", &colon; is ":"; no name stands for a letter or digit).
# Numeric ones may omit the ";" and pad with zeros. &#8217; and the like,
# common in titles, are not among them.
_WORD_REFERENCE = re.compile(
    rb"&(?:#0*(?:4[89]|5[0-8]|6[5-9]|[7-9][0-9]|1[01][0-9]|12[0-2])(?![0-9])"
    rb"|#x0*(?:3[0-9a]|[4-7][0-9a-f])(?![0-9a-f])"
    rb"|lowbar;|underbar;|colon;)"
)


def _may_declare(lowered: bytes) -> bool:
    """False when no tag the parser acts on can be in ``lowered``: plain
    searches rule out most pages before the much slower tokenizer.

    Each such tag holds one of these words, unless written with character
    references (``&#110;oindex``): one that may stand for a character of
    them sends the page to the tokenizer. Each search costs a pass over the
    bytes when the word is absent, the common case, so there are few.
    """
    # The searches for words first: a page that declares something is sent
    # on by one of them, before the regex reads the whole budget.
    if b"canonical" in lowered or b"hreflang" in lowered:
        return True
    if b"modified_time" in lowered or b"published_time" in lowered:
        return True
    if _JSON_LD_DATE.search(lowered):
        return True
    # A page without a title may still name its language and site (the news
    # sitemap reads both): "lang" is in most pages, but most have a title too.
    if b"lang" in lowered or b"site_name" in lowered:
        return True
    if b"&" in lowered and _WORD_REFERENCE.search(lowered):
        return True
    if _NO_WORDS.search(lowered) is None:
        return False
    # "none" is common text (display:none, fill="none"); as a directive it
    # comes with a robots name.
    return b"noindex" in lowered or any(name in lowered for name in _ROBOTS_WORDS)


# The elements a head holds (Google's list, https://developers.google.com/
# search/docs/crawling-indexing/valid-page-metadata), and html and head, whose
# repeated tags HTML ignores. Any other start tag ends the head: Google stops
# reading there and a browser opens the body (HTML, "in head" insertion mode).
_HEAD_ELEMENTS = frozenset(
    {"html", "head", "title", "meta", "link", "base", "script", "style"}
) | {"noscript", "template"}
# End tags that end the head; HTML ignores the others there.
_HEAD_END_TAGS = frozenset({"head", "body", "html", "br"})
# Elements whose content is text, code or an inert fragment, whatever tags it
# holds: title, script and style; noscript, as a browser running scripts
# (and Google's renderer) reads it; template.
_INERT = frozenset({"title", "script", "style", "noscript", "template"})
_SPACES = re.compile(r"[\t\n\f\r ]+")


# The source files of the standard library's tokenizer: html.parser and the
# base class it inherits. It documents no errors, yet where it cannot read a
# construct it raises AssertionError from inside them (since Python 3.10,
# when ParserBase.error() went away).
_TOKENIZER_FILES = frozenset(
    sys.modules[cls.__module__].__file__ for cls in HTMLParser.__mro__[:-1]
)


def _tokenizer_gave_up(exc: AssertionError) -> bool:
    """True when ``exc`` was raised by the tokenizer itself, not by a handler
    of ours: its innermost frame is in html.parser or _markupbase.

    ``_HeadParser.parse_html_declaration`` already routes around the one
    construct known to do this ("<![" that is no marked section, which some
    releases raise on); this is for any a later release adds.
    """
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename in _TOKENIZER_FILES


class _HeadEnd(Exception):
    """Raised by the parser where the head ends, to stop the tokenizer."""


class _HeadParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.noindex = False
        self.canonical: str | None = None
        self.base: str | None = None
        self.modified: str | None = None
        self.published: str | None = None
        self.site_name: str | None = None
        self.lang: str | None = None
        self.alternates: dict[str, tuple[str, str]] = {}
        self._inert: str | None = None  # the inert element we are inside
        self._depth = 0  # templates nest
        self._title: list[str] = []  # the first title's text
        self._titled = False  # the first title has ended
        self._json: list[str] | None = None  # a JSON-LD script's text, if in one
        # JSON_LD_DATES -> the values read, in order.
        self.dates: dict[str, list[str]] = {key: [] for key in JSON_LD_DATES}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.start(tag, _first(attrs) if tag in _READ_ATTRIBUTES else _NONE)

    def start(self, tag: str, attributes: dict[str, str]) -> None:
        """A start tag, its attributes as :func:`_first` gives them (read for
        the tags of :data:`_READ_ATTRIBUTES` only)."""
        if self._inert is not None:
            if tag == self._inert == "template":
                self._depth += 1
            return
        if tag not in _HEAD_ELEMENTS:
            raise _HeadEnd
        if tag in _INERT:
            self._inert, self._depth = tag, 1
            if tag == "script" and _is_json_ld(attributes.get("type", "")):
                self._json = []
        elif tag == "meta":
            self._meta(attributes)
        elif tag == "link":
            self._link(attributes)
        elif tag == "html" and self.lang is None:
            # Repeated <html> tags add the attributes the first lacks (HTML,
            # "in body": a start tag whose tag name is "html").
            self.lang = attributes.get("lang", "").strip() or None
        elif tag == "base" and self.base is None:
            # The document's base URL is the first base with an href (HTML,
            # "document base URL").
            href = attributes.get("href", "")
            self.base = href if href.strip() else None

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # HTML ignores "/>" on HTML elements: <script/> opens a script.
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if self._inert is not None:
            if tag == self._inert:
                self._depth -= 1
                if not self._depth:
                    self._titled = self._titled or tag == "title"
                    self._inert = None
                    if self._json is not None:
                        self._add_dates("".join(self._json))
                        self._json = None
            return
        if tag in _HEAD_END_TAGS:
            raise _HeadEnd

    def handle_data(self, data: str) -> None:
        if self._inert == "title" and not self._titled:
            self._title.append(data)
            return
        if self._json is not None:
            self._json.append(data)
            return
        # Text ends the head as an element does (HTML, "in head": anything
        # but ASCII whitespace); content of inert elements is not text here.
        if self._inert is None and data.strip("\t\n\f\r "):
            raise _HeadEnd

    def parse_html_declaration(self, i: int) -> int:
        # Outside SVG and MathML, "<![" opens a bogus comment that the next
        # ">" closes (HTML, "markup declaration open state"). Some releases
        # of html.parser (3.11.7 among them) read an SGML marked section
        # instead, and raise AssertionError on "<![x[".
        if self.rawdata.startswith("<![", i):
            return self.parse_bogus_comment(i)
        return super().parse_html_declaration(i)

    def _meta(self, attrs: dict[str, str]) -> None:
        name = attrs.get("name", "").strip().lower()
        if name in ROBOTS_NAMES:
            if is_noindex(attrs.get("content", "")):
                self.noindex = True
            return
        # Open Graph's RDFa property, or its common misspelling as a name.
        said = (attrs.get("property", "").strip().lower(), name)
        if self.modified is None and MODIFIED_PROPERTY in said:
            self.modified = attrs.get("content", "").strip() or None
        elif self.published is None and PUBLISHED_PROPERTY in said:
            self.published = attrs.get("content", "").strip() or None
        elif self.site_name is None and SITE_NAME_PROPERTY in said:
            self.site_name = attrs.get("content", "").strip() or None

    def _add_dates(self, text: str) -> None:
        """Keep the :data:`JSON_LD_DATES` values of a JSON-LD script's text,
        which the head budget bounds. Bad JSON is no declaration: never
        raises."""
        wanted = [key for key in JSON_LD_DATES if key in text]
        if not wanted:
            return
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):  # bad JSON, nested too deep
            return
        for node in _nodes(data):
            for key in wanted:
                value, kept = node.get(key), self.dates[key]
                if isinstance(value, str) and value.strip() and len(kept) < MAX_DATES:
                    kept.append(value.strip())

    def _link(self, attrs: dict[str, str]) -> None:
        href = attrs.get("href", "")
        if not href.strip():
            return
        relations = _tokens(attrs.get("rel", ""))
        if "canonical" in relations and self.canonical is None:
            self.canonical = href
        if "alternate" in relations and _is_html(attrs.get("type")):
            _add_alternate(self.alternates, attrs.get("hreflang", ""), href)

    def result(self) -> Head:
        base = self.base
        return Head(
            noindex=self.noindex,
            canonicals=(
                () if self.canonical is None else (_resolve(base, self.canonical),)
            ),
            alternates=tuple(
                (lang, _resolve(base, href)) for lang, href in self.alternates.values()
            ),
            modified=self.modified,
            title="".join(self._title) if self._title else None,
            date_modified=tuple(self.dates["dateModified"]),
            date_published=tuple(self.dates["datePublished"]),
            published=self.published,
            site_name=self.site_name,
            lang=self.lang,
        )


def _is_json_ld(media_type: str) -> bool:
    return media_type.partition(";")[0].strip().lower() == "application/ld+json"


def _nodes(data: object) -> Iterator[dict[str, object]]:
    """The objects of a JSON-LD document whose dates describe the page: the
    top-level ones (an array of them too) and the items of their ``@graph``.
    Nested objects (an author, the items of a list) are other things."""
    for item in data if isinstance(data, list) else [data]:
        if not isinstance(item, dict):
            continue
        yield item
        graph = item.get("@graph")
        for node in graph if isinstance(graph, list) else ():
            if isinstance(node, dict):
                yield node


def _first(attrs: list[tuple[str, str | None]]) -> dict[str, str]:
    """A tag's attributes by name; of repeated ones the first counts, as in
    HTML ("attribute name state"), and a bare one is empty."""
    values: dict[str, str] = {}
    for name, value in attrs:
        values.setdefault(name, value or "")
    return values


@functools.lru_cache(maxsize=256)
def _tokens(value: str) -> frozenset[str]:
    """The lower-cased words of a rel value: split on ASCII whitespace, both
    in HTML and in RFC 8288, and compared without case (RFC 8288 §2.1.1)."""
    return frozenset(_SPACES.split(value.lower()))


def _is_html(media_type: str | None) -> bool:
    """False for an alternate of another type (a feed's hreflang is not a
    language version of the page)."""
    if media_type is None:
        return True
    essence = media_type.partition(";")[0].strip().lower()
    return essence in ("", "text/html", "application/xhtml+xml")


def _add_alternate(
    alternates: dict[str, tuple[str, str]], lang: str, href: str
) -> None:
    # Language tags compare without case (RFC 5646 §2.1.1): the first of
    # "en-GB" and "en-gb" wins.
    lang = lang.strip()
    key = lang.lower()
    if (
        key not in alternates
        and len(alternates) < MAX_ALTERNATES
        and is_language_tag(lang)
        and href.strip()
    ):
        alternates[key] = (lang, href)


def _resolve(base: str | None, href: str) -> str:
    if base is None:
        return href
    try:
        return urljoin(base.strip(), href.strip())
    except ValueError:  # an unparsable URL, left for the caller to refuse
        return href


# -- the quick scan ------------------------------------------------------------
#
# html.parser spends most of a head's time in its generic loop. A head written
# plainly (tags whose attributes are separated by whitespace and quoted or
# plain words, comments without "--" inside, scripts and styles without "</" or
# "<!--" inside) is read here by a few regexes, which hand the same tokens to
# the same handlers (_HeadParser's), so that what is found has one home.
# Everything else, and any construct on which releases of html.parser differ
# (a bare "<", "<?", "<![", "/>" on an element with content, noscript and
# template, whose content some releases read as text, markup inside a title),
# makes the quick scan give up, and html.parser reads the head from the start.
# tests/page/test_head_quick.py compares the two on generated heads.

_WS = "\t\n\f\r "  # ASCII whitespace: html.parser's \s takes Unicode's too
# A start tag, after whitespace if any: its name, its attributes, "/" if
# self-closing. Between attributes only ASCII whitespace; a plain value ends
# at any whitespace and is followed by ASCII whitespace or ">" (html.parser
# would read "x\xa0y" as "x" then "y", and "x/>" as "x/" then ">").
_START_TAG = re.compile(
    f"[{_WS}]*<([a-zA-Z][a-zA-Z0-9]*)"
    f"((?:[{_WS}]+[a-zA-Z_:][-a-zA-Z0-9_:.]*"
    f"(?:[{_WS}]*=[{_WS}]*(?:\"[^\"]*\"|'[^']*'|[^\\s\"'=<>`/]+(?=[{_WS}>])))?)*)"
    f"[{_WS}]*(/?)>"
)
_ATTRIBUTE = re.compile(
    f"([a-zA-Z_:][-a-zA-Z0-9_:.]*)"
    f"(?:[{_WS}]*=[{_WS}]*(?:\"([^\"]*)\"|'([^']*)'|([^\\s\"'=<>`/]+)))?"
)
# The attributes of a tag whose attributes are not read (never written to).
_NONE: dict[str, str] = {}
_END_TAG = re.compile("</([a-zA-Z][a-zA-Z0-9]*)>")
_COMMENT = re.compile("<!--(?!-?>)(?:[^-]|-(?!-))*-->")
_DOCTYPE = re.compile("<![dD][oO][cC][tT][yY][pP][eE][^<>]*>")
# html.parser's raw text elements: their content is read up to their end tag.
_RAW_TEXT = frozenset({"script", "style"})
# What "/>" may close: elements without content, and the head's own tags
# (any other element ends the head, closed or not).
_VOID = frozenset({"meta", "link", "base", "html", "head"})
# The elements whose attributes a handler reads.
_READ_ATTRIBUTES = frozenset({"meta", "link", "base", "script", "html"})
# A <meta> or <link> the handlers act on holds one of these words (or a
# character reference, which may spell one): the others are passed over
# without reading their attributes (most of a head's tags).
# Searched in the lowered attributes (IGNORECASE would cost five times as much).
_TELLING = {
    "meta": re.compile(
        "|".join(
            map(
                re.escape,
                (
                    *ROBOTS_NAMES,
                    MODIFIED_PROPERTY,
                    PUBLISHED_PROPERTY,
                    SITE_NAME_PROPERTY,
                    "&",
                ),
            )
        )
    ).search,
    "link": re.compile("canonical|alternate|&").search,
    "html": re.compile("lang|&").search,
}
# Elements whose content releases of html.parser read differently.
_GIVE_UP = frozenset({"noscript", "template"})


def _quick_scan(parser: _HeadParser, text: str) -> bool:
    """Feed ``text``'s head to ``parser``'s handlers: ``True`` where the head
    ends, ``False`` where the quick scan gives up or the text ends first
    (the parser's state then meaningless)."""
    find = text.find
    i = 0
    try:
        while True:
            # Whitespace and a start tag, most steps of a head, in one match
            # (whitespace outside a title is nothing to the handlers).
            start = _START_TAG.match(text, i) if parser._inert is None else None
            if start is None:
                j = find("<", i)
                if j < 0:
                    return False  # the end, where html.parser keeps what it holds
                if i < j:
                    data = text[i:j]
                    if parser._inert is not None or data.strip(_WS):
                        parser.handle_data(unescape(data) if "&" in data else data)
                if parser._inert is not None:  # in a title: only its end tag
                    end = _END_TAG.match(text, j)
                    if end is None or end.group(1).lower() != "title":
                        return False
                    parser.handle_endtag("title")
                    i = end.end()
                    continue
                start = _START_TAG.match(text, j)
            if start is not None:
                name, written, closed = start.groups()
                tag = name.lower()
                if tag in _GIVE_UP or (
                    closed and tag not in _VOID and tag in _HEAD_ELEMENTS
                ):
                    return False
                i = start.end()
                if tag in _READ_ATTRIBUTES:
                    telling = _TELLING.get(tag)
                    if telling is not None and telling(written.lower()) is None:
                        continue  # a <meta> or <link> the handlers ignore
                    parser.start(tag, _attributes(written))
                else:
                    parser.start(tag, _NONE)
                if tag in _RAW_TEXT:
                    i = _raw_text(parser, text, i, tag)
                    if i < 0:
                        return False
                continue
            end = _END_TAG.match(text, j)
            if end is not None:
                parser.handle_endtag(end.group(1).lower())
                i = end.end()
                continue
            other = _COMMENT.match(text, j) or _DOCTYPE.match(text, j)
            if other is None:
                return False
            i = other.end()
    except _HeadEnd:
        return True


def _attributes(written: str) -> dict[str, str]:
    """A start tag's attributes, as :func:`_first` gives html.parser's: the
    first of each name, a bare one empty, character references decoded."""
    values: dict[str, str] = {}
    for name, double, single, plain in _ATTRIBUTE.findall(written):
        name = name.lower()
        if name not in values:
            value = double or single or plain  # the one that matched, or ""
            values[name] = unescape(value) if "&" in value else value
    return values


def _raw_text(parser: _HeadParser, text: str, i: int, tag: str) -> int:
    """Hand a script's or style's content to ``parser``, then its end tag;
    where the text goes on from, or -1 to give up."""
    j = text.find("</", i)
    if j < 0 or "<!--" in text[i:j]:
        return -1
    end = _END_TAG.match(text, j)
    if end is None or end.group(1).lower() != tag:
        return -1
    if i < j:
        parser.handle_data(text[i:j])
    parser.handle_endtag(tag)
    return end.end()
