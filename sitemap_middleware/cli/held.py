"""The store of a run that removes (verify, prune): reads pass through, while the
removals, the decisions noted and the settings set wait until the whole run is
decided (a preview, a confirmation), then are applied at once or dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from typing import Any, cast

from ..model import Entry, PartInfo
from ..reasons import REMOVED
from ..sitemaps import MAX_NEWS
from ..stores import Store
from ..stores.base import flagged
from ..stores.contract import (
    Article,
    Checked,
    Decision,
    Decisions,
    Epoch,
    Hreflang,
    News,
    Pushes,
    Pushing,
    Removals,
    Removed,
    Shared,
)

# Paths removed in one write when applied: each removal is a transaction.
BATCH = 1_000


class Held:
    """``store`` with its removals held in :attr:`removed`; ``writes``: its
    upserts (a page seen changed, a changefreq rewritten) pass at once, else
    they are dropped too (a dry run changes nothing). Only the features of
    ``store`` are offered (:func:`held`); pushes are not: IndexNow hears of
    the removals when they are applied. Of ``Pushing`` it has
    :meth:`withdrawing` alone, so that the config re-check's removals keep
    their meaning when held. Closing it leaves ``store`` open."""

    def __init__(self, store: Store, writes: bool) -> None:
        self.store: Any = store
        self.part_size = store.part_size
        self.part_bytes = store.part_bytes
        self.writes = writes
        self.removed: dict[str, None] = {}
        """The stored paths a removal asked for, in the order asked."""
        self.refused: set[str] = set()
        """Those removed inside :meth:`withdrawing`: never sent to IndexNow."""
        # Per thread, as a store's: verify's middleware removes what stopped
        # answering from its writer while the command refuses URLs.
        self._context = threading.local()
        self.notes: list[Decision] = []
        self.settings: dict[str, str] = {}

    def withdrawing(self) -> AbstractContextManager[None]:
        """:meth:`.contract.Withdrawing.withdrawing`, held: this thread's
        removals in the block are of URLs the config refuses; when applied,
        their pending pushes are withdrawn and none is queued for them."""
        return flagged(self._context, "withdrawing")

    def apply(self, indexnow: bool) -> int:
        """Remove what was held, note the decisions, set the settings: the
        number of paths removed. IndexNow hears of a removal (``indexnow``,
        the store keeping pushes) but of one made inside :meth:`withdrawing`:
        that URL is never sent, and a push of it still pending is withdrawn."""
        store = self.store
        pushes = isinstance(store, Pushes) and isinstance(store, Pushing)
        paths, refused = list(self.removed), self.refused
        withdrawing = store.withdrawing if pushes else nullcontext
        pushing = store.pushing if pushes and indexnow else nullcontext
        removed = 0
        for group, mode in (
            ([path for path in paths if path in refused], withdrawing),
            ([path for path in paths if path not in refused], pushing),
        ):
            for start in range(0, len(group), BATCH):
                with mode():
                    removed += store.remove(group[start : start + BATCH])
        if self.notes and isinstance(store, Decisions):
            store.note(self.notes)
        if isinstance(store, Shared):
            for name, value in self.settings.items():
                store.set_setting(name, value)
        return removed

    # -- Store ---------------------------------------------------------------------

    def upsert(self, entries: Iterable[Entry]) -> int:
        if self.writes:
            return cast(int, self.store.upsert(entries))
        return sum(1 for _ in entries)

    def remove(self, paths: Iterable[str]) -> int:
        wanted = list(paths)
        asked = [path for path in wanted if path not in self.removed]
        held = self.store.known(asked) if asked else set()
        for path in asked:
            if path in held:
                self.removed[path] = None
        if getattr(self._context, "withdrawing", False):
            # One held already counts too: the config refuses it now.
            self.refused.update(path for path in wanted if path in self.removed)
        return len(held)

    def count(self, route: str | None = None) -> int:
        return cast(int, self.store.count(route))

    def known(self, paths: Iterable[str]) -> set[str]:
        return cast(set[str], self.store.known(paths))

    def parts(self) -> list[PartInfo]:
        return cast(list[PartInfo], self.store.parts())

    def part(self, number: int) -> PartInfo | None:
        return cast("PartInfo | None", self.store.part(number))

    def fragments(self, number: int) -> Iterator[bytes]:
        return cast(Iterator[bytes], self.store.fragments(number))

    def entries(self, number: int) -> Iterator[Entry]:
        return cast(Iterator[Entry], self.store.entries(number))

    def close(self) -> None:
        """Nothing: the command closes the store it opened once applied."""


class _Shared(Held):
    def add_counts(self, counts: Mapping[str, int]) -> None:
        # A held removal is counted when applied, as many as it removed: one
        # the brake stops, or a dry run, removes nothing.
        if self.writes:
            self.store.add_counts({k: n for k, n in counts.items() if k != REMOVED})

    def apply(self, indexnow: bool) -> int:
        removed = super().apply(indexnow)
        if removed:
            self.store.add_counts({REMOVED: removed})
        return removed

    def counts(self) -> dict[str, int]:
        return cast(dict[str, int], self.store.counts())

    def setting(self, name: str) -> str | None:
        if name in self.settings:
            return self.settings[name]
        return cast("str | None", self.store.setting(name))

    def set_setting(self, name: str, value: str) -> None:
        # Held: the config re-check's digest stored before its removals are
        # would say they were made.
        self.settings[name] = value


class _Decisions(Held):
    def note(self, decisions: Iterable[Decision]) -> None:
        self.notes.extend(decisions)

    def decisions(self, path: str) -> list[tuple[str, datetime]]:
        stored = cast(list[tuple[str, datetime]], self.store.decisions(path))
        noted = [(why, when) for where, why, when in self.notes if where == path]
        return stored + noted


class _Removals(Held):
    def removed_since(self, seq: int | None) -> Removed:
        return cast(Removed, self.store.removed_since(seq))


class _Epoch(Held):
    def epoch(self) -> str:
        return cast(str, self.store.epoch())


class _Hreflang(Held):
    def hreflang(self) -> AbstractContextManager[dict[str, str | None]]:
        return cast(
            AbstractContextManager[dict[str, str | None]], self.store.hreflang()
        )


class _News(Held):
    def publish(self, articles: Iterable[Article], now: int) -> None:
        # A page's article is written with its page: both or neither.
        if self.writes:
            self.store.publish(articles, now)

    def news(self, since: int, limit: int = MAX_NEWS) -> list[Article]:
        return cast(list[Article], self.store.news(since, limit))


class _Checked(Held):
    def check(self) -> None:
        self.store.check()


_FEATURES: tuple[tuple[type, type[Held]], ...] = (
    (Shared, _Shared),
    (Decisions, _Decisions),
    (Removals, _Removals),
    (Epoch, _Epoch),
    (Hreflang, _Hreflang),
    (News, _News),
    (Checked, _Checked),
)


def held(store: Store, writes: bool) -> Held:
    """A :class:`Held` over ``store`` with the optional features it has (asked
    with ``isinstance``, as the recorder asks them)."""
    bases = tuple(mixin for feature, mixin in _FEATURES if isinstance(store, feature))
    kind = type("Held", (*bases, Held), {}) if bases else Held
    return cast(Held, kind(store, writes))
