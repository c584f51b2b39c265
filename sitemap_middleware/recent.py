"""The recent-pages cache: the digests of the pages this process wrote lately,
by cache key, so that a page seen again is neither read nor written again.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from .digest import Prints

# Pages whose digests this process remembers; beyond it the least recently
# checked go.
RECENT_PAGES = 10_000


class Recent:
    """Cache key -> (digests, when last checked), least recently checked first,
    and :attr:`fresh`, the keys checked within ``interval`` seconds.

    The writer thread writes both and calls :meth:`expire` as it goes; the
    request path only asks ``key in recent.fresh``: one dict lookup, no clock.
    """

    def __init__(self, interval: float, size: int = RECENT_PAGES) -> None:
        self._interval = interval
        self._size = size
        self._pages: OrderedDict[str, tuple[Prints, float]] = OrderedDict()
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

    def remember(self, key: str, prints: Prints) -> None:
        pages = self._pages
        checked = time.monotonic()
        pages[key] = (prints, checked)
        pages.move_to_end(key)
        while len(pages) > self._size:
            self.fresh.pop(pages.popitem(last=False)[0], None)
        if self._interval > 0:
            self.fresh[key] = checked
            self.fresh.move_to_end(key)

    def forget(self, key: str) -> None:
        self._pages.pop(key, None)
        self.fresh.pop(key, None)

    def clear(self) -> None:
        self._pages.clear()
        self.fresh.clear()
