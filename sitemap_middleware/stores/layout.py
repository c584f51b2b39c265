"""Part allocation, shared by every store: the merge rules of an upsert, which part
each new path joins, and the typed records a store reads and writes.

A store keeps paths in first-seen order, grouped into parts whose membership never
changes: a new path joins the last part or opens the next one (invariant 10).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import NamedTuple

from ..model import Entry
from ..render import ORIGIN, URLSET_CLOSE, URLSET_OPEN, fragment
from ..sitemaps import MAX_ORIGIN_BYTES

ENVELOPE_BYTES = len(URLSET_OPEN) + len(URLSET_CLOSE)
# Entries written in one transaction: a bulk load of millions runs in batches,
# in bounded memory, each batch all or nothing.
BATCH = 10_000


class Row(NamedTuple):
    """A stored row: what a store keeps of an entry beside its path."""

    lastmod: int
    """Epoch seconds."""
    fingerprint: str | None
    route: str | None
    fragment: bytes
    """The finished ``<url>`` element serving copies out (changefreq, priority,
    alternates and images live only there)."""


class Stored(NamedTuple):
    """A stored path's part and row, as a store reads them before a write."""

    part: int
    row: Row


class Fill(NamedTuple):
    """How full a part is: its URLs and the bytes of its fragments."""

    urls: int
    bytes: int


class Change(NamedTuple):
    """One row an upsert writes, in batch order."""

    path: str
    part: int
    row: Row
    new: bool
    """A new row (it takes the next first-seen ``seq``), else an update in place."""


class Totals:
    """What a write adds to one part: URLs, bytes (negative when they leave)
    and the newest ``lastmod`` among the rows it writes there."""

    __slots__ = ("bytes", "newest", "urls")

    def __init__(self, urls: int = 0, bytes: int = 0, newest: int = 0) -> None:
        self.urls = urls
        self.bytes = bytes
        self.newest = newest

    def add(self, other: Totals) -> None:
        self.urls += other.urls
        self.bytes += other.bytes
        if other.newest > self.newest:
            self.newest = other.newest

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Totals):
            return NotImplemented
        return (self.urls, self.bytes, self.newest) == (
            other.urls,
            other.bytes,
            other.newest,
        )

    def __repr__(self) -> str:
        return f"Totals(urls={self.urls}, bytes={self.bytes}, newest={self.newest})"


# NamedTuple's generated __new__ is a Python call; the plan makes two records
# per bulk entry, so it builds them as the tuples they are.
_make = tuple.__new__


class Plan(NamedTuple):
    """What an upsert batch writes, worked out once for every store."""

    changes: list[Change]
    moved: list[str]
    """Stored paths to delete first: they grew past their part's byte limit
    and are written again as new rows (the one case a URL changes part)."""
    parts: dict[int, Totals]
    """part -> what the changes add to it, for every part written."""
    last_part: int

    def advance(self, sizes: dict[int, Fill], old: Mapping[str, Stored]) -> None:
        """Update ``sizes`` (part -> Fill) to what this plan leaves: for a store
        that plans a batch in several runs, each from where the last left off."""
        for path in self.moved:
            part, row = old[path]
            urls, size = sizes[part]
            sizes[part] = Fill(urls - 1, size - weight(row.fragment))
        for part, totals in self.parts.items():
            urls, size = sizes.get(part, (0, 0))
            sizes[part] = Fill(urls + totals.urls, size + totals.bytes)


def now() -> int:
    return int(time.time())


def epoch(moment: datetime | None, default: int) -> int:
    """Epoch seconds of an aware datetime, never later than ``default`` (now)."""
    if moment is None:
        return default
    if moment.tzinfo is None:
        raise ValueError(f"lastmod must be timezone-aware, got {moment!r}")
    return min(int(moment.timestamp()), default)


def weight(piece: bytes) -> int:
    """The bytes a fragment takes in a part once the origin is in."""
    return len(piece) + piece.count(ORIGIN) * (MAX_ORIGIN_BYTES - 1)


def merge(old: Row | None, entry: Entry, current: int) -> Row | None:
    """The row to store for ``entry`` given the stored one, or ``None`` if unchanged.

    ``lastmod`` moves only with a new fingerprint (or, for entries without one,
    a newer explicit ``lastmod``), and never backwards (invariant 12).
    """
    lastmod = current if entry.lastmod is None else epoch(entry.lastmod, current)
    fingerprint = entry.fingerprint
    if old is None:
        return _make(Row, (lastmod, fingerprint, entry.route, fragment(entry, lastmod)))
    if fingerprint is None:
        fingerprint = old.fingerprint
        if entry.lastmod is None or lastmod < old.lastmod:
            lastmod = old.lastmod
    elif fingerprint == old.fingerprint or lastmod < old.lastmod:
        lastmod = old.lastmod
    row: Row = _make(Row, (lastmod, fingerprint, entry.route, fragment(entry, lastmod)))
    return None if row == old else row


def plan(
    batch: dict[str, Entry],
    old: Mapping[str, Stored],
    sizes: Mapping[int, Fill],
    last: int,
    part_size: int,
    part_bytes: int,
    current: int,
) -> Plan:
    """Merge a de-duplicated batch with the stored rows (``old``: path ->
    Stored). New paths join the last part while it has room for them, by
    count and by bytes, then open the next one: membership never changes,
    except that a row which grows past its part's byte limit moves to the end.

    ``sizes`` holds the Fill of the last part (``last``, 0 for an empty store)
    and of every part in ``old``. Raises ``ValueError`` (an entry no sitemap
    may hold) before anything is written.
    """
    budget = part_bytes - ENVELOPE_BYTES
    extra = MAX_ORIGIN_BYTES - 1
    held = {number: Totals(urls, size) for number, (urls, size) in sizes.items()}
    last = max(last, 1)
    part = held.setdefault(last, Totals())
    changes: list[Change] = []
    moved: list[str] = []
    parts: dict[int, Totals] = {}
    totals = parts[last] = Totals()
    # Bulk loads mostly share one lastmod object: convert it once.
    moment: datetime | None = None
    seconds = current
    for path, entry in batch.items():
        previous = old.get(path)
        if previous is None:
            # merge() of a new path, inlined: this loop runs per bulk entry.
            if entry.lastmod is not moment:
                moment = entry.lastmod
                seconds = epoch(moment, current)
            lastmod = seconds
            piece = fragment(entry, seconds)
            row: Row = _make(Row, (seconds, entry.fingerprint, entry.route, piece))
        else:
            merged = merge(previous.row, entry, current)
            if merged is None:
                continue
            row = merged
            lastmod, _, _, piece = row
        size = len(piece) + piece.count(ORIGIN) * extra  # weight(piece), inlined
        if size > budget:
            raise ValueError(f"{path}: {size} bytes do not fit in a sitemap page")
        if previous is not None:
            number, was = previous
            other = held[number]
            grown = size - weight(was.fragment)
            if other.bytes + grown <= budget:
                other.bytes += grown
                changes.append(_make(Change, (path, number, row, False)))
                written = parts.get(number)
                if written is None:
                    written = parts[number] = Totals()
                written.bytes += grown
                if lastmod > written.newest:
                    written.newest = lastmod
                continue
            other.urls -= 1
            other.bytes -= weight(was.fragment)
            moved.append(path)
        if part.urls >= part_size or part.bytes + size > budget:
            last += 1
            part = held[last] = Totals()
            totals = parts[last] = Totals()
        part.urls += 1
        part.bytes += size
        changes.append(_make(Change, (path, last, row, True)))
        totals.urls += 1
        totals.bytes += size
        if lastmod > totals.newest:
            totals.newest = lastmod
    empty = Totals()
    return Plan(changes, moved, {n: t for n, t in parts.items() if t != empty}, last)


def leaving(rows: Iterable[Stored]) -> dict[int, Totals]:
    """The URLs and bytes that leave each part when these stored rows go
    (``newest`` stays 0: a store works out its part's newest row left)."""
    parts: dict[int, Totals] = {}
    for part, row in rows:
        totals = parts.get(part)
        if totals is None:
            totals = parts[part] = Totals()
        totals.urls += 1
        totals.bytes += weight(row.fragment)
    return parts


def batches(entries: Iterable[Entry], size: int = BATCH) -> Iterator[dict[str, Entry]]:
    """De-duplicated batches of at most ``size`` entries, in the order given."""
    batch: dict[str, Entry] = {}
    for entry in entries:
        batch[entry.path] = entry
        if len(batch) >= size:
            yield batch
            batch = {}
    if batch:
        yield batch
