"""The recorder's counters: every reason counted without a lock on the request
path, and the ``stats()`` dict built from them (invariant 8).
"""

from __future__ import annotations

import threading
import weakref
from collections import Counter

from .reasons import GROUP, GROUPS, RECORDED, REMOVED


class Counters:
    """Counts by reason; the ``stats()`` group comes from ``reasons.GROUP``.

    Each thread adds to its own dict (a lock per count would cost more than
    the rest of an ignored request's handling); a snapshot sums them. When a
    thread ends, its counts move to a shared total, so thread-per-request
    servers do not pile up dicts.
    """

    def __init__(self) -> None:
        self._local = threading.local()
        self._lock = threading.Lock()
        self._live: dict[int, dict[str, int]] = {}
        self._retired: Counter[str] = Counter()

    def add(self, reason: str, n: int = 1) -> None:
        """Count one (or ``n``) of ``reason``."""
        try:
            counts = self._local.counts
        except AttributeError:
            counts = self._adopt_thread()
        counts[reason] = counts.get(reason, 0) + n

    def _adopt_thread(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        token = _ThreadToken()
        with self._lock:
            self._live[id(token)] = counts
        # The token dies with the thread's locals, and takes its counts along.
        weakref.finalize(token, self._retire, id(token))
        self._local.counts, self._local.token = counts, token
        return counts

    def _retire(self, token: int) -> None:
        with self._lock:
            self._retired.update(self._live.pop(token, {}))

    def snapshot(self) -> Counter[tuple[str, str]]:
        """Every count so far by ``(group, reason)``; the totals' group is ``""``."""
        with self._lock:
            total = Counter(self._retired)
            for counts in self._live.values():
                total.update(dict(counts))
        # A reason missing from the vocabulary is still counted, as a skip.
        return Counter(
            {(GROUP.get(reason, "skipped"), reason): n for reason, n in total.items()}
        )

    def stats(self, queued: int, pending: int) -> dict[str, object]:
        """``recorded``, ``removed``, the reasons of each group, then ``queued``
        (observations not yet digested) and ``pending`` (writes waiting)."""
        grouped: dict[str, dict[str, int]] = {group: {} for group in GROUPS}
        flat: dict[str, object] = {RECORDED: 0, REMOVED: 0}
        for (group, reason), value in self.snapshot().items():
            if group:
                grouped[group][reason] = value
            else:
                flat[reason] = value
        flat.update(grouped)
        flat["queued"] = queued
        flat["pending"] = pending
        return flat


class _ThreadToken:
    """An object whose only job is to be collected when its thread ends."""
