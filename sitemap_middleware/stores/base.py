"""The store protocol every backend implements, and the base that owns what they
share: part limits, the per-process connection, driver errors as ``StoreError``,
the schema and epoch checks, and the context manager.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import (
    Any,
    ClassVar,
    Generic,
    NamedTuple,
    Protocol,
    TypeVar,
    runtime_checkable,
)

from ..errors import StoreError, StoreFault
from ..model import Entry, PartInfo, to_datetime
from ..sitemaps import MAX_NEWS, MAX_PART_BYTES, MAX_URLS_PER_PART, NEWS_WINDOW
from . import layout
from .abroad import Abroad, Clusters, crossing, reached

# Entry: for the modules that imported it from here.
__all__ = [
    "Article",
    "Checked",
    "Clusters",
    "Decision",
    "Decisions",
    "Entry",
    "Epoch",
    "Hreflang",
    "News",
    "Placed",
    "Pushes",
    "Pushing",
    "Removals",
    "Removed",
    "Shared",
    "Snapshot",
    "Store",
    "StoreBase",
    "Visit",
    "Visits",
]

# Options renamed with the part/page vocabulary: a URI of the old spelling is
# refused with the new name, never half-applied.
RENAMED = {"page_size": "part_size", "page_bytes": "part_bytes"}
# The smallest part_bytes a store accepts: room for the envelope and one long URL.
MIN_PART_BYTES = 4096


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
class Pushing(Protocol):
    """The writes that queue their IndexNow pushes: inside :meth:`pushing`, a
    store with :class:`Pushes` queues what an upsert or removal adds, changes
    or removes, in the write's own transaction. :class:`StoreBase` has it."""

    def pushing(self) -> AbstractContextManager[None]:
        """The block in which this thread's writes queue their pushes."""


@runtime_checkable
class Hreflang(Protocol):
    """The store's word on the hreflang clusters it settles as it writes: which
    pages were written without the alternates they declare, and why (counted
    in ``stats()``). :class:`StoreBase` has it."""

    def hreflang(self) -> AbstractContextManager[dict[str, str | None]]:
        """Path -> why the page was written without its alternates (``None``:
        with them), for the writes this thread makes in the block."""


@runtime_checkable
class Epoch(Protocol):
    """The identity of the data a store holds, so that a writer forgets what
    it wrote when the data was made again from nothing (invariant 20).
    :class:`StoreBase` has it (``""``: a store that cannot tell)."""

    def epoch(self) -> str:
        """The data's identity now: one small read."""


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
    stored one (a page the store held before it was known as an article)."""
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
    """The news articles of the last :data:`~..sitemaps.NEWS_WINDOW` seconds,
    for ``/sitemap-news.xml``: a small table of their own beside the pages,
    since a stored ``<url>`` holds no publication date (ARCHITECTURE.md,
    "Decisions"). Written in the writers' batches; a page the store no longer
    holds is in no answer, so a removal by anyone takes its article out."""

    def publish(self, articles: Iterable[Article], now: int) -> None:
        """Keep each article as its path's, in one write (an article with
        ``published`` 0 keeps the stored date, and is dropped when there is
        none); then drop those published before ``now - NEWS_WINDOW`` and
        all but the :data:`NEWS_KEPT` newest."""

    def news(self, since: int, limit: int = MAX_NEWS) -> list[Article]:
        """The articles published at ``since`` or later (epoch seconds) whose
        page the store holds, newest first (then by path), at most ``limit``:
        one indexed read."""


def news_cutoff(now: int) -> int:
    """The oldest publication time :meth:`News.publish` keeps at ``now``."""
    return now - NEWS_WINDOW


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


def new_epoch() -> str:
    """A new store's epoch: part versions are ``epoch.counter``, so data made
    again from nothing never repeats a version served before."""
    import secrets  # once per new store; costs more to import than to call

    return secrets.token_hex(4)


C = TypeVar("C")

# The protocol's methods whose driver errors the base turns into StoreError,
# and those of them that are generators (their errors surface while iterated).
_CALLS = (
    "upsert",
    "remove",
    "resettle",
    "declarations",
    "count",
    "known",
    "parts",
    "part",
    "epoch",
    "add_counts",
    "counts",
    "setting",
    "set_setting",
    "queue_pushes",
    "claim_pushes",
    "pushed",
    "retry_pushes",
    "pending_pushes",
    "note",
    "decisions",
    "removed_since",
    "visited",
    "publish",
    "news",
)
_STREAMS = ("fragments", "entries", "visits")
# The writes after which the other sites settle their members again.
_WRITES = ("upsert", "remove")


class StoreBase(Generic[C]):
    """Shared plumbing of a store whose connection is a ``C``.

    A subclass implements :meth:`_connect` (open a connection for this
    process) and, unless ``C.close()`` does it, :meth:`_disconnect`; it calls
    :meth:`_connection` wherever it needs one: the connection is opened on
    first use and again in a forked child, which must never use its parent's.

    A subclass names its driver's exception classes in ``errors``; any of them
    raised by a protocol method of that class (the generators included, while iterated)
    becomes a :class:`StoreError` naming ``label`` (or what
    :meth:`_store_error` makes of it), the original kept as its
    ``__cause__``. Other exceptions pass unchanged: ``ValueError`` for a bad
    entry, and bugs.

    ``part_size`` and ``part_bytes`` may be set below the protocol's limits
    (tests use small parts); never above.
    """

    errors: ClassVar[tuple[type[BaseException], ...]] = ()
    label: ClassVar[str] = "store"
    # Where the store is, as every message about it shows it: a file's
    # absolute path, a server's URI through ``urls.redacted`` (set by the
    # subclass; "" shows the label alone).
    where: str = ""
    # The bounds of the decisions log (tests set smaller ones).
    decisions_kept: int = DECISIONS_KEPT
    decision_paths: int = DECISION_PATHS
    # The paths the removals log keeps (tests set fewer).
    removals_kept: int = REMOVALS_KEPT
    # The unlisted paths whose visits are kept (tests set fewer).
    unlisted_visits_kept: int = UNLISTED_VISITS_KEPT

    part_size: int
    part_bytes: int
    # The app's other sites, whose listings this store's hreflang clusters
    # may reach (core.py sets it with several ``sites``; None: none).
    abroad: Abroad | None = None

    def __init__(
        self, part_size: int = MAX_URLS_PER_PART, part_bytes: int = MAX_PART_BYTES
    ) -> None:
        if not 1 <= part_size <= MAX_URLS_PER_PART:
            raise ValueError(f"part_size must be 1..{MAX_URLS_PER_PART}")
        if not MIN_PART_BYTES <= part_bytes <= MAX_PART_BYTES:
            raise ValueError(f"part_bytes must be {MIN_PART_BYTES}..{MAX_PART_BYTES}")
        self.part_size = part_size
        self.part_bytes = part_bytes
        self._opening = threading.Lock()
        self._conn: C | None = None
        self._pid = 0
        # What this thread's writes carry besides their entries: where
        # hreflang() collects its reasons (``into``) and whether pushing() is
        # on (``pushing``).
        self._write_context = threading.local()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Only where the driver is named: a subclass of a store that calls
        # super() is translated there, once.
        own = _own(cls)
        if "errors" in cls.__dict__ and cls.errors:
            for name in _CALLS:
                if name in own:
                    own[name] = _translating(own[name])
                    setattr(cls, name, own[name])
            for name in _STREAMS:
                if name in own:
                    setattr(cls, name, _translating_stream(own[name]))
        # Every write, once done, tells the other sites what it changed of
        # their clusters (:meth:`_tell_abroad`), whatever the store.
        for name in _WRITES:
            if name in own:
                setattr(cls, name, _telling(own[name]))

    # -- the per-process connection ---------------------------------------------

    def _connect(self) -> C:
        """A new connection for this process (called under a lock)."""
        raise NotImplementedError

    def _disconnect(self, conn: C) -> None:
        """Release a connection this process opened."""
        conn.close()  # type: ignore[attr-defined]

    def _connection(self) -> C:
        """This process's connection, opened on first use and after fork."""
        conn = self._conn
        if conn is not None and self._pid == os.getpid():
            return conn
        with self._opening:
            if self._conn is None or self._pid != os.getpid():
                # One inherited across fork is the parent's: drop it unclosed
                # (closing it here could end the parent's session).
                self._conn = None
                self._conn = self._connect()
                self._pid = os.getpid()
            return self._conn

    def close(self) -> None:
        with self._opening:
            if self._conn is not None and self._pid == os.getpid():
                self._disconnect(self._conn)
            self._conn = None

    # -- part sizes, schema and epoch ---------------------------------------------

    def _plan(
        self,
        batch: dict[str, Entry],
        old: Mapping[str, layout.Stored],
        sizes: Mapping[int, layout.Fill],
        last: int,
        current: int,
        settled: layout.Settled | None = None,
        open: Mapping[str, int] | None = None,
    ) -> layout.Plan:
        """:func:`layout.plan` with this store's limits. ``old`` holds the
        stored rows of the batch and of ``layout.members(batch, old)``, read
        in the write's transaction; ``settled`` defaults to their
        :meth:`_settle`; ``open`` is each section's open part (``None``: a
        store that keeps no sections)."""
        if settled is None:
            settled = self._settle(batch, old)
        return layout.plan(
            batch,
            old,
            sizes,
            last,
            self.part_size,
            self.part_bytes,
            current,
            settled,
            open,
        )

    def _settle(
        self,
        batch: Mapping[str, Entry],
        old: Mapping[str, layout.Stored],
        removed: Collection[str] = (),
        again: Collection[str] = (),
    ) -> layout.Settled:
        """:func:`layout.settle`, its reasons noted for :meth:`hreflang`.
        Called in the write's transaction, after its lock is taken: the
        members on other sites are read here (:mod:`.abroad`), and those whose
        clusters the write changes are noted for :meth:`_tell_abroad`; a
        settling (``again``: :meth:`resettle`) notes none."""
        found = None
        abroad = self.abroad
        if abroad is not None:
            urls = reached(batch, old, (*removed, *again))
            found = abroad.declared(urls) if urls else {}
            if not again:
                told = crossing(batch, old, removed)
                if told:
                    self._abroad_pending().update(told)
        settled = layout.settle(batch, old, removed, found, again)
        into = getattr(self._write_context, "into", None)
        if into is not None and settled.reasons:
            into.update(settled.reasons)
        return settled

    def _abroad_pending(self) -> set[str]:
        pending: set[str] | None = getattr(self._write_context, "abroad", None)
        if pending is None:
            pending = self._write_context.abroad = set()
        return pending

    def _tell_abroad(self) -> None:
        """Once a write is committed: ask the other sites to settle again
        their members of the clusters it changed. Kept until they answer, so
        that a failed settling is asked again with the next write."""
        pending = getattr(self._write_context, "abroad", None)
        if pending and self.abroad is not None:
            self.abroad.resettle(pending)
            pending.clear()

    @contextmanager
    def hreflang(self) -> Iterator[dict[str, str | None]]:
        """Path -> why the page was written without the alternates it declares
        (``None``: with them), for the writes this thread makes in the block:
        each entry that declares some and each member written again. A write
        retried after a conflict decides again, and the last decision stands."""
        into: dict[str, str | None] = {}
        self._write_context.into = into
        try:
            yield into
        finally:
            self._write_context.into = None

    @contextmanager
    def pushing(self) -> Iterator[None]:
        """In the block, this thread's upserts and removals also queue (a
        store with :class:`Pushes`, in the write's own transaction) the paths
        they add, whose ``lastmod`` they move, or remove."""
        self._write_context.pushing = True
        try:
            yield
        finally:
            self._write_context.pushing = False

    def _pushes(self, todo: layout.Plan, old: Mapping[str, layout.Stored]) -> list[str]:
        """The paths of a plan to queue: new, or changed (a new ``lastmod``
        or fingerprint: a change within the second of the last one keeps its
        ``lastmod``); a member of a cluster written again keeps both. None
        outside :meth:`pushing`. ``old``: the stored rows, as before the plan."""
        if not self._is_pushing():
            return []
        pushes = []
        for path, _, row, _ in todo.changes:
            stored = old.get(path)
            if (
                stored is None
                or stored.row.lastmod != row.lastmod
                or stored.row.fingerprint != row.fingerprint
            ):
                pushes.append(path)
        return pushes

    def _is_pushing(self) -> bool:
        return bool(getattr(self._write_context, "pushing", False))

    def epoch(self) -> str:
        """The identity of the data the store holds now: it changes when the
        data is made again from nothing (a Redis restart that lost it), and
        is ``""`` while the store cannot tell. One small read: the writer
        asks about once a second."""
        return ""

    _new_epoch = staticmethod(new_epoch)

    def _trim_due(self, written: int) -> bool:
        """Whether a write of ``written`` visits trims the unlisted paths'
        (:class:`Visits`): once this object has written ``unlisted_visits_kept``
        since its last trim. A trim reads every kept visit, so it is spread
        over that many writes; between two, a writing process adds at most
        that many unlisted paths beyond the bound."""
        since = getattr(self, "_visits_since_trim", 0) + written
        due = since >= self.unlisted_visits_kept
        self._visits_since_trim = 0 if due else since
        return due

    @staticmethod
    def _grouped(decisions: Iterable[Decision]) -> dict[str, list[tuple[str, int]]]:
        """Decisions by path, each path's in the order made, as epoch seconds."""
        grouped: dict[str, list[tuple[str, int]]] = {}
        for path, reason, when in decisions:
            grouped.setdefault(path, []).append((reason, int(when.timestamp())))
        return grouped

    @staticmethod
    def _check_schema(where: str, found: object, expected: object) -> None:
        """Refuse data of another layout: never read it as this one. Columns
        and keys a release adds beside the old ones keep the version (a worker
        of the release before still reads and writes the data); only a layout
        the release before cannot read takes a new one."""
        if str(found) == str(expected):
            return
        found, expected = str(found), str(expected)
        # Not an outage: waiting does not change the data (StoreFault).
        if found.isdigit() and expected.isdigit() and int(found) > int(expected):
            raise StoreFault(
                f"{where} holds sitemap schema {found}, expected {expected}:"
                " it was written by a newer release of sitemap_middleware;"
                " upgrade sitemap_middleware on every worker that uses it"
            )
        raise StoreFault(
            f"{where} holds sitemap schema {found}, expected {expected}, which"
            " this release cannot upgrade: delete it to start again (pages are"
            " recorded again as they are visited) or use the release that wrote it"
        )

    def _store_error(self, exc: BaseException) -> StoreError:
        """The ``StoreError`` a driver error of ``errors`` becomes: an outage
        unless the store knows better (a damaged file is a ``StoreFault``)."""
        return StoreError(self._said(exc))

    def _said(self, words: object) -> str:
        """A message about this store, on one line: its label and where it
        is, then ``words``, a driver's several lines (psycopg's hint after
        its error) folded into one, as a log line or an ``Error:`` holds."""
        name = f"{self.label} {self.where}" if self.where else self.label
        return f"{name}: {' '.join(str(words).split())}"

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _own(cls: type) -> dict[str, Any]:
    """The protocol methods a store class defines: in its body or in its
    mixins (the bases that are not stores: a capability each), as the class
    resolves them. A store's own methods are wrapped there, once."""
    theirs = {k for b in cls.__bases__ if issubclass(b, StoreBase) for k in b.__mro__}
    found = {}
    for name in (*_CALLS, *_STREAMS):
        where = next((k for k in cls.__mro__ if name in vars(k)), None)
        if where is not None and where not in theirs:
            found[name] = vars(where)[name]
    return found


def _translating(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(self: StoreBase[Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except self.errors as exc:
            raise self._store_error(exc) from exc

    return call


def _telling(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def write(self: StoreBase[Any], *args: Any, **kwargs: Any) -> Any:
        done = method(self, *args, **kwargs)
        self._tell_abroad()
        return done

    return write


def _translating_stream(method: Callable[..., Iterator[Any]]) -> Callable[..., Any]:
    @functools.wraps(method)
    def stream(self: StoreBase[Any], *args: Any, **kwargs: Any) -> Iterator[Any]:
        try:
            yield from method(self, *args, **kwargs)
        except self.errors as exc:
            raise self._store_error(exc) from exc

    return stream
