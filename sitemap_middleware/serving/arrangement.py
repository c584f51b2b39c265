"""The site map arranged: the stored pages grouped into sections, headed and
sorted, held compactly (Arrangement), and one page of it as site_map() gives
it (SiteMap: its Sections, their Links, the IndexEntry of every section).
"""

from __future__ import annotations

import re
import threading
from array import array
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import chain, compress, islice, repeat
from operator import add, eq, itemgetter
from typing import cast

from ..model import UNDATED_SECONDS, Entry, PartInfo, dated, to_datetime
from ..places import Key, head_of, natural, natural_keys, route_section, shown, words
from ..sections import DEFAULT, label
from ..sections import heading as section_heading
from ..stores.contract import Listed
from .validators import versions_of

_NOT_ID = re.compile(r"[^a-z0-9]+")
# The first segment of a path that has a second (before its query): one
# search over a part's paths, each after a line break (a literal the search
# skips to, where a line's start is tried at every character).
_DEEPER = re.compile(r"\n/*([^/?\n]+)/+[^/?\n]")
# Newest first as a sort key's text: 10**16 - the lastmod, 17 digits (any
# date's seconds fit); a page without a date after every dated one.
_NEWEST = 10**16
_UNDATED_LAST = "~"


@dataclass(frozen=True, slots=True)
class Link:
    """One page: its absolute ``url``, its ``title`` (the stored one, else a
    readable form of the path), its ``lastmod`` (``None``: it claims none)
    and its ``description`` (``None``: it gives none)."""

    url: str
    path: str
    title: str
    lastmod: datetime | None
    description: str | None = None


@dataclass(frozen=True, slots=True)
class Section:
    """A heading and its links, as they fall on one page of the map.

    ``id`` is the section's fragment identifier, the same on every page;
    ``continued`` tells that the section began on an earlier page; ``newest``
    that its links go newest first, with their dates (``newest_first``),
    else by title. ``name`` is the configured section's (``""``: the pages
    no section names, or, without ``sections``, the general group; ``None``:
    a group of pages by path).
    """

    id: str
    heading: str
    links: tuple[Link, ...]
    continued: bool = False
    newest: bool = False
    name: str | None = None


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """A section of the whole map: where it starts (``page``) and its size."""

    id: str
    heading: str
    page: int
    links: int


@dataclass(frozen=True, slots=True)
class SiteMap:
    """One page of the site map: its ``sections``, the ``index`` of every
    section of the map, and where it stands (``page`` of ``pages``;
    ``links`` counts the links of the whole map)."""

    sections: tuple[Section, ...]
    index: tuple[IndexEntry, ...]
    page: int
    pages: int
    links: int
    site_name: str | None = None
    """The site's name, when known (the config's, else the one its titles
    repeat)."""


@dataclass(frozen=True, slots=True)
class Part:
    """One part's pages as the map shows them, in columns: path, title (the
    stored one, else a readable form of the path), lastmod (epoch seconds,
    ``UNDATED_SECONDS`` or less: none claimed), description, and the section
    each falls in. ``loose`` marks a one-segment page outside a route with a
    parameter: it joins its section only if another page lies deeper in it
    (``deep`` holds the first segments of this part's deeper pages)."""

    version: str
    paths: tuple[str, ...]
    titles: tuple[str, ...]
    lastmods: array[int]
    keys: tuple[Key, ...]
    loose: bytes
    deep: frozenset[Key]
    descriptions: tuple[str | None, ...] = ()

    @classmethod
    def read(cls, version: str, entries: Iterable[Entry]) -> Part:
        """The part of a store that gives only its entries."""
        rows = [
            (e.path, e.route, e.title, e.description, _seconds(e.lastmod))
            for e in entries
        ]
        return cls.listed(version, [rows])

    @classmethod
    def listed(cls, version: str, runs: Iterable[Sequence[Listed]]) -> Part:
        """The part of a store's listing (``stores.contract.Listing``), its
        columns made a whole column at a time: a page costs no Python of its
        own but where its route has no parameter."""
        rows = list(chain.from_iterable(runs))
        if not rows:
            return cls(version, (), (), array("q"), (), b"", frozenset())
        # A column at a time (zip(*rows) makes an iterator a row).
        paths, routes, stored, descriptions, lastmods = (
            tuple(map(itemgetter(column), rows)) for column in range(5)
        )
        del rows
        titles = shown(paths, stored)
        if "" in descriptions:
            descriptions = tuple(text or None for text in descriptions)
        # Pages share their section's key: one object each, not one per page.
        routed = {r: route_section(r) for r in set(routes) if r is not None}
        keys: list[Key | None] = list(map(routed.get, routes))
        loose = bytearray(len(keys))
        heads: dict[str, Key] = {}
        if None in keys:  # pages that go by their path
            for i in [i for i, key in enumerate(keys) if key is None]:
                first, deeper = head_of(paths[i])
                head = heads.get(first)
                if head is None:
                    head = heads[first] = (first,) if first else ()
                keys[i] = head
                # A one-segment page joins its section only if children name it.
                loose[i] = not deeper
        return cls(
            version,
            paths,
            tuple(titles),
            array("q", lastmods),
            cast("tuple[Key, ...]", tuple(keys)),  # every None replaced
            bytes(loose),
            _deep(paths),
            descriptions,
        )


@dataclass(frozen=True, slots=True)
class _Heading:
    """A section of the arranged map: links ``start`` to ``start + size``;
    ``own`` the path of its own page, first ("" for the site's root)."""

    id: str
    heading: str
    start: int
    size: int
    newest: bool
    name: str | None
    own: str


class Map:
    """A site map as its pages show it: its ``sections`` (each a span of the
    map's order), read a page (:meth:`page`) or each section's first links
    (:meth:`whole`) at a time; ``parts`` are the summaries it was made from
    (the page's validators), ``versions`` what tells them apart. Arranged in
    memory (:class:`Arrangement`) or read by the store's index
    (``indexed.IndexedMap``)."""

    __slots__ = ()

    parts: tuple[PartInfo, ...]
    versions: tuple[tuple[int, str], ...]
    sections: tuple[_Heading, ...]
    site_name: str | None

    @property
    def total(self) -> int:
        """The links of the whole map: where its last section ends."""
        return self.sections[-1].start + self.sections[-1].size if self.sections else 0

    def links(self, span: slice, base_url: str) -> tuple[Link, ...]:
        """The links of the map's pages ``span`` takes (within one
        section), under ``base_url``."""
        raise NotImplementedError

    def home_description(self) -> str | None:
        """The description of the site's home page ("/"), if the map has
        both."""
        raise NotImplementedError

    def pages(self, per_page: int) -> int:
        """How many pages of ``per_page`` links the map has: one at least (an
        empty map's says so)."""
        if per_page < 1:
            raise ValueError(f"per_page must be at least 1, got {per_page}")
        return max(1, -(-self.total // per_page))

    def page(self, page: int, per_page: int, base_url: str) -> SiteMap:
        """Page ``page`` of the map, ``per_page`` links a page, links under
        ``base_url``; a section that does not fit goes on, ``continued``, on
        the next."""
        pages = self.pages(per_page)
        if not 1 <= page <= pages:
            raise LookupError(f"the site map has no page {page} (it has {pages})")
        start, end = (page - 1) * per_page, page * per_page
        index: list[IndexEntry] = []
        shown: list[Section] = []
        for section in self.sections:
            seen, size = section.start, section.size
            index.append(
                IndexEntry(section.id, section.heading, seen // per_page + 1, size)
            )
            low, high = max(start - seen, 0), min(end - seen, size)
            if low < high:
                span = slice(seen + low, seen + high)
                links = self.links(span, base_url)
                shown.append(
                    Section(
                        section.id,
                        section.heading,
                        links,
                        low > 0,
                        section.newest,
                        section.name,
                    )
                )
        return SiteMap(
            tuple(shown), tuple(index), page, pages, self.total, self.site_name
        )

    def whole(
        self, base_url: str, most: int | None = None
    ) -> tuple[tuple[Section, int], ...]:
        """Every section of the map with its first ``most`` links (``None``:
        all), under ``base_url``, and its number of links."""
        return tuple(
            (
                Section(
                    section.id,
                    section.heading,
                    self.links(
                        slice(
                            section.start,
                            section.start
                            + (
                                section.size
                                if most is None
                                else min(most, section.size)
                            ),
                        ),
                        base_url,
                    ),
                    newest=section.newest,
                    name=section.name,
                ),
                section.size,
            )
            for section in self.sections
        )


@dataclass(frozen=True, slots=True, eq=False)
class Arrangement(Map):
    """The whole map, held compactly: the pages' paths, titles, lastmods and
    descriptions (in the parts' order), where each section starts, and the
    map's order (``order``: places in those columns). A section is sorted
    the first time a page shows it (one at a time, under ``lock``): a
    request needs the sections of its page, not the whole map. A page of
    it is a slice (:meth:`page`). ``parts`` are the summaries it was
    arranged from (the page's validators)."""

    parts: tuple[PartInfo, ...]
    versions: tuple[tuple[int, str], ...]
    paths: tuple[str, ...]
    titles: tuple[str, ...]
    lastmods: array[int]
    sections: tuple[_Heading, ...]
    site_name: str | None = None
    descriptions: tuple[str | None, ...] = ()
    order: array[int] = field(default_factory=lambda: array("q"))
    ranked: bytearray = field(default_factory=bytearray)  # per section: sorted
    lock: threading.Lock = field(default_factory=threading.Lock)
    stand_in: bool = False
    """Arranged in place of the store's index, while a page had no place."""

    @classmethod
    def of(
        cls,
        infos: tuple[PartInfo, ...],
        parts: Sequence[Part],
        newest: Callable[[str], bool] = lambda path: False,
        site_name: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> Arrangement:
        """Every page in its section, the sections and their links sorted:
        by title, or newest first where ``newest`` says so of the section's
        path (``/blog``; ``/`` for the general one); a configured section
        headed by its label in ``labels`` (``sections.heading``)."""
        lastmods = array("q")
        for p in parts:
            lastmods.extend(p.lastmods)
        groups, member_of = _groups(infos, parts, labels or {})
        sizes = Counter(member_of)
        sections = headed(groups, [sizes[g] for g in range(len(groups))], newest)
        return cls(
            infos,
            versions_of(infos),
            tuple(chain.from_iterable(p.paths for p in parts)),
            tuple(chain.from_iterable(p.titles for p in parts)),
            lastmods,
            tuple(sections),
            site_name,
            tuple(
                chain.from_iterable(
                    p.descriptions or repeat(None, len(p.paths)) for p in parts
                )
            ),
            # The sections in their order, each one's pages as the parts hold them.
            array("q", sorted(range(len(member_of)), key=member_of.__getitem__)),
            bytearray(len(sections)),
        )

    def _shown(self, span: slice) -> array[int]:
        """The places of the map's pages ``span`` takes, in the map's order:
        the sections it meets sorted first."""
        low, high, _ = span.indices(len(self.order))
        sections = self.sections
        # The section holding ``low``: sections start in order.
        at = max(bisect_right(sections, low, key=start_of) - 1, 0)
        while at < len(sections) and sections[at].start < high:
            if not self.ranked[at]:
                with self.lock:
                    if not self.ranked[at]:
                        self._sort(sections[at])
                        self.ranked[at] = 1
            at += 1
        return self.order[span]

    def _sort(self, section: _Heading) -> None:
        """Sort a section's pages: its own page first ("/", "/blog/": a path
        that is the section's, slashes after it at most), then newest first
        where asked, then by title's natural key (``_natural``), then by
        path; each column made at once."""
        span = slice(section.start, section.start + section.size)
        members = self.order[span].tolist()
        paths = list(map(self.paths.__getitem__, members))
        bare = paths
        if any(map(str.__contains__, paths, repeat("?"))):
            bare = [path.partition("?")[0] for path in paths]
        own = list(
            compress(
                range(len(members)),
                map(eq, map(str.rstrip, bare, repeat("/")), repeat(section.own)),
            )
        )
        keys = natural_keys(list(map(self.titles.__getitem__, members)))
        if section.newest:
            ages = map(_age, map(self.lastmods.__getitem__, members))
            keys = list(map(add, ages, keys))
        ranked = sorted(range(len(members)), key=keys.__getitem__)
        if own:
            for i in own:
                ranked.remove(i)
            ranked[:0] = sorted(own, key=keys.__getitem__)
        _by_path(ranked, list(map(keys.__getitem__, ranked)), paths, len(own))
        self.order[span] = array("q", map(members.__getitem__, ranked))

    def links(self, span: slice, base_url: str) -> tuple[Link, ...]:
        """The links of the map's pages ``span`` takes, under ``base_url``."""
        shown = self._shown(span)
        paths, titles, lastmods = self.paths, self.titles, self.lastmods
        descriptions = self.descriptions or (None,) * len(paths)
        return links_of(
            base_url,
            [(paths[at], titles[at], lastmods[at], descriptions[at]) for at in shown],
        )

    def home_description(self) -> str | None:
        try:
            at = self.paths.index("/")
        except ValueError:
            return None
        return self.descriptions[at] if self.descriptions else None


def links_of(
    base_url: str, rows: Sequence[tuple[str, str, int, str | None]]
) -> tuple[Link, ...]:
    """The links of pages given as (path, title shown, lastmod in epoch
    seconds, description), under ``base_url``."""
    dates: dict[int, datetime | None] = {}  # pages share their lastmod
    for _, _, seconds, _ in rows:
        if seconds not in dates:
            dates[seconds] = (
                None if seconds <= UNDATED_SECONDS else to_datetime(seconds)
            )
    return tuple(
        Link(base_url + path, path, title, dates[seconds], description)
        for path, title, seconds, description in rows
    )


def start_of(section: _Heading) -> int:
    """Where a section starts in the map's order (a bisect's key)."""
    return section.start


def _by_path(ranked: list[int], keys: list[str], paths: list[str], cut: int) -> None:
    """Order by path each run of ``ranked`` whose ``keys`` (in ``ranked``'s
    order) are equal, on either side of ``cut``: a stable sort by key alone
    leaves them in the parts' order. Few titles repeat: one pass finds them."""
    same = map(eq, keys, islice(keys, 1, None))  # at i: i and i + 1 are tied
    tied = [i for i in compress(range(len(keys) - 1), same) if i != cut - 1]
    runs: list[list[int]] = []
    for i in tied:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    for run in runs:
        span = slice(run[0], run[-1] + 2)
        ranked[span] = sorted(ranked[span], key=paths.__getitem__)


# A group of the map: its id (before made unique), heading, own path (its
# pages first; "" for the site's root), the path newest_first is asked about
# and its section's name (None: a group by path).
_Group = tuple[str, str, str, str, "str | None"]


def _groups(
    infos: Sequence[PartInfo], parts: Sequence[Part], labels: Mapping[str, str]
) -> tuple[list[_Group], list[int]]:
    """The map's groups in the order shown, and the group of each page (its
    place in that order). With configured sections (a part of a section other
    than the default's), one group per section, headed in words
    (``sections.heading``), in the order of their first parts; else by path:
    the general one, then by heading. ``newest_first`` is asked about a
    section as ``/name`` (the default's: ``/``)."""
    member_of: list[int] = []
    if any(info.section != DEFAULT for info in infos):
        named: dict[str, int] = {}
        for info, part in zip(infos, parts, strict=True):
            shown = named.setdefault(info.section, len(named))
            member_of.extend(repeat(shown, len(part.paths)))
        return [
            (
                _id((label(name),)),
                section_heading(name, labels),
                "",
                f"/{name}",
                name,
            )
            for name in named
        ], member_of
    deep: set[Key] = set().union(*(p.deep for p in parts))
    keys = list(chain.from_iterable(p.keys for p in parts))
    at = 0
    for part in parts:
        for i in compress(range(at, at + len(part.keys)), part.loose):
            if keys[i] not in deep:
                keys[i] = ()
        at += len(part.keys)
    ordered = by_path(set(keys), labels)
    place = {key: at for at, key in enumerate(ordered)}
    member_of.extend(map(place.__getitem__, keys))
    return list(ordered.values()), member_of


def headed(
    groups: Sequence[_Group], sizes: Sequence[int], newest: Callable[[str], bool]
) -> list[_Heading]:
    """The map's sections: its ``groups`` in order, each of its size, the
    next starting where it ends; each id made unique."""
    sections: list[_Heading] = []
    ids: set[str] = set()
    start = 0
    for (candidate, heading, own, asked, name), size in zip(groups, sizes, strict=True):
        id_ = _unique(candidate, ids)
        sections.append(_Heading(id_, heading, start, size, newest(asked), name, own))
        start += size
    return sections


def by_path(keys: set[Key], labels: Mapping[str, str]) -> dict[Key, _Group]:
    """The groups of pages by path, in the map's order: the general one,
    then by heading."""
    found: dict[Key, _Group] = {}
    general = section_heading(DEFAULT, labels)
    for key in sorted(keys, key=lambda k: (bool(k), natural(_heading(k)), k)):
        own = ("/" + "/".join(key)).rstrip("/")
        name = None if key else DEFAULT
        heading = _heading(key) if key else general
        found[key] = (_id(key), heading, own, own or "/", name)
    return found


def _age(seconds: int) -> str:
    """A sort key's text putting the newest first, pages without a date last."""
    if seconds <= UNDATED_SECONDS:
        return _UNDATED_LAST
    return f"{_NEWEST - seconds:017d}"


def _seconds(lastmod: datetime | None) -> int:
    """An entry's lastmod as a listing gives it."""
    moment = dated(lastmod)
    return UNDATED_SECONDS if moment is None else int(moment.timestamp())


def _deep(paths: Sequence[str]) -> frozenset[Key]:
    """The first segments of the paths that have a second, as section keys."""
    joined = "\n" + "\n".join(paths)
    if joined.count("\n") == len(paths):  # one path a line
        firsts = set(_DEEPER.findall(joined))
    else:
        firsts = {first for first, deeper in map(head_of, paths) if deeper}
    return frozenset((first,) for first in firsts)


def _heading(key: tuple[str, ...]) -> str:
    return " › ".join(words(s) for s in key) if key else section_heading(DEFAULT, {})


def _id(key: tuple[str, ...]) -> str:
    slug = _NOT_ID.sub("-", " ".join(key).lower()).strip("-")
    return f"section-{slug or 'pages'}"


def _unique(candidate: str, ids: set[str]) -> str:
    found, n = candidate, 1
    while found in ids:
        n += 1
        found = f"{candidate}-{n}"
    ids.add(found)
    return found
