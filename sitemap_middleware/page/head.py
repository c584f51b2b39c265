"""What a page's ``<head>`` and its ``Link`` header declare about it (Head):
the head read within a budget (scan_head: by the quick scan, else by
html.parser, both feeding parser.HeadParser), the header read, the two merged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from urllib.parse import urljoin

from .charset import ascii_compatible, decode, encoding_of
from .links import link_values, param
from .parser import (
    ROBOTS_NAMES,
    HeadEnd,
    HeadParser,
    add_alternate,
    is_html,
    tokenizer_gave_up,
    tokens,
)
from .quick import quick_scan

# The head is read no further than this. A head that goes on past it is
# flagged (Head.truncated) and its page not recorded: a noindex may follow.
# 64 KiB holds the heads of nearly every page, inline scripts and styles
# included, and bounds the tokenizer's time (about 30 ms for 64 KiB of tags).
HEAD_BUDGET = 64 * 1024
# Characters of Link header read per response, all field lines together.
LINK_BUDGET = 32 * 1024
# The quick scan decodes this much of the body first: most heads end within
# it, and decoding the whole budget would cost more than reading them.
QUICK_BYTES = 8 * 1024


@dataclass(frozen=True, slots=True)
class Head:
    """What a response declares about its page.

    ``noindex``: a robots, googlebot or bingbot meta tag says ``noindex`` or
    ``none``. ``canonicals``: the canonical hrefs declared, the first of each
    source (see :func:`merge`); the page is its own canonical only if every
    one names it. ``alternates``: ``(hreflang, href)`` pairs, the first per
    language, at most ``sitemaps.MAX_ALTERNATES``. ``modified``: the unparsed
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
    the ``og:site_name``; ``lang``: the ``<html lang>``; ``description``:
    the ``<meta name="description">``, else the ``og:description`` (each the
    first one, as written, ``None`` when absent or blank; see
    ``titles.describe``).
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
    description: str | None = None

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
    :func:`tokenizer_gave_up`), what it read before stands. Any other
    exception is a bug in the scanner and propagates.
    """
    pieces: list[bytes] = []
    left = budget
    for chunk in chunks:
        # A chunk within the budget is taken as it is: a slice is a copy.
        piece = chunk if len(chunk) <= left else chunk[: max(left, 0)]
        pieces.append(piece)
        left -= len(piece)
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
    if ascii_compatible(encoding) and not cut and b"<title" not in start:
        lowered = start.lower()
        if not _may_declare(lowered) and b"<title" not in lowered and not cut:
            return NOTHING if plain else Head(encoding=encoding)
    # The plain head most pages have is read by a few regexes, from the
    # first few KiB decoded, then from all if the head goes on; whatever they
    # are not sure to read as html.parser does goes to html.parser itself.
    ended = False
    text = None
    if quick:
        # The first "</head>" as most pages write it ends the first part: a
        # head read in full before it ends there (and one that seems not to,
        # a "</head>" in a script, say, is read again from all).
        ends = start.find(b"</head>", 0, QUICK_BYTES)
        first = QUICK_BYTES if ends < 0 else ends + len(b"</head>")
        parser = HeadParser()
        ended = quick_scan(parser, decode(start[:first], encoding))
        if not ended and len(start) > first:
            text = decode(start, encoding)
            parser = HeadParser()
            ended = quick_scan(parser, text)
    if not ended:
        text = decode(start, encoding) if text is None else text
        parser = HeadParser()
        ended = False
        try:
            parser.feed(text)
        except HeadEnd:
            ended = True
        except AssertionError as exc:
            if not tokenizer_gave_up(exc):
                raise
    head = _declared(parser)
    if not plain:
        head = replace(head, encoding=encoding)
    if cut and not ended and not head.noindex:
        return replace(head, truncated=True)
    return head


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
        relations = tokens(rel)
        if "canonical" in relations and canonical is None:
            canonical = target
        if "alternate" in relations and is_html(param(params, "type")):
            # Several hreflang parameters are several languages (RFC 8288 §3.4.1).
            for name, lang in params:
                if name == "hreflang":
                    add_alternate(alternates, lang, target)
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
        add_alternate(alternates, lang, href)
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
        description=page.description,
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
    # sitemap reads both) and say what it is about: "lang" is in most pages,
    # but most have a title too.
    if b"lang" in lowered or b"site_name" in lowered or b"description" in lowered:
        return True
    if b"&" in lowered and _WORD_REFERENCE.search(lowered):
        return True
    if _NO_WORDS.search(lowered) is None:
        return False
    # "none" is common text (display:none, fill="none"); as a directive it
    # comes with a robots name.
    return b"noindex" in lowered or any(name in lowered for name in _ROBOTS_WORDS)


def _declared(parser: HeadParser) -> Head:
    """What the handlers found, as a :class:`Head`: hrefs resolved against
    the head's ``<base href>``."""
    base = parser.base
    return Head(
        noindex=parser.noindex,
        canonicals=(
            () if parser.canonical is None else (_resolve(base, parser.canonical),)
        ),
        alternates=tuple(
            (lang, _resolve(base, href)) for lang, href in parser.alternates.values()
        ),
        modified=parser.modified,
        title=parser.title,
        date_modified=tuple(parser.dates["dateModified"]),
        date_published=tuple(parser.dates["datePublished"]),
        published=parser.published,
        site_name=parser.site_name,
        lang=parser.lang,
        description=parser.description or parser.og_description,
    )


def _resolve(base: str | None, href: str) -> str:
    if base is None:
        return href
    try:
        return urljoin(base.strip(), href.strip())
    except ValueError:  # an unparsable URL, left for the caller to refuse
        return href
