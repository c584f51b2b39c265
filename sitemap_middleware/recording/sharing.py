"""What a writer keeps in the store beside the pages, each on an optional store
feature (``stores/contract.py``): its counts, summed with the other writers'; the
site's title affix; since when each section is watched for news; its decisions,
the log ``explain`` reads; and what it reads back: the store's epoch and the
paths removed from it.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Protocol

from ..config import Config
from ..errors import StoreError
from ..model import Entry
from ..sections import DEFAULT
from ..sitemaps import NEWS_WINDOW
from ..stores.contract import (
    Article,
    Decision,
    Decisions,
    Epoch,
    Hreflang,
    Mapped,
    News,
    Pushing,
    Removals,
    Shared,
    Store,
)
from .clusters import Declared
from .counters import Counters
from .digest import Upsert
from .recent import Recent

if TYPE_CHECKING:
    from ..page.titles import Titles

# Seconds between two sends of this process's counts to the store's (and at
# every flush): one small write, never one a request.
COUNTS_INTERVAL = 10.0
# The setting that shares the site's title affix between the writers.
TITLE_AFFIX = "title_affix"
# The setting that shares since when each section is watched for news articles:
# a JSON object, section -> epoch seconds.
NEWS_WATCH = "news_watch"
# Decisions waiting for the store's log: beyond it the oldest go (a diagnosis
# aid, never worth memory while the store is down).
MAX_DECISIONS = 10_000
# Pages placed on the site map a writer's round (one write of some 25 ms,
# which other writers wait for): 100,000 pages imported are placed within
# half a minute.
PLACE_BATCH = 5000
# Seconds between two looks at the store's epoch (a new one: its data was lost)
# and its removals log: a page removed elsewhere is recorded again at its next
# request after about this long.
EPOCH_INTERVAL = 1.0


class Side(Protocol):
    """What a writer keeps for the store beside the pages, written after them in
    the same round, under the same outage rule (``Writer._attempt``)."""

    def due(self, force: bool) -> bool:
        """Whether there is something to write now (``force``: a flush)."""

    def write(self) -> None:
        """Write it, in one store call.

        :raises StoreError: the store failed (it waits for the next round).
        """


class SharedCounts:
    """This process's counts, added to the store's (:class:`Shared`) as deltas
    every ``COUNTS_INTERVAL`` or when forced; what an outage kept from the
    store goes with the next send."""

    __slots__ = ("_counters", "_due", "_sent", "_shared")

    def __init__(self, store: Store, counters: Counters) -> None:
        self._shared = store if isinstance(store, Shared) else None
        self._counters = counters
        # What the store's counters hold of ours. Made in a forked child too:
        # the counts inherited are the parent's to send, not ours.
        self._sent = counters.totals()
        self._due = time.monotonic() + COUNTS_INTERVAL

    def unsent(self) -> Counter[str]:
        """This process's counts not yet in the store's counters."""
        return self._counters.totals() - self._sent

    def due(self, force: bool) -> bool:
        """Whether to send now (forced, or the interval is over); if so, the
        next send is due an interval from now. Never, without shared counters."""
        current = time.monotonic()
        if self._shared is None or (not force and current < self._due):
            return False
        self._due = current + COUNTS_INTERVAL
        return True

    def write(self) -> None:
        """Add the counts made since the last send, in one write.

        :raises StoreError: the store failed (they stay unsent).
        """
        totals = self._counters.totals()
        delta = totals - self._sent
        if not delta or self._shared is None:
            return
        self._shared.add_counts(delta)
        self._sent = totals


class SiteTitles:
    """The site's title affix (`` | Acme``), learned from every titled page this
    writer sees and shared with the other writers through a :class:`Shared`
    setting, taken out of the titles written."""

    __slots__ = ("_shared", "_titles")

    def __init__(self, store: Store) -> None:
        self._shared = store if isinstance(store, Shared) else None
        self._titles: Titles | None = None

    def load(self) -> None:
        """Start from the affix another writer of the site learned, once.

        :raises StoreError: the store failed (it is read again next time).
        """
        if self._titles is None:
            # The page readers load with the writer's first batch (digest).
            from ..page.titles import Affix, Titles

            stored = None
            if self._shared is not None:
                stored = Affix.unpack(self._shared.setting(TITLE_AFFIX))
            self._titles = Titles(stored)

    def entries(self, upserts: list[Upsert]) -> list[Entry]:
        """The entries to write, their titles without the affix as learned
        so far (a new affix shared at once).

        :raises StoreError: the store failed to take a new affix.
        """
        titles = self._titles
        if titles is None:
            return [upsert.entry for upsert in upserts]
        for upsert in upserts:
            if upsert.entry.title is not None:
                titles.see(upsert.entry.path, upsert.entry.title)
        before = titles.affix
        affix = titles.learn()
        if affix is not None and affix != before and self._shared is not None:
            self._shared.set_setting(TITLE_AFFIX, affix.pack())
        return [
            replace(u.entry, title=titles.strip(u.entry.title))
            if u.entry.title is not None and affix is not None
            else u.entry
            for u in upserts
        ]


class NewsWatch:
    """Since when the writers watch each section for news articles (the
    first article of it any writer wrote, kept in a :class:`Shared` setting;
    this process's own start without one). An article that declares no
    published time is dated when the store first held its page only if its
    section was watched for a whole news window before: until then, a page
    first seen may be an old article visited for the first time (every page
    of a new store is), and it is not news."""

    __slots__ = ("_shared", "_since")

    def __init__(self, store: Store) -> None:
        self._shared = store if isinstance(store, Shared) else None
        self._since: dict[str, int] = {}

    def watch(self, sections: Iterable[str], now: int) -> None:
        """Note that ``sections`` are watched from ``now`` on, unless they
        were earlier: one read of the setting when a section is new to this
        process, one write when it is new to the store.

        :raises StoreError: the store failed (asked again with the next).
        """
        new = set(sections) - self._since.keys()
        if not new:
            return
        since = dict(self._since)
        if self._shared is not None:
            since.update(_watched(self._shared.setting(NEWS_WATCH)))
        unseen = new - since.keys()
        for section in unseen:
            since[section] = now
        if unseen and self._shared is not None:
            self._shared.set_setting(NEWS_WATCH, json.dumps(since, sort_keys=True))
        self._since = since

    def clear(self) -> None:
        """Forget since when the sections are watched: read again at the
        next article (the store's data was made again from nothing, and its
        setting with it)."""
        self._since = {}

    def dated(self, section: str, first_held: int) -> bool:
        """Whether an undated article of ``section`` whose page the store
        first held at ``first_held`` appeared then, as far as the store can
        tell: its section was watched a news window before."""
        since = self._since.get(section)
        return since is not None and first_held >= since + NEWS_WINDOW


class Newsroom:
    """The news articles of the pages a writer writes (the ``news`` key, a
    store with :class:`News`), each batch's after its pages, in one write:
    dated as the page declares, else when the store first held it, as far as
    :class:`NewsWatch` allows; a page the store held before, without a date,
    keeps the stored one (0), and has none if there is none. Held before
    means in any form, as far as the store can tell: its page stored, or
    removed since (a 404, an exclusion; the article the store keeps while
    the page is away keeps its date)."""

    __slots__ = ("_news", "_removals", "_watch")

    def __init__(self, config: Config, store: Store) -> None:
        self._news = (
            store if config.news is not None and isinstance(store, News) else None
        )
        self._removals = store if isinstance(store, Removals) else None
        self._watch = NewsWatch(store)

    def clear(self) -> None:
        """:meth:`NewsWatch.clear`."""
        self._watch.clear()

    def held(self, upserts: Iterable[Upsert]) -> set[str]:
        """Before the pages are written: their sections watched, and which of
        the articles that declare no date the store held before.

        :raises StoreError: the store failed.
        """
        if self._news is None:
            return set()
        stories = [(u.entry, u.story) for u in upserts if u.story is not None]
        if stories:
            sections = {entry.section or DEFAULT for entry, _ in stories}
            self._watch.watch(sections, int(time.time()))
        undeclared = {entry.path for entry, story in stories if not story.declared}
        if not undeclared:
            return set()
        held = self._news.known(undeclared)
        return held | self._removed(undeclared - held)

    def _removed(self, paths: set[str]) -> set[str]:
        """Which of ``paths`` the store removed before, as its removals log
        says: every one when the log cannot say (a store without one, or one
        that has forgotten its oldest removals), since dating a page the
        store held long ago as published now would claim an old article as
        new. One read of the log (at most ``removals_kept`` paths), only for
        a batch with an undated article the store does not hold.

        :raises StoreError: the store failed.
        """
        if not paths:
            return set()
        log = None if self._removals is None else self._removals.removed_since(0)
        if log is None or log.paths is None:
            return paths
        return paths.intersection(log.paths)

    def articles(
        self, entries: Iterable[Entry], upserts: Mapping[str, Upsert], held: set[str]
    ) -> list[Article]:
        """The articles of the pages just written, titled as their entries
        (without the site's affix); a page without a title is none."""
        if self._news is None:
            return []
        articles: list[Article] = []
        for entry in entries:
            upsert = upserts.get(entry.path)
            if upsert is None or upsert.story is None or not entry.title:
                continue
            article = upsert.story.article._replace(title=entry.title)
            if not upsert.story.declared:
                if entry.path in held:
                    article = article._replace(published=0)
                elif not self._watch.dated(entry.section or DEFAULT, article.published):
                    continue  # it may be old: its section is watched too lately
            articles.append(article)
        return articles

    def publish(self, articles: list[Article]) -> int:
        """Write ``articles``, in one write.

        :raises StoreError: the store failed.
        """
        if self._news is None or not articles:
            return 0
        self._news.publish(articles, int(time.time()))
        return len(articles)


def _watched(value: str | None) -> dict[str, int]:
    """The setting's sections and times; another writer's damaged value is
    none (the sections are watched from now on)."""
    try:
        found = json.loads(value) if value else {}
    except ValueError:
        return {}
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(v, int) and v >= 0}


def site_name(store: Store) -> str | None:
    """The site's name as its titles repeat it (the affix the writers learned
    and share), ``None`` before they learned one or without a store that
    shares it.

    :raises StoreError: the store failed.
    """
    if not isinstance(store, Shared):
        return None
    from ..page.titles import Affix

    affix = Affix.unpack(store.setting(TITLE_AFFIX))
    return None if affix is None else affix.name


class DecisionLog:
    """The writer's decisions about stored spellings, waiting for the store's
    log (:class:`Decisions`); nothing is kept for a store without one."""

    __slots__ = ("_decided", "_store")

    def __init__(self, store: Store) -> None:
        self._store = store if isinstance(store, Decisions) else None
        self._decided: list[Decision] = []

    @property
    def kept(self) -> bool:
        """Whether the store keeps a log."""
        return self._store is not None

    def due(self, force: bool) -> bool:
        """Decisions are waiting."""
        return bool(self._decided)

    def note(self, path: str, reason: str) -> None:
        if self._store is None:
            return
        decided = self._decided
        decided.append((path, reason, datetime.now(timezone.utc)))
        if len(decided) > MAX_DECISIONS:
            del decided[: len(decided) - MAX_DECISIONS]

    def write(self) -> None:
        """Add the waiting decisions to the store's log, in one write.

        :raises StoreError: the store failed (they wait for the next).
        """
        if self._store is not None and self._decided:
            self._store.note(self._decided)
        self._decided = []


class MapPlaces:
    """The pages without a place on the site map given theirs
    (:class:`Mapped`), a batch a round while the store says some may be
    left: every page when the map is first served, and those an import or a
    worker of an earlier release wrote without. Until then the map is
    arranged in memory, as for a store without the index."""

    __slots__ = ("_store",)

    def __init__(self, store: Store) -> None:
        self._store = store if isinstance(store, Mapped) else None

    def due(self, force: bool) -> bool:
        return self._store is not None and self._store.place_due

    def write(self) -> None:
        if self._store is not None:
            self._store.place_rows(PLACE_BATCH)


class StoreWatch:
    """What changed in the store under this writer, looked at about once every
    ``EPOCH_INTERVAL`` in one small read: its epoch (:class:`Epoch`) and the
    paths removed from it by anyone (:class:`Removals`: another worker or
    machine, a command line ``remove``, ``verify`` or ``prune``).

    Asked only by a writer that is started (a request reached its process)
    or has pages to write: a look opens the store, and opening makes one
    where there is none. An idle writer (a command's app loaded and asked
    nothing, then flushed at its shut-down) remembers no page of its own
    to forget, and leaves a store that is not there as it is."""

    __slots__ = ("_due", "_epoch", "_removals", "_seen", "_seq")

    def __init__(self, store: Store) -> None:
        self._removals = store if isinstance(store, Removals) else None
        self._epoch = store if isinstance(store, Epoch) else None
        self._seen: str | None = None
        self._seq: int | None = None
        self._due = 0.0

    def forget(self, recent: Recent, *kept: Declared | Newsroom) -> None:
        """Forget the recent pages the store no longer holds as this writer
        wrote them (:meth:`look`), so that each is read and written again at
        its next request rather than after ``recheck_interval``: those
        removed by anyone (another worker or machine, the command line), or
        all of them when the store's data was made again from nothing (a
        Redis restart that lost it: invariant 20) or more were removed than
        its log keeps; ``kept``, what else the writer keeps of the store
        (alternates written, sections watched for news), then too."""
        removed = self.look()
        if removed is None:
            recent.clear()
            for each in kept:
                each.clear()
            return
        for path in removed:
            # Its own removals too: forgotten as written already, or recorded
            # again since, and then read once more at their next request.
            recent.forget(path, path)

    def look(self) -> tuple[str, ...] | None:
        """What to forget since the last look: the paths removed (``()``
        between looks and while the store fails: the writes will meet the
        outage), or ``None`` for everything: at the first look (what the
        process remembers then was inherited across fork, or written while
        the store could not be read: removals since are unknown), when the
        epoch changed (the data is no longer the data this process wrote to)
        or when more paths were removed than the store's log keeps."""
        current = time.monotonic()
        if current < self._due or (self._removals is None and self._epoch is None):
            return ()
        self._due = current + EPOCH_INTERVAL
        try:
            if self._removals is not None:
                epoch, self._seq, paths = self._removals.removed_since(self._seq)
            else:
                assert self._epoch is not None
                epoch, paths = self._epoch.epoch(), ()
        except StoreError:
            return ()
        before, self._seen = self._seen, epoch
        if before is None or epoch != before:
            return None
        return paths


class Writing:
    """How a writer opens a block of page writes: with the store's hreflang
    decisions on them (none from a store that does not report them) and, when
    ``pushing`` (IndexNow on), the URLs they add, change or remove queued in
    their own transactions. The store's features are asked once, here."""

    __slots__ = ("_hreflang", "_pushing")

    def __init__(self, store: Store, pushing: bool) -> None:
        self._hreflang = store if isinstance(store, Hreflang) else None
        self._pushing = store if pushing and isinstance(store, Pushing) else None

    @contextmanager
    def __call__(self) -> Iterator[dict[str, str | None]]:
        with ExitStack() as stack:
            decided: dict[str, str | None] = {}
            if self._hreflang is not None:
                decided = stack.enter_context(self._hreflang.hreflang())
            if self._pushing is not None:
                stack.enter_context(self._pushing.pushing())
            yield decided
