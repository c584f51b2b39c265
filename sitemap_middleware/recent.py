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
    """Cache key -> (digests, when last checked), least recently checked first.

    The writer thread writes it; the request path only reads it
    (:meth:`is_fresh`), a single dict lookup.
    """

    def __init__(self, size: int = RECENT_PAGES) -> None:
        self._size = size
        self._pages: OrderedDict[str, tuple[Prints, float]] = OrderedDict()

    def is_fresh(self, key: str, interval: float) -> bool:
        """Whether ``key`` was checked within the last ``interval`` seconds."""
        hit = self._pages.get(key)
        return hit is not None and time.monotonic() - hit[1] < interval

    def get(self, key: str) -> Prints | None:
        hit = self._pages.get(key)
        return None if hit is None else hit[0]

    def remember(self, key: str, prints: Prints) -> None:
        pages = self._pages
        pages[key] = (prints, time.monotonic())
        pages.move_to_end(key)
        while len(pages) > self._size:
            pages.popitem(last=False)

    def forget(self, key: str) -> None:
        self._pages.pop(key, None)

    def clear(self) -> None:
        self._pages.clear()
