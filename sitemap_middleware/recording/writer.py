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
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, TypeVar

from ..config import Config
from ..errors import StoreError
from ..model import Entry
from ..page.titles import Affix, Titles
from ..reasons import (
    PRUNED,
    RECHECKED,
    RECORDED,
    REMOVED,
    RESTYLED,
    Dropped,
    Errors,
    Seen,
)
from ..stores.base import Decision, Decisions, Shared, Store
from .admission import Limits
from .clusters import Declared
from .counters import Counters
from .digest import Removal, Rules, Skip, Unchanged, Upsert, digest
from .hints import Hints
from .intake import MAX_QUEUED, Intake
from .observation import Observation
from .recent import Recent
from .recheck import Recheck

if TYPE_CHECKING:
    from .indexnow import Pusher

logger = logging.getLogger("sitemap_middleware")

T = TypeVar("T")

FLUSH_INTERVAL = 1.0  # seconds between writes when traffic is light
BATCH = 1000  # observations written per store call
# A failing store is left alone this long, doubling from MIN to MAX, then probed.
MIN_BACKOFF = 1.0
MAX_BACKOFF = 30.0
# Seconds between two tracebacks of the same bug (the counters keep the count).
BUG_INTERVAL = 60.0
# Seconds between two looks at the store's epoch (a new one: its data was lost).
EPOCH_INTERVAL = 1.0
# Seconds between two sends of this process's counts to the store's (and at
# every flush): one small write, never one a request.
COUNTS_INTERVAL = 10.0
# Decisions waiting for the store's log: beyond it the oldest go (a diagnosis
# aid, never worth memory while the store is down).
MAX_DECISIONS = 10_000
# The setting that shares the site's title affix between the writers.
TITLE_AFFIX = "title_affix"
# What the decisions log says of a page written, and of one not admitted
# (a cap or the rate: counted under its reason in stats()).
NOTED_RECORDED = "recorded"
NOTED_REMOVED = "removed"
NOTED_NOT_ADMITTED = "not_admitted"


class Pending:
    """Digested, not yet written; kept across store failures."""

    __slots__ = ("candidates", "removals", "upserts")

    def __init__(self) -> None:
        self.upserts: dict[str, Upsert] = {}
        self.removals: dict[str, Removal] = {}
        # Pages at paths this process has not written lately, waiting for
        # admission: maybe new URLs, which the caps and the rate admit.
        self.candidates: dict[str, Upsert] = {}

    def __len__(self) -> int:
        return len(self.upserts) + len(self.removals) + len(self.candidates)

    def __bool__(self) -> bool:
        return bool(self.upserts or self.removals or self.candidates)

    def drop_oldest(self) -> None:
        pending = self.candidates or self.upserts or self.removals
        del pending[next(iter(pending))]


class Breaker:
    """The store's circuit breaker: closed while writes succeed; once one fails,
    open for a backoff that doubles up to ``MAX_BACKOFF``, then half-open (the
    next write probes)."""

    __slots__ = ("_backoff", "_paused_at", "_retry_at")

    def __init__(self) -> None:
        self._backoff = 0.0
        self._retry_at = 0.0
        self._paused_at: float | None = None  # monotonic, while open

    def allows(self) -> bool:
        return time.monotonic() >= self._retry_at

    def trip(self, exc: Exception) -> None:
        self._backoff = min(max(2 * self._backoff, MIN_BACKOFF), MAX_BACKOFF)
        self._retry_at = time.monotonic() + self._backoff
        # One warning per outage, not one per probe: a store down for an hour
        # would otherwise fill the logs while the app itself is fine. The
        # counters (errors, pending, dropped) keep the full account.
        if self._paused_at is None:
            self._paused_at = time.monotonic()
            logger.warning(
                "recording paused: store unavailable (%s); pending writes are "
                "kept and retried",
                exc,
            )
        else:
            logger.debug("store still unavailable: %s", exc, exc_info=exc)

    def reset(self) -> None:
        self._backoff = 0.0
        if self._paused_at is not None:
            logger.info(
                "recording resumed: the store is back after %.1f s",
                time.monotonic() - self._paused_at,
            )
            self._paused_at = None


class Bugs:
    """Reports unexpected exceptions: each kind's traceback once per
    ``BUG_INTERVAL`` at ERROR, the repeats at DEBUG; each one counted."""

    __slots__ = ("_count", "_logged")

    def __init__(self, count: Callable[[str], object]) -> None:
        self._count = count
        self._logged: dict[tuple[str, str], float] = {}

    def report(self, where: str, exc: BaseException) -> None:
        self._count(Errors.BUG)
        kind = (where, type(exc).__qualname__)
        current = time.monotonic()
        last = self._logged.get(kind)
        if last is not None and current - last < BUG_INTERVAL:
            logger.debug("bug in %s again: %r", where, exc)
            return
        self._logged[kind] = current
        logger.error(
            "bug in %s (recording goes on without it): %r", where, exc, exc_info=exc
        )


class Writer:
    """Drains an :class:`~.intake.Intake` into the store, in its own thread."""

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
        pusher: Pusher | None = None,
    ) -> None:
        self._hints = hints
        # IndexNow: the writes queue what they change, for this to send.
        self._pusher = pusher
        self._config = config
        self._recheck = recheck
        self._rules = rules
        self._store = store
        self._intake = intake
        self._count = counters.add
        self._counters = counters
        self._shared = store if isinstance(store, Shared) else None
        # What the store's counters hold of ours. Made in a forked child too:
        # the counts inherited are the parent's to send, not ours.
        self._sent = counters.totals()
        self._counts_due = time.monotonic() + COUNTS_INTERVAL
        self._recent = recent
        self._limits = limits
        self._declared = Declared()
        self._log = store if isinstance(store, Decisions) else None
        self._decided: list[Decision] = []
        self._titles: Titles | None = None  # made at the first push (a store read)
        self._epoch: str | None = None  # the store's, as last seen
        self._epoch_due = 0.0
        self._pending = Pending()
        self._breaker = Breaker()
        self._bugs = Bugs(counters.add)
        self._lock = threading.Lock()  # one drain and push at a time
        self._starting = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = False

    def __len__(self) -> int:
        """Writes waiting for the store."""
        return len(self._pending)

    @property
    def started(self) -> bool:
        return self._thread is not None

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
        if self._pusher is not None:
            self._pusher.start()

    def _run(self, owner: object) -> None:
        while not self._stopping:
            try:
                self._intake.wait(FLUSH_INTERVAL)
                with self._lock:
                    self._drain()
                    self._push(force=False)
                    self._send_counts(force=False)
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
                done = self._push(force=True) and not len(self._intake)
                done = self._send_counts(force=True) and done
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
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def unsent(self) -> Counter[str]:
        """This process's counts not yet in the store's counters."""
        return self._counters.totals() - self._sent

    def _send_counts(self, force: bool) -> bool:
        """Add this process's new counts to the store's, every
        ``COUNTS_INTERVAL`` or when forced; on an outage they stay unsent and
        go with the next send. ``False`` if some are left (lock held)."""
        shared = self._shared
        current = time.monotonic()
        if shared is None:
            return True
        if not force and (current < self._counts_due or not self._breaker.allows()):
            return True
        self._counts_due = current + COUNTS_INTERVAL
        totals = self._counters.totals()
        delta = totals - self._sent
        if not delta:
            return True
        try:
            shared.add_counts(delta)
        except StoreError as exc:
            self._count(Errors.STORE)
            self._breaker.trip(exc)
            return False
        self._sent = totals
        return True

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
        config, rules = self._config, self._rules
        recent, pending = self._recent, self._pending
        outcome = digest(observation, config, rules, recent.get(observation.key))
        if type(outcome) is Unchanged:
            if outcome.path not in pending.removals and (
                # The fingerprint reads the body: the head may have changed.
                outcome.alternates is None
                or self._declared.holds(outcome.path, outcome.alternates)
            ):
                recent.remember(outcome.key, outcome.prints, outcome.path)
                self._count(Seen.UNCHANGED)
                self._decide(outcome.path, Seen.UNCHANGED)
                return
            # Written lately, yet to be written again: read it in full.
            outcome = digest(observation, config, rules, None)
            if type(outcome) is Upsert:
                outcome = outcome._replace(known=True)
        if type(outcome) is Upsert:
            path = outcome.entry.path
            if outcome.stand_in is not None:
                # Another spelling of the URL: it may add the page, never
                # change it or cancel its removal (invariant 19).
                waiting = path in pending.upserts or path in pending.removals
                if waiting or path in pending.candidates:
                    self._count(outcome.stand_in)
                else:
                    pending.candidates[path] = outcome
                return
            pending.removals.pop(path, None)
            if outcome.known or path in pending.upserts:
                pending.candidates.pop(path, None)
                pending.upserts[path] = outcome
            else:
                pending.candidates[path] = outcome
        elif type(outcome) is Removal:
            if outcome.reason is not None:
                self._count(outcome.reason)
            path = outcome.path
            pending.removals[path] = outcome
            pending.upserts.pop(path, None)
            pending.candidates.pop(path, None)
        elif type(outcome) is Skip:
            self._count(outcome.reason)
            if outcome.path is not None:
                self._decide(outcome.path, outcome.reason)

    def _decide(self, path: str, reason: str) -> None:
        """Note a decision about a stored spelling for the store's log."""
        if self._log is None:
            return
        decided = self._decided
        decided.append((path, reason, datetime.now(timezone.utc)))
        if len(decided) > MAX_DECISIONS:
            del decided[: len(decided) - MAX_DECISIONS]

    # -- writing ------------------------------------------------------------------

    def _push(self, force: bool) -> bool:
        """Write the pending changes; ``True`` when none is left (lock held)."""
        self._check_epoch()  # before the first write: the epoch written to
        if not self._rechecked(force):
            return False
        pending = self._pending
        if not pending:
            return self._write_decisions(force)
        if not force and not self._breaker.allows():
            return False
        try:
            if self._titles is None:
                self._titles = Titles(self._stored_affix())
            if pending.candidates:
                self._admit()
            with self._hreflang() as decided, self._pushing():
                if pending.upserts:
                    self._write_upserts()
                if pending.removals:
                    self._write_removals()
            # Pages written without the alternates they declare, as the store
            # decided (members of their clusters written again included).
            for reason in decided.values():
                if reason is not None:
                    self._count(reason)
        except StoreError as exc:
            self._count(Errors.STORE)
            self._breaker.trip(exc)
            return False
        self._breaker.reset()
        return self._write_decisions(force)

    def _write_decisions(self, force: bool) -> bool:
        """Add the decisions made since the last write to the store's log, in
        one write; on an outage they stay for the next."""
        if self._log is None or not self._decided:
            return True
        if not force and not self._breaker.allows():
            return False
        try:
            self._log.note(self._decided)
        except StoreError as exc:
            self._count(Errors.STORE)
            self._breaker.trip(exc)
            return False
        self._decided = []
        return True

    def _stored_affix(self) -> Affix | None:
        """The title affix another writer of the site learned, if any."""
        if self._shared is None:
            return None
        return Affix.unpack(self._shared.setting(TITLE_AFFIX))

    def _titled(self, upserts: list[Upsert]) -> list[Entry]:
        """The entries to write, their titles without the site's affix, as
        learned from every titled page this writer has seen so far (and
        shared with the others)."""
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

    def _rechecked(self, force: bool) -> bool:
        """Check the stored pages against the config, a part a call (all of
        them when forced), until done; ``False`` while the store fails."""
        recheck = self._recheck
        if recheck is None or recheck.done:
            return True
        if not force and not self._breaker.allows():
            return False
        try:
            while not recheck.done:
                before = recheck.checked
                removed, rewritten = recheck.step()
                if recheck.checked > before:
                    self._count(RECHECKED, recheck.checked - before)
                if removed:
                    for path in removed:
                        self._recent.forget(path, path)
                    self._limits.forget(removed)
                    self._count(PRUNED, len(removed))
                if rewritten:
                    self._count(RESTYLED, rewritten)
                if not force:
                    break
        except StoreError as exc:
            self._count(Errors.STORE)
            self._breaker.trip(exc)
            return False
        except Exception as exc:
            # Not again in this process: the pages follow the config at the
            # next start (invariant 18: recording goes on).
            recheck.done = True
            self._bugs.report("the config re-check", exc)
        return True

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
            self._decide(path, NOTED_NOT_ADMITTED)
        for path in held:
            stand_in = pending.candidates[path]
            self._count(stand_in.stand_in or Seen.OTHER_SPELLING)
            self._decide(path, stand_in.stand_in or Seen.OTHER_SPELLING)
            # Its digests, so that the same spelling is not read again.
            self._recent.remember(stand_in.key, stand_in.prints, path, fresh=False)
        pending.candidates.clear()

    @contextmanager
    def _hreflang(self) -> Iterator[dict[str, str | None]]:
        """The store's hreflang decisions on the writes of the block (none
        from a store that does not report them)."""
        report = getattr(self._store, "hreflang", None)
        if report is None:
            yield {}
            return
        with report() as decided:
            yield decided

    @contextmanager
    def _pushing(self) -> Iterator[None]:
        """With IndexNow on, the block's writes queue, in their own
        transactions, the URLs they add, change or remove."""
        pushing = getattr(self._store, "pushing", None)
        if self._pusher is None or pushing is None:
            yield
            return
        with pushing():
            yield

    def _check_epoch(self) -> None:
        """Forget what this process wrote when the store's data is no longer
        the data it wrote to (made again from nothing: a Redis restart that
        lost it), so that unchanged pages are written again at their next
        request rather than after ``recheck_interval`` (invariant 20). One
        small read about once a second, while the breaker is closed."""
        current = time.monotonic()
        epoch = getattr(self._store, "epoch", None)
        if epoch is None or current < self._epoch_due or not self._breaker.allows():
            return
        self._epoch_due = current + EPOCH_INTERVAL
        try:
            seen = epoch()
        except StoreError:
            return  # the writes will meet the outage
        if seen != self._epoch:
            if self._epoch is not None:
                self._recent.clear()
                self._declared.clear()
            self._epoch = seen

    def _write_upserts(self) -> None:
        pending = self._pending
        _, bad = self._isolate(
            "a store upsert",
            self._store.upsert,
            self._titled(list(pending.upserts.values())),
        )
        for entry in bad:
            pending.upserts.pop(entry.path, None)
        upserts = pending.upserts
        for upsert in upserts.values():
            self._decide(upsert.entry.path, NOTED_RECORDED)
            # A stand-in's key stays unfresh: the stored spelling is read at once.
            fresh = upsert.stand_in is None
            self._recent.remember(upsert.key, upsert.prints, upsert.entry.path, fresh)
            self._declared.note(upsert.entry.path, upsert.entry.alternates)
        self._count(RECORDED, len(upserts))
        upserts.clear()

    def _write_removals(self) -> None:
        pending = self._pending
        removals = pending.removals
        # Only stored pages are noted as removed: 404s for made-up URLs would
        # otherwise fill the log (one indexed read a batch).
        plain = [r.path for r in removals.values() if r.reason is None]
        held = self._store.known(plain) if self._log is not None and plain else set()
        removed, _ = self._isolate("a store removal", self._store.remove, [*removals])
        for removal in removals.values():
            self._recent.forget(removal.key, removal.path)
            if removal.reason is not None:
                self._decide(removal.path, removal.reason)
            elif removal.path in held:
                self._decide(removal.path, NOTED_REMOVED)
        self._limits.forget(removals)
        self._count(REMOVED, removed)
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
