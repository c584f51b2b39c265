"""The arrangement's order, made a column at a time, against the rule it keeps:
each title's natural key as one text at a time makes it, and the map's order
as a sort of (section, own page first, age, key, path) tuples gives it.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from hypothesis import example, given, settings
from hypothesis import strategies as st

from sitemap_middleware import Entry
from sitemap_middleware.model import PartInfo, dated
from sitemap_middleware.places import natural, natural_keys
from sitemap_middleware.places import route_section as _route_section  # not tested
from sitemap_middleware.serving.arrangement import Arrangement, Part

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)

# Case pairs that fold alike or apart, ASCII and other digits (Arabic-Indic,
# fullwidth, a superscript that is no decimal digit), zeros, NULs, line breaks.
_TEXT = st.text(
    st.sampled_from(list("aAbBzZßẞİı 0012789٠٣９²\0\n-_.")) | st.characters(),
    max_size=24,
)


def _one_at_a_time(text: str) -> str:
    """The natural key as it was made: each number replaced by a callback."""

    def number(match: re.Match[str]) -> str:
        digits = str(int(match.group()))
        return f"\0{chr(1 + len(digits))}{digits}"

    folded = text.casefold().replace("\0", "\0\U0010ffff")
    return re.sub(r"\d+", number, folded) + "\0"


@given(st.lists(_TEXT, max_size=12))
def test_natural_keys_of_many_texts_are_each_texts_own(texts: list[str]) -> None:
    """Made for many texts at once (ASCII or not, with line breaks or not),
    each key is the one a text alone gets, as numbers were replaced."""
    assert natural_keys(texts) == [_one_at_a_time(t) for t in texts]
    assert [natural(t) for t in texts] == [_one_at_a_time(t) for t in texts]


_SEGMENT = st.sampled_from(["a", "b", "A", "a1", "a10", "a2", "x y", "%C3%A9"])
_PATH = st.builds(
    lambda segments, slash, query: "/" + "/".join(segments) + slash + query,
    st.lists(_SEGMENT, max_size=3),
    st.sampled_from(["", "/", "//"]),
    st.sampled_from(["", "?q=1", "?q=/a/b"]),
)
_ROUTE = st.sampled_from([None, "/a/<id>", "/<slug>", "/b/{x}/c", "/plain"])
_PAGE = st.tuples(
    _PATH,
    _ROUTE,
    st.none() | st.sampled_from(["", " ", "Part 2", "part 10", "Part 02", "b", "B"]),
    st.none() | st.integers(-2, 3),
)


def _expected(pages: list[Entry], newest: bool) -> list[tuple[object, ...]]:
    """Each page's (section, not its own page, age if asked, path), by the
    rule as it was written, one page at a time (a route's section as the
    module reads it)."""

    def segments(path: str) -> list[str]:
        return [s for s in path.split("?")[0].split("/") if s]

    deep = {tuple(segments(e.path)[:1]) for e in pages if len(segments(e.path)) > 1}
    ranked: list[tuple[object, ...]] = []
    for e in pages:
        found = segments(e.path)
        key = None if e.route is None else _route_section(e.route)
        if key is None:
            key = tuple(found[:1])
            if len(found) <= 1 and key not in deep:
                key = ()
        own = ("/" + "/".join(key)).rstrip("/")
        is_own = e.path.partition("?")[0].rstrip("/") == own
        when = dated(e.lastmod)
        age = (float("inf") if when is None else -when.timestamp(),) if newest else ()
        ranked.append((key, not is_own, *age, e.path))
    return ranked


@settings(max_examples=150)
@given(st.lists(_PAGE, max_size=14, unique_by=lambda page: page[0]), st.booleans())
# Its own page and another of one title, the other's path first: own first.
@example(
    [("/a/b", None, "b", 1), ("/a?q=1", None, "B", 1), ("/a/c", None, "b", 1)], False
)
def test_the_order_is_the_one_of_one_page_at_a_time(
    pages: list[tuple[str, str | None, str | None, int | None]], newest: bool
) -> None:
    """Within each section (as many pages as the rule puts there): its own
    page first, then newest first where asked, by title's natural key (a
    title made of the path when none is stored), then by path."""
    entries = [
        Entry(
            path,
            None if days is None else T0 + timedelta(days=days),
            route=route,
            title=title,
        )
        for path, route, title, days in pages
    ]
    info = PartInfo(1, len(entries), T0, "1.1", T0)
    part = Part.read(info.version, entries)
    arranged = Arrangement.of((info,), [part], lambda path: newest)
    shown = dict(zip(part.paths, part.titles, strict=True))
    expected = _expected(entries, newest)
    by_path = {row[-1]: row for row in expected}
    for heading in arranged.sections:
        span = slice(heading.start, heading.start + heading.size)
        members = [link.path for link in arranged.links(span, "")]
        assert len({by_path[p][0] for p in members}) == 1  # one section's pages
        rows = [(*by_path[p][1:-1], _one_at_a_time(shown[p]), p) for p in members]
        assert rows == sorted(rows)
    listed = [link.path for link in arranged.links(slice(None), "")]
    assert sorted(listed) == sorted(by_path)
    assert len(arranged.sections) == len({row[0] for row in expected})
