"""The recent-pages cache: the digests of the pages this process wrote lately,
by cache key, so that a page seen again is neither read nor written again
while they are trusted (``recheck_interval`` from the write: digest._trusted).
"""

from __future__ import annotations

import time
from collections import OrderedDict

from .digest import Prints

# Pages whose digests this process remembers; beyond it the least recently
# checked go.
RECENT_PAGES = 10_000


class Recent:
    """Cache key -> (digests, when last checked, stored path), least recently
    checked first, and :attr:`fresh`, the keys checked within ``interval``
    seconds.

    The writer thread writes both and calls :meth:`expire` as it goes; the
    request path only asks ``key in recent.fresh``: one dict lookup, no clock.
    A key is a request's spelling; several may stand for one stored path (a
    decoded path, tracking parameters), and a removal forgets them all, so
    that a page that comes back is recorded at once (invariant 19): this
    writer's removals as it writes them, any other's (another worker or
    machine, the command line) when the store's removals log names them.
    """

    def __init__(self, interval: float, size: int = RECENT_PAGES) -> None:
        self._interval = interval
        self._size = size
        self._pages: OrderedDict[str, tuple[Prints, float, str]] = OrderedDict()
        # Stored path -> the keys remembered for it.
        self._keys: dict[str, set[str]] = {}
        self.fresh: OrderedDict[str, float] = OrderedDict()
        """Key -> when checked, oldest first; stale keys leave on expire()."""

    def expire(self) -> None:
        """Drop the keys checked more than ``interval`` seconds ago."""
        fresh = self.fresh
        oldest = time.monotonic() - self._interval
        while fresh and next(iter(fresh.values())) < oldest:
            fresh.popitem(last=False)

    def get(self, key: str) -> Prints | None:
        hit = self._pages.get(key)
        return None if hit is None else hit[0]

    def remember(
        self, key: str, prints: Prints, path: str | None = None, fresh: bool = True
    ) -> None:
        """Note what ``key`` served, the page stored at ``path`` (``key``
        itself if not given); ``fresh=False`` keeps the digests without letting
        the key pass unread (a stand-in, which never wrote the page itself)."""
        path = key if path is None else path
        pages = self._pages
        checked = time.monotonic()
        old = pages.get(key)
        if old is not None and old[2] != path:
            self._unlink(key, old[2])
        pages[key] = (prints, checked, path)
        pages.move_to_end(key)
        self._keys.setdefault(path, set()).add(key)
        while len(pages) > self._size:
            gone, (_, _, where) = pages.popitem(last=False)
            self.fresh.pop(gone, None)
            self._unlink(gone, where)
        if fresh and self._interval > 0:
            self.fresh[key] = checked
            self.fresh.move_to_end(key)

    def forget(self, key: str, path: str | None = None) -> None:
        """Forget ``key`` and, with ``path``, every key remembered for the
        page stored at ``path``."""
        keys = {key} if path is None else {key, *self._keys.get(path, ())}
        for gone in keys:
            hit = self._pages.pop(gone, None)
            if hit is not None:
                self._unlink(gone, hit[2])
            self.fresh.pop(gone, None)

    def clear(self) -> None:
        self._pages.clear()
        self._keys.clear()
        self.fresh.clear()

    def _unlink(self, key: str, path: str) -> None:
        keys = self._keys.get(path)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._keys[path]
