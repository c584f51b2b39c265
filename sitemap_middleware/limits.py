"""The cardinality bounds (invariant 7): a global cap on stored URLs, caps per
route, and a per-process rate of new URLs, applied in the writer thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

from .config import Config
from .routes import Route
from .stores.base import Store

logger = logging.getLogger("sitemap_middleware")

# Seconds for which the store's count stands in for the global count, plus
# the URLs this process has added since: processes may overshoot max_urls by
# what they add in this time together.
COUNT_INTERVAL = 5.0


class Bucket:
    """A token bucket for new URLs: ``per_minute`` tokens, refilled evenly, at
    most a minute's worth saved up; ``None`` never runs dry."""

    __slots__ = ("_at", "_capacity", "_tokens")

    def __init__(self, per_minute: int | None) -> None:
        self._capacity = None if per_minute is None else float(per_minute)
        self._tokens = self._capacity or 0.0
        self._at = time.monotonic()

    def take(self) -> bool:
        if self._capacity is None:
            return True
        now = time.monotonic()
        refill = (now - self._at) * self._capacity / 60
        self._tokens = min(self._capacity, self._tokens + refill)
        self._at = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True


class Limits:
    """Which candidate URLs may be written, for one process.

    The global count is the store's, read at most every COUNT_INTERVAL, plus
    what this process added since. A capped route's stored paths are read
    from the store once per process, then kept up to date: exact across
    restarts, blind to other processes' additions since the read.
    """

    def __init__(
        self, config: Config, store: Store, count: Callable[[str, str], None]
    ) -> None:
        self._config = config
        self._store = store
        self._count_dropped = count
        self._bucket = Bucket(config.new_urls_per_minute)
        self._stored = 0
        self._stored_due = 0.0
        self._route_paths: dict[str, set[str]] = {}
        self._warned: set[str] = set()

    def admit(self, candidates: Iterable[tuple[str, Route]]) -> list[str]:
        """The candidate paths that may be written; the others are counted as
        dropped by reason (``cap``, ``route_cap``, ``rate``).

        Store reads come first, so that a failing store raises before any
        candidate is judged. A path is known, and always admitted, when its
        capped route holds it; other paths count as new. The caps and the rate
        refuse new paths only: known ones keep updating.
        """
        candidates = list(candidates)
        routes = self._route_paths
        unread = {
            route.template
            for _, route in candidates
            if route.max_urls is not None
            and route.template is not None
            and route.template not in routes
        }
        if unread:
            # One scan for every capped route the config names, too.
            unread.update(
                template
                for template, options in self._config.routes.items()
                if options.max_urls is not None and template not in routes
            )
            self._read_routes(unread)
        cap = self._config.max_urls
        if cap is not None and time.monotonic() >= self._stored_due:
            self._stored = self._store.count()
            self._stored_due = time.monotonic() + COUNT_INTERVAL
        admitted = []
        for path, route in candidates:
            limit = route.max_urls
            paths = None
            if limit is not None and route.template is not None:
                paths = routes[route.template]
            if paths is None or path not in paths:
                if cap is not None and self._stored >= cap:
                    self._refuse("cap", "max_urls", self._stored)
                    continue
                if paths is not None and limit is not None and len(paths) >= limit:
                    self._refuse("route_cap", f"route {route.template}", len(paths))
                    continue
                if not self._bucket.take():
                    self._count_dropped("rate", "dropped")
                    continue
                self._stored += 1
                if paths is not None:
                    paths.add(path)
            admitted.append(path)
        return admitted

    def forget(self, paths: Iterable[str]) -> None:
        """Removed paths leave the capped routes' sets."""
        removed = set(paths)
        for held in self._route_paths.values():
            held.difference_update(removed)

    def _read_routes(self, templates: set[str]) -> None:
        """Read the stored paths of routes that have a cap: a scan of the
        store's entries, once per process and route."""
        found: dict[str, set[str]] = {template: set() for template in templates}
        for page in self._store.pages():
            for entry in self._store.entries(page.number):
                if entry.route in found:
                    found[entry.route].add(entry.path)
        self._route_paths.update(found)

    def _refuse(self, reason: str, cap: str, held: int) -> None:
        self._count_dropped(reason, "dropped")
        # One line per cap and process: the counters keep the full account.
        if cap not in self._warned:
            self._warned.add(cap)
            logger.warning(
                "%s reached (%d URLs): new URLs are refused, known ones updated",
                cap,
                held,
            )
