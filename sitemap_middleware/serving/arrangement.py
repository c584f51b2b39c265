"""The site map arranged: the stored pages grouped into sections, headed and
sorted, held compactly (Arrangement), and one page of it as site_map() gives
it (SiteMap: its Sections, their Links, the IndexEntry of every section).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import unquote

from ..model import Entry, PartInfo, dated
from ..sections import DEFAULT, label
from ..sections import heading as section_heading
from ..visible import visible

HOME = "Home"

_DIGITS = re.compile(r"(\d+)")
_SEPARATORS = re.compile(r"[-_+\s]+")
_NOT_ID = re.compile(r"[^a-z0-9]+")
_EXTENSIONS = (".html", ".htm", ".php", ".aspx")
# A title's own NUL in a sort key: above every mark _number writes.
_TEXT_NUL = "\0\U0010ffff"

# A section: the path segments it stands for, () the general one.
Key = tuple[str, ...]


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


def versions_of(parts: Iterable[PartInfo]) -> tuple[tuple[int, str], ...]:
    """What tells an arrangement's store apart: each part's number and version."""
    return tuple((p.number, p.version) for p in parts)


@dataclass(frozen=True, slots=True)
class Part:
    """One part's pages as the map shows them, in columns: path, title (the
    stored one, else a readable form of the path), lastmod, description,
    and the section each falls in. ``loose`` marks a one-segment page
    outside a route with a parameter: it joins its section only if another
    page lies deeper in it
    (``deep`` holds the first segments of this part's deeper pages)."""

    version: str
    paths: tuple[str, ...]
    titles: tuple[str, ...]
    lastmods: tuple[datetime | None, ...]
    keys: tuple[Key, ...]
    loose: bytes
    deep: frozenset[Key]
    descriptions: tuple[str | None, ...] = ()

    @classmethod
    def read(cls, version: str, entries: Iterable[Entry]) -> Part:
        paths: list[str] = []
        titles: list[str] = []
        lastmods: list[datetime | None] = []
        descriptions: list[str | None] = []
        keys: list[Key] = []
        loose = bytearray()
        deep: set[Key] = set()
        # Pages share their section's key and often their lastmod: one object
        # each, not one per page.
        dates: dict[datetime | None, datetime | None] = {}
        heads: dict[str, Key] = {}
        routed: dict[str, Key | None] = {}
        for entry in entries:
            path = entry.path
            bare = path.partition("?")[0]
            if "//" in bare:  # empty segments count for nothing
                segments = _segments(bare)
                first, deeper = (segments or [""])[0], len(segments) > 1
            else:
                first, _, rest = bare.strip("/").partition("/")
                deeper = bool(rest)
            head = heads.get(first)
            if head is None:
                head = heads[first] = (first,) if first else ()
            if deeper:
                deep.add(head)
            route = entry.route
            key: Key | None = None
            if route is not None:
                if route not in routed:
                    routed[route] = _route_section(route)
                key = routed[route]
            paths.append(path)
            titles.append(_title(entry))
            lastmod = dated(entry.lastmod)  # None for a page that claims none
            lastmods.append(dates.setdefault(lastmod, lastmod))
            descriptions.append(entry.description or None)
            keys.append(head if key is None else key)
            # A one-segment page joins its section only if children name it.
            loose.append(key is None and not deeper)
        return cls(
            version,
            tuple(paths),
            tuple(titles),
            tuple(lastmods),
            tuple(keys),
            bytes(loose),
            frozenset(deep),
            tuple(descriptions),
        )


@dataclass(frozen=True, slots=True)
class _Heading:
    """A section of the arranged map: links ``start`` to ``start + size``."""

    id: str
    heading: str
    start: int
    size: int
    newest: bool
    name: str | None


@dataclass(frozen=True, slots=True)
class Arrangement:
    """The whole map in its order, held compactly: the pages' paths, titles and
    lastmods in the order they are shown, and where each section starts; a
    page of it is a slice (:meth:`page`). ``parts`` are the summaries it was
    arranged from (the page's validators)."""

    parts: tuple[PartInfo, ...]
    versions: tuple[tuple[int, str], ...]
    paths: tuple[str, ...]
    titles: tuple[str, ...]
    lastmods: tuple[datetime | None, ...]
    sections: tuple[_Heading, ...]
    site_name: str | None = None
    descriptions: tuple[str | None, ...] = ()

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
        paths = [path for p in parts for path in p.paths]
        titles = [title for p in parts for title in p.titles]
        lastmods = [when for p in parts for when in p.lastmods]
        descriptions = [
            text for p in parts for text in (p.descriptions or (None,) * len(p.paths))
        ]
        order: list[int] = []
        sections: list[_Heading] = []
        ids: set[str] = set()
        for candidate, heading, own, asked, members, name in _groups(
            infos, parts, labels or {}
        ):
            dated = newest(asked)
            ranked = sorted(
                zip(
                    [
                        (_age(lastmods[i]), _natural(titles[i]))
                        if dated
                        else _natural(titles[i])
                        for i in members
                    ],
                    [paths[i] for i in members],
                    members,
                    strict=True,
                )
            )
            # The section's own page first ("/", "/blog/"), then by title (or
            # newest first): a path that is its prefix, slashes after it at most.
            cut = len(own)
            first = [
                i
                for _, path, i in ranked
                if path.startswith(own) and not path[cut:].partition("?")[0].strip("/")
            ]
            order.extend(first)
            if first:
                mine = set(first)
                order.extend(i for _, _, i in ranked if i not in mine)
            else:
                order.extend(i for _, _, i in ranked)
            sections.append(
                _Heading(
                    _unique(candidate, ids),
                    heading,
                    len(order) - len(ranked),
                    len(ranked),
                    dated,
                    name,
                )
            )
        return cls(
            infos,
            versions_of(infos),
            tuple(paths[i] for i in order),
            tuple(titles[i] for i in order),
            tuple(lastmods[i] for i in order),
            tuple(sections),
            site_name,
            tuple(descriptions[i] for i in order),
        )

    def page(self, page: int, per_page: int, base_url: str) -> SiteMap:
        """Page ``page`` of the map, ``per_page`` links a page, links under
        ``base_url``; a section that does not fit goes on, ``continued``, on
        the next."""
        if per_page < 1:
            raise ValueError(f"per_page must be at least 1, got {per_page}")
        total = len(self.paths)
        pages = max(1, -(-total // per_page))
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
        return SiteMap(tuple(shown), tuple(index), page, pages, total, self.site_name)

    def links(self, span: slice, base_url: str) -> tuple[Link, ...]:
        """The links of the map's pages ``span`` takes, under ``base_url``."""
        return tuple(
            Link(base_url + path, path, title, lastmod, description)
            for path, title, lastmod, description in zip(
                self.paths[span],
                self.titles[span],
                self.lastmods[span],
                self.descriptions[span] or (None,) * len(self.paths[span]),
                strict=True,
            )
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

    def description(self, path: str) -> str | None:
        """The description of the page at ``path``, if the map has both."""
        try:
            at = self.paths.index(path)
        except ValueError:
            return None
        return self.descriptions[at] if self.descriptions else None


# A group of the map: its id (before made unique), heading, own path (its
# pages first; "" for the site's root), the path newest_first is asked about,
# its pages' places and its section's name (None: a group by path).
_Group = tuple[str, str, str, str, list[int], "str | None"]


def _groups(
    infos: Sequence[PartInfo], parts: Sequence[Part], labels: Mapping[str, str]
) -> list[_Group]:
    """The map's groups in the order shown. With configured sections (a part
    of a section other than the default's), one group per section, headed in
    words (``sections.heading``), in the order of their first parts; else
    by path: the general one, then by heading. ``newest_first`` is asked
    about a section as ``/name`` (the default's: ``/``)."""
    if any(info.section != DEFAULT for info in infos):
        named: dict[str, list[int]] = {}
        at = 0
        for info, part in zip(infos, parts, strict=True):
            named.setdefault(info.section, []).extend(range(at, at + len(part.paths)))
            at += len(part.paths)
        return [
            (
                _id((label(name),)),
                section_heading(name, labels),
                "",
                f"/{name}",
                members,
                name,
            )
            for name, members in named.items()
        ]
    deep: set[Key] = set().union(*(p.deep for p in parts))
    groups: dict[Key, list[int]] = {}
    at = 0
    for part in parts:
        for key, single in zip(part.keys, part.loose, strict=True):
            if single and key not in deep:
                key = ()
            groups.setdefault(key, []).append(at)
            at += 1
    found: list[_Group] = []
    general = section_heading(DEFAULT, labels)
    for key in sorted(groups, key=lambda k: (bool(k), _natural(_heading(k)), k)):
        own = ("/" + "/".join(key)).rstrip("/")
        name = None if key else DEFAULT
        shown = _heading(key) if key else general
        found.append((_id(key), shown, own, own or "/", groups[key], name))
    return found


def _age(lastmod: datetime | None) -> float:
    """A sort key putting the newest first, pages without a date last."""
    return math.inf if lastmod is None else -lastmod.timestamp()


def _segments(path: str) -> list[str]:
    return [s for s in path.split("?")[0].split("/") if s]


def _route_section(route: str) -> Key | None:
    """The section of a route with a parameter: its fixed segments before the
    first ("/blog/<slug>" -> ("blog",), "/docs/{lang}/{page}" -> ("docs",));
    ``None`` for a route without one (its pages go by their path)."""
    if "<" not in route and "{" not in route:
        return None
    fixed: list[str] = []
    for segment in _segments(route):
        if "<" in segment or "{" in segment:
            break
        fixed.append(segment)
    return tuple(fixed)


def _words(segment: str) -> str:
    # A path's escapes may hold what is no text (a right-to-left override).
    text = visible(unquote(segment))
    for extension in _EXTENSIONS:
        if text.lower().endswith(extension):
            text = text[: -len(extension)]
    text = _SEPARATORS.sub(" ", text).strip()
    return text[:1].upper() + text[1:]


def _heading(key: tuple[str, ...]) -> str:
    return " › ".join(_words(s) for s in key) if key else section_heading(DEFAULT, {})


def _title(entry: Entry) -> str:
    title = (entry.title or "").strip()
    if title:
        return title
    path, _, query = entry.path.partition("?")
    segments = _segments(path)
    words = _words(segments[-1]) if segments else HOME
    if query:
        words = f"{words} ({visible(unquote(query.replace('&', ', ')))})"
    return words or entry.path


def _natural(text: str) -> str:
    """The key that sorts ``text`` case-insensitively with its numbers in
    numeric order ("part 2" before "Part 10"), as one string (a tuple of
    texts and ints sorts the same, at several times the memory): each number
    becomes a NUL, its length as one character, its decimal digits; the text
    ends with a NUL; a NUL of the text itself sorts after those marks."""
    folded = text.casefold()
    if "\0" in folded:
        folded = folded.replace("\0", _TEXT_NUL)
    return _DIGITS.sub(_number, folded) + "\0"


def _number(match: re.Match[str]) -> str:
    # int() reads any Unicode digits; str() writes them ASCII, without zeros
    # in front. A path is at most 2,047 characters: its length fits in one.
    digits = str(int(match.group()))
    return f"\0{chr(1 + len(digits))}{digits}"


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
