"""The head scanner: what a page's ``<head>`` says about indexing (meta robots,
the canonical link), read with the standard library's HTML tokenizer within a
byte budget.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from html.parser import HTMLParser

from .policy import is_noindex

# The head is read no further than this; a page whose head is longer is
# judged on what was read (a noindex past it goes unseen).
HEAD_BUDGET = 64 * 1024
SLICE = 512
ROBOTS_NAMES = frozenset({"robots", "googlebot", "bingbot"})


@dataclass(frozen=True, slots=True)
class Head:
    """What the head says: ``noindex``, and the canonical link's href if any."""

    noindex: bool = False
    canonical: str | None = None


NOTHING = Head()


class _HeadParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.noindex = False
        self.canonical: str | None = None
        self.done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.done:  # the rest of a slice fed past the head
            return
        if tag == "meta":
            values = {name: value or "" for name, value in attrs}
            if values.get("name", "").strip().lower() in ROBOTS_NAMES and is_noindex(
                values.get("content", "")
            ):
                self.noindex = True
        elif tag == "link" and self.canonical is None:
            values = {name: value or "" for name, value in attrs}
            if "canonical" in values.get("rel", "").lower().split():
                self.canonical = values.get("href") or None
        elif tag == "body":
            self.done = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "head":
            self.done = True


def scan_head(chunks: list[bytes], budget: int = HEAD_BUDGET) -> Head:
    """Read the ``<head>`` of an HTML body: robots meta tags and the canonical.

    Only tags inside the head count: the same tag in the body is content (user
    text, say), not an instruction. The first canonical link wins. Never raises
    on malformed HTML.
    """
    start = bytearray()
    for chunk in chunks:
        start += chunk[: budget - len(start)]
        if len(start) >= budget:
            break
    # Most heads hold neither: a plain search rules them out before the much
    # slower tokenizer runs.
    lowered = start.lower()
    if not any(word in lowered for word in (b"noindex", b"none", b"canonical")):
        return NOTHING
    parser = _HeadParser()
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    # The tokenizer parses all it is fed: slices let it stop soon after </head>.
    for offset in range(0, len(start), SLICE):
        parser.feed(decoder.decode(start[offset : offset + SLICE]))
        if parser.done:
            break
    return Head(parser.noindex, parser.canonical)
