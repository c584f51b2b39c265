"""The store contract: the ``Store`` protocol every backend implements, the
optional capability protocols asked with ``isinstance``, their value types and
bounds, and the small rules the backends share to keep them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, NamedTuple, Protocol, runtime_checkable

from ..model import Entry, PartInfo, to_datetime
from ..sitemaps import MAX_NEWS, NEWS_WINDOW


@runtime_checkable
class Store(Protocol):
    """What the middleware needs from a store. All methods are synchronous.

    Errors: a store that cannot reach or use its backend raises
    :class:`~sitemap_middleware.StoreError` (an outage: the recorder retries
    and serving falls back to the last good bytes); one whose data cannot be
    used until someone acts (damaged, of a schema this release cannot read)
    raises its subclass ``StoreFault`` (the recorder says so once and looks
    again rarely; serving answers 503); a write to a store that can only be
    read raises ``StoreReadOnly`` (its pages are served, writes dropped).
    An entry no sitemap may hold (a naive ``lastmod``, a path that is not
    one, a ``<url>`` larger than a part) raises ``ValueError`` before anything
    of its batch is written.
    Anything else is a bug in the store.
    """

    part_size: int
    part_bytes: int

    def upsert(self, entries: Iterable[Entry]) -> int:
        """Add or update entries; return how many rows changed."""

    def remove(self, paths: Iterable[str]) -> int:
        """Remove paths; return how many were there."""

    def count(self, route: str | None = None) -> int:
        """The number of stored paths; with a route template, of those whose
        route is that template (an index or a counter, never a scan)."""

    def known(self, paths: Iterable[str]) -> set[str]:
        """Which of these paths are stored: one indexed read a batch."""

    def parts(self) -> list[PartInfo]:
        """The non-empty parts, in order."""

    def part(self, number: int) -> PartInfo | None:
        """One part's summary, ``None`` if it does not exist or is empty."""

    def fragments(self, number: int) -> Iterator[bytes]:
        """One part's stored ``<url>`` fragments in first-seen order, read in
        runs of ``layout.run_rows`` (keyset pagination) and yielded joined, a
        run at a time."""

    def entries(self, number: int) -> Iterator[Entry]:
        """One part's entries in first-seen order, as the store decides with:
        path, lastmod, fingerprint and route (the rest is in the fragment)."""

    def close(self) -> None:
        """Release connections; the store reopens lazily if used again."""


@runtime_checkable
class Adds(Protocol):
    """Writes that only add pages (the ``import`` command's): a path the store
    holds is left as it is, decided in the write's own transaction, so that a
    page a visit records meanwhile is never overruled. A store without it is
    asked ``known`` first, then written."""

    def add(self, entries: Iterable[Entry]) -> int:
        """Write the entries whose paths the store does not hold; how many of
        them it wrote (each path once, its last entry)."""


# A page as the site map shows it: path, route, title, description and lastmod
# (epoch seconds; UNDATED_SECONDS for none claimed), as the store keeps them.
Listed = tuple[str, str | None, str | None, str | None, int]


@runtime_checkable
class Listing(Protocol):
    """A part's pages read for the site map: only the columns it shows, as
    stored (no ``Entry``, no datetime), a run at a time. Without it the map
    reads :meth:`Store.entries`."""

    def listing(self, number: int) -> Iterator[list[Listed]]:
        """One part's pages in first-seen order, in the store's own runs."""


class MapCount(NamedTuple):
    """How many pages of one map group (``places.Place.group``) are its own
    page or not (``own``), and of those how many are ``loose``; ``deep``:
    another page lies deeper in the group (its loose pages stay in it),
    asked only where it has loose ones."""

    group: str
    own: bool
    pages: int
    loose: int
    deep: bool


class MapSpan(NamedTuple):
    """Pages of the map a read takes: those of ``group`` that are (or are
    not: ``own``) its own page, its loose ones only if ``loose``, with the
    loose pages of the ``joined`` groups (those the general group takes
    in); in the map's order: by title's natural key, then path (newest
    first before that, pages without a date last, where ``newest``)."""

    group: str
    own: bool
    loose: bool = True
    joined: tuple[str, ...] = ()
    newest: bool = False


@runtime_checkable
class Mapped(Protocol):
    """The site map's order kept with the pages: each row's place
    (``places.places``) written with it and indexed, so that a page of the
    map is read by the index rather than arranged from every row. Without
    it the map arranges the whole listing (:class:`Listing`).

    A store keeps places once asked to (the map is served): until then, and
    for rows another store object wrote without (an import, a worker of an
    earlier release), a row has none, and :meth:`place_rows` gives them theirs."""

    place_due: bool
    """Whether rows without a place may be stored (set by
    :meth:`keep_places` and by a :meth:`map_counts` that met one)."""

    def keep_places(self) -> None:
        """Write each row's place from now on, and place those without."""

    def place_rows(self, limit: int) -> int:
        """Give up to ``limit`` rows without a place theirs, in one write;
        how many (fewer than ``limit``: none is left, ``place_due`` off)."""

    def map_counts(self) -> list[MapCount] | None:
        """Every group's pages counted, by own page or not; ``None`` while a
        row has no place (``place_due`` then set)."""

    def map_rows(
        self, span: MapSpan, offset: int = 0, limit: int | None = None
    ) -> list[Listed]:
        """The pages of ``span`` in the map's order, ``offset`` on, at most
        ``limit``."""


@runtime_checkable
class Shared(Protocol):
    """What a store shares between the writers beyond the pages: the site's
    counters and a few named settings. Every store of the package has it; a
    third-party store without it still records and serves, with per-process
    counters only and no re-check of a changed config.
    """

    def add_counts(self, counts: Mapping[str, int]) -> None:
        """Add ``counts`` (reason -> how many more) to the site's counters,
        in one write: each writer sends its deltas, never a total. A counter
        stops at ``MAX_COUNT``."""

    def counts(self) -> dict[str, int]:
        """The site's counters: the sum of every writer's deltas so far, as
        integers, at most ``MAX_COUNT`` each."""

    def setting(self, name: str) -> str | None:
        """A value the writers share (the digest of the config the pages
        follow), ``None`` when never set."""

    def set_setting(self, name: str, value: str) -> None:
        """Set ``name``; the last writer wins."""


@runtime_checkable
class Pushes(Protocol):
    """The pending IndexNow pushes: a set of paths shared by every writer, each
    free (lease 0) or claimed until a time (epoch seconds), so that one worker
    of all sends each change. A store queues paths in the transaction of the
    write that adds, changes or removes them, inside :meth:`Pushing.pushing`;
    a path queued again goes back to free, and is sent again."""

    def queue_pushes(self, paths: Iterable[str]) -> None:
        """Add paths to the pending set, free; a pending path, claimed or not,
        becomes free (changed again, it is sent again)."""

    def claim_pushes(self, limit: int, now: float, until: float) -> list[str]:
        """Claim up to ``limit`` pending paths that are free or whose lease
        ended by ``now``, leased until ``until`` (which also names the claim),
        in one atomic step: two claims never share a path while a lease holds."""

    def pushed(self, paths: Iterable[str], until: float) -> int:
        """Delete those of ``paths`` still held by the claim ``until`` (a path
        queued again since stays pending); return how many."""

    def retry_pushes(self, paths: Iterable[str], until: float, at: float) -> None:
        """Those of ``paths`` still held by the claim ``until`` may be claimed
        again from ``at`` on (by any worker)."""

    def pending_pushes(self) -> int:
        """How many paths are pending, claimed or not."""


@runtime_checkable
class Withdrawing(Protocol):
    """Removals that withdraw pending IndexNow pushes: what the config re-check
    asks of a store (a store with :class:`Pushing` has it, and so has the
    command line's held store, which withdraws when its removals are applied)."""

    def withdrawing(self) -> AbstractContextManager[None]:
        """The block in which this thread's removals also withdraw the pending
        pushes of the paths they remove, claimed or not, in the removal's own
        transaction: the removals of URLs the config now refuses, which are
        never sent (a push queued before the config refused them included)."""


@runtime_checkable
class Pushing(Withdrawing, Protocol):
    """The writes that queue their IndexNow pushes: inside :meth:`pushing`, a
    store with :class:`Pushes` queues what an upsert or removal adds, changes
    or removes, in the write's own transaction; inside :meth:`withdrawing` a
    removal takes its paths out of the pending set instead. :class:`StoreBase`
    has it."""

    def pushing(self) -> AbstractContextManager[None]:
        """The block in which this thread's upserts and removals also queue
        the paths they add, whose ``lastmod`` they move, or remove."""


@runtime_checkable
class Hreflang(Protocol):
    """The store's word on the hreflang clusters it settles as it writes: which
    pages were written without the alternates they declare, and why (counted
    in ``stats()``). :class:`StoreBase` has it."""

    def hreflang(self) -> AbstractContextManager[dict[str, str | None]]:
        """Path -> why the page was written without the alternates it declares
        (``None``: with them), for the writes this thread makes in the block:
        each entry that declares some and each member written again. A write
        retried after a conflict decides again, and the last decision stands."""


@runtime_checkable
class Epoch(Protocol):
    """The identity of the data a store holds, so that a writer forgets what
    it wrote when the data was made again from nothing (invariant 20).
    :class:`StoreBase` has it (``""``: a store that cannot tell)."""

    def epoch(self) -> str:
        """The data's identity now: it changes when the data is made again
        from nothing (a Redis restart that lost it). One small read: the
        writer asks about once a second."""


# Removed paths a store's log keeps (the newest): a writer that looks again after
# more removals than this forgets every page it remembers, not just those.
REMOVALS_KEPT = 10_000


class Removed(NamedTuple):
    """A store's answer to :meth:`Removals.removed_since`."""

    epoch: str
    """The data's identity now, as :meth:`Epoch.epoch` gives it."""
    seq: int
    """The removal sequence number now: how many paths were ever removed from
    this data (0: none), to ask about next time."""
    paths: tuple[str, ...] | None
    """The paths removed after the number asked about, oldest first (one may
    repeat); ``None`` when the log no longer reaches back to it or it is not a
    number of this data (a larger one: the data was made again)."""


@runtime_checkable
class Removals(Protocol):
    """The paths removed lately, by any writer, command or machine, so that each
    writer forgets them from its recent pages and records them again at their
    next visit. A store numbers every path it removes (one a path, counting up
    from 1) and keeps the last :attr:`StoreBase.removals_kept` with their
    numbers, in the removal's own transaction; removing a path it does not
    hold logs nothing. Every store of the package has it; a writer of a
    store without it forgets only the pages it removes itself."""

    def removed_since(self, seq: int | None) -> Removed:
        """The epoch, the removal sequence number now and the paths removed
        after ``seq`` (``None``: not asked for, ``()``), in one small read: the
        writer asks about once a second."""


def removed(
    epoch: str, since: int | None, top: int, bottom: int | None, paths: Iterable[str]
) -> Removed:
    """A :class:`Removed` from what a store read: its number now (``top``),
    the oldest number its log keeps (``bottom``, ``None``: the log is empty)
    and ``paths``, those it keeps numbered after ``since`` (iterated only when
    the log reaches back to ``since``)."""
    if since is None or since == top:
        return Removed(epoch, top, ())
    if since > top or since < 0 or bottom is None or since < bottom - 1:
        return Removed(epoch, top, None)
    return Removed(epoch, top, tuple(paths))


# Where a shared counter stops: the largest signed 64-bit integer, what SQLite's
# INTEGER, PostgreSQL's bigint and Redis's HINCRBY hold. Past it SQLite would
# turn the sum into a float, and the others refuse the write for good.
MAX_COUNT = 2**63 - 1


def deltas(counts: Mapping[str, int]) -> list[tuple[str, int]]:
    """The non-zero counts to add, sorted (concurrent writers lock rows in one
    order) and each at most ``MAX_COUNT``."""
    return sorted((reason, min(n, MAX_COUNT)) for reason, n in counts.items() if n)


@runtime_checkable
class Checked(Protocol):
    """A store that can tell at start-up, at once and without waiting on a
    network, whether it can be used at all (SQLite: the file opened, its
    schema read, a small file checked whole), so that a fault is an ERROR
    when the app starts rather than when a page is first recorded."""

    def check(self) -> None:
        """Open the store and let it go.

        :raises StoreFault: it cannot be used until someone acts (the
            message names it and what to do).
        :raises StoreError: an outage (recording waits for the store).
        """


@runtime_checkable
class Present(Protocol):
    """Whether a sitemap store is there at all, looked at without making one,
    so that a command that only reads refuses what holds none (another app's
    database, a table prefix mistyped) rather than make its tables by
    looking. A store without it is taken to hold one."""

    def present(self) -> bool:
        """Whether the store holds the sitemap's schema, as this release or
        an earlier one made it: looked at without making it, nor a file, a
        table or a key (``False``: nothing recorded there yet).

        :raises StoreError: it could not be looked at (an outage).
        """


@runtime_checkable
class Placed(Protocol):
    """A store kept in a file (SQLite), whose name the file system can refuse
    for good (a folder that is not there): refused when the app starts,
    looking only, opening nothing."""

    def place(self, own: str | None = None) -> None:
        """Refuse a file named where none can ever be; its folder made first
        when it is ``own`` (a folder the app owns: Flask's instance folder).

        :raises ConfigError: naming the absolute path and what to do.
        """


@runtime_checkable
class Snapshot(Protocol):
    """Reads that see one state of the store whatever its writers do
    meanwhile (``export``). A store without it is read as it goes, and its
    parts' versions checked before and after."""

    def snapshot(self) -> AbstractContextManager[None]:
        """The block in which this thread's reads through this store object
        see one state of the store; no write goes through this object in it."""


class Visit(NamedTuple):
    """A page's last request from one kind of client, as :class:`Visits` keeps it."""

    path: str
    """The stored spelling of a page, or a served document's path."""
    agent: str
    """A search engine's name (``"google"``, ``"bing"``, ...) for a fetch by its
    verified crawler; ``""`` for the last time any client was served the page."""
    at: int
    """When, in epoch seconds."""
    status: int
    """The response's status code."""


# Paths kept beyond those the store lists (a crawler's fetch of a page the
# sitemap lacks, a removed page's last visits): the most lately visited.
UNLISTED_VISITS_KEPT = 10_000


@runtime_checkable
class Visits(Protocol):
    """The last visit of each page per kind of client: when a verified crawler
    of each engine fetched it and with what status, and when any client was
    last served it, for the health report. Kept for every path the store
    lists and for the :data:`UNLISTED_VISITS_KEPT` other paths visited most
    lately; written in the writers' batches, never on the request path."""

    def visited(self, visits: Iterable[Visit]) -> None:
        """Keep each visit as its (path, agent)'s last, in one write, unless
        the one kept is later."""

    def visits(self, paths: Iterable[str] | None = None) -> Iterator[Visit]:
        """The kept visits of ``paths`` (``None``: every one kept), in no
        particular order."""


class Article(NamedTuple):
    """A news article as :class:`News` keeps it, beside its page's row."""

    path: str
    """The stored spelling of its page."""
    published: int
    """When it was published, in epoch seconds: the time it declares, else
    when the store first held its page. In :meth:`News.publish`, 0 keeps the
    stored one (a page the store held before, as an article or not: one
    removed and back keeps the date kept while it was away)."""
    title: str
    """Its title, as the page's entry has it (visible text)."""
    language: str
    """The language its page declares, as ``<news:language>`` takes it
    ("en", "zh-tw"; ``""``: none the news sitemap can name)."""
    name: str
    """The site's name its page declares (``og:site_name``; ``""``: none)."""


# Articles a store keeps at most, the newest: a bounded table whatever a site
# publishes, with room for the pages removed since among the MAX_NEWS listed.
NEWS_KEPT = 5 * MAX_NEWS


@runtime_checkable
class News(Protocol):
    """The news articles of the last two news windows (:func:`news_cutoff`),
    for ``/sitemap-news.xml``: a small table of their own beside the pages,
    since a stored ``<url>`` holds no publication date (ARCHITECTURE.md,
    "Decisions"). Written in the writers' batches; a page the store no longer
    holds is in no answer, so a removal by anyone takes its article out."""

    def publish(self, articles: Iterable[Article], now: int) -> None:
        """Keep each article as its path's, in one write (an article with
        ``published`` 0 keeps the stored date, and is dropped when there is
        none); then drop those published before :func:`news_cutoff` and all
        but the :data:`NEWS_KEPT` newest."""

    def news(self, since: int, limit: int = MAX_NEWS) -> list[Article]:
        """The articles published at ``since`` or later (epoch seconds) whose
        page the store holds, newest first (then by path), at most ``limit``:
        one indexed read."""


def news_cutoff(now: int) -> int:
    """The oldest publication time :meth:`News.publish` keeps at ``now``: two
    windows, since the news sitemap lists one and the newest article past it
    dates the sitemap's change (when it left, NEWS_WINDOW after publication);
    one published before the cutoff left before any listed one was published,
    so it can never be the latest change."""
    return now - 2 * NEWS_WINDOW


def newest(articles: Iterable[Article], limit: int) -> list[Article]:
    """``articles`` newest first, then by path, at most ``limit``: the order
    of :meth:`News.news`."""
    ordered = sorted(articles, key=lambda a: (-a.published, a.path))
    return ordered[:limit]


def latest(visits: Iterable[Visit]) -> list[Visit]:
    """A batch of visits with one per (path, agent), its latest, sorted by
    (path, agent): the order every writer takes its rows' locks in."""
    kept: dict[tuple[str, str], Visit] = {}
    for visit in visits:
        key = (visit.path, visit.agent)
        held = kept.get(key)
        if held is None or held.at <= visit.at:
            kept[key] = visit
    return [kept[key] for key in sorted(kept)]


# A writer's decision about a page: (stored path, reason, when).
Decision = tuple[str, str, datetime]
# Decisions kept per path, and paths kept: the most lately decided about, so
# that made-up URLs cannot grow the log without bound.
DECISIONS_KEPT = 5
DECISION_PATHS = 10_000


@runtime_checkable
class Decisions(Protocol):
    """The writers' last decisions about each path, for ``explain``: what the
    writer decided about a page it digested (``recorded``, ``unchanged``,
    ``removed``, or the reason it was skipped), bounded per path and in paths.
    Every store of the package has it; the writer notes nothing to a store
    without it."""

    def note(self, decisions: Iterable[Decision]) -> None:
        """Add decisions (in the order made) in one write: each path keeps
        its last ``DECISIONS_KEPT``, and the store the ``DECISION_PATHS``
        paths decided about most lately."""

    def decisions(self, path: str) -> list[tuple[str, datetime]]:
        """The decisions kept for ``path``, oldest first (``[]``: none)."""


def logged(held: str | bytes | None, added: list[tuple[str, int]], keep: int) -> str:
    """A path's log as stored (JSON ``[[reason, seconds], ...]``): the one
    held with ``added`` after it, its last ``keep``."""
    log: list[Any] = json.loads(held) if held else []
    log.extend([reason, seconds] for reason, seconds in added)
    return json.dumps(log[-keep:], separators=(",", ":"))


def unlogged(held: str | bytes | None) -> list[tuple[str, datetime]]:
    """A stored log as ``decisions()`` returns it."""
    if not held:
        return []
    return [(str(reason), to_datetime(seconds)) for reason, seconds in json.loads(held)]
