"""The recorder: what the request path calls to count, to ask whether a page is
fresh and to hand over an observation; it wires the intake (queue), the writer
(thread, digest, store) and the counters, and the process's exit and fork hooks.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import weakref
from collections import Counter
from collections.abc import Callable, Container
from functools import partial

from ..config import Config
from ..reasons import Crawls, Dropped
from ..sections import DEFAULT, label
from ..stores.contract import Pushes, Shared, Store
from .admission import Limits
from .counters import Counters, stats
from .crawls import Crawl, CrawlQueue
from .digest import Rules
from .hints import Hints
from .intake import Intake
from .observation import Observation
from .recent import Recent
from .recheck import Judge, Recheck, config_digest
from .writer import BATCH, Writer

logger = logging.getLogger("sitemap_middleware")


class Recorder:
    """Turns observations into store writes, off the request path.

    .. code-block:: python

        recorder = Recorder(config, policy, store)
        recorder.count(Skipped.METHOD)         # on the request path: cheap
        if not recorder.is_fresh(key):
            recorder.submit(observation)       # never blocks
        recorder.flush(5.0)                    # True once all is written
        recorder.close()
    """

    def __init__(
        self,
        config: Config,
        policy: Rules,
        store: Store,
        judge: Judge | None = None,
    ) -> None:
        self._config = config
        # The current config's verdict on stored pages: each new writer
        # re-checks them when the store's config digest differs.
        self._judge = judge
        self._digest = config_digest(config)
        self._policy = policy
        self._store = store
        self._counters = Counters()
        # count(reason, n=1): called on the request path.
        self.count = self._counters.add
        self.tally = self._counters.tally
        self.hints = Hints(self._counters.totals)
        self._recent = Recent(config.recheck_interval)
        # is_fresh(key): on the request path, one C-level dict lookup; or
        # ``key in fresh``, which spares the call.
        self.fresh: Container[str] = self._recent.fresh
        self.is_fresh: Callable[[str], bool] = self._recent.fresh.__contains__
        # The volume bounds, kept by the writer across forks (they re-read
        # the store's counts anyway).
        self._limits = Limits(config, store, self.count)
        if config.indexnow is not None and not isinstance(store, Pushes):
            logger.warning(
                "IndexNow is off: the store %s keeps no pending pushes",
                type(store).__name__,
            )
        # Called after _reset in a forked child (the watcher re-arms its
        # first-request hook there: the child's writer has not started).
        self._on_reset: list[Callable[[], object]] = []
        self._reset()
        PROCESS.add(self)

    def _reset(self) -> None:
        # Also run in a forked child: the parent's thread and queue are not ours.
        self._intake = Intake(BATCH, partial(self.count, Dropped.QUEUE_FULL))
        # put(observation): the intake's own, with no frame of the recorder's
        # between: the watcher hands each page over through it (the writer was
        # started by the first request; a drop is counted).
        self.put = self._intake.put
        # Crawls: queued apart from the pages, verified by the writer.
        self._crawls = CrawlQueue() if self._config.crawlers is not None else None
        judge, recheck = self._judge, None
        if judge is not None:
            recheck = Recheck(self._store, judge, self._digest)
        self._recheck = recheck
        self._writer = Writer(
            self._config,
            self._policy,
            self._store,
            self._intake,
            self._counters,
            self._recent,
            self._limits,
            hints=self.hints,
            recheck=recheck,
            crawls=self._crawls,
        )
        for hook in self._on_reset:
            hook()

    def hold_recheck(self) -> None:
        """Never judge the stored pages again by the config in this process
        (invariant 21's re-check, which removes what the config refuses): for
        a command that loads the app, which changes the store only as it
        says."""
        self._judge = None  # nor in a forked child's writer
        if self._recheck is not None:
            self._recheck.done = True

    def on_reset(self, hook: Callable[[], object]) -> None:
        """Call ``hook`` whenever this recorder gets a new, unstarted writer
        (in a forked child)."""
        self._on_reset.append(hook)

    # -- request path -------------------------------------------------------

    def start(self) -> None:
        """Start the writer thread, if not yet: asked on the first request of
        any kind, so that its periodic wake checks the hints even while every
        request is skipped (a wrong ``base_url``: nothing is ever queued).
        Never raises."""
        try:
            if not self._writer.started:
                self._writer.start(self)
        except Exception:  # a thread that cannot start must not fail the app
            logger.exception("the sitemap's writer did not start")

    def submit(self, observation: Observation) -> None:
        """Queue an observation to record or remove; never blocks, drops and
        counts when the queue is full."""
        if self._intake.put(observation) and not self._writer.started:
            self._writer.start(self)

    def crawled(self, crawl: Crawl) -> None:
        """Queue a response to a request whose User-Agent claims a crawler,
        for the writer to verify; never blocks, drops and counts when full."""
        crawls = self._crawls
        if crawls is None:
            return
        if not crawls.put(crawl):
            self.count(Crawls.DROPPED)
        elif not self._writer.started:
            self._writer.start(self)

    # -- lifecycle ------------------------------------------------------------

    def flush(self, timeout: float | None = None) -> bool:
        """Write everything queued so far, trying the store even while its
        breaker is open; ``False`` if ``timeout`` ran out or writes are still
        pending because the store failed. Never raises."""
        done = self._writer.flush(timeout)
        self.check_hints()
        return done

    def check_hints(self) -> None:
        """Warn, once per reason, when every page so far was skipped for one
        reason of the config. Never raises."""
        try:
            self.hints.check()
        except Exception:
            logger.exception("the sitemap's hints failed")

    def close(self, timeout: float = 5.0) -> None:
        """Flush, stop the writer thread and close the store. Never raises."""
        PROCESS.discard(self)
        self._writer.stop(timeout)
        try:
            self._store.close()
        except Exception:
            logger.exception("closing the sitemap store failed")

    def adding(self) -> bool:
        """Whether pages this process served are on their way to the store
        (queued, or digested and waiting to be written); removals aside."""
        return self._intake.pages() or self._writer.adding()

    def stats(self) -> dict[str, object]:
        """Counters since start: recorded, removed, and by reason."""
        self.check_hints()
        return self._counters.stats(len(self._intake), len(self._writer))

    def site_stats(self) -> dict[str, object]:
        """:meth:`stats` summed over every writer of the store (this
        process's counts not sent yet included), with the store's ``urls``
        and ``parts`` (and with sections, ``sections``: name -> its
        ``urls`` and ``parts``); ``queued`` and ``pending`` stay this process's. A
        store without shared counters gives this process's counts.

        :raises StoreError: when the store cannot be read.
        """
        store = self._store
        totals = self._counters.totals()
        if isinstance(store, Shared):
            totals = Counter(store.counts()) + self._writer.unsent()
        site = stats(totals, len(self._intake), len(self._writer))
        site["urls"] = store.count()
        parts = store.parts()
        site["parts"] = len(parts)
        if any(part.section != DEFAULT for part in parts):
            # With sections: each one's URLs and parts, by its shown name.
            sections: dict[str, dict[str, int]] = {}
            for part in parts:
                held = sections.setdefault(label(part.section), {"urls": 0, "parts": 0})
                held["urls"] += part.urls
                held["parts"] += 1
            site["sections"] = sections
        return site


class Process:
    """This process's live recorders, and the two hooks that serve them all:
    at exit, recorders whose writer started are closed (their queue flushed);
    in a forked child, every recorder gets a queue and a writer of its own.
    Each hook is registered once, when the first recorder is made."""

    def __init__(self) -> None:
        self._live: weakref.WeakSet[Recorder] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._hooked = False

    def __len__(self) -> int:
        return len(self._live)

    def add(self, recorder: Recorder) -> None:
        with self._lock:
            self._live.add(recorder)
            if not self._hooked:
                self._hooked = True
                atexit.register(self._at_exit)
                os.register_at_fork(after_in_child=self._after_fork)

    def discard(self, recorder: Recorder) -> None:
        with self._lock:
            self._live.discard(recorder)

    def _at_exit(self) -> None:
        for recorder in list(self._live):
            if recorder._writer.started:
                recorder.close()

    def _after_fork(self) -> None:
        # The parent's lock may have been held by one of its other threads.
        self._lock = threading.Lock()
        for recorder in list(self._live):
            recorder._reset()


# The one per process (its hooks are registered on first use, not at import).
PROCESS = Process()
