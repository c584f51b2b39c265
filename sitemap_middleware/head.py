"""The head scanner: what a page's ``<head>`` says about indexing, read with the
standard library's HTML tokenizer, fed chunk by chunk, within a byte budget.
"""

from __future__ import annotations

import codecs
from html.parser import HTMLParser

from .policy import is_noindex

# The head is read no further than this; a page whose head is longer is
# judged on what was read (a noindex past it goes unseen).
HEAD_BUDGET = 64 * 1024
SLICE = 512
ROBOTS_NAMES = frozenset({"robots", "googlebot", "bingbot"})


class _HeadParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.noindex = False
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
        elif tag == "body":
            self.done = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "head":
            self.done = True


def head_noindex(chunks: list[bytes], budget: int = HEAD_BUDGET) -> bool:
    """Whether the ``<head>`` of an HTML body asks robots not to index it.

    Only meta tags inside the head count: the same tag in the body is content
    (user text, say), not an instruction. Never raises on malformed HTML.
    """
    start = bytearray()
    for chunk in chunks:
        start += chunk[: budget - len(start)]
        if len(start) >= budget:
            break
    # Most pages say nothing of the kind: a plain search rules them out before
    # the much slower tokenizer runs.
    lowered = start.lower()
    if b"noindex" not in lowered and b"none" not in lowered:
        return False
    parser = _HeadParser()
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    # The tokenizer parses all it is fed: slices let it stop soon after </head>.
    for offset in range(0, len(start), SLICE):
        parser.feed(decoder.decode(start[offset : offset + SLICE]))
        if parser.done:
            break
    return parser.noindex
