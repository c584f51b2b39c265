"""The site map for people: the stored pages grouped by section, titled, sorted and
split into pages (:func:`site_map`; :class:`SiteMaps` keeps the arrangement of one
store, once per version of it), and that map as one accessible HTML page
(:func:`render`).
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from fnmatch import fnmatchcase
from html import escape
from typing import Protocol, runtime_checkable
from urllib.parse import unquote

from ..model import Entry, PartInfo, dated
from ..sections import DEFAULT, label
from ..stores.contract import Store
from ..visible import visible

logger = logging.getLogger("sitemap_middleware")

# Seconds a request waits for a change to be arranged before it serves the
# previous map: less than serving a cold 50,000-URL part twice takes (25 ms
# each from SQLite, tests/benchmarks/site_map.py), so that a small site's
# change shows at once and a large site's page never costs more.
FRESH_WAIT = 0.04

# Links on one page: a person scans a few thousand, a browser renders them at
# once, and a site of a million pages still needs only 500 pages.
PAGE_LINKS = 2000
# Sections a page's index names at most. Beyond, a site of many small
# sections (a profile per user) would carry its whole index on every page,
# many times its links: the index then names the sections on the page.
MAX_INDEX = 200
# The section of the pages no section claims (the home page, "/about").
GENERAL = "Pages"
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
    readable form of the path) and its ``lastmod`` (``None``: it claims
    none)."""

    url: str
    path: str
    title: str
    lastmod: datetime | None


@dataclass(frozen=True, slots=True)
class Section:
    """A heading and its links, as they fall on one page of the map.

    ``id`` is the section's fragment identifier, the same on every page;
    ``continued`` tells that the section began on an earlier page; ``newest``
    that its links go newest first, with their dates (``newest_first``),
    else by title.
    """

    id: str
    heading: str
    links: tuple[Link, ...]
    continued: bool = False
    newest: bool = False


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


@runtime_checkable
class _Source(Protocol):
    @property
    def store(self) -> Store: ...

    @property
    def config(self) -> _HasBaseURL: ...


class _HasBaseURL(Protocol):
    @property
    def base_url(self) -> str: ...


@runtime_checkable
class _Served(Protocol):
    """A middleware: its server keeps the arrangement of its store."""

    @property
    def server(self) -> object: ...


@runtime_checkable
class _Arranges(Protocol):
    @property
    def site_maps(self) -> SiteMaps: ...


def site_map(
    source: Store | _Source,
    base_url: str | None = None,
    page: int = 1,
    *,
    per_page: int = PAGE_LINKS,
) -> SiteMap:
    """The grouped, titled pages of the sitemap, one page of them.

    It lists exactly what the XML sitemap lists, read from the same store.
    Sections come in alphabetical order with the general one (the home page
    and the pages no section claims) first; links by title, case-insensitive
    and with numbers in numeric order ("Part 2" before "Part 10"). With the
    config's ``sections``, the map's sections are those, named as configured
    (``default`` for the pages none names), in the order of their parts.

    :param source: a store, or a middleware (whose store and ``base_url`` are
        used, and whose arrangement of the store is shared with the served
        page: read again only when a part changed).
    :param base_url: the site's public URL; by default the middleware's.
    :param page: which page of the map, from 1.
    :param per_page: links on one page.
    :raises LookupError: for a page the map does not have (page 1 always
        exists, empty for an empty store).
    :raises StoreError: when the store cannot be read.

    .. code-block:: python

        @app.get("/site-map")
        def site_map_page():
            return render_template(
                "site_map.html", site_map=site_map(app.extensions["sitemap"])
            )
    """
    maps: SiteMaps | None = None
    if isinstance(source, _Source):  # a middleware, not a store
        store = source.store
        base_url = source.config.base_url if base_url is None else base_url
        server = source.server if isinstance(source, _Served) else None
        if isinstance(server, _Arranges):
            maps = server.site_maps
    else:
        store = source
    if base_url is None:
        raise TypeError("site_map() needs base_url when given a store")
    arranged = (SiteMaps(store) if maps is None else maps).arrangement(latest=True)
    return arranged.page(page, per_page, base_url.rstrip("/"))


class SiteMaps:
    """The arrangement of one store's map, computed once per store version and
    shared by every request and thread (one per :class:`Server`).

    A store version is the parts' versions (``store.parts()``, read for every
    served document anyway). Each part's pages are read once per version of
    that part: a change re-reads the parts it changed, then sorts again.
    Only the first arrangement is made on a request, which waits for it,
    having nothing to serve. A change is arranged on a thread of its own,
    one at a time; a request waits for it ``FRESH_WAIT`` at most, then serves
    the previous arrangement with its own validators: a site map page costs
    about what a cold part costs, whatever the store's size, and no worker
    queues behind a computation (the page is cached for ``cache_max_age``
    anyway).
    """

    def __init__(
        self,
        store: Store,
        newest_first: Sequence[str] = (),
        site_name: Callable[[], str | None] | None = None,
    ) -> None:
        self._store = store
        globs = tuple(newest_first)
        self._newest = lambda path: any(fnmatchcase(path, g) for g in globs)
        self._site_name = site_name
        self._arranging = threading.Lock()  # one computation at a time
        self._parts: dict[int, _Part] = {}  # guarded by _arranging
        self._current: Arrangement | None = None
        self._done = threading.Event()  # the last arrangement started is over
        self._done.set()

    def arrangement(
        self, parts: Sequence[PartInfo] | None = None, *, latest: bool = False
    ) -> Arrangement:
        """The map of the store as ``parts`` (its summaries, read now if not
        given) describe it; the previous one while that is being arranged,
        unless ``latest`` asks to wait for it.

        :raises StoreError: the store failed while the first (or the
            ``latest``) arrangement was made.
        """
        if parts is None:
            parts = self._store.parts()
        versions = _versions(parts)
        current = self._current
        if current is not None and current.versions == versions:
            return current
        if current is not None and not latest:
            # Most changes are arranged before a cold part would have been
            # served: then the request shows them; else the previous map.
            self._refresh(parts).wait(FRESH_WAIT)
            return self._current or current
        with self._arranging:
            current = self._current
            if current is None or current.versions != versions:
                current = self._current = self._arrange(parts)
            return current

    def _refresh(self, parts: Sequence[PartInfo]) -> threading.Event:
        """Arrange ``parts`` on a thread of its own, unless one is at it; the
        event that says the arrangement under way is done."""
        if not self._arranging.acquire(blocking=False):
            return self._done  # under way: its result, or the next one's
        done = self._done = threading.Event()

        def arrange() -> None:
            try:
                self._current = self._arrange(parts)
            except Exception:  # the store failed, or a bug: the next request retries
                logger.warning("arranging the site map failed", exc_info=True)
            finally:
                self._arranging.release()
                done.set()

        threading.Thread(target=arrange, name="sitemap-site-map", daemon=True).start()
        return done

    def _arrange(self, infos: Sequence[PartInfo]) -> Arrangement:
        held = self._parts
        for number in held.keys() - {p.number for p in infos}:
            del held[number]  # a part no longer listed
        for info in infos:
            kept = held.get(info.number)
            if kept is None or kept.version != info.version:
                # The summary was read first: a part changed meanwhile is
                # held under the older version and read again next time.
                entries = self._store.entries(info.number)
                held[info.number] = _Part.read(info.version, entries)
        name = None if self._site_name is None else self._site_name()
        parts = [held[p.number] for p in infos]
        return Arrangement.of(tuple(infos), parts, self._newest, name)


def _versions(parts: Iterable[PartInfo]) -> tuple[tuple[int, str], ...]:
    return tuple((p.number, p.version) for p in parts)


@dataclass(frozen=True, slots=True)
class _Part:
    """One part's pages as the map shows them, in columns: path, title (the
    stored one, else a readable form of the path), lastmod, and the section
    each falls in. ``loose`` marks a one-segment page outside a route with a
    parameter: it joins its section only if another page lies deeper in it
    (``deep`` holds the first segments of this part's deeper pages)."""

    version: str
    paths: tuple[str, ...]
    titles: tuple[str, ...]
    lastmods: tuple[datetime | None, ...]
    keys: tuple[Key, ...]
    loose: bytes
    deep: frozenset[Key]

    @classmethod
    def read(cls, version: str, entries: Iterable[Entry]) -> _Part:
        paths: list[str] = []
        titles: list[str] = []
        lastmods: list[datetime | None] = []
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
        )


@dataclass(frozen=True, slots=True)
class _Heading:
    """A section of the arranged map: links ``start`` to ``start + size``."""

    id: str
    heading: str
    start: int
    size: int
    newest: bool


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

    @classmethod
    def of(
        cls,
        infos: tuple[PartInfo, ...],
        parts: Sequence[_Part],
        newest: Callable[[str], bool] = lambda path: False,
        site_name: str | None = None,
    ) -> Arrangement:
        """Every page in its section, the sections and their links sorted:
        by title, or newest first where ``newest`` says so of the section's
        path (``/blog``; ``/`` for the general one)."""
        paths = [path for p in parts for path in p.paths]
        titles = [title for p in parts for title in p.titles]
        lastmods = [when for p in parts for when in p.lastmods]
        order: list[int] = []
        sections: list[_Heading] = []
        ids: set[str] = set()
        for candidate, heading, own, asked, members in _groups(infos, parts):
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
                )
            )
        return cls(
            infos,
            _versions(infos),
            tuple(paths[i] for i in order),
            tuple(titles[i] for i in order),
            tuple(lastmods[i] for i in order),
            tuple(sections),
            site_name,
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
                links = tuple(
                    Link(base_url + path, path, title, lastmod)
                    for path, title, lastmod in zip(
                        self.paths[span],
                        self.titles[span],
                        self.lastmods[span],
                        strict=True,
                    )
                )
                shown.append(
                    Section(section.id, section.heading, links, low > 0, section.newest)
                )
        return SiteMap(tuple(shown), tuple(index), page, pages, total, self.site_name)


# A group of the map: its id (before made unique), heading, own path (its
# pages first; "" for the site's root), the path newest_first is asked about
# and its pages' places.
_Group = tuple[str, str, str, str, list[int]]


def _groups(infos: Sequence[PartInfo], parts: Sequence[_Part]) -> list[_Group]:
    """The map's groups in the order shown. With configured sections (a part
    of a section other than the default's), one group per section, headed by
    its name (``sections.label``), in the order of their first parts; else
    by path: the general one, then by heading. ``newest_first`` is asked
    about a section as ``/name`` (the default's: ``/``)."""
    if any(info.section != DEFAULT for info in infos):
        named: dict[str, list[int]] = {}
        at = 0
        for info, part in zip(infos, parts, strict=True):
            named.setdefault(info.section, []).extend(range(at, at + len(part.paths)))
            at += len(part.paths)
        return [
            (_id((label(name),)), label(name), "", f"/{name}", members)
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
    for key in sorted(groups, key=lambda k: (bool(k), _natural(_heading(k)), k)):
        own = ("/" + "/".join(key)).rstrip("/")
        found.append((_id(key), _heading(key), own, own or "/", groups[key]))
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
    return " › ".join(_words(s) for s in key) if key else GENERAL


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


# -- HTML ---------------------------------------------------------------------

# Contrast (WCAG 2.2 SC 1.4.3, 4.5:1 for text): #1a1a1a on white is 17:1,
# links #0b57d0 are 6.1:1, the muted #555 is 7.5:1.
_STYLE = """\
*{box-sizing:border-box}
body{margin:0;font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;\
color:#1a1a1a;background:#fff}
.wrap{max-width:72rem;margin:0 auto;padding:0 1.25rem}
a{color:#0b57d0;text-underline-offset:.15em}
a:visited{color:#6b2fb3}
a:focus-visible{outline:3px solid #1a1a1a;outline-offset:2px;border-radius:2px}
.skip{position:absolute;left:1rem;top:-4rem;background:#fff;padding:.5rem 1rem;\
border:2px solid #1a1a1a;z-index:1}
.skip:focus{top:1rem}
header{border-bottom:1px solid #ddd;padding:1.5rem 0 1rem}
h1{margin:0;font-size:2rem;line-height:1.2}
header p{margin:.25rem 0 0;color:#555}
nav ul,main ul{list-style:none;margin:0;padding:0}
.sections{padding:1rem 0;border-bottom:1px solid #ddd}
.sections ul{display:flex;flex-wrap:wrap;gap:.25rem 1.25rem}
.count{color:#555;font-size:.875rem}
main{padding:.5rem 0 2rem}
section{margin-top:1.5rem}
h2{font-size:1.25rem;margin:0 0 .5rem;padding-bottom:.25rem;\
border-bottom:2px solid #eee}
main ul{columns:16rem;column-gap:2rem}
main li{break-inside:avoid;padding:.15rem 0}
.pages{display:flex;gap:1.5rem;align-items:center;padding:1rem 0;\
border-top:1px solid #ddd}
"""


def render(
    site_map: SiteMap,
    *,
    path: str,
    lang: str = "en",
    title: str = "Site map",
    site_name: str | None = None,
) -> str:
    """The HTML page of ``site_map``, served at ``path``, its ``<title>``
    naming the site after the page. Every title and URL is escaped; there is
    no script. Titles and headings are isolated (``dir="auto"``, HTML's
    bidirectional isolation): one in a right-to-left script never reorders
    the text around it."""
    heading = title if site_map.pages == 1 else f"{title}, page {site_map.page}"
    if site_name:
        heading = f"{heading} – {site_name}"
    out = [
        "<!doctype html>",
        f'<html lang="{_attr(lang)}">',
        '<head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_text(heading)}</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
        '<a class="skip" href="#main">Skip to the list of pages</a>',
        '<header><div class="wrap">',
        f"<h1>{_text(title)}</h1>",
        f"<p>{_summary(site_map)}</p>",
        "</div></header>",
    ]
    index, label = site_map.index, "Sections"
    if len(index) > MAX_INDEX:
        here = {section.id for section in site_map.sections}
        index = tuple(entry for entry in index if entry.id in here)
        label = "Sections on this page"
    if index:
        out.append(f'<nav class="sections" aria-label="{label}"><div class="wrap"><ul>')
        for entry in index:
            href = f"#{entry.id}" if entry.page == site_map.page else None
            if href is None:
                href = f"{_page_href(path, entry.page)}#{entry.id}"
            out.append(
                f'<li><a href="{_attr(href)}" dir="auto">{_text(entry.heading)}</a>'
                f' <span class="count">({entry.links})</span></li>'
            )
        out.append("</ul></div></nav>")
    out.append('<main id="main" tabindex="-1"><div class="wrap">')
    if not site_map.sections:
        out.append("<p>No pages are listed yet.</p>")
    for section in site_map.sections:
        name = _text(section.heading)
        if section.continued:
            name += " (continued)"
        out.append(
            f'<section aria-labelledby="{section.id}">'
            f'<h2 id="{section.id}" dir="auto">{name}</h2><ul>'
        )
        out.extend(
            f'<li><a href="{_attr(link.url)}" dir="auto">{_text(link.title)}</a>'
            f"{_date(link.lastmod) if section.newest else ''}</li>"
            for link in section.links
        )
        out.append("</ul></section>")
    out.append("</div></main>")
    if site_map.pages > 1:
        out.append(_pager(site_map, path))
    out.append("</body>\n</html>\n")
    return "\n".join(out)


def _date(lastmod: datetime | None) -> str:
    """A link's date, as a newest-first section shows it (none without one)."""
    if lastmod is None:
        return ""
    day = lastmod.date().isoformat()
    return f' <time datetime="{day}">{day}</time>'


def _summary(site_map: SiteMap) -> str:
    pages = "page" if site_map.links == 1 else "pages"
    sections = "section" if len(site_map.index) == 1 else "sections"
    text = f"{site_map.links} {pages} in {len(site_map.index)} {sections}"
    if site_map.pages > 1:
        text += f"; page {site_map.page} of {site_map.pages}"
    return text + "."


def _pager(site_map: SiteMap, path: str) -> str:
    parts = ['<nav class="wrap pages" aria-label="Pages of the site map">']
    if site_map.page > 1:
        href = _page_href(path, site_map.page - 1)
        parts.append(f'<a href="{_attr(href)}" rel="prev">Previous page</a>')
    parts.append(f"<span>Page {site_map.page} of {site_map.pages}</span>")
    if site_map.page < site_map.pages:
        href = _page_href(path, site_map.page + 1)
        parts.append(f'<a href="{_attr(href)}" rel="next">Next page</a>')
    parts.append("</nav>")
    return "".join(parts)


def _page_href(path: str, page: int) -> str:
    # Page 1 has one address, the path itself.
    return path if page == 1 else f"{path}?page={page}"


def _text(value: str) -> str:
    return escape(value, quote=False)


def _attr(value: str) -> str:
    return escape(value, quote=True)
