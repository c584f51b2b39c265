"""The recorder's counters: every reason counted without a lock on the request
path, and the ``stats()`` dict built from them (invariant 8).
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter

from ..reasons import GROUP, GROUPS, RECORDED, REMOVED


class Counters:
    """Counts by reason; the ``stats()`` group comes from ``reasons.GROUP``.

    Each reason has an ``itertools.count``: ``next()`` on it is one C call that
    the GIL makes atomic, so the request path counts without a lock and without
    per-thread state (a lock, or a thread-local dict, costs more than the rest
    of a passed-through request's handling). ``itertools.count`` shows its value
    only in its ``repr``, which is where a snapshot reads it. Counts of more than
    one (the writer's totals) are added under a lock.

    :attr:`tally` is for the request path's own counting: ``next(tally[reason])``
    for a reason of the vocabulary.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.tally: dict[str, itertools.count[int]] = {
            reason: itertools.count() for reason in GROUP
        }
        self._bulk: Counter[str] = Counter()

    def add(self, reason: str, n: int = 1) -> None:
        """Count one (or ``n``) of ``reason``."""
        if n == 1:
            tally = self.tally.get(reason)
            if tally is not None:
                next(tally)
                return
        with self._lock:
            self._bulk[reason] += n

    def totals(self) -> Counter[str]:
        """Every count so far by reason."""
        with self._lock:
            total = Counter(self._bulk)
        for reason, tally in self.tally.items():
            # repr(count(5)) == "count(5)": the next value, i.e. the count.
            counted = int(repr(tally)[6:-1])
            if counted:
                total[reason] += counted
        return total

    def snapshot(self) -> Counter[tuple[str, str]]:
        """Every count so far by ``(group, reason)``; the totals' group is ``""``."""
        return by_group(self.totals())

    def stats(self, queued: int, pending: int) -> dict[str, object]:
        """``recorded``, ``removed``, the reasons of each group, then ``queued``
        (observations not yet digested) and ``pending`` (writes waiting)."""
        return stats(self.totals(), queued, pending)


def by_group(totals: Counter[str]) -> Counter[tuple[str, str]]:
    """Counts by reason as counts by ``(group, reason)``."""
    # A reason missing from the vocabulary is still counted, as a skip.
    return Counter(
        {(GROUP.get(reason, "skipped"), reason): n for reason, n in totals.items()}
    )


def stats(totals: Counter[str], queued: int, pending: int) -> dict[str, object]:
    """The ``stats()`` dict of counts by reason."""
    grouped: dict[str, dict[str, int]] = {group: {} for group in GROUPS}
    flat: dict[str, object] = {RECORDED: 0, REMOVED: 0}
    for (group, reason), value in by_group(totals).items():
        if group:
            grouped[group][reason] = value
        else:
            flat[reason] = value
    flat.update(grouped)
    flat["queued"] = queued
    flat["pending"] = pending
    return flat
