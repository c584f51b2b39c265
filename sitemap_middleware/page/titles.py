"""Page titles and descriptions as a person reads them: the ``<title>`` (else the
first ``<h1>``) and the meta description with whitespace collapsed and length
bounded, and the affix the whole site repeats (" | Site name", "Site name · ")
learned from the titles the writer sees and taken out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from html.parser import HTMLParser
from typing import NamedTuple

from ..visible import visible
from .charset import decode

# Characters kept of a title, cut at a word: longer ones are not titles a
# site map shows whole.
MAX_TITLE = 200
# Characters kept of a description: search engines show about 160, llms.txt
# and the site map page a line or two.
MAX_DESCRIPTION = 300
# What sites put between a page's title and their name.
SEPARATORS = (" | ", " · ", " - ", " – ", " — ", " :: ", " » ", " / ", ": ")
# An affix is the site's when at least this many pages, and over half of the
# titled pages seen, carry it.
MIN_PAGES = 3
# Titled pages the learner keeps (the first seen): a bounded sample.
SAMPLE = 1000
# The body is read this far for an <h1> when the head has no title.
HEADING_BUDGET = 256 * 1024


class Affix(NamedTuple):
    """Text a site repeats at the start (``prefix``) or end of its titles."""

    text: str
    prefix: bool

    def strip(self, title: str) -> str:
        """The title without the affix; whole when it is nothing but it."""
        if self.prefix and title.startswith(self.text):
            rest = title[len(self.text) :]
        elif not self.prefix and title.endswith(self.text):
            rest = title[: -len(self.text)]
        else:
            return title
        return rest.strip() or title

    @property
    def name(self) -> str:
        """The affix without its separator: the site's name (" | Acme" and
        "Acme · " -> "Acme")."""
        text = self.text
        for separator in SEPARATORS:
            if self.prefix and text.endswith(separator):
                return text[: -len(separator)].strip() or text.strip()
            if not self.prefix and text.startswith(separator):
                return text[len(separator) :].strip() or text.strip()
        return text.strip()

    def pack(self) -> str:
        return ("prefix " if self.prefix else "suffix ") + self.text

    @classmethod
    def unpack(cls, packed: str | None) -> Affix | None:
        kind, _, text = (packed or "").partition(" ")
        if kind not in ("prefix", "suffix") or not text:
            return None
        return cls(text, kind == "prefix")


def clean(text: str | None, limit: int = MAX_TITLE) -> str | None:
    """Visible text only (:func:`~sitemap_middleware.visible.visible`),
    at most ``limit`` characters (cut at a word, an ellipsis added);
    ``None`` for nothing."""
    if text is None:
        return None
    text = visible(text)
    if len(text) > limit:
        cut = text[: limit - 1]
        text = (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"
    return text or None


def describe(text: str | None) -> str | None:
    """A page's description by the rules of its title, at most
    ``MAX_DESCRIPTION`` characters."""
    return clean(text, MAX_DESCRIPTION)


def candidates(title: str) -> set[Affix]:
    """The affixes a title could carry: from each separator to the end, and
    from the start through each separator."""
    found: set[Affix] = set()
    for separator in SEPARATORS:
        at = title.rfind(separator)
        if at > 0:
            found.add(Affix(title[at:], False))
        at = title.find(separator)
        if 0 < at < len(title) - len(separator):
            found.add(Affix(title[: at + len(separator)], True))
    return found


class Titles:
    """Learns the site's affix from the titles of the pages a writer sees."""

    def __init__(self, affix: Affix | None = None) -> None:
        self.affix = affix
        self._seen: dict[str, str] = {}  # path -> title, the first SAMPLE
        self._changed = False

    def see(self, path: str, title: str) -> None:
        if path in self._seen or len(self._seen) < SAMPLE:
            self._changed = self._changed or self._seen.get(path) != title
            self._seen[path] = title

    def learn(self) -> Affix | None:
        """The affix the sample agrees on (kept while none is found: a sample
        that does not agree yet leaves the one the site had)."""
        if not self._changed:
            return self.affix
        self._changed = False
        tally: Counter[Affix] = Counter()
        for title in self._seen.values():
            tally.update(candidates(title))
        best = _best(tally.most_common(), len(self._seen))
        if best is not None:
            self.affix = best
        return self.affix

    def strip(self, title: str | None) -> str | None:
        if title is None or self.affix is None:
            return title
        return self.affix.strip(title)


def _best(ranked: Iterable[tuple[Affix, int]], pages: int) -> Affix | None:
    for affix, n in ranked:
        if n >= MIN_PAGES and 2 * n > pages:
            return affix
    return None


class _Read(Exception):
    """Raised by the parser at the end of the first ``<h1>``."""


# Elements whose content is never shown as text: code, styles, inert markup.
_UNSHOWN = frozenset({"script", "style", "template"})


class _Heading(HTMLParser):
    """The text of the first ``<h1>``, as shown: without the content of its
    scripts, styles and templates."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.inside = False
        self.unshown = 0  # depth in elements whose content is not shown

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "h1":
            self.inside = True
        elif tag in _UNSHOWN and self.inside:
            self.unshown += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "h1" and self.inside:
            raise _Read
        if tag in _UNSHOWN and self.unshown:
            self.unshown -= 1

    def handle_data(self, data: str) -> None:
        if self.inside and not self.unshown:
            self.parts.append(data)


def heading(body: Iterable[bytes], encoding: str = "utf-8") -> str | None:
    """The first ``<h1>``'s text in the start of the body, or ``None``.
    ``encoding`` is the codec the page is read with (``Head.encoding``)."""
    pieces: list[bytes] = []
    left = HEADING_BUDGET
    for chunk in body:
        pieces.append(chunk[:left])
        left -= len(pieces[-1])
        if left <= 0:
            break
    start = b"".join(pieces)
    if encoding == "utf-8":  # the common case: search the bytes, decode the rest
        at = start.lower().find(b"<h1")
        if at < 0:
            return None
        text = start[at:].decode("utf-8", "replace")
    else:
        text = decode(start, encoding)
        at = text.lower().find("<h1")
        if at < 0:
            return None
        text = text[at:]
    parser = _Heading()
    try:
        parser.feed(text)
        parser.close()
    except (_Read, AssertionError):  # where the tokenizer gives up, what it read stands
        pass
    return clean("".join(parser.parts))
