"""``memory://``: a store in process memory, for tests and single-process demos.

Nothing is shared between processes and nothing survives a restart.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .base import Entry, PageInfo, Row, StoreBase, dedupe, merge, now, to_datetime


@dataclass(slots=True)
class _Page:
    paths: dict[str, None]  # insertion-ordered set: first-seen order
    lastmod: int = 0
    version: int = 0
    changed: int = 0


class MemoryStore(StoreBase):
    """Dicts behind one lock."""

    def __init__(self, page_size: int = 50_000) -> None:
        super().__init__(page_size)
        self._lock = threading.Lock()
        self._rows: dict[str, tuple[int, Row]] = {}  # path -> (page, row)
        self._pages: list[_Page] = []
        self._epoch = secrets.token_hex(4)

    def upsert(self, entries: Iterable[Entry]) -> int:
        with self._lock:
            current = now()
            # Work out every row first, so that a bad entry changes nothing.
            changes = []
            for path, entry in dedupe(entries).items():
                old = self._rows.get(path)
                row = merge(old[1] if old else None, entry, current)
                if row is not None:
                    changes.append((path, old, row))
            for path, old, row in changes:
                if old is None:
                    if not self._pages or len(self._pages[-1].paths) >= self.page_size:
                        self._pages.append(_Page({}))
                    self._pages[-1].paths[path] = None
                    number = len(self._pages)
                else:
                    number = old[0]
                self._rows[path] = (number, row)
                page = self._pages[number - 1]
                page.lastmod = max(page.lastmod, row[0])
                page.version += 1
                page.changed = current
        return len(changes)

    def remove(self, paths: Iterable[str]) -> int:
        removed = 0
        with self._lock:
            current = now()
            for path in set(paths):
                old = self._rows.pop(path, None)
                if old is None:
                    continue
                page = self._pages[old[0] - 1]
                del page.paths[path]
                page.lastmod = max((self._rows[p][1][0] for p in page.paths), default=0)
                page.version += 1
                page.changed = current
                removed += 1
        return removed

    def count(self) -> int:
        return len(self._rows)

    def pages(self) -> list[PageInfo]:
        with self._lock:
            return [
                info
                for number in range(1, len(self._pages) + 1)
                if (info := self._info(number)) is not None
            ]

    def page(self, number: int) -> PageInfo | None:
        with self._lock:
            return self._info(number)

    def _info(self, number: int) -> PageInfo | None:
        if not 1 <= number <= len(self._pages):
            return None
        page = self._pages[number - 1]
        if not page.paths:
            return None
        return PageInfo.from_row(
            self._epoch,
            number,
            len(page.paths),
            page.lastmod,
            page.version,
            page.changed,
        )

    def entries(self, number: int) -> Iterator[Entry]:
        with self._lock:
            if not 1 <= number <= len(self._pages):
                return iter(())
            rows = [(p, self._rows[p][1]) for p in self._pages[number - 1].paths]
        return (Entry(path, to_datetime(row[0]), *row[1:]) for path, row in rows)
