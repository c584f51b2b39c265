"""The documents the middleware answers itself, one row each: how its path is
matched and built, its media type, and what answers it. The adapters' gate, the
server's dispatch, the policy's own-path check, the config's checks and the
command line all read this table; it imports nothing of the package.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from urllib.parse import parse_qs

XML = "application/xml; charset=utf-8"
# The part files are gzip themselves: no Content-Encoding, or clients would
# unpack them (invariant 11).
GZIP = "application/gzip"
TEXT = "text/plain; charset=utf-8"
HTML = "text/html; charset=utf-8"

# Every sitemap's path starts with this: the adapters' gate tests it once for
# all of them.
SITEMAP = "/sitemap"
# Where a numbered path's number goes in a row's template.
NUMBER = "{n}"
# Numbers start at 1 with no leading zero; nine digits is far past the 50,000
# parts an index may list, so longer numbers are 404 without a lookup. ASCII
# digits only: int() would also take "١".
_is_number = re.compile(r"[1-9][0-9]{0,8}").fullmatch


@dataclass(frozen=True, slots=True)
class Document:
    """One document the middleware answers: a row of the table."""

    kind: str
    """Its name; the server answers it with the method it keys by this."""
    template: str
    """Its path, with ``{n}`` where a numbered one has its number ("": the
    path is a config option's, given by :meth:`at`)."""
    media_type: str
    option: str = ""
    """The config option that turns it on ("": always on). A row with an empty
    template takes that option's value as its path."""
    query: str = ""
    """The query parameter that numbers its pages, page 1 without it ("": a
    path alone names it)."""
    asks_app: bool = False
    """The app answers first and the middleware amends its answer (robots.txt),
    for GET and HEAD; any other method goes to the app."""
    noindex: bool = True
    """Sent with ``X-Robots-Tag: noindex``: a file for crawlers, not a page for
    search results."""
    head: str = field(init=False, repr=False, compare=False)
    """What every path it claims starts with: the whole path, or what comes
    before the number."""
    tail: str = field(init=False, repr=False, compare=False)
    """What a numbered path ends with ("" for the others)."""
    numbered: bool = field(init=False, repr=False, compare=False)
    """Its path holds a number (``/sitemap-{n}.xml.gz``)."""

    def __post_init__(self) -> None:
        head, number, tail = self.template.partition(NUMBER)
        object.__setattr__(self, "head", head)
        object.__setattr__(self, "tail", tail)
        object.__setattr__(self, "numbered", bool(number))

    def at(self, path: str) -> Document:
        """This row at a configured path."""
        return replace(self, template=path)

    def claims(self, path: str) -> bool:
        """Whether ``path`` is this document's to answer, a number that is
        none (``/sitemap-01.xml.gz``, a 404) included: the app never sees it."""
        if not self.numbered:
            return path == self.head
        return path.startswith(self.head) and path.endswith(self.tail)

    def match(self, path: str, query: str = "") -> int | None:
        """The number ``path`` (and ``query``) ask for; 0 for a document without
        one; ``None`` when they name none of this document's."""
        if not self.claims(path):
            return None
        if not self.numbered:
            return self._page(query) if self.query else 0
        number = path[len(self.head) : len(path) - len(self.tail)]
        return int(number) if _is_number(number) else None

    def build(self, number: int = 0) -> str:
        """The path (and query) of document ``number``; 0 or 1 for one without
        numbers in its path."""
        if self.numbered:
            return f"{self.head}{number}{self.tail}"
        if self.query and number > 1:  # page 1 has one address, the path
            return f"{self.head}?{self.query}={number}"
        return self.head

    def _page(self, query: str) -> int | None:
        pages = parse_qs(query, keep_blank_values=True).get(self.query)
        if pages is None:
            return 1
        if len(pages) != 1 or not _is_number(pages[0]):
            return None
        return int(pages[0])


INDEX = Document("index", "/sitemap.xml", XML)
PART = Document("part", "/sitemap-{n}.xml.gz", GZIP)
# /sitemap.txt: the text of the one part, while there is only one.
TEXT_INDEX = Document("text-index", "/sitemap.txt", TEXT, option="text_sitemap")
TEXT_PART = Document("text-part", "/sitemap-{n}.txt", TEXT, option="text_sitemap")
# Google News: the articles of the last two days, when the news key is set.
NEWS = Document("news", "/sitemap-news.xml", XML, option="news")
ROBOTS = Document("robots", "/robots.txt", TEXT, asks_app=True, noindex=False)
# The site map for people: a page for search engines too, so no noindex.
SITE_MAP = Document(
    "site-map", "", HTML, option="html_sitemap", query="page", noindex=False
)
KEY_FILE = Document("key-file", "", TEXT, option="key_location", noindex=False)
# llms.txt (llmstxt.org): the site's name, its sections and their pages in
# Markdown, for language models; a file, not a page for search results.
LLMS = Document("llms", "", TEXT, option="llms_txt")

# Every document, in the order the adapters' gate lists their prefixes. A new
# one is a row here (and the server's method that answers its kind).
DOCUMENTS = (
    INDEX,
    PART,
    TEXT_INDEX,
    TEXT_PART,
    NEWS,
    ROBOTS,
    SITE_MAP,
    KEY_FILE,
    LLMS,
)


class Documents:
    """The documents one configuration answers, and the questions asked of them."""

    __slots__ = ("_fixed", "_numbered", "gate", "rows")

    def __init__(self, rows: tuple[Document, ...]) -> None:
        self.rows = rows
        # What every path the middleware answers starts with: a path that
        # starts with none of these is the app's, whatever the rest says.
        self.gate = tuple(
            dict.fromkeys(
                SITEMAP if d.head.startswith(SITEMAP) else d.head for d in rows
            )
        )
        # A fixed path is one dict lookup; a numbered one a prefix and a
        # suffix test for each of the few numbered rows.
        self._fixed = {d.head: d for d in rows if not d.numbered}
        self._numbered = tuple(d for d in rows if d.numbered)

    @classmethod
    def of(cls, options: Mapping[str, str | bool | None]) -> Documents:
        """The rows ``options`` turn on (a row's option missing: off), each
        configured path in its row."""
        rows = []
        for document in DOCUMENTS:
            value = options.get(document.option) if document.option else True
            if not value:
                continue
            if not document.template:
                document = document.at(str(value))
            rows.append(document)
        return cls(tuple(rows))

    def claim(self, path: str) -> Document | None:
        """The document that answers ``path``, its near misses included (a
        number that is none, answered 404), or ``None``: the app's path."""
        document = self._fixed.get(path)
        if document is not None:
            return document
        for document in self._numbered:
            if document.claims(path):
                return document
        return None

    def answers(self, path: str) -> bool:
        """Whether the middleware answers ``path`` alone, in place of the app."""
        document = self.claim(path)
        return document is not None and not document.asks_app

    def amends(self, path: str) -> bool:
        """Whether ``path`` is the app's to answer first, for the middleware to
        amend (robots.txt)."""
        document = self.claim(path)
        return document is not None and document.asks_app

    def match(self, path: str, query: str = "") -> tuple[Document, int] | None:
        """The document ``path`` and ``query`` name and its number, or ``None``
        (a path this table does not claim, or a number that is none)."""
        document = self.claim(path)
        if document is None:
            return None
        number = document.match(path, query)
        return None if number is None else (document, number)


def reserved(path: str) -> bool:
    """Whether a configured path (the site map page's, the key file's) would
    take a document's, whatever the options: a fixed path, or one that starts
    as a numbered path does (``/sitemap-...``)."""
    return any(
        path == d.head if not d.numbered else path.startswith(d.head)
        for d in DOCUMENTS
        if d.template
    )


# The paths ``reserved`` refuses, as an error message lists them.
RESERVED = tuple(
    dict.fromkeys(
        d.head + ("..." if d.numbered else "") for d in DOCUMENTS if d.template
    )
)
