"""A request's answer waited on for a bounded time: built on a thread of its own,
so that a store slow to answer (far away, or busy with a writer opening it) holds
no request longer than the wait; the answer, once built, fills the cache."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

logger = logging.getLogger("sitemap_middleware")

# Answers being built at once, beyond which a request waits for none: a store
# that hangs holds that many threads, never one per request.
MOST = 8


class _Outcome(Generic[T]):
    """What the thread building an answer hands back."""

    __slots__ = ("done", "error", "value")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: T | None = None
        self.error: BaseException | None = None


class Bounded:
    """Calls waited on ``wait`` seconds at most; thread-safe, fork-safe (a
    child counts only its own threads)."""

    def __init__(self, wait: float, most: int = MOST) -> None:
        self.wait = wait
        self._most = most
        self._lock = threading.Lock()
        self._building = 0
        self._pid = os.getpid()
        self._slow = False  # the last call took longer than the wait

    def run(self, call: Callable[[], T], what: str) -> T | None:
        """What ``call`` returns, or ``None`` when it took longer than the
        wait (it goes on, on its thread) or too many are being built; raises
        what ``call`` raised within the wait. ``what`` names it in the log
        line that says so, at WARNING once until a call is in time again."""
        with self._lock:
            if self._pid != os.getpid():  # a forked child: none of these is its
                self._pid, self._building = os.getpid(), 0
            if self._building >= self._most:
                self._late(what)
                return None
            self._building += 1
        outcome: _Outcome[T] = _Outcome()
        pid = self._pid

        def build() -> None:
            try:
                outcome.value = call()
            except BaseException as exc:  # handed to the request, if it waits
                outcome.error = exc
            finally:
                with self._lock:
                    if self._pid == pid:
                        self._building -= 1
                outcome.done.set()

        threading.Thread(target=build, name="sitemap-answer", daemon=True).start()
        if not outcome.done.wait(self.wait):
            self._late(what)
            return None
        self._slow = False
        if outcome.error is not None:
            raise outcome.error
        return outcome.value

    def _late(self, what: str) -> None:
        """Say that ``what`` goes without its answer."""
        log = logger.debug if self._slow else logger.warning
        self._slow = True
        log(
            "sitemap store too slow for %s (more than %.1f s): the last good"
            " bytes, or 503",
            what,
            self.wait,
        )
