"""The request side of recording: a bounded queue of observations that never
blocks nor locks; beyond either bound it refuses, and tells its owner (the
recorder counts the drop: invariant 15).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from ..reasons import RECORD
from .observation import Observation

# The queue refuses new observations beyond either bound.
MAX_QUEUED = 10_000
MAX_QUEUED_BYTES = 64 * 1024 * 1024


class Intake:
    """Observations waiting for the writer, bounded in number and bytes.

    ``put`` wakes the writer once a batch is ready; the writer waits on
    :meth:`wait` between batches and takes them with :meth:`take`.

    ``put`` takes no lock: a lock (let alone a ``Condition``) costs a request
    more than the rest of handing a page over. ``deque.append`` and
    ``popleft`` are atomic, so nothing is lost or taken twice; the bounds are
    checked without a lock, so concurrent puts may pass them by a few
    observations, and the byte count, added to by every request thread, is
    counted again from the queue at each :meth:`take` (an update lost between
    two takes does not last).
    """

    def __init__(self, batch: int, refused: Callable[[], object]) -> None:
        self._batch = batch
        self._full = batch - 1  # queued before a put that makes a batch
        self._refused = refused  # told of each observation refused
        self._queue: deque[Observation] = deque()
        self._bytes = 0
        self._ready = threading.Event()
        self._signalled = False  # _ready set since the writer's last wait
        self._stopped = False

    def __len__(self) -> int:
        return len(self._queue)

    def put(self, observation: Observation) -> bool:
        """Queue ``observation``; ``False`` (nothing queued, and ``refused``
        told) when full."""
        queue = self._queue
        queued = len(queue)
        total = self._bytes + observation.size
        if queued >= MAX_QUEUED or total > MAX_QUEUED_BYTES:
            self._refused()
            return False
        queue.append(observation)
        self._bytes = total
        if not self._signalled and queued >= self._full:
            # A flag, not Event.is_set(), asked first: once the writer is
            # told, each put of a backlog asks it alone.
            self._signalled = True
            self._ready.set()
        return True

    def pages(self) -> bool:
        """Whether a page to record is queued (a walk of the queue: asked
        only of an empty store's index)."""
        # list() copies the deque in one C call: puts may go on meanwhile.
        return any(observation.action == RECORD for observation in list(self._queue))

    def take(self) -> list[Observation]:
        """Up to a batch of the oldest observations, out of the queue (one
        taker at a time: the writer's thread or a flush, under its lock)."""
        queue = self._queue
        popleft = queue.popleft
        batch = [popleft() for _ in range(min(self._batch, len(queue)))]
        if batch:
            # list() copies the deque in one C call: puts may go on meanwhile.
            self._bytes = sum(observation.size for observation in list(queue))
        return batch

    def wait(self, timeout: float) -> None:
        """Return when a batch is ready, :meth:`wake` is called or ``timeout``
        seconds have passed (the writer's thread only)."""
        ready = self._ready
        if len(self._queue) < self._batch and not self._stopped:
            ready.wait(timeout)
        if not self._stopped:
            # What is queued from here on is taken by the drain that follows
            # or wakes the next wait.
            self._signalled = False
            ready.clear()

    def wake(self, stop: bool = False) -> None:
        """Wake the waiting writer; with ``stop``, it waits no more (a wake-up
        sent before it started waiting is not lost)."""
        self._stopped = self._stopped or stop
        self._ready.set()
