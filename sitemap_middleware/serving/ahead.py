"""A part's runs read one ahead, on a thread of their own, while the caller
compresses the run before: the store's read and deflate each let go of the GIL,
so a cold part costs about the longer of the two, not their sum."""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Iterable

# Runs read and not yet taken, at most: with the one being read and the one
# being compressed, a part holds three runs at once (invariant 17).
_AHEAD = 1


class _Failed:
    """What the reading raised, handed over in its place."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


_END = object()


def ahead(runs: Iterable[bytes]) -> Generator[bytes, None, None]:
    """``runs``, each read while the caller works on the one before; what the
    reading raises is raised here, where its run would have come. Stopped
    early (closed), the reading stops at its next run."""
    handed: queue.Queue[object] = queue.Queue(_AHEAD)
    stopped = threading.Event()

    def read() -> None:
        try:
            for run in runs:
                handed.put(run)
                if stopped.is_set():
                    return
            handed.put(_END)
        except BaseException as exc:  # the caller's to raise, in order
            handed.put(_Failed(exc))

    threading.Thread(target=read, name="sitemap-read-ahead", daemon=True).start()
    try:
        while True:
            item = handed.get()
            if item is _END:
                return
            if isinstance(item, _Failed):
                raise item.error
            assert isinstance(item, bytes)
            yield item
    finally:
        stopped.set()
        # A reader waiting to hand over its next run is let go.
        while True:
            try:
                handed.get_nowait()
            except queue.Empty:
                break
