"""The site map read by the store's index (stores.contract.Mapped): the groups
counted once per version of the store, each page's links read in the map's order
as it is asked for, never every row.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..model import PartInfo
from ..places import Key, shown
from ..stores.contract import Listed, MapCount, Mapped, MapSpan
from .arrangement import (
    Link,
    Map,
    _Heading,
    by_path,
    headed,
    links_of,
    start_of,
)
from .validators import versions_of


@dataclass(frozen=True, slots=True)
class _Span:
    """How a section's links are read: its group's own pages (``own`` of
    them: ``mine``) first, then the ``rest``."""

    own: int
    mine: MapSpan
    rest: MapSpan


@dataclass(frozen=True, slots=True, eq=False)
class IndexedMap(Map):
    """The map of a store that keeps its order: the same sections, in the
    same order, with the same links as :class:`~.arrangement.Arrangement`
    makes of the same pages (tests/serving/test_indexed.py), its links read
    from the store a span at a time. They are read when asked: a page the
    writers changed since the counts may show a link one place off until
    the next version's counts (as a map arranged in memory shows the
    previous version meanwhile)."""

    parts: tuple[PartInfo, ...]
    versions: tuple[tuple[int, str], ...]
    sections: tuple[_Heading, ...]
    site_name: str | None
    store: Mapped
    spans: tuple[_Span, ...]

    @classmethod
    def of(
        cls,
        infos: tuple[PartInfo, ...],
        counts: Sequence[MapCount],
        store: Mapped,
        newest: Callable[[str], bool] = lambda path: False,
        site_name: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> IndexedMap:
        """The map of a store whose groups are ``counts``: a group's loose
        pages join the general group unless another page lies deeper in it,
        as the arrangement's do."""
        sizes: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # own, rest
        joined: set[str] = set()
        for count in counts:
            pages = count.pages
            if count.group and count.loose and not count.deep:
                joined.add(count.group)
                pages -= count.loose
                sizes[""][1] += count.loose
            sizes[count.group][0 if count.own else 1] += pages
        keys: dict[Key, str] = {
            tuple(group.split("/")) if group else (): group
            for group, (own, rest) in sizes.items()
            if own + rest
        }
        ordered = by_path(set(keys), labels or {})
        groups = [keys[key] for key in ordered]
        sections = headed(
            list(ordered.values()), [sum(sizes[group]) for group in groups], newest
        )
        spans = []
        for group, section in zip(groups, sections, strict=True):
            # A group's loose pages are read with it unless they joined the
            # general group, which reads them with its own.
            loose = group not in joined
            joining = tuple(sorted(joined)) if not group else ()
            spans.append(
                _Span(
                    sizes[group][0],
                    MapSpan(group, True, loose, newest=section.newest),
                    MapSpan(group, False, loose, joining, section.newest),
                )
            )
        return cls(
            infos,
            versions_of(infos),
            tuple(sections),
            site_name,
            store,
            tuple(spans),
        )

    def links(self, span: slice, base_url: str) -> tuple[Link, ...]:
        if span.start >= span.stop:
            return ()
        at = bisect_right(self.sections, span.start, key=start_of) - 1
        section, how = self.sections[at], self.spans[at]
        low, high = span.start - section.start, span.stop - section.start
        rows: list[Listed] = []
        if low < how.own:
            rows += self.store.map_rows(how.mine)[low : min(high, how.own)]
        if high > how.own:
            skip = max(low - how.own, 0)
            rows += self.store.map_rows(how.rest, skip, high - how.own - skip)
        paths = [row[0] for row in rows]
        titles = shown(paths, [row[2] for row in rows])
        return links_of(
            base_url,
            [
                (path, title, row[4], row[3] or None)
                for path, title, row in zip(paths, titles, rows, strict=True)
            ],
        )

    def home_description(self) -> str | None:
        if not self.spans or self.spans[0].mine.group:
            return None
        for path, _, _, description, _ in self.store.map_rows(self.spans[0].mine):
            if path == "/":
                return description or None
        return None
