"""The head's handlers, fed tokens by html.parser or by the quick scan: what
they act on (the robots names, the Open Graph properties, JSON-LD dates, the
elements a head holds), what they found, and where the tokenizer gives up.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Iterator
from html.parser import HTMLParser

from ..sitemaps import MAX_ALTERNATES, is_language_tag, is_noindex

ROBOTS_NAMES = frozenset({"robots", "googlebot", "bingbot"})
# Open Graph's article property (https://ogp.me/#type_article). Not
# og:updated_time: it is not in the protocol, and themes fill it with the
# whole site's last change, which says nothing about this page.
MODIFIED_PROPERTY = "article:modified_time"
# What a news sitemap says of an article (Open Graph's article and website
# properties): when it was published, and the name of the site.
PUBLISHED_PROPERTY = "article:published_time"
SITE_NAME_PROPERTY = "og:site_name"
# What a page says it is about: its meta description, else Open Graph's.
DESCRIPTION_NAME = "description"
DESCRIPTION_PROPERTY = "og:description"
# JSON-LD in the head (https://www.w3.org/TR/json-ld11/#embedding-json-ld-in-html-documents):
# schema.org's dateModified and datePublished of a top-level object or of the
# items of its @graph (the way Yoast and most CMS plugins write a page's
# WebPage and Article). At most this many values of each are kept a page.
MAX_DATES = 16
JSON_LD_DATES = ("dateModified", "datePublished")

# The elements a head holds (Google's list, https://developers.google.com/
# search/docs/crawling-indexing/valid-page-metadata), and html and head, whose
# repeated tags HTML ignores. Any other start tag ends the head: Google stops
# reading there and a browser opens the body (HTML, "in head" insertion mode).
HEAD_ELEMENTS = frozenset(
    {"html", "head", "title", "meta", "link", "base", "script", "style"}
) | {"noscript", "template"}
# End tags that end the head; HTML ignores the others there.
_HEAD_END_TAGS = frozenset({"head", "body", "html", "br"})
# Elements whose content is text, code or an inert fragment, whatever tags it
# holds: title, script and style; noscript, as a browser running scripts
# (and Google's renderer) reads it; template.
_INERT = frozenset({"title", "script", "style", "noscript", "template"})
_SPACES = re.compile(r"[\t\n\f\r ]+")
# The elements whose attributes a handler reads.
READ_ATTRIBUTES = frozenset({"meta", "link", "base", "script", "html"})
# The attributes of a tag whose attributes are not read (never written to).
NO_ATTRIBUTES: dict[str, str] = {}


# The source files of the standard library's tokenizer: html.parser and the
# base class it inherits. It documents no errors, yet where it cannot read a
# construct it raises AssertionError from inside them (since Python 3.10,
# when ParserBase.error() went away).
_TOKENIZER_FILES = frozenset(
    sys.modules[cls.__module__].__file__ for cls in HTMLParser.__mro__[:-1]
)


def tokenizer_gave_up(exc: AssertionError) -> bool:
    """True when ``exc`` was raised by the tokenizer itself, not by a handler
    of ours: its innermost frame is in html.parser or _markupbase.

    ``HeadParser.parse_html_declaration`` already routes around the one
    construct known to do this ("<![" that is no marked section, which some
    releases raise on); this is for any a later release adds.
    """
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename in _TOKENIZER_FILES


class HeadEnd(Exception):
    """Raised by the parser where the head ends, to stop the tokenizer."""


class HeadParser(HTMLParser):
    """What a head declares, as its tokens come: from html.parser (``feed``)
    or from the quick scan (``start``, ``handle_data``, ``handle_endtag``).
    Raises :class:`HeadEnd` where the head ends."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.noindex = False
        self.canonical: str | None = None
        self.base: str | None = None
        self.modified: str | None = None
        self.published: str | None = None
        self.site_name: str | None = None
        self.lang: str | None = None
        self.description: str | None = None  # <meta name="description">
        self.og_description: str | None = None
        self.alternates: dict[str, tuple[str, str]] = {}
        self.inert: str | None = None  # the inert element we are inside
        self._depth = 0  # templates nest
        self._title: list[str] = []  # the first title's text
        self._titled = False  # the first title has ended
        self._json: list[str] | None = None  # a JSON-LD script's text, if in one
        # JSON_LD_DATES -> the values read, in order.
        self.dates: dict[str, list[str]] = {key: [] for key in JSON_LD_DATES}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.start(tag, _first(attrs) if tag in READ_ATTRIBUTES else NO_ATTRIBUTES)

    def start(self, tag: str, attributes: dict[str, str]) -> None:
        """A start tag, its attributes as :func:`_first` gives them (read for
        the tags of :data:`READ_ATTRIBUTES` only)."""
        if self.inert is not None:
            if tag == self.inert == "template":
                self._depth += 1
            return
        if tag not in HEAD_ELEMENTS:
            raise HeadEnd
        if tag in _INERT:
            self.inert, self._depth = tag, 1
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
        if self.inert is not None:
            if tag == self.inert:
                self._depth -= 1
                if not self._depth:
                    self._titled = self._titled or tag == "title"
                    self.inert = None
                    if self._json is not None:
                        self._add_dates("".join(self._json))
                        self._json = None
            return
        if tag in _HEAD_END_TAGS:
            raise HeadEnd

    def handle_data(self, data: str) -> None:
        if self.inert == "title" and not self._titled:
            self._title.append(data)
            return
        if self._json is not None:
            self._json.append(data)
            return
        # Text ends the head as an element does (HTML, "in head": anything
        # but ASCII whitespace); content of inert elements is not text here.
        if self.inert is None and data.strip("\t\n\f\r "):
            raise HeadEnd

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
        elif name == DESCRIPTION_NAME:
            if self.description is None:
                self.description = attrs.get("content", "").strip() or None
        elif self.og_description is None and DESCRIPTION_PROPERTY in said:
            self.og_description = attrs.get("content", "").strip() or None

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
        relations = tokens(attrs.get("rel", ""))
        if "canonical" in relations and self.canonical is None:
            self.canonical = href
        if "alternate" in relations and is_html(attrs.get("type")):
            add_alternate(self.alternates, attrs.get("hreflang", ""), href)

    @property
    def title(self) -> str | None:
        """The text of the first ``<title>``, ``None`` without one."""
        return "".join(self._title) if self._title else None


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
def tokens(value: str) -> frozenset[str]:
    """The lower-cased words of a rel value: split on ASCII whitespace, both
    in HTML and in RFC 8288, and compared without case (RFC 8288 §2.1.1)."""
    return frozenset(_SPACES.split(value.lower()))


def is_html(media_type: str | None) -> bool:
    """False for an alternate of another type (a feed's hreflang is not a
    language version of the page)."""
    if media_type is None:
        return True
    essence = media_type.partition(";")[0].strip().lower()
    return essence in ("", "text/html", "application/xhtml+xml")


def add_alternate(alternates: dict[str, tuple[str, str]], lang: str, href: str) -> None:
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
