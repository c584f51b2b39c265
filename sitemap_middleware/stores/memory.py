"""``memory://``: a store in process memory, for tests and single-process demos.

Nothing is shared between processes and nothing survives a restart.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .base import (
    MAX_PAGE_BYTES,
    Entry,
    PageInfo,
    Row,
    StoreBase,
    batches,
    now,
    to_datetime,
    weight,
)

# Fragments joined per yielded run, as a database store reads them.
CHUNK = 2000


@dataclass(slots=True)
class _Page:
    paths: dict[str, None]  # insertion-ordered set: first-seen order
    bytes: int = 0
    lastmod: int = 0
    version: int = 0
    changed: int = 0


class MemoryStore(StoreBase):
    """Dicts behind one lock."""

    def __init__(
        self, page_size: int = 50_000, page_bytes: int = MAX_PAGE_BYTES
    ) -> None:
        super().__init__(page_size, page_bytes)
        self._lock = threading.Lock()
        self._rows: dict[str, tuple[int, Row]] = {}  # path -> (page, row)
        self._pages: list[_Page] = []
        self._routes: dict[str, int] = {}  # route template -> stored paths
        self._epoch = secrets.token_hex(4)

    def upsert(self, entries: Iterable[Entry]) -> int:
        return sum(self._upsert(batch) for batch in batches(entries))

    def _upsert(self, batch: dict[str, Entry]) -> int:
        with self._lock:
            current = now()
            pages = self._pages
            sizes = {n + 1: (len(p.paths), p.bytes) for n, p in enumerate(pages)}
            # Planned in full first, so that a bad entry changes nothing.
            todo = self._plan(batch, self._rows, sizes, len(pages), current)
            self._delete(todo.moved, current)
            for path, number, row, new in todo.changes:
                while len(pages) < number:
                    pages.append(_Page({}))
                if new:
                    pages[number - 1].paths[path] = None
                prior = self._rows.get(path)
                if prior is not None:
                    self._tally(prior[1][2], -1)
                self._tally(row[2], 1)
                self._rows[path] = (number, row)
            for number, (_, size, newest) in todo.pages.items():
                page = pages[number - 1]
                page.bytes += size
                page.lastmod = max(page.lastmod, newest)
                page.version += 1
                page.changed = current
        return len(todo.changes)

    def remove(self, paths: Iterable[str]) -> int:
        with self._lock:
            return self._delete(set(paths), now())

    def _delete(self, paths: Iterable[str], current: int) -> int:
        removed = 0
        for path in paths:
            old = self._rows.pop(path, None)
            if old is None:
                continue
            page = self._pages[old[0] - 1]
            del page.paths[path]
            self._tally(old[1][2], -1)
            page.bytes -= weight(old[1][3])
            page.lastmod = max((self._rows[p][1][0] for p in page.paths), default=0)
            page.version += 1
            page.changed = current
            removed += 1
        return removed

    def _tally(self, route: str | None, delta: int) -> None:
        if route is not None:
            held = self._routes.get(route, 0) + delta
            if held:
                self._routes[route] = held
            else:
                self._routes.pop(route, None)

    def count(self, route: str | None = None) -> int:
        with self._lock:
            if route is None:
                return len(self._rows)
            return self._routes.get(route, 0)

    def known(self, paths: Iterable[str]) -> set[str]:
        with self._lock:
            return {path for path in paths if path in self._rows}

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

    def _page_rows(self, number: int) -> list[tuple[str, Row]]:
        with self._lock:
            if not 1 <= number <= len(self._pages):
                return []
            return [(p, self._rows[p][1]) for p in self._pages[number - 1].paths]

    def fragments(self, number: int) -> Iterator[bytes]:
        rows = self._page_rows(number)
        for i in range(0, len(rows), CHUNK):
            yield b"".join(row[3] for _, row in rows[i : i + CHUNK])

    def entries(self, number: int) -> Iterator[Entry]:
        for path, (lastmod, fingerprint, route, _) in self._page_rows(number):
            yield Entry(path, to_datetime(lastmod), fingerprint, route=route)
