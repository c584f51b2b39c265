"""The recent-pages cache: the digests of the pages this process wrote lately,
by cache key, so that a page seen again is neither read nor written again
while they are trusted (``recheck_interval`` from the write: digest._trusted).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Final

from .digest import Prints

# Pages whose digests this process remembers; beyond it the least recently
# checked go.
RECENT_PAGES = 10_000

# What the cache holds of a key: Prints' four fields, when checked, the
# stored path.
_Held = tuple[str, str, int, float, float, str]
_PATH: Final = 5


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
        # Key -> its digests' fields, when checked and the stored path: a
        # plain tuple of strings and numbers, which the garbage collector
        # stops tracking (a NamedTuple it tracks for good, a set too): a
        # crawler's first pass fills the cache, and every full collection
        # would walk it.
        self._pages: OrderedDict[str, _Held] = OrderedDict()
        # Stored path -> the keys remembered for it other than the path
        # itself (most pages have none).
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
        return None if hit is None else Prints(*hit[:4])

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
        if old is not None and old[_PATH] != path:
            self._unlink(key, old[_PATH])
        raw, content, shown, written = prints
        pages[key] = (raw, content, shown, written, checked, path)
        pages.move_to_end(key)
        if key != path:
            self._keys.setdefault(path, set()).add(key)
        while len(pages) > self._size:
            gone, held = pages.popitem(last=False)
            self.fresh.pop(gone, None)
            self._unlink(gone, held[_PATH])
        if fresh and self._interval > 0:
            self.fresh[key] = checked
            self.fresh.move_to_end(key)

    def forget(self, key: str, path: str | None = None) -> None:
        """Forget ``key`` and, with ``path``, every key remembered for the
        page stored at ``path``."""
        keys = {key}
        if path is not None:
            keys.update(self._keys.get(path, ()))
            own = self._pages.get(path)
            if own is not None and own[_PATH] == path:
                keys.add(path)
        for gone in keys:
            hit = self._pages.pop(gone, None)
            if hit is not None:
                self._unlink(gone, hit[_PATH])
            self.fresh.pop(gone, None)

    def clear(self) -> None:
        self._pages.clear()
        self._keys.clear()
        self.fresh.clear()

    def _unlink(self, key: str, path: str) -> None:
        if key == path:
            return
        keys = self._keys.get(path)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._keys[path]
