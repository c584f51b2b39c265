"""The head scanner: what a page's ``<head>`` says about indexing, read with the
standard library's HTML tokenizer, fed chunk by chunk, within a byte budget.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable
from html.parser import HTMLParser

from .policy import is_noindex

# The head is read no further than this; a page whose head is longer is
# judged on what was read (a noindex past it goes unseen).
HEAD_BUDGET = 64 * 1024
# The tokenizer parses all it is fed: feed it slices, cut where the head
# plainly ends, so that it stops there instead of tokenizing the whole page.
SLICE = 512
_HEAD_ENDS = (b"</head", b"<body", b"</HEAD", b"<BODY")
ROBOTS_NAMES = frozenset({"robots", "googlebot", "bingbot"})


class _HeadParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.noindex = False
        self.done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "meta":
            values = {name: value or "" for name, value in attrs}
            if values.get("name", "").strip().lower() in ROBOTS_NAMES and is_noindex(
                values.get("content", "")
            ):
                self.noindex = True
        elif tag == "body":
            self.done = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "head":
            self.done = True


def head_noindex(chunks: Iterable[bytes], budget: int = HEAD_BUDGET) -> bool:
    """Whether the ``<head>`` of an HTML body asks robots not to index it.

    Only meta tags inside the head count: the same tag in the body is content
    (user text, say), not an instruction. Never raises on malformed HTML.
    """
    parser = _HeadParser()
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for chunk in chunks:
        for start in range(0, len(chunk), SLICE):
            if budget <= 0 or parser.done:
                return parser.noindex
            piece = chunk[start : start + min(SLICE, budget)]
            budget -= len(piece)
            ends = [i for mark in _HEAD_ENDS if (i := piece.find(mark)) >= 0]
            if ends:  # the tag itself is fed, so the parser sees the end
                piece = piece[: min(ends) + 6] + b">"
                budget = 0
            parser.feed(decoder.decode(piece))
    return parser.noindex
