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
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, TypeVar

from ..config import Config
from ..errors import StoreError, StoreReadOnly
from ..model import Entry
from ..reasons import (
    MOVED,
    PRUNED,
    RECHECKED,
    RECORDED,
    REMOVED,
    RESTYLED,
    Crawls,
    Dropped,
    Seen,
    Skipped,
)
from ..sections import DEFAULT
from ..stores.base import Article, Hreflang, News, Pushes, Pushing, Store
from .admission import Limits
from .breaker import Breaker, Bugs, Outage
from .clusters import Alternates, Declared
from .counters import Counters
from .crawls import CrawlQueue, Verdict, Verifier, VisitLog, client_address
from .digest import Removal, Rules, Skip, Unchanged, Upsert, digest
from .hints import Hints
from .intake import MAX_QUEUED, Intake
from .observation import Observation
from .pending import Pending
from .recent import Recent
from .recheck import Recheck
from .sharing import (
    TITLE_AFFIX,
    DecisionLog,
    NewsWatch,
    SharedCounts,
    Side,
    SiteTitles,
    StoreWatch,
)

__all__ = ["TITLE_AFFIX", "Writer"]

if TYPE_CHECKING:
    from .indexnow import Pusher

logger = logging.getLogger("sitemap_middleware")

T = TypeVar("T")

FLUSH_INTERVAL = 1.0  # seconds between writes when traffic is light
BATCH = 1000  # observations written per store call
# A failing store is left alone this long, doubling from MIN to MAX, then probed
# (read as each writer is made).
MIN_BACKOFF = 1.0
MAX_BACKOFF = 30.0
# What the decisions log says of a page written, and of one not admitted
# (a cap or the rate: counted under its reason in stats()).
NOTED_RECORDED = "recorded"
NOTED_REMOVED = "removed"
NOTED_NOT_ADMITTED = "not_admitted"


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
        self._declared = Declared()
        # The optional store features (stores/base.py), each asked once.
        self._hreflang = store if isinstance(store, Hreflang) else None
        self._pushing = (
            store if self._pusher is not None and isinstance(store, Pushing) else None
        )
        # News: the articles of each batch written beside its pages.
        self._news = (
            store if config.news is not None and isinstance(store, News) else None
        )
        self._news_watch = NewsWatch(store)
        self._counts = SharedCounts(store, counters)
        self._titles = SiteTitles(store)
        self._log = DecisionLog(store)
        self._watch = StoreWatch(store)
        # Crawls: verified off the request path, kept as visits with the
        # pages' last-served times.
        self._visits = VisitLog(config, store)
        # Written after the pages, in this order (the counts last: they count
        # what the others wrote).
        self._sides: tuple[Side, ...] = (self._log, self._visits, self._counts)
        self._crawls = crawls
        self._verifier = None
        if crawls is not None and config.crawlers is not None:
            self._verifier = Verifier(config.crawlers)
        self._breaker = Breaker(
            "recording paused: store unavailable (%(detail)s); pending writes are"
            " kept and retried",
            "store still unavailable: %(detail)s",
            "recording resumed: the store is back after %(seconds).1f s",
            MIN_BACKOFF,
            MAX_BACKOFF,
            faulted="recording stopped: %(detail)s. Pending writes are kept; the"
            " store is looked at again every %(delay).0f s",
        )
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
                    self._verify()
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
                self._verify(deadline)
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
        if self._verifier is not None:
            self._verifier.close()
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
        pending = self._pending
        if pending:
            self._count(Dropped.READ_ONLY, len(pending))
            pending.upserts.clear()
            pending.removals.clear()
            pending.candidates.clear()

    # -- digesting ------------------------------------------------------------

    def _drain(self, deadline: float | None = None) -> None:
        """Turn queued observations into pending writes (lock held)."""
        pending = self._pending
        while deadline is None or time.monotonic() < deadline:
            batch = self._intake.take()
            if not batch:
                return
            for observation in batch:
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

    def _verify(self, deadline: float | None = None) -> None:
        """Verify the queued crawls and settle those whose lookups ended: the
        verified ones wait as visits, the others are counted. Never waits
        for a lookup, but in a flush (``deadline``), for ``crawlers.timeout``
        at most (lock held)."""
        verifier, queue, options = self._verifier, self._crawls, self._config.crawlers
        if verifier is None or queue is None or options is None:
            return
        for crawl in queue.take():
            address = client_address(
                crawl.peer,
                crawl.forwarded,
                options.forwarded_header,
                options.trusted_proxies,
            )
            verdict = verifier.verify(crawl, address)
            if verdict is not None:
                self._judged(verdict)
        for verdict in verifier.settle():
            self._judged(verdict)
        if deadline is None:
            return
        until = min(deadline, time.monotonic() + options.timeout + 0.1)
        while len(verifier) and time.monotonic() < until:
            time.sleep(0.01)
            for verdict in verifier.settle():
                self._judged(verdict)

    def _judged(self, verdict: Verdict) -> None:
        self._count(verdict.reason)
        if verdict.reason == Crawls.VERIFIED:
            self._visits.crawled(verdict.crawl)

    def _written(self, path: str, alternates: Alternates | None) -> bool:
        """Whether the store holds ``path`` as this writer last wrote it: no
        removal waits for it, and its cluster holds the ``alternates`` it
        declares (``None``: not read, the bytes were the same)."""
        return path not in self._pending.removals and (
            alternates is None or self._declared.holds(path, alternates)
        )

    # -- writing ------------------------------------------------------------------

    def _push(self, force: bool) -> bool:
        """Write the pending changes; ``True`` when none is left (lock held)."""
        if self._breaker.allows():
            self._forget()
        if not self._rechecked(force):
            return False
        pending = self._pending
        if not pending:
            return self._write_sides(force)
        if not force and not self._breaker.allows():
            return False
        with self._outage() as outage:
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
        if outage.failed:
            return False
        self._breaker.reset()
        self._read_only = False
        return self._write_sides(force)

    def _forget(self) -> None:
        """Forget the recent pages the store no longer holds as this writer
        wrote them, so that each is read and written again at its next
        request rather than after ``recheck_interval``: those removed by
        anyone (another worker or machine, the command line), or all of them
        when the store's data was made again from nothing (a Redis restart
        that lost it: invariant 20) or more were removed than its log keeps."""
        removed = self._watch.look()
        if removed is None:
            self._recent.clear()
            self._declared.clear()
            return
        for path in removed:
            # Its own removals too: forgotten as written already, or recorded
            # again since, and then read once more at their next request.
            self._recent.forget(path, path)

    def _write_sides(self, force: bool) -> bool:
        """Write what each side writer holds, once the pages are written: the
        decisions log, the visits, this process's counts (each when due).
        One outage rule: not while the breaker is open unless forced, and the
        first failure ends the round (what is left waits for the next).
        ``False`` when something is left."""
        due = [side for side in self._sides if side.due(force)]
        if not due:
            return True
        if not force and not self._breaker.allows():
            return False
        with self._outage() as outage:
            for side in due:
                side.write()
        return not outage.failed

    def _rechecked(self, force: bool) -> bool:
        """Check the stored pages against the config, a part a call (all of
        them when forced), until done; ``False`` while the store fails."""
        recheck = self._recheck
        if recheck is None or recheck.done:
            return True
        if not force and not self._breaker.allows():
            return False
        outage = self._outage()
        try:
            with outage:
                while not recheck.done:
                    before, moved = recheck.checked, recheck.moved
                    removed, rewritten = recheck.step()
                    if recheck.checked > before:
                        self._count(RECHECKED, recheck.checked - before)
                    if recheck.moved > moved:
                        self._count(MOVED, recheck.moved - moved)
                    if removed:
                        for path in removed:
                            self._recent.forget(path, path)
                        self._limits.forget(removed)
                        self._count(PRUNED, len(removed))
                    if rewritten:
                        self._count(RESTYLED, rewritten)
                    if not force:
                        break
        except Exception as exc:
            # Not again in this process: the pages follow the config at the
            # next start (invariant 18: recording goes on).
            recheck.done = True
            self._bugs.report("the config re-check", exc)
        return not outage.failed

    @contextmanager
    def _writing(self) -> Iterator[dict[str, str | None]]:
        """The block's writes: the store's hreflang decisions on them (none
        from a store that does not report them) and, with IndexNow on, the
        URLs they add, change or remove queued in their own transactions."""
        with ExitStack() as stack:
            decided: dict[str, str | None] = {}
            if self._hreflang is not None:
                decided = stack.enter_context(self._hreflang.hreflang())
            if self._pushing is not None:
                stack.enter_context(self._pushing.pushing())
            yield decided

    def _admit(self) -> None:
        """Move candidates to the pending upserts as far as the caps and the
        rate allow; a failing store leaves them all pending."""
        pending = self._pending
        candidates = list(pending.candidates.values())
        admitted: list[str] = []
        held: list[str] = []

        def admit(part: list[Upsert]) -> int:
            # A stand-in adds a page the store does not hold, nothing more.
            others = [u.entry.path for u in part if u.stand_in is not None]
            known = self._store.known(others) if others else set()
            new = ((u.entry.path, u.route) for u in part if u.entry.path not in known)
            admitted.extend(self._limits.admit(new))
            held.extend(known)
            return 0

        self._isolate("admission", admit, candidates)
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
        # An article that declares no published time is dated when the store
        # first holds its page, once its section is watched (NewsWatch):
        # those it held already keep the stored date.
        undeclared = [
            path
            for path, upsert in pending.upserts.items()
            if upsert.story is not None and not upsert.story.declared
        ]
        held = set()
        if self._news is not None:
            sections = {
                upsert.entry.section or DEFAULT
                for upsert in pending.upserts.values()
                if upsert.story is not None
            }
            if sections:
                self._news_watch.watch(sections, int(time.time()))
            if undeclared:
                held = self._store.known(undeclared)
        entries = self._titles.entries(list(pending.upserts.values()))
        _, bad = self._isolate("a store upsert", self._store.upsert, entries)
        for entry in bad:
            pending.upserts.pop(entry.path, None)
        upserts = pending.upserts
        if self._news is not None:
            self._publish(entries, held)
        for upsert in upserts.values():
            self._log.note(upsert.entry.path, NOTED_RECORDED)
            # A stand-in's key stays unfresh: the stored spelling is read at once.
            fresh = upsert.stand_in is None
            self._recent.remember(upsert.key, upsert.prints, upsert.entry.path, fresh)
            self._declared.note(upsert.entry.path, upsert.entry.alternates)
        self._count(RECORDED, len(upserts))
        upserts.clear()

    def _publish(self, entries: list[Entry], held: set[str]) -> None:
        """Write the news articles of the pages just written, titled as their
        entries (without the site's affix); a page without a title is none."""
        upserts = self._pending.upserts
        articles: list[Article] = []
        for entry in entries:
            upsert = upserts.get(entry.path)
            if upsert is None or upsert.story is None or not entry.title:
                continue
            article = upsert.story.article._replace(title=entry.title)
            if not upsert.story.declared:
                if entry.path in held:
                    article = article._replace(published=0)
                elif not self._news_watch.dated(
                    entry.section or DEFAULT, article.published
                ):
                    continue  # it may be old: the section is watched too lately
            articles.append(article)
        if articles:
            self._isolate("a news write", self._publish_part, articles)

    def _publish_part(self, articles: list[Article]) -> int:
        assert self._news is not None
        self._news.publish(articles, int(time.time()))
        return len(articles)

    def _write_removals(self) -> None:
        pending = self._pending
        removals = pending.removals
        # Only stored pages are noted as removed: 404s for made-up URLs would
        # otherwise fill the log (one indexed read a batch). Those are counted
        # as gone: every answer is counted somewhere (invariant 8).
        plain = [r.path for r in removals.values() if r.reason is None]
        held = self._store.known(plain) if plain else set()
        removed, _ = self._isolate("a store removal", self._store.remove, [*removals])
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

    def _isolate(
        self, where: str, call: Callable[[list[T]], int], items: list[T]
    ) -> tuple[int, list[T]]:
        """``call(items)``, its results summed; an item whose call raises a bug
        (anything but an outage, ``StoreError``, which propagates) is found by
        halving the batch, reported and left out. Returns the sum and the
        items left out."""
        if not items:
            return 0, []
        try:
            return call(items), []
        except StoreError:
            raise
        except Exception as exc:
            if len(items) == 1:
                self._bugs.report(where, exc)
                return 0, items
        half = len(items) // 2
        done, bad = self._isolate(where, call, items[:half])
        more, worse = self._isolate(where, call, items[half:])
        return done + more, bad + worse
