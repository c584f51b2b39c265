"""The site map for people: a page of it (:func:`site_map`), and one store's map
kept once per version of the store (:class:`SiteMaps`): read by the store's
index where it keeps one, else arranged, on a thread of its own when the store
changes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from fnmatch import fnmatchcase
from typing import Protocol, runtime_checkable

from ..model import PartInfo
from ..sections import DEFAULT
from ..stores import Holder
from ..stores.contract import Listing, Mapped, Store
from .arrangement import Arrangement, Map, Part, SiteMap
from .indexed import IndexedMap
from .validators import versions_of

logger = logging.getLogger("sitemap_middleware")

# Seconds a request waits for a change to be arranged before it serves the
# previous map: less than serving a cold 50,000-URL part twice takes (25 ms
# each from SQLite, tests/benchmarks/site_map.py), so that a small site's
# change shows at once and a large site's page never costs more.
FRESH_WAIT = 0.04

# Links on one page: a person scans a few thousand, a browser renders them at
# once, and a site of a million pages still needs only 500 pages.
PAGE_LINKS = 2000


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
    source: Store | Holder,
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
    config's ``sections``, the map's sections are those, in the order of
    their parts, headed by their ``section_labels`` (else a readable form of
    the name; "Pages" for the pages none names).

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
    if isinstance(source, Holder):  # a middleware, not a store
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
    """One store's map, made once per store version and shared by every
    request and thread (one per :class:`Server`).

    A store version is the parts' versions (``store.parts()``, read for every
    served document anyway). A store that keeps the map's order
    (:class:`Mapped`, asked to here) has its groups counted, and each page's
    links read as asked (:class:`~.indexed.IndexedMap`). Any other is
    arranged in memory. Each part's pages are read once per version of
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
        labels: Mapping[str, str] | None = None,
    ) -> None:
        self._store = store
        if isinstance(store, Mapped):
            # Whoever reads the map asks the store to keep its order: from
            # the next write on, and for the pages stored before, placed by
            # the writer (until then the map is arranged).
            store.keep_places()
        self._labels = labels or {}
        globs = tuple(newest_first)
        self._newest = lambda path: any(fnmatchcase(path, g) for g in globs)
        self._site_name = site_name
        self._arranging = threading.Lock()  # one computation at a time
        self._parts: dict[int, Part] = {}  # guarded by _arranging
        self._current: Map | None = None
        self._done = threading.Event()  # the last arrangement started is over
        self._done.set()

    def arrangement(
        self, parts: Sequence[PartInfo] | None = None, *, latest: bool = False
    ) -> Map:
        """The map of the store as ``parts`` (its summaries, read now if not
        given) describe it; the previous one while that is being arranged,
        unless ``latest`` asks to wait for it.

        :raises StoreError: the store failed while the first (or the
            ``latest``) arrangement was made.
        """
        if parts is None:
            parts = self._store.parts()
        versions = versions_of(parts)
        current = self._current
        if current is not None and not self._stale(current, versions):
            return current
        if current is not None and not latest:
            # Most changes are arranged before a cold part would have been
            # served: then the request shows them; else the previous map.
            self._refresh(parts).wait(FRESH_WAIT)
            return self._current or current
        with self._arranging:
            current = self._current
            if current is None or self._stale(current, versions):
                current = self._current = self._arrange(parts)
            return current

    def _stale(self, current: Map, versions: tuple[tuple[int, str], ...]) -> bool:
        """Whether ``current`` is not the map of the store's ``versions``: made
        of others, or arranged in place of the store's index while a page had
        no place, which the writer has placed since."""
        if current.versions != versions:
            return True
        return (
            isinstance(current, Arrangement)
            and current.stand_in
            and isinstance(self._store, Mapped)
            and not self._store.place_due
        )

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

    def _arrange(self, infos: Sequence[PartInfo]) -> Map:
        store = self._store
        # A store that keeps the map's order is read by it, unless the map
        # is of configured sections (their parts make the groups) or a row
        # is not placed yet.
        stand_in = False
        if isinstance(store, Mapped) and all(p.section == DEFAULT for p in infos):
            counts = store.map_counts()
            if counts is not None:
                self._parts.clear()
                name = None if self._site_name is None else self._site_name()
                return IndexedMap.of(
                    tuple(infos), counts, store, self._newest, name, self._labels
                )
            stand_in = True
        held = self._parts
        for number in held.keys() - {p.number for p in infos}:
            del held[number]  # a part no longer listed
        for info in infos:
            kept = held.get(info.number)
            if kept is None or kept.version != info.version:
                # The summary was read first: a part changed meanwhile is
                # held under the older version and read again next time.
                held[info.number] = self._read(info)
        name = None if self._site_name is None else self._site_name()
        parts = [held[p.number] for p in infos]
        arranged = Arrangement.of(tuple(infos), parts, self._newest, name, self._labels)
        return replace(arranged, stand_in=True) if stand_in else arranged

    def _read(self, info: PartInfo) -> Part:
        store = self._store
        if isinstance(store, Listing):  # only what the map shows
            return Part.listed(info.version, store.listing(info.number))
        return Part.read(info.version, store.entries(info.number))
