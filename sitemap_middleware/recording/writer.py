"""The writer: one thread per process that digests queued observations, admits new
URLs within the limits and writes batches to the store (which settles hreflang
clusters in the same transaction).

A failing store (``StoreError``) is an outage: a breaker leaves it alone for a
growing backoff, keeps what is pending and warns once. Any other exception is a
bug: logged with its traceback (rate-limited), the entry that raised it dropped
and counted, the rest written (invariant 18).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from ..config import Config
from ..errors import StoreReadOnly
from ..reasons import (
    NOTED_NOT_ADMITTED,
    NOTED_REMOVED,
    RECORDED,
    REMOVED,
    Dropped,
    Seen,
    Skipped,
)
from ..stores.contract import Pushes, Store
from .admission import Limits
from .breaker import Bugs, Outage, store_breaker
from .clusters import Alternates, Declared
from .counters import Counters
from .crawls import CrawlQueue, Verification, VisitLog
from .digest import Removal, Rules, Skip, Unchanged, Upsert, digest
from .hints import Hints
from .intake import MAX_QUEUED, Intake
from .observation import Observation
from .pace import paced
from .pending import Pending
from .recent import Recent
from .recheck import Recheck
from .sharing import (
    DecisionLog,
    MapPlaces,
    Newsroom,
    SharedCounts,
    Side,
    SiteTitles,
    StoreWatch,
    Writing,
)

if TYPE_CHECKING:
    from .indexnow import Pusher

logger = logging.getLogger("sitemap_middleware")

FLUSH_INTERVAL = 1.0  # seconds between writes when traffic is light
BATCH = 1000  # observations written per store call
# A failing store is left alone this long, doubling from MIN to MAX, then probed
# (read as each writer is made).
MIN_BACKOFF = 1.0
MAX_BACKOFF = 30.0


class Writer:
    """Drains an :class:`~.intake.Intake` into the store, in its own thread:
    digests each observation into the pending writes, admits the new URLs and
    writes the rest in batches, a breaker between it and a failing store."""

    def __init__(
        self,
        config: Config,
        rules: Rules,
        store: Store,
        intake: Intake,
        counters: Counters,
        recent: Recent,
        limits: Limits,
        hints: Hints | None = None,
        recheck: Recheck | None = None,
        crawls: CrawlQueue | None = None,
    ) -> None:
        self._config = config
        self._rules = rules
        self._store = store
        self._intake = intake
        self._count = counters.add
        self._recent = recent
        self._limits = limits
        self._hints = hints
        self._recheck = recheck
        # IndexNow: the writes queue what they change, for its thread to send.
        self._pusher: Pusher | None = None
        if config.indexnow is not None and isinstance(store, Pushes):
            from .indexnow import Pusher  # its HTTP client, only when configured

            self._pusher = Pusher(config.indexnow, config.base_url, store, self._count)
        self._pending = Pending()
        self.adding = self._pending.adding  # pages digested, not yet written
        self._declared = Declared()
        self._writing = Writing(store, pushing=self._pusher is not None)
        # News: the articles of each batch written beside its pages.
        self._newsroom = Newsroom(config, store)
        self._counts = SharedCounts(store, counters)
        self._titles = SiteTitles(store)
        self._log = DecisionLog(store)
        self._watch = StoreWatch(store)
        # Crawls: verified off the request path, kept as visits with the
        # pages' last-served times.
        self._visits = VisitLog(config, store)
        # Written after the pages, in this order (the counts last: they count
        # what the others wrote).
        self._sides = (self._log, self._visits, MapPlaces(store), self._counts)
        self._verification = Verification(
            config.crawlers, crawls, self._visits, self._count
        )
        self._breaker = store_breaker(MIN_BACKOFF, MAX_BACKOFF)
        self._read_only = False  # said so, until a write succeeds
        self._bugs = Bugs(counters.add)
        self._lock = threading.Lock()  # one drain and push at a time
        self._starting = threading.Lock()
        self._thread: threading.Thread | None = None
        # Whether the thread was started: an attribute, not a property, since
        # the request path asks it of every page it hands over.
        self.started = False
        self._stopping = False

    def __len__(self) -> int:
        """Writes waiting for the store."""
        return len(self._pending)

    def start(self, owner: object) -> None:
        """Start the thread (once). It holds ``owner`` (the recorder) while it
        runs, so that the process's exit hook still finds it to flush."""
        # Not the write lock: a request may be the one starting the thread
        # while a flush() waits on the store.
        with self._starting:
            if self._thread is not None or self._stopping:
                return
            self._thread = threading.Thread(
                target=self._run, args=(owner,), name="sitemap-recorder", daemon=True
            )
            self._thread.start()
            self.started = True
        if self._pusher is not None:
            self._pusher.start()

    def _run(self, owner: object) -> None:
        while not self._stopping:
            try:
                self._intake.wait(FLUSH_INTERVAL)
                with self._lock:
                    self._drain()
                    self._verification.run()
                    self._push(force=False)
                    self._recent.expire()
                if self._hints is not None:
                    self._hints.check()
            except Exception as exc:  # the writer never dies
                self._bugs.report("the writer", exc)
                time.sleep(FLUSH_INTERVAL)

    def flush(self, timeout: float | None = None) -> bool:
        """Write everything queued so far, trying the store even while its
        breaker is open; ``False`` if ``timeout`` ran out or writes are still
        pending because the store failed. Never raises."""
        try:
            if not self._lock.acquire(timeout=-1 if timeout is None else timeout):
                return False
            try:
                deadline = None if timeout is None else time.monotonic() + timeout
                self._drain(deadline)
                self._verification.run(deadline)
                done = self._push(force=True) and not len(self._intake)
                self._recent.expire()
                return done
            finally:
                self._lock.release()
        except Exception as exc:
            self._bugs.report("flush", exc)
            return False

    def stop(self, timeout: float) -> None:
        """Flush and end the thread, within about ``timeout`` seconds."""
        with self._starting:
            self._stopping = True
        self._intake.wake(stop=True)
        self.flush(timeout)
        if self._pusher is not None:
            self._pusher.stop(timeout)
        self._verification.close()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def unsent(self) -> Counter[str]:
        """This process's counts not yet in the store's counters."""
        return self._counts.unsent()

    def _outage(self) -> Outage:
        """``with self._outage() as outage:`` a block of store calls."""
        return Outage(self._breaker, self._count, self._refused)

    def _refused(self, exc: StoreReadOnly) -> None:
        """The store can only be read (its pages are still served): one
        WARNING until a write succeeds, and what waits for it dropped,
        counted, quietly."""
        if not self._read_only:
            self._read_only = True
            logger.warning(
                "recording off: %s; what would be recorded is dropped (counted"
                " as dropped.read_only) until it can be written",
                exc,
            )
        if self._recheck is not None:
            # Nothing it finds could be removed: it runs at the next start.
            self._recheck.done = True
        if self._pending:
            self._count(Dropped.READ_ONLY, len(self._pending))
            self._pending.clear()

    # -- digesting ------------------------------------------------------------

    def _drain(self, deadline: float | None = None) -> None:
        """Turn queued observations into pending writes (lock held)."""
        pending = self._pending
        while deadline is None or time.monotonic() < deadline:
            batch = self._intake.take()
            if not batch:
                return
            for observation in paced(batch):
                try:
                    self._note(observation)
                except Exception as exc:
                    self._bugs.report("the digest", exc)
            # Beyond the bound the oldest pending writes go: the store has been
            # failing for a while (the breaker is open) and memory is bounded.
            while len(pending) > MAX_QUEUED:
                pending.drop_oldest()
                self._count(Dropped.STORE_DOWN)

    def _note(self, observation: Observation) -> None:
        """Digest one observation into a pending upsert or removal, or nothing."""
        if (settled := observation.settle()) is not None:  # a page's, off the request
            self._count(settled)
            return
        recent = self._recent
        hit = recent.get(observation.key)
        outcome = digest(observation, self._config, self._rules, hit, self._written)
        if type(outcome) is Upsert:
            self._visits.served(outcome.entry.path, observation.seen)
            refused = self._pending.upsert(outcome)
            if refused is not None:
                self._count(refused)
        elif type(outcome) is Unchanged:
            self._visits.served(outcome.path, observation.seen)
            recent.remember(outcome.key, outcome.prints, outcome.path)
            self._count(Seen.UNCHANGED)
            self._log.note(outcome.path, Seen.UNCHANGED)
        elif type(outcome) is Removal:
            if outcome.reason is not None:
                self._count(outcome.reason)
            self._pending.remove(outcome)
        elif type(outcome) is Skip:
            self._count(outcome.reason)
            if outcome.path is not None:
                self._log.note(outcome.path, outcome.reason)

    def _written(self, path: str, alternates: Alternates | None) -> bool:
        """Whether the store holds ``path`` as this writer last wrote it: no
        removal waits for it, and its cluster holds the ``alternates`` it
        declares (``None``: not read, the bytes were the same)."""
        return path not in self._pending.removals and (
            alternates is None or self._declared.holds(path, alternates)
        )

    # -- writing ------------------------------------------------------------------

    def _push(self, force: bool) -> bool:
        """Write the pending changes, then what the side writers hold: the
        decisions log, the visits, this process's counts (each when due);
        ``True`` when none is left (lock held). Idle, it skips StoreWatch."""
        if self._breaker.allows() and (self.started or self._pending):
            self._watch.forget(self._recent, self._declared, self._newsroom)
        recheck = self._recheck
        if recheck is not None and not recheck.done:
            # The pages follow the config before more are written.
            run = partial(recheck.run, force, self._count, self._removed, self._bugs)
            if not self._attempt(force, run):
                return False
        if self._pending:
            if not self._attempt(force, self._write_pages):
                return False
            self._breaker.reset()
            self._read_only = False
        due = [side for side in self._sides if side.due(force)]
        return not due or self._attempt(force, partial(_write_each, due))

    def _attempt(self, force: bool, write: Callable[[], object]) -> bool:
        """``write()`` under the writer's one outage rule: not while the
        breaker is open unless forced, a ``StoreError`` the end of the round
        (:class:`~.breaker.Outage`); ``False`` when the store failed."""
        if not force and not self._breaker.allows():
            return False
        with self._outage() as outage:
            write()
        return not outage.failed

    def _write_pages(self) -> None:
        pending = self._pending
        self._titles.load()
        if pending.candidates:
            self._admit()
        with self._writing() as decided:
            if pending.upserts:
                self._write_upserts()
            if pending.removals:
                self._write_removals()
        # Pages written without the alternates they declare, as the store
        # decided (members of their clusters written again included).
        for reason in decided.values():
            if reason is not None:
                self._count(reason)

    def _removed(self, paths: list[str]) -> None:
        """Forget pages removed by this writer's re-check."""
        for path in paths:
            self._recent.forget(path, path)
        self._limits.forget(paths)

    def _admit(self) -> None:
        """Move candidates to the pending upserts as far as the caps and the
        rate allow; a failing store leaves them all pending."""
        pending = self._pending
        candidates = list(pending.candidates.values())
        admitted, held = self._limits.admit_all(candidates, self._store, self._bugs)
        for path in admitted:
            pending.upserts[path] = pending.candidates[path]
        for path in set(pending.candidates) - set(admitted) - set(held):
            self._log.note(path, NOTED_NOT_ADMITTED)
        for path in held:
            stand_in = pending.candidates[path]
            self._count(stand_in.stand_in or Seen.OTHER_SPELLING)
            self._log.note(path, stand_in.stand_in or Seen.OTHER_SPELLING)
            # Its digests, so that the same spelling is not read again.
            self._recent.remember(stand_in.key, stand_in.prints, path, fresh=False)
        pending.candidates.clear()

    def _write_upserts(self) -> None:
        pending = self._pending
        held = self._newsroom.held(pending.upserts.values())
        entries = self._titles.entries(list(pending.upserts.values()))
        _, bad = self._bugs.isolate("a store upsert", self._store.upsert, entries)
        for entry in bad:
            pending.upserts.pop(entry.path, None)
        upserts = pending.upserts
        articles = self._newsroom.articles(entries, upserts, held)
        self._bugs.isolate("a news write", self._newsroom.publish, articles)
        for upsert in upserts.values():
            self._log.note(upsert.entry.path, upsert.noted)
            # A stand-in's key stays unfresh: the stored spelling is read at once.
            fresh = upsert.stand_in is None
            self._recent.remember(upsert.key, upsert.prints, upsert.entry.path, fresh)
            self._declared.note(upsert.entry.path, upsert.entry.alternates)
        self._count(RECORDED, pending.recorded())
        upserts.clear()

    def _write_removals(self) -> None:
        pending = self._pending
        removals = pending.removals
        # Only stored pages are noted as removed: 404s for made-up URLs would
        # otherwise fill the log (one indexed read a batch). Those are counted
        # as gone: every answer is counted somewhere (invariant 8).
        plain = [r.path for r in removals.values() if r.reason is None]
        held = self._store.known(plain) if plain else set()
        removed, _ = self._bugs.isolate(
            "a store removal", self._store.remove, [*removals]
        )
        for removal in removals.values():
            self._recent.forget(removal.key, removal.path)
            if removal.reason is not None:
                self._log.note(removal.path, removal.reason)
            elif removal.path in held:
                self._log.note(removal.path, NOTED_REMOVED)
        self._limits.forget(removals)
        self._count(REMOVED, removed)
        if len(plain) > len(held):
            self._count(Skipped.GONE, len(plain) - len(held))
        removals.clear()


def _write_each(sides: Sequence[Side]) -> None:
    for side in sides:
        side.write()
