"""The quick scan: a head written plainly, read by a few regexes that hand
html.parser's tokens to the same handlers (parser.HeadParser).
"""

from __future__ import annotations

import re
import sys
from html import unescape

from .parser import (
    DESCRIPTION_NAME,
    HEAD_ELEMENTS,
    MODIFIED_PROPERTY,
    NO_ATTRIBUTES,
    PUBLISHED_PROPERTY,
    READ_ATTRIBUTES,
    ROBOTS_NAMES,
    SITE_NAME_PROPERTY,
    HeadEnd,
    HeadParser,
)

# html.parser spends most of a head's time in its generic loop. A head written
# plainly (tags whose attributes are separated by whitespace and quoted or
# plain words, comments without "--" inside, scripts and styles without "</" or
# "<!--" inside) is read here by a few regexes, which hand the same tokens to
# the same handlers (HeadParser's), so that what is found has one home.
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
# What is matched is never given back (no attribute, name, value or space can
# be what follows it instead): possessive repeats, where Python has them
# (3.11), spare the regex engine the bookkeeping for backtracking.
_ONCE = "+" if sys.version_info >= (3, 11) else ""
_START_TAG = re.compile(
    f"[{_WS}]*{_ONCE}<([a-zA-Z][a-zA-Z0-9]*{_ONCE})"
    f"((?:[{_WS}]+{_ONCE}[a-zA-Z_:][-a-zA-Z0-9_:.]*{_ONCE}"
    f"(?:[{_WS}]*{_ONCE}=[{_WS}]*{_ONCE}"
    f"(?:\"[^\"]*{_ONCE}\"|'[^']*{_ONCE}'|[^\\s\"'=<>`/]+{_ONCE}(?=[{_WS}>])))?{_ONCE})*{_ONCE})"
    f"[{_WS}]*{_ONCE}(/?)>"
)
_ATTRIBUTE = re.compile(
    f"([a-zA-Z_:][-a-zA-Z0-9_:.]*{_ONCE})"
    f"(?:[{_WS}]*{_ONCE}=[{_WS}]*{_ONCE}"
    f"(?:\"([^\"]*{_ONCE})\"|'([^']*{_ONCE})'|([^\\s\"'=<>`/]+{_ONCE})))?{_ONCE}"
)
_END_TAG = re.compile(f"</([a-zA-Z][a-zA-Z0-9]*{_ONCE})>")
# Unrolled ("[^-]*" then "-" and more of it), never a repeat inside a repeat:
# without possessive repeats (3.10), "(?:[^-]+|-)*" tries every split of an
# unclosed comment, exponentially many.
_COMMENT = re.compile(f"<!--(?!-?>)[^-]*{_ONCE}(?:-(?!-)[^-]*{_ONCE})*{_ONCE}-->")
_DOCTYPE = re.compile("<![dD][oO][cC][tT][yY][pP][eE][^<>]*>")
# html.parser's raw text elements: their content is read up to their end tag.
_RAW_TEXT = frozenset({"script", "style"})
# What "/>" may close: elements without content, and the head's own tags
# (any other element ends the head, closed or not).
_VOID = frozenset({"meta", "link", "base", "html", "head"})
# A <meta> or <link> the handlers act on holds one of these words (or a
# character reference, which may spell one): the others are passed over
# without reading their attributes (most of a head's tags), as is a script
# that cannot be JSON-LD. Looked for in the lowered attributes, a word at a
# time: "in" finds a word several times faster than a regex alternation of
# the same words searches.
_TELLING: dict[str, tuple[str, ...]] = {
    "meta": (
        *sorted(ROBOTS_NAMES),
        MODIFIED_PROPERTY,
        PUBLISHED_PROPERTY,
        SITE_NAME_PROPERTY,
        DESCRIPTION_NAME,  # og:description holds it too
        "&",
    ),
    "link": ("canonical", "alternate", "&"),
    "html": ("lang", "&"),
    # A script's attributes matter only for its type, JSON-LD's.
    "script": ("ld+json", "&"),
}
# Elements whose content releases of html.parser read differently.
_GIVE_UP = frozenset({"noscript", "template"})


def quick_scan(parser: HeadParser, text: str) -> bool:
    """Feed ``text``'s head to ``parser``'s handlers: ``True`` where the head
    ends, ``False`` where the quick scan gives up or the text ends first
    (the parser's state then meaningless)."""
    find = text.find
    i = 0
    try:
        while True:
            # Whitespace and a start tag, most steps of a head, in one match
            # (whitespace outside a title is nothing to the handlers).
            start = _START_TAG.match(text, i) if parser.inert is None else None
            if start is None:
                j = find("<", i)
                if j < 0:
                    return False  # the end, where html.parser keeps what it holds
                if i < j:
                    data = text[i:j]
                    if parser.inert is not None or data.strip(_WS):
                        parser.handle_data(unescape(data) if "&" in data else data)
                if parser.inert is not None:  # in a title: only its end tag
                    end = _END_TAG.match(text, j)
                    if end is None or end.group(1).lower() != "title":
                        return False
                    parser.handle_endtag("title")
                    i = end.end()
                    continue
                # No start tag at j either: the one tried at i took the
                # whitespace before it, and any other text ended the head.
            if start is not None:
                name, written, closed = start.groups()
                tag = name.lower()
                if tag in _GIVE_UP or (
                    closed and tag not in _VOID and tag in HEAD_ELEMENTS
                ):
                    return False
                i = start.end()
                if tag in READ_ATTRIBUTES:
                    words = _TELLING.get(tag)
                    if words is None:
                        parser.start(tag, _attributes(written))
                    else:
                        lowered = written.lower()
                        for word in words:
                            if word in lowered:
                                parser.start(tag, _attributes(written))
                                break
                        else:
                            if tag not in _RAW_TEXT:
                                continue  # a <meta> or <link> the handlers ignore
                            parser.start(tag, NO_ATTRIBUTES)  # a script of no JSON-LD
                else:
                    parser.start(tag, NO_ATTRIBUTES)
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
    except HeadEnd:
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


def _raw_text(parser: HeadParser, text: str, i: int, tag: str) -> int:
    """Hand a script's or style's content to ``parser``, then its end tag;
    where the text goes on from, or -1 to give up."""
    j = text.find("</", i)
    if j < 0 or text.find("<!--", i, j) >= 0:
        return -1
    end = _END_TAG.match(text, j)
    if end is None or end.group(1).lower() != tag:
        return -1
    if i < j:
        parser.handle_data(text[i:j])
    parser.handle_endtag(tag)
    return end.end()
