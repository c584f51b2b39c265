"""The recorder: the request path enqueues observations; one writer thread per
process digests them, normalises their URLs and writes batches to the store.

Nothing here raises into the app: a full queue drops and counts; a failing store
opens a circuit breaker (one warning, writes kept pending and retried) and is counted.
New URLs are admitted within the caps and the per-process rate (invariant 7).
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import threading
import time
import weakref
from collections import Counter, OrderedDict, deque
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from .clusters import Clusters, declared
from .config import Config
from .errors import StoreError
from .facts import Headers, read_content, read_head
from .limits import Limits
from .policy import Policy
from .reasons import GROUP, RECORD
from .routes import Route
from .sitemaps import MAX_URL_LENGTH
from .stores.base import Entry, Store
from .urls import (
    filter_query,
    normalise_path,
    strip_secrets,
    wsgi_path,
)

logger = logging.getLogger("sitemap_middleware")

# Bytes of a page's body that are kept for its fingerprint; a change further
# down a very long page goes unnoticed.
BODY_BUDGET = 512 * 1024
# The queue drops new observations beyond either bound (invariant 15).
MAX_QUEUED = 10_000
MAX_QUEUED_BYTES = 64 * 1024 * 1024
# Pages whose fingerprint this process remembers, to skip re-digesting them.
RECENT_PAGES = 10_000
FLUSH_INTERVAL = 1.0  # seconds between writes when traffic is light
BATCH = 1000  # observations written per store call
# A failing store is left alone this long, doubling from MIN to MAX, then probed.
MIN_BACKOFF = 1.0
MAX_BACKOFF = 30.0
# The action of a page to record that this process digested lately.
FRESH = "fresh"


class Observation:
    """One response being watched: where it was served and the body seen so far.

    The adapters fill it as the response passes and hand it to
    :meth:`Recorder.submit` once it has been sent in full.
    """

    __slots__ = (
        "action",
        "body",
        "headers",
        "key",
        "path",
        "query",
        "raw",
        "route",
        "seen",
        "size",
    )

    def __init__(
        self, key: str, path: str, query: str, raw: bool, route: Route
    ) -> None:
        self.key = key  # cache key: path as received, plus query if any is kept
        self.path = path  # raw (wire) form if raw, else latin-1 over UTF-8 bytes
        self.query = query
        self.raw = raw
        self.route = route
        self.action: str | None = None  # RECORD, REMOVE or why neither
        self.body: list[bytes] = []  # references to the chunks sent, never copies
        self.headers: Headers = ()  # the response's, as the app gave them
        self.size = 0
        self.seen = 0.0

    def see(self, chunk: bytes) -> None:
        """Note a body chunk, up to the byte budget."""
        if self.size < BODY_BUDGET:
            self.body.append(chunk)
            self.size += len(chunk)


class Counters:
    """Counts by (group, reason), without a lock on the request path.

    Each thread adds to its own dict (a lock per count would cost more than
    the rest of an ignored request's handling); a snapshot sums them. When a
    thread ends, its counts move to a shared total, so thread-per-request
    servers do not pile up dicts.
    """

    def __init__(self) -> None:
        self._local = threading.local()
        self._lock = threading.Lock()
        self._live: dict[int, dict[tuple[str, str], int]] = {}
        self._retired: Counter[tuple[str, str]] = Counter()

    def add(self, reason: str, group: str = "skipped", n: int = 1) -> None:
        """Count one (or ``n``) of ``reason`` in ``group``."""
        try:
            counts = self._local.counts
        except AttributeError:
            counts = self._adopt_thread()
        key = (group, reason)
        counts[key] = counts.get(key, 0) + n

    def _adopt_thread(self) -> dict[tuple[str, str], int]:
        counts: dict[tuple[str, str], int] = {}
        token = _ThreadToken()
        with self._lock:
            self._live[id(token)] = counts
        # The token dies with the thread's locals, and takes its counts along.
        weakref.finalize(token, self._retire, id(token))
        self._local.counts, self._local.token = counts, token
        return counts

    def _retire(self, token: int) -> None:
        with self._lock:
            self._retired.update(self._live.pop(token, {}))

    def snapshot(self) -> Counter[tuple[str, str]]:
        with self._lock:
            total = Counter(self._retired)
            for counts in self._live.values():
                total.update(dict(counts))
        return total


class _ThreadToken:
    """An object whose only job is to be collected when its thread ends."""


class Recorder:
    """Turns observations into store writes, off the request path."""

    def __init__(self, config: Config, policy: Policy, store: Store) -> None:
        self._config = config
        self._policy = policy
        self._store = store
        self._base_length = len(config.base_url)
        self._counts = Counters()
        # count(reason, group="skipped", n=1): called on the request path.
        add = self._counts.add

        def count(reason: str, group: str | None = None, n: int = 1) -> None:
            add(reason, group or GROUP[reason], n)

        self.count = count
        # key -> (digest, when checked), least recently checked first
        self._recent: OrderedDict[str, tuple[Digests, float]] = OrderedDict()
        # The volume bounds, kept by the writer: new-URL tokens; the global
        # count (the store's, plus what this process added since it was read)
        # and when to read it again; the stored paths of each route with a
        # cap, read from the store once per process, then kept up to date.
        self._limits = Limits(config, store, self.count)
        self._reset()
        ref = weakref.ref(self)
        os.register_at_fork(after_in_child=lambda: _call(ref, Recorder._reset))

    def _reset(self) -> None:
        # Also run in a forked child: the parent's thread and queue are not ours.
        self._queue: deque[Observation] = deque()
        self._queued_bytes = 0
        self._cond = threading.Condition()
        self._write_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = False
        # Digested, not yet written: path -> (entry, cache key, digest), and
        # path -> cache key for removals. Kept across store failures.
        self._upserts: dict[str, tuple[Entry, str, Digests]] = {}
        self._removals: dict[str, str] = {}
        # Digested pages at paths this process has not written lately, waiting
        # for admission: path -> (entry, cache key, digest, route).
        self._candidates: dict[str, tuple[Entry, str, Digests, Route]] = {}
        # hreflang clusters as this process has written them, and the entries
        # they settled on that are still to be written (kept across failures).
        self._clusters = Clusters(self._counts.add)
        self._writes: dict[str, Entry] = {}
        self._backoff = 0.0
        self._retry_at = 0.0
        # When the breaker opened (monotonic), or None while writes succeed.
        self._paused_at: float | None = None

    # -- request path -------------------------------------------------------

    def is_fresh(self, key: str) -> bool:
        """Whether ``key`` was digested within the recheck interval."""
        hit = self._recent.get(key)
        return hit is not None and time.monotonic() - hit[1] < (
            self._config.recheck_interval
        )

    def submit(self, observation: Any) -> None:
        """Queue an observation to ``RECORD`` or ``REMOVE``; never blocks,
        drops and counts when the queue is full."""
        with self._cond:
            if (
                len(self._queue) >= MAX_QUEUED
                or self._queued_bytes + observation.size > MAX_QUEUED_BYTES
            ):
                full = True
            else:
                full = False
                self._queue.append(observation)
                self._queued_bytes += observation.size
                if len(self._queue) >= BATCH:
                    self._cond.notify()
        if full:
            self.count("queue_full", "dropped")
        elif self._thread is None:
            self._start()

    # -- writer ---------------------------------------------------------------

    def _start(self) -> None:
        with self._cond:
            if self._thread is not None or self._stopping:
                return
            self._thread = threading.Thread(
                target=self._run, name="sitemap-recorder", daemon=True
            )
            self._thread.start()
            ref = weakref.ref(self)
            atexit.register(_call, ref, Recorder.close)

    def _run(self) -> None:
        while not self._stopping:
            with self._cond:
                if len(self._queue) < BATCH:
                    self._cond.wait(FLUSH_INTERVAL)
            with self._write_lock:
                self._drain()
                self._push(force=False)

    def flush(self, timeout: float | None = None) -> bool:
        """Write everything queued so far, trying the store even while its
        breaker is open; ``False`` if ``timeout`` ran out or writes are still
        pending because the store failed."""
        if not self._write_lock.acquire(timeout=-1 if timeout is None else timeout):
            return False
        try:
            deadline = None if timeout is None else time.monotonic() + timeout
            self._drain(deadline)
            return self._push(force=True) and not self._queue
        finally:
            self._write_lock.release()

    def close(self, timeout: float = 5.0) -> None:
        """Flush, stop the writer thread and close the store."""
        self._stopping = True
        with self._cond:
            self._cond.notify()
        self.flush(timeout)
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        try:
            self._store.close()
        except Exception:
            logger.exception("closing the sitemap store failed")

    def _drain(self, deadline: float | None = None) -> None:
        """Turn queued observations into pending writes (lock held)."""
        while deadline is None or time.monotonic() < deadline:
            with self._cond:
                batch = [
                    self._queue.popleft() for _ in range(min(BATCH, len(self._queue)))
                ]
                self._queued_bytes -= sum(o.size for o in batch)
            if not batch:
                return
            for observation in batch:
                self._note(observation)
            # Beyond the bound the oldest pending writes go: the store has been
            # failing for a while (the breaker is open) and memory is bounded.
            while self._pending() > MAX_QUEUED:
                pending = self._candidates or self._upserts or self._removals
                del pending[next(iter(pending))]
                self.count("store_down", "dropped")

    def _note(self, observation: Observation) -> None:
        """Digest one observation into a pending upsert or removal, or nothing."""
        path = self._canonical(observation)
        if path is None:
            return
        key = observation.key
        route = observation.route
        if observation.action == RECORD:
            body = observation.body
            raw = _digest(body)
            hit = self._recent.get(key)
            if hit is not None and hit[0][0] == raw and path not in self._removals:
                self._remember(key, hit[0])
                self.count("unchanged", "seen")
                return
            config = self._config
            head, reason = read_head(
                config, path, route.query, body, observation.headers
            )
            if reason is None:
                facts = read_content(config, path, body, observation.headers, head)
                digests = (raw, facts.fingerprint)
                alternates = declared(
                    head.alternates, config.base_url, path, route.query
                )
                if (
                    hit is not None
                    and hit[0][1] == facts.fingerprint
                    and facts.lastmod is None
                    and path not in self._removals
                    # The fingerprint reads the body: the head may have changed.
                    and self._clusters.holds(path, alternates)
                ):
                    # Only per-request noise changed (a CSRF token, a nonce).
                    self._remember(key, digests)
                    self.count("unchanged", "seen")
                    return
                # A lastmod from the configured source is taken as it is (if
                # newer); otherwise the fingerprint decides when it moves.
                if facts.lastmod is None:
                    seen = datetime.fromtimestamp(observation.seen, timezone.utc)
                    when, fingerprint = seen, facts.fingerprint
                else:
                    when, fingerprint = facts.lastmod, None
                # The route's options (or the defaults) are written into the
                # entry, so the stored fragment is final (pages re-recorded
                # later pick up a changed config).
                entry = Entry(
                    path,
                    when,
                    fingerprint,
                    route.changefreq,
                    route.priority,
                    route.template,
                    # As declared: Clusters.settle() keeps them when complete.
                    alternates=alternates,
                    images=facts.images,
                )
                self._removals.pop(path, None)
                if hit is not None or path in self._upserts:
                    self._candidates.pop(path, None)
                    self._upserts[path] = (entry, key, digests)
                else:
                    # Not written by this process lately: maybe a new URL,
                    # which the caps and the rate admit when it is pushed.
                    self._candidates[path] = (entry, key, digests, route)
                return
            self.count(reason)
        self._removals[path] = key
        self._upserts.pop(path, None)
        self._candidates.pop(path, None)

    def _push(self, force: bool) -> bool:
        """Write the pending changes; ``True`` when none is left (lock held).

        A failing store opens a breaker: the writer leaves it alone for a
        backoff that doubles up to ``MAX_BACKOFF``, keeping what is pending,
        then probes it with the next write.
        """
        if not (self._upserts or self._removals or self._candidates or self._writes):
            return True
        if not force and time.monotonic() < self._retry_at:
            return False
        try:
            if self._candidates:
                self._admit()
            if self._upserts or self._removals:
                entries = {path: entry for path, (entry, _, _) in self._upserts.items()}
                self._writes.update(self._clusters.settle(entries, self._removals))
            if self._writes:
                self._store.upsert(list(self._writes.values()))
                for _, key, digest in self._upserts.values():
                    self._remember(key, digest)
                self.count("", "recorded", len(self._upserts))
                self._upserts.clear()
                self._writes.clear()
            if self._removals:
                removed = self._store.remove(list(self._removals))
                for key in self._removals.values():
                    self._recent.pop(key, None)
                self._limits.forget(self._removals)
                self.count("", "removed", removed)
                self._removals.clear()
        except Exception as exc:
            self.count("store", "errors")
            self._backoff = min(max(2 * self._backoff, MIN_BACKOFF), MAX_BACKOFF)
            self._retry_at = time.monotonic() + self._backoff
            self._pause(exc)
            return False
        self._backoff = 0.0
        if self._paused_at is not None:
            logger.info(
                "recording resumed: the store is back after %.1f s",
                time.monotonic() - self._paused_at,
            )
            self._paused_at = None
        return True

    def _admit(self) -> None:
        """Move candidates to the pending upserts as far as the caps and the
        rate allow (lock held); a failing store leaves them all pending."""
        candidates = self._candidates
        admitted = self._limits.admit(
            (path, route) for path, (_, _, _, route) in candidates.items()
        )
        for path in admitted:
            entry, key, digests, _ = candidates[path]
            self._upserts[path] = (entry, key, digests)
        candidates.clear()

    def _pause(self, exc: Exception) -> None:
        # One warning per outage, not one per probe: a store down for an hour
        # would otherwise fill the logs while the app itself is fine. The
        # counters (errors, pending, dropped) keep the full account.
        if self._paused_at is None:
            self._paused_at = time.monotonic()
            logger.warning(
                "recording paused: store unavailable (%s); pending writes are "
                "kept and retried",
                exc,
                # A store's own error is an outage; anything else is a bug,
                # whose traceback is worth its lines.
                exc_info=None if isinstance(exc, StoreError) else exc,
            )
        else:
            logger.debug("store still unavailable: %s", exc, exc_info=exc)

    def _canonical(self, observation: Observation) -> str | None:
        raw = observation.path if observation.raw else wsgi_path(observation.path)
        path = normalise_path(raw)
        if path is None:
            self.count("bad_path")
            return None
        path = strip_secrets(path)
        if path is None:
            self.count("secret")
            return None
        reason = self._policy.path_skip(path)
        if reason is not None:
            self.count(reason)
            return None
        query = filter_query(observation.query, observation.route.query)
        if query:
            path = f"{path}?{query}"
        if self._base_length + len(path) > MAX_URL_LENGTH:
            self.count("too_long")
            return None
        return path

    def _remember(self, key: str, digests: Digests) -> None:
        recent = self._recent
        recent[key] = (digests, time.monotonic())
        recent.move_to_end(key)
        while len(recent) > RECENT_PAGES:
            recent.popitem(last=False)

    # -- inspection -------------------------------------------------------------

    def stats(self) -> dict[str, object]:
        """Counters since start: recorded, removed, and skipped/dropped by reason."""
        counts = self._counts.snapshot()
        grouped: dict[str, dict[str, int]] = {
            "skipped": {},
            "dropped": {},
            "seen": {},
            "errors": {},
        }
        flat: dict[str, object] = {"recorded": 0, "removed": 0}
        for (group, reason), value in counts.items():
            if reason:
                grouped[group][reason] = value
            else:
                flat[group] = value
        flat.update(grouped)
        flat["queued"] = len(self._queue)
        flat["pending"] = self._pending()
        return flat

    def _pending(self) -> int:
        return len(self._upserts) + len(self._removals) + len(self._candidates)


# A page's raw SHA-1 (the same bytes again: nothing to read) and its content
# fingerprint (the same content with other noise: nothing to write).
Digests = tuple[str, str]


def _digest(chunks: list[bytes]) -> str:
    """A fast content fingerprint (SHA-1: hardware-accelerated, not for security)."""
    digest = hashlib.sha1(usedforsecurity=False)
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest()


def _call(ref: weakref.ref[Recorder], method: Callable[[Recorder], object]) -> None:
    recorder = ref()
    if recorder is not None:
        method(recorder)
