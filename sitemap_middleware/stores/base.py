"""The store protocol every backend implements, the value objects it trades in,
and the one upsert plan (merge rules and page allocation) every store follows.

A store keeps paths (never origins) in first-seen order, grouped into pages whose
membership never changes: a new path joins the last page or opens the next one.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from ..model import Entry, PageInfo, to_datetime
from ..render import ORIGIN, URLSET_CLOSE, URLSET_OPEN, fragment
from ..sitemaps import MAX_ORIGIN_BYTES, MAX_PART_BYTES, MAX_URLS_PER_PART

# The protocol's limits under the names the stores have used.
MAX_URLS_PER_PAGE = MAX_URLS_PER_PART
MAX_PAGE_BYTES = MAX_PART_BYTES
ENVELOPE_BYTES = len(URLSET_OPEN) + len(URLSET_CLOSE)

__all__ = ["MAX_ORIGIN_BYTES", "Entry", "PageInfo", "to_datetime"]


@runtime_checkable
class Store(Protocol):
    """What the middleware needs from a store. All methods are synchronous."""

    page_size: int
    page_bytes: int

    def upsert(self, entries: Iterable[Entry]) -> int:
        """Add or update entries; return how many rows changed."""

    def remove(self, paths: Iterable[str]) -> int:
        """Remove paths; return how many were there."""

    def count(self, route: str | None = None) -> int:
        """The number of stored paths; with a route template, of those whose
        route is that template (an index or a counter, never a scan)."""

    def known(self, paths: Iterable[str]) -> set[str]:
        """Which of these paths are stored: one indexed read a batch."""

    def pages(self) -> list[PageInfo]:
        """The non-empty pages, in order."""

    def page(self, number: int) -> PageInfo | None:
        """One page's summary, ``None`` if it does not exist or is empty."""

    def fragments(self, number: int) -> Iterator[bytes]:
        """One page's stored ``<url>`` fragments in first-seen order, read in
        runs (keyset pagination) and yielded joined, a run at a time."""

    def entries(self, number: int) -> Iterator[Entry]:
        """One page's entries in first-seen order, as the store decides with:
        path, lastmod, fingerprint and route (the rest is in the fragment)."""

    def close(self) -> None:
        """Release connections; the store reopens lazily if used again."""


# A stored row: lastmod (epoch seconds), fingerprint, route, and the finished
# <url> fragment that serving copies out (changefreq, priority, alternates and
# images live only there).
Row = tuple[int, "str | None", "str | None", bytes]


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
    """The bytes a fragment takes in a page once the origin is in."""
    return len(piece) + piece.count(ORIGIN) * (MAX_ORIGIN_BYTES - 1)


def merge(old: Row | None, entry: Entry, current: int) -> Row | None:
    """The row to store for ``entry`` given the stored one, or ``None`` if unchanged.

    ``lastmod`` moves only with a new fingerprint (or, for entries without one,
    a newer explicit ``lastmod``), and never backwards.
    """
    lastmod = current if entry.lastmod is None else epoch(entry.lastmod, current)
    fingerprint = entry.fingerprint
    if old is None:
        return (lastmod, fingerprint, entry.route, fragment(entry, lastmod))
    if fingerprint is None:
        fingerprint = old[1]
        if entry.lastmod is None or lastmod < old[0]:
            lastmod = old[0]
    elif fingerprint == old[1] or lastmod < old[0]:
        lastmod = old[0]
    row = (lastmod, fingerprint, entry.route, fragment(entry, lastmod))
    return None if row == old else row


@dataclass(slots=True)
class Plan:
    """What an upsert batch writes, worked out once for every store."""

    changes: list[tuple[str, int, Row, bool]]
    """(path, page, row, new?) in batch order; new rows need the next seq."""
    moved: list[str]
    """Stored paths to delete first: they grew past their page's byte limit
    and are written again as new rows (the one case a URL changes page)."""
    pages: dict[int, list[int]]
    """page -> [URLs added, bytes added, newest lastmod] for every page written."""
    last_page: int


def plan(
    batch: dict[str, Entry],
    old: Mapping[str, tuple[int, Row]],
    sizes: Mapping[int, tuple[int, int]],
    last: int,
    page_size: int,
    page_bytes: int,
    current: int,
) -> Plan:
    """Merge a de-duplicated batch with the stored rows (``old``: path ->
    (page, row)). New paths join the last page while it has room for them,
    by count and by bytes, then open the next one: membership never changes,
    except that a row which grows past its page's byte limit moves to the end.

    ``sizes`` holds (URLs, bytes) of the last page (``last``, 0 for an empty
    store) and of every page in ``old``. Raises ``ValueError`` (an entry no
    sitemap may hold) before anything is written.
    """
    budget = page_bytes - ENVELOPE_BYTES
    extra = MAX_ORIGIN_BYTES - 1
    held = {number: list(size) for number, size in sizes.items()}
    last = max(last, 1)
    page = held.setdefault(last, [0, 0])
    changes: list[tuple[str, int, Row, bool]] = []
    moved: list[str] = []
    pages: dict[int, list[int]] = {}
    totals = pages[last] = [0, 0, 0]
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
            row = (seconds, entry.fingerprint, entry.route, fragment(entry, seconds))
        else:
            row = merge(previous[1], entry, current)  # type: ignore[assignment]
            if row is None:
                continue
        piece = row[3]
        size = len(piece) + piece.count(ORIGIN) * extra  # weight(piece), inlined
        if size > budget:
            raise ValueError(f"{path}: {size} bytes do not fit in a sitemap page")
        if previous is not None:
            number, was = previous
            other = held[number]
            grown = size - weight(was[3])
            if other[1] + grown <= budget:
                other[1] += grown
                changes.append((path, number, row, False))
                _note(pages, number, 0, grown, row[0])
                continue
            other[0] -= 1
            other[1] -= weight(was[3])
            moved.append(path)
        if page[0] >= page_size or page[1] + size > budget:
            last += 1
            page = held[last] = [0, 0]
            totals = pages[last] = [0, 0, 0]
        page[0] += 1
        page[1] += size
        changes.append((path, last, row, True))
        totals[0] += 1
        totals[1] += size
        if row[0] > totals[2]:
            totals[2] = row[0]
    return Plan(
        changes, moved, {n: t for n, t in pages.items() if t != [0, 0, 0]}, last
    )


def _note(
    pages: dict[int, list[int]], number: int, urls: int, size: int, lastmod: int
) -> None:
    totals = pages.setdefault(number, [0, 0, 0])
    totals[0] += urls
    totals[1] += size
    totals[2] = max(totals[2], lastmod)


# Entries written in one transaction: a bulk load of millions runs in batches,
# in bounded memory, each batch all or nothing.
BATCH = 10_000


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


class StoreBase:
    """Shared plumbing: page limits, context manager.

    ``page_size`` and ``page_bytes`` may be set below the protocol's limits
    (tests use small pages); never above.
    """

    page_size: int
    page_bytes: int

    def __init__(
        self, page_size: int = MAX_URLS_PER_PAGE, page_bytes: int = MAX_PAGE_BYTES
    ) -> None:
        if not 1 <= page_size <= MAX_URLS_PER_PAGE:
            raise ValueError(f"page_size must be 1..{MAX_URLS_PER_PAGE}")
        if not 4096 <= page_bytes <= MAX_PAGE_BYTES:
            raise ValueError(f"page_bytes must be 4096..{MAX_PAGE_BYTES}")
        self.page_size = page_size
        self.page_bytes = page_bytes

    def _plan(
        self,
        batch: dict[str, Entry],
        old: Mapping[str, tuple[int, Row]],
        sizes: Mapping[int, tuple[int, int]],
        last: int,
        current: int,
    ) -> Plan:
        return plan(batch, old, sizes, last, self.page_size, self.page_bytes, current)

    def close(self) -> None:
        pass

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
