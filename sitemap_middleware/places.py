"""Where a page falls on the site map for people: its group (the fixed segments of
its route before a parameter, else its path's first segment), whether it is that
group's own page, its title as shown, and the natural key it sorts by. Pure: the
map arranges by it, and a store that keeps the map's order writes it with a row.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import repeat
from operator import add
from urllib.parse import unquote

from .visible import visible

HOME = "Home"

_DIGITS = re.compile(r"(\d+)")
# The same of ASCII text, without a Unicode lookup a character: twice as fast.
_ASCII_DIGITS = re.compile(r"([0-9]+)")
_SEPARATORS = re.compile(r"[-_+\s]+")
_EXTENSIONS = (".html", ".htm", ".php", ".aspx")
# A title's own NUL in a sort key: above every mark a number gets.
_TEXT_NUL = "\0\U0010ffff"

# A group: the path segments it stands for, () the general one.
Key = tuple[str, ...]


# A page's place on the map as a store keeps it: its group (the key's
# segments joined by "/", "" the general group); whether it is the group's
# own page (/blog of blog); whether it is loose (a one-segment page outside a
# route with a parameter, which joins its group only if another page lies
# deeper in it); the first segment of its path when a second follows (what
# makes a group deep); its title's natural key, UTF-8, so that bytes compare
# as the map's texts do.
Place = tuple[str, bool, bool, "str | None", bytes]


def places(
    paths: Sequence[str], routes: Sequence[str | None], titles: Sequence[str | None]
) -> list[Place]:
    """The place of each page, given its path, route and stored
    title, as a plain tuple (a store binds it as a row's columns): a bulk
    write places a thousand rows at once."""
    keys = natural_keys(shown(paths, titles))
    joined = "\n".join(keys)
    if joined.count("\n") == len(keys) - 1:  # one key a line: encoded at once
        encoded = joined.encode("utf-8", "surrogatepass").split(b"\n")
    else:
        encoded = [key.encode("utf-8", "surrogatepass") for key in keys]
    routed = {route: route_section(route) for route in set(routes) if route}
    found = []
    for path, route, key in zip(paths, routes, encoded, strict=True):
        bare = path.partition("?")[0]
        first, deeper = head_of(path)
        group = routed.get(route) if route else None
        if group is None:
            name, loose = first, not deeper
        else:
            name, loose = "/".join(group), False
        found.append(
            (
                name,
                bare.rstrip("/") == (f"/{name}" if name else ""),
                loose,
                first if deeper else None,
                key,
            )
        )
    return found


def shown(paths: Sequence[str], titles: Sequence[str | None]) -> list[str]:
    """The title each page shows on the map: its stored one, else a readable
    form of its path (made for all such pages at once)."""
    texts = [(title or "").strip() for title in titles]
    if "" in texts:
        at = [i for i, text in enumerate(texts) if not text]
        for i, text in zip(at, untitled_many([paths[i] for i in at]), strict=True):
            texts[i] = text
    return texts


def head_of(path: str) -> tuple[str, bool]:
    """A path's first segment (before its query; "" for the root), and
    whether another follows it."""
    bare = path.partition("?")[0]
    if "//" in bare:  # empty segments count for nothing
        segments = segments_of(bare)
        return (segments or [""])[0], len(segments) > 1
    first, _, rest = bare.strip("/").partition("/")
    return first, bool(rest)


def segments_of(path: str) -> list[str]:
    return [s for s in path.split("?")[0].split("/") if s]


def route_section(route: str) -> Key | None:
    """The group of a route with a parameter: its fixed segments before the
    first ("/blog/<slug>" -> ("blog",), "/docs/{lang}/{page}" -> ("docs",));
    ``None`` for a route without one (its pages go by their path)."""
    if "<" not in route and "{" not in route:
        return None
    fixed: list[str] = []
    for segment in segments_of(route):
        if "<" in segment or "{" in segment:
            break
        fixed.append(segment)
    return tuple(fixed)


def words(segment: str) -> str:
    """A path segment as words: unescaped, without an extension, separators
    made spaces, capitalised."""
    # A path's escapes may hold what is no text (a right-to-left override).
    text = visible(unquote(segment) if "%" in segment else segment)
    lower = text.lower()
    if lower.endswith(_EXTENSIONS):
        for extension in _EXTENSIONS:
            if lower.endswith(extension):
                text = text[: -len(extension)]
                lower = lower[: -len(extension)]
    text = _SEPARATORS.sub(" ", text).strip()
    return text[:1].upper() + text[1:]


def untitled(stored: str) -> str:
    """A readable title for the page at ``stored``, which has none."""
    path, _, query = stored.partition("?")
    segments = segments_of(path)
    text = words(segments[-1]) if segments else HOME
    if query:
        text = f"{text} ({visible(unquote(query.replace('&', ', ')))})"
    return text or stored


def untitled_many(paths: Sequence[str]) -> list[str]:
    """:func:`untitled` of each of ``paths``, made for all of them at once
    where their last segments are plain (printable ASCII, no escape, no
    space, no extension) and no path has a query or an empty segment: one
    text of the segments joined by "/", which no segment holds and no
    separator is."""
    if not paths:
        return []
    lasts = [path.rstrip("/").rpartition("/")[2] for path in paths]
    joined = "/".join(lasts)
    if (
        not joined.isascii()
        or not joined.isprintable()
        or " " in joined
        or "%" in joined
        or any("//" in path or "?" in path for path in paths)
        or any(extension in joined.lower() for extension in _EXTENSIONS)
    ):
        return [untitled(path) for path in paths]
    texts = [text.strip() for text in _SEPARATORS.sub(" ", joined).split("/")]
    return [
        (text[:1].upper() + text[1:] or path) if last else untitled(path)
        for path, last, text in zip(paths, lasts, texts, strict=True)
    ]


def natural(text: str) -> str:
    """The key that sorts ``text`` case-insensitively with its numbers in
    numeric order ("part 2" before "Part 10"), as one string (a tuple of
    texts and ints sorts the same, at several times the memory): each number
    becomes a NUL, its length as one character, its decimal digits; the text
    ends with a NUL; a NUL of the text itself sorts after those marks."""
    return _fold(text) + "\0"


def natural_keys(texts: Sequence[str]) -> list[str]:
    """``natural`` of each of ``texts``, made for all of them at once: one
    text of their lines, folded, then cut again."""
    if not texts:
        return []
    joined = "\n".join(texts)
    if joined.count("\n") != len(texts) - 1:  # a text of several lines
        return [natural(text) for text in texts]
    # Casefolding maps each character alone, and keeps the line breaks.
    return (_fold(joined).replace("\n", "\0\n") + "\0").split("\n")


def _fold(text: str) -> str:
    """``text`` casefolded, its NULs and numbers marked (``natural``)."""
    folded = text.casefold()
    if "\0" in folded:
        folded = folded.replace("\0", _TEXT_NUL)
    ascii = folded.isascii()
    # Text, number, text, ..., text.
    pieces = (_ASCII_DIGITS if ascii else _DIGITS).split(folded)
    if len(pieces) == 1:
        return folded
    numbers = pieces[1::2]
    if ascii:  # the digits written, without zeros in front ("" for zero)
        values = list(map(str.lstrip, numbers, repeat("0")))
    else:  # int() reads any Unicode digits; str() writes them ASCII
        values = [n.lstrip("0") if n.isascii() else str(int(n)) for n in numbers]
    lengths = list(map(len, values))
    # A path is at most 2,047 characters: a length fits in one.
    marks = ["\0" + chr(1 + n) for n in range(max(lengths) + 1)]
    marks[0] = "\0\x020"  # zero, whose digits are all stripped
    pieces[1::2] = map(add, map(marks.__getitem__, lengths), values)
    return "".join(pieces)
