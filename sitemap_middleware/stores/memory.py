"""``memory://``: a store in process memory, for tests and single-process demos.

Nothing is shared between processes and nothing survives a restart.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .base import Entry, PageInfo, Row, StoreBase, dedupe, now, plan, to_datetime


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
            pages = self._pages
            last = (len(pages), len(pages[-1].paths)) if pages else (1, 0)
            # Planned in full first, so that a bad entry changes nothing.
            todo = plan(dedupe(entries), self._rows, last, self.page_size, current)
            for path, number, row, new in todo.changes:
                while len(pages) < number:
                    pages.append(_Page({}))
                if new:
                    pages[number - 1].paths[path] = None
                self._rows[path] = (number, row)
            for number, (_, newest) in todo.pages.items():
                page = pages[number - 1]
                page.lastmod = max(page.lastmod, newest)
                page.version += 1
                page.changed = current
        return len(todo.changes)

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
