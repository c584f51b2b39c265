"""Visible text: what a name shown to people (a page's title, a label made from a
path) may hold, whichever layer makes it. Leaf.
"""

from __future__ import annotations

import re

# The zero-width joiners: part of how some scripts (Persian, Indic) and emoji
# sequences are written, so kept where they join two visible characters.
_JOINERS = "\u200c\u200d"
_loose_joiners = re.compile(f"(?<!\\S)[{_JOINERS}]+|[{_JOINERS}]+(?!\\S)")


def visible(text: str) -> str:
    """``text`` as shown: whitespace collapsed, and without controls (BEL,
    ESC, C1), invisible format characters (zero-width spaces, soft hyphens,
    the bidirectional overrides and isolates that would reorder the text
    around it) and unassigned or private code points: ``str.isprintable`` is
    false for exactly those (Unicode categories C and Z but the space, and Z
    is whitespace, collapsed first)."""
    text = " ".join(text.split())
    if not text.isprintable():
        text = "".join(c for c in text if c.isprintable() or c in _JOINERS)
        text = " ".join(_loose_joiners.sub("", text).split())
    return text
