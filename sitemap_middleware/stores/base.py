"""The store protocol every backend implements, and the value objects it trades in.

A store keeps paths (never origins) in first-seen order, grouped into pages whose
membership never changes: a new path joins the last page or opens the next one.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Protocol, runtime_checkable

# https://www.sitemaps.org/protocol.html#index: at most 50,000 URLs a sitemap.
MAX_URLS_PER_PAGE = 50_000


@dataclass(frozen=True, slots=True)
class Entry:
    """One page of the site: its path (with allowed query) and metadata.

    ``lastmod`` is when the page's content last changed (``None``: now).
    ``fingerprint`` is a digest of that content; a new fingerprint moves
    ``lastmod``, the same one never does.
    """

    path: str
    lastmod: datetime | None = None
    fingerprint: str | None = None
    changefreq: str | None = None
    priority: float | None = None
    route: str | None = None


@dataclass(frozen=True, slots=True)
class PageInfo:
    """A sitemap page's summary, cheap to read: enough for headers and the index."""

    number: int
    urls: int
    lastmod: datetime
    """The newest ``lastmod`` of the page's entries."""
    version: str
    """Changes exactly when one of the page's entries changes."""
    changed: datetime
    """When the page last changed (its ``Last-Modified``)."""

    @classmethod
    def from_row(
        cls,
        epoch: str,
        number: int,
        urls: int,
        lastmod: int,
        version: int,
        changed: int,
    ) -> PageInfo:
        """A summary from stored integers (epoch seconds, a version counter);
        ``epoch`` identifies the store's data, so versions never repeat."""
        return cls(
            number,
            urls,
            to_datetime(lastmod),
            f"{epoch}.{version}",
            to_datetime(changed),
        )


@runtime_checkable
class Store(Protocol):
    """What the middleware needs from a store. All methods are synchronous."""

    page_size: int

    def upsert(self, entries: Iterable[Entry]) -> int:
        """Add or update entries; return how many rows changed."""

    def remove(self, paths: Iterable[str]) -> int:
        """Remove paths; return how many were there."""

    def count(self) -> int:
        """The number of stored paths."""

    def pages(self) -> list[PageInfo]:
        """The non-empty pages, in order."""

    def page(self, number: int) -> PageInfo | None:
        """One page's summary, ``None`` if it does not exist or is empty."""

    def entries(self, number: int) -> Iterator[Entry]:
        """The entries of one page in first-seen order."""

    def close(self) -> None:
        """Release connections; the store reopens lazily if used again."""


# A stored row: (lastmod as epoch seconds, fingerprint, changefreq, priority, route).
Row = tuple[int, "str | None", "str | None", "float | None", "str | None"]


def now() -> int:
    return int(time.time())


def epoch(moment: datetime | None, default: int) -> int:
    """Epoch seconds of an aware datetime, never later than ``default`` (now)."""
    if moment is None:
        return default
    if moment.tzinfo is None:
        raise ValueError(f"lastmod must be timezone-aware, got {moment!r}")
    return min(int(moment.timestamp()), default)


def to_datetime(seconds: float) -> datetime:
    return datetime.fromtimestamp(int(seconds), timezone.utc)


def merge(old: Row | None, entry: Entry, current: int) -> Row | None:
    """The row to store for ``entry`` given the stored one, or ``None`` if unchanged.

    ``lastmod`` moves only with a new fingerprint (or, for entries without one,
    a newer explicit ``lastmod``), and never backwards.
    """
    lastmod = epoch(entry.lastmod, current)
    meta = (entry.changefreq, entry.priority, entry.route)
    if old is None:
        return (lastmod, entry.fingerprint, *meta)
    old_lastmod, old_fingerprint = old[0], old[1]
    if entry.fingerprint is not None:
        if entry.fingerprint != old_fingerprint:
            return (max(old_lastmod, lastmod), entry.fingerprint, *meta)
    elif entry.lastmod is not None and lastmod > old_lastmod:
        return (lastmod, old_fingerprint, *meta)
    if meta != old[2:]:
        return (old_lastmod, old_fingerprint, *meta)
    return None


@dataclass(slots=True)
class Plan:
    """What an upsert batch writes, worked out once for every store."""

    changes: list[tuple[str, int, Row, bool]]
    """(path, page, row, new?) in batch order; new paths need a seq."""
    pages: dict[int, tuple[int, int]]
    """page -> (URLs added, newest lastmod) for every page touched."""
    last_page: int


def plan(
    batch: dict[str, Entry],
    old: Mapping[str, tuple[int, Row]],
    last: tuple[int, int],
    page_size: int,
    current: int,
) -> Plan:
    """Merge a de-duplicated batch with the stored rows (``old``: path ->
    (page, row)). New paths join the last page while it holds fewer than
    ``page_size`` URLs, then open the next one: membership never changes.

    ``last`` is (number, URLs) of the last page, ``(1, 0)`` for an empty store.
    Raises ``ValueError`` (from :func:`merge`) before anything is written.
    """
    last_page, last_urls = last
    changes: list[tuple[str, int, Row, bool]] = []
    pages: dict[int, tuple[int, int]] = {}
    for path, entry in batch.items():
        previous = old.get(path)
        row = merge(previous[1] if previous else None, entry, current)
        if row is None:
            continue
        if previous is None:
            if last_urls >= page_size:
                last_page, last_urls = last_page + 1, 0
            last_urls += 1
            page = last_page
        else:
            page = previous[0]
        changes.append((path, page, row, previous is None))
        added, newest = pages.get(page, (0, 0))
        pages[page] = (added + (previous is None), max(newest, row[0]))
    return Plan(changes, pages, last_page)


def dedupe(entries: Iterable[Entry]) -> dict[str, Entry]:
    """The last entry given for each path, in first-given order."""
    batch: dict[str, Entry] = {}
    for entry in entries:
        batch[entry.path] = entry
    return batch


class StoreBase:
    """Shared plumbing: page size, context manager."""

    page_size: int

    def __init__(self, page_size: int = MAX_URLS_PER_PAGE) -> None:
        if not 1 <= page_size <= MAX_URLS_PER_PAGE:
            raise ValueError(f"page_size must be 1..{MAX_URLS_PER_PAGE}")
        self.page_size = page_size

    def close(self) -> None:
        pass

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
