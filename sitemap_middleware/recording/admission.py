"""The cardinality bounds (invariant 7): a global cap on stored URLs, caps per
route, and a per-process rate of new URLs, applied in the writer thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

from ..config import Config
from ..reasons import Dropped
from ..routes import Route
from ..stores.contract import Store
from .breaker import Bugs
from .digest import Upsert

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

    def has(self, tokens: int) -> bool:
        """Whether ``tokens`` could be taken now (none is)."""
        if self._capacity is None:
            return True
        refill = (time.monotonic() - self._at) * self._capacity / 60
        return min(self._capacity, self._tokens + refill) >= tokens

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

    Counts come from the store, read at most every COUNT_INTERVAL, plus what
    this process added since: the global count (``count()``) and, for each
    capped route, its own (``count(route)``). Processes may overshoot a cap
    by what they add together within COUNT_INTERVAL, no more. Whether a
    candidate is already stored is asked of the store (``known()``) only
    when a cap or the rate could refuse it.
    """

    def __init__(
        self, config: Config, store: Store, count: Callable[[str], object]
    ) -> None:
        self._config = config
        self._store = store
        self._count_dropped = count
        self._bucket = Bucket(config.new_urls_per_minute)
        self._stored = 0
        self._stored_due = 0.0
        # route template -> [stored paths, when the store's count is due]
        self._routes: dict[str, list[float]] = {}
        self._warned: set[str] = set()

    def admit(self, candidates: Iterable[tuple[str, Route]]) -> list[str]:
        """The candidate paths that may be written; the others are counted as
        dropped by reason (``cap``, ``route_cap``, ``rate``).

        Store reads come first, so that a failing store raises before any
        candidate is judged. A path is known, and always admitted, when the
        store holds it; other paths count as new. The caps and the rate refuse
        new paths only: known ones keep updating. Whether a path is stored is
        read (one query a batch) only for candidates a cap or the rate could
        refuse; the others count as new.
        """
        candidates = list(candidates)
        current = time.monotonic()
        cap = self._config.max_urls
        if cap is not None and current >= self._stored_due:
            self._stored = self._store.count()
            self._stored_due = current + COUNT_INTERVAL
        wanted: dict[str, list[int]] = {}  # capped route -> [candidates, cap]
        for _, route in candidates:
            if route.max_urls is not None and route.template is not None:
                wanted.setdefault(route.template, [0, route.max_urls])[0] += 1
        for template in wanted:
            held = self._routes.get(template)
            if held is None or current >= held[1]:
                self._routes[template] = [
                    self._store.count(template),
                    current + COUNT_INTERVAL,
                ]
        # Candidates that a cap or the rate could refuse: is the store holding
        # them already?
        pressed = (cap is not None and self._stored + len(candidates) >= cap) or (
            not self._bucket.has(len(candidates))
        )
        pressing = {
            template
            for template, (n, limit) in wanted.items()
            if self._routes[template][0] + n >= limit
        }
        check = [
            path
            for path, route in candidates
            if pressed or (route.max_urls is not None and route.template in pressing)
        ]
        known = self._store.known(check) if check else set()
        admitted = []
        for path, route in candidates:
            if path not in known:
                held = None
                if route.max_urls is not None and route.template is not None:
                    held = self._routes[route.template]
                if cap is not None and self._stored >= cap:
                    self._refuse(Dropped.CAP, "max_urls", self._stored)
                    continue
                if held is not None and held[0] >= (route.max_urls or 0):
                    self._refuse(
                        Dropped.ROUTE_CAP, f"route {route.template}", int(held[0])
                    )
                    continue
                if not self._bucket.take():
                    self._count_dropped(Dropped.RATE)
                    continue
                self._stored += 1
                if held is not None:
                    held[0] += 1
            admitted.append(path)
        return admitted

    def admit_all(
        self, candidates: list[Upsert], store: Store, bugs: Bugs
    ) -> tuple[list[str], list[str]]:
        """The paths of ``candidates`` admitted (:meth:`admit`), and those of
        the stand-ins the store holds already: a stand-in adds a page the
        store does not hold, nothing more. A candidate whose admission raises
        a bug is left out (``bugs``).

        :raises StoreError: the store failed (none is admitted).
        """
        admitted: list[str] = []
        held: list[str] = []

        def admit(part: list[Upsert]) -> int:
            others = [u.entry.path for u in part if u.stand_in is not None]
            known = store.known(others) if others else set()
            new = ((u.entry.path, u.route) for u in part if u.entry.path not in known)
            admitted.extend(self.admit(new))
            held.extend(known)
            return 0

        bugs.isolate("admission", admit, candidates)
        return admitted, held

    def forget(self, paths: Iterable[str]) -> None:
        """Paths were removed: the capped routes' counts are read again at the
        next admission (which routes they held is the store's to say)."""
        for held in self._routes.values():
            held[1] = 0.0

    def _refuse(self, reason: str, cap: str, held: int) -> None:
        self._count_dropped(reason)
        # One line per cap and process: the counters keep the full account.
        if cap not in self._warned:
            self._warned.add(cap)
            logger.warning(
                "%s reached (%d URLs): new URLs are refused, known ones updated",
                cap,
                held,
            )
