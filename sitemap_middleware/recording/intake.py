"""The request side of recording: a bounded queue of observations that never
blocks; beyond either bound it refuses, and the caller counts the drop
(invariant 15).
"""

from __future__ import annotations

import threading
from collections import deque

from .observation import Observation

# The queue refuses new observations beyond either bound.
MAX_QUEUED = 10_000
MAX_QUEUED_BYTES = 64 * 1024 * 1024


class Intake:
    """Observations waiting for the writer, bounded in number and bytes.

    ``put`` wakes the writer once a batch is ready; the writer waits on
    :meth:`wait` between batches and takes them with :meth:`take`.
    """

    def __init__(self, batch: int) -> None:
        self._batch = batch
        self._queue: deque[Observation] = deque()
        self._bytes = 0
        self._cond = threading.Condition()
        self._stopped = False

    def __len__(self) -> int:
        return len(self._queue)

    def put(self, observation: Observation) -> bool:
        """Queue ``observation``; ``False`` (and nothing queued) when full."""
        with self._cond:
            queue = self._queue
            if (
                len(queue) >= MAX_QUEUED
                or self._bytes + observation.size > MAX_QUEUED_BYTES
            ):
                return False
            queue.append(observation)
            self._bytes += observation.size
            if len(queue) >= self._batch:
                self._cond.notify()
        return True

    def take(self) -> list[Observation]:
        """Up to a batch of the oldest observations, out of the queue."""
        with self._cond:
            queue = self._queue
            batch = [queue.popleft() for _ in range(min(self._batch, len(queue)))]
            self._bytes -= sum(observation.size for observation in batch)
        return batch

    def wait(self, timeout: float) -> None:
        """Return when a batch is ready, :meth:`wake` is called or ``timeout``
        seconds have passed."""
        with self._cond:
            if len(self._queue) < self._batch and not self._stopped:
                self._cond.wait(timeout)

    def wake(self, stop: bool = False) -> None:
        """Wake the waiting writer; with ``stop``, it waits no more (a wake-up
        sent before it started waiting is not lost)."""
        with self._cond:
            self._stopped = self._stopped or stop
            self._cond.notify()
