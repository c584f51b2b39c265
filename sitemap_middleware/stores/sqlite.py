"""``sqlite:///path``: the default store, embedded, shared by the processes of one
machine through one file (WAL mode, so readers never wait for the writer).
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from ..errors import StoreError
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

SCHEMA_VERSION = "2"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sitemap_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sitemap_url (
    seq INTEGER PRIMARY KEY,        -- first-seen order
    path TEXT NOT NULL UNIQUE,
    page INTEGER NOT NULL,
    lastmod INTEGER NOT NULL,       -- epoch seconds, UTC
    fingerprint TEXT,
    route TEXT,
    fragment BLOB NOT NULL          -- the finished <url> element
);
CREATE INDEX IF NOT EXISTS sitemap_url_page ON sitemap_url (page, seq);
-- count(route): added to version-2 files as they are opened
CREATE INDEX IF NOT EXISTS sitemap_url_route ON sitemap_url (route);
CREATE TABLE IF NOT EXISTS sitemap_page (
    page INTEGER PRIMARY KEY,
    urls INTEGER NOT NULL,
    bytes INTEGER NOT NULL,         -- rendered size of its fragments
    lastmod INTEGER NOT NULL,
    version INTEGER NOT NULL,
    changed INTEGER NOT NULL
);
"""
# Rows read per query when streaming a page (keyset pagination, no OFFSET).
CHUNK = 2000
_RUN = "FROM sitemap_url WHERE seq >= ? AND seq <= ? AND +page = ? ORDER BY seq"
# SQLite joins a run's fragments itself: one bytes object a run rather than one
# a URL halves the read. An aggregate's ordered subquery is not flattened, so
# group_concat sees the rows in seq order.
_JOINED_RUN = (
    f"SELECT CAST(group_concat(f, '') AS BLOB) FROM (SELECT fragment f {_RUN})"
)
_ENTRY_RUN = f"SELECT path, lastmod, fingerprint, route {_RUN}"


class SQLiteStore(StoreBase):
    """One connection per process, opened on first use and reopened after fork.

    :param path: the database file; its folder must exist.
    :param page_size: URLs per sitemap page (at most 50,000).
    :param page_bytes: uncompressed bytes per page (at most 50 MiB).
    :param timeout: seconds to wait for another process's write lock.
    """

    def __init__(
        self,
        path: str,
        page_size: int = 50_000,
        page_bytes: int = MAX_PAGE_BYTES,
        timeout: float = 5.0,
    ) -> None:
        super().__init__(page_size, page_bytes)
        self.path = path
        self.timeout = timeout
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = 0
        self._epoch = ""

    def _connect(self) -> sqlite3.Connection:
        # Called with the lock held. A connection inherited across fork must
        # not be used by the child: open a new one.
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        conn = sqlite3.connect(
            self.path,
            timeout=self.timeout,
            isolation_level=None,  # explicit BEGIN/COMMIT
            check_same_thread=False,  # guarded by self._lock
        )
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA.split(";"):
                conn.execute(statement)
            conn.execute(
                "INSERT OR IGNORE INTO sitemap_meta VALUES ('schema', ?), ('epoch', ?)",
                (SCHEMA_VERSION, secrets.token_hex(4)),
            )
        except BaseException:
            conn.execute("ROLLBACK")
            conn.close()
            raise
        conn.execute("COMMIT")
        meta = dict(conn.execute("SELECT key, value FROM sitemap_meta"))
        if meta["schema"] != SCHEMA_VERSION:
            conn.close()
            raise StoreError(
                f"{self.path} has sitemap schema {meta['schema']}, "
                f"expected {SCHEMA_VERSION}"
            )
        self._epoch = meta["epoch"]
        self._conn, self._pid = conn, os.getpid()
        return conn

    def upsert(self, entries: Iterable[Entry]) -> int:
        changed = 0
        for batch in batches(entries):
            with self._lock:
                conn = self._connect()
                conn.execute("BEGIN IMMEDIATE")
                try:
                    changed += self._upsert(conn, batch)
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
        return changed

    def _upsert(self, conn: sqlite3.Connection, batch: dict[str, Entry]) -> int:
        current = now()
        old = self._rows(conn, list(batch))
        (last,) = conn.execute("SELECT coalesce(max(page), 0) FROM sitemap_page")
        wanted = sorted({page for page, _ in old.values()} | {last[0]})
        sizes = {
            page: (urls, size)
            for page, urls, size in conn.execute(
                "SELECT page, urls, bytes FROM sitemap_page"
                f" WHERE page IN ({','.join('?' * len(wanted))})",
                wanted,
            )
        }
        todo = self._plan(batch, old, sizes, last[0], current)
        self._delete(conn, {path: old[path] for path in todo.moved}, current)
        conn.executemany(
            "INSERT INTO sitemap_url (path, page, lastmod, fingerprint, route,"
            " fragment) VALUES (?, ?, ?, ?, ?, ?)",
            [(path, page, *row) for path, page, row, new in todo.changes if new],
        )
        conn.executemany(
            "UPDATE sitemap_url SET lastmod = ?, fingerprint = ?, route = ?,"
            " fragment = ? WHERE path = ?",
            [(*row, path) for path, _, row, new in todo.changes if not new],
        )
        conn.executemany(
            "INSERT INTO sitemap_page VALUES (?, ?, ?, ?, 1, ?) ON CONFLICT (page)"
            " DO UPDATE SET urls = urls + excluded.urls,"
            " bytes = bytes + excluded.bytes,"
            " lastmod = max(lastmod, excluded.lastmod), version = version + 1,"
            " changed = excluded.changed",
            [(page, *totals, current) for page, totals in todo.pages.items()],
        )
        return len(todo.changes)

    @staticmethod
    def _rows(conn: sqlite3.Connection, paths: list[str]) -> dict[str, tuple[int, Row]]:
        # One statement for the whole batch: the paths go in as one JSON array
        # (SQLite has JSON built in since 3.38, and as JSON1 in most builds).
        return {
            path: (page, tuple(row))
            for path, page, *row in conn.execute(
                "SELECT path, page, lastmod, fingerprint, route, fragment"
                " FROM sitemap_url WHERE path IN (SELECT value FROM json_each(?))",
                (json.dumps(paths),),
            )
        }

    def remove(self, paths: Iterable[str]) -> int:
        wanted = list(set(paths))
        if not wanted:
            return 0
        with self._lock:
            conn = self._connect()
            # A flood of 404s for paths never stored costs one read, not a
            # write lock taken from every other process.
            if not self._rows(conn, wanted):
                return 0
            conn.execute("BEGIN IMMEDIATE")
            try:
                gone = self._delete(conn, self._rows(conn, wanted), now())
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        return gone

    @staticmethod
    def _delete(
        conn: sqlite3.Connection, rows: dict[str, tuple[int, Row]], current: int
    ) -> int:
        """Delete stored rows and shrink their pages; in the caller's transaction."""
        conn.executemany("DELETE FROM sitemap_url WHERE path = ?", [(p,) for p in rows])
        pages: dict[int, list[int]] = {}
        for page, row in rows.values():
            totals = pages.setdefault(page, [0, 0])
            totals[0] += 1
            totals[1] += weight(row[3])
        conn.executemany(
            "UPDATE sitemap_page SET urls = urls - ?, bytes = bytes - ?,"
            " version = version + 1, changed = ?, lastmod = coalesce((SELECT"
            " max(lastmod) FROM sitemap_url WHERE page = ?), 0) WHERE page = ?",
            [(n, size, current, page, page) for page, (n, size) in pages.items()],
        )
        return len(rows)

    def count(self, route: str | None = None) -> int:
        with self._lock:
            conn = self._connect()
            if route is None:
                query = conn.execute("SELECT coalesce(sum(urls), 0) FROM sitemap_page")
            else:
                query = conn.execute(
                    "SELECT count(*) FROM sitemap_url WHERE route = ?", (route,)
                )
            (total,) = query.fetchone()
        return int(total)

    def known(self, paths: Iterable[str]) -> set[str]:
        wanted = list(set(paths))
        if not wanted:
            return set()
        with self._lock:
            rows = self._connect().execute(
                "SELECT path FROM sitemap_url"
                " WHERE path IN (SELECT value FROM json_each(?))",
                (json.dumps(wanted),),
            )
            return {path for (path,) in rows}

    def pages(self) -> list[PageInfo]:
        with self._lock:
            rows = (
                self._connect()
                .execute(
                    "SELECT page, urls, lastmod, version, changed FROM sitemap_page"
                    " WHERE urls > 0 ORDER BY page"
                )
                .fetchall()
            )
        return [PageInfo.from_row(self._epoch, *row) for row in rows]

    def page(self, number: int) -> PageInfo | None:
        with self._lock:
            row = (
                self._connect()
                .execute(
                    "SELECT page, urls, lastmod, version, changed FROM sitemap_page"
                    " WHERE page = ? AND urls > 0",
                    (number,),
                )
                .fetchone()
            )
        return PageInfo.from_row(self._epoch, *row) if row else None

    def _query(self, sql: str, params: tuple[int, ...]) -> list[Any]:
        with self._lock:
            return self._connect().execute(sql, params).fetchall()

    def _ranges(self, number: int) -> Iterator[tuple[int, int, int]]:
        """(first seq, last seq, page) of each run of at most CHUNK rows.

        New rows always join the last page, so each page's rows fill one
        range of seq that no other page's rows enter: after one index lookup
        for its ends, a page is read as rowid ranges (keyset, never OFFSET),
        which SQLite walks in order without touching the index.
        """
        ((low, high),) = self._query(
            "SELECT min(seq), max(seq) FROM sitemap_url WHERE page = ?", (number,)
        )
        if low is not None:
            for start in range(low, high + 1, CHUNK):
                yield start, min(start + CHUNK - 1, high), number

    def fragments(self, number: int) -> Iterator[bytes]:
        for run in self._ranges(number):
            ((joined,),) = self._query(_JOINED_RUN, run)
            if joined is not None:
                yield joined

    def entries(self, number: int) -> Iterator[Entry]:
        for run in self._ranges(number):
            for path, lastmod, fingerprint, route in self._query(_ENTRY_RUN, run):
                yield Entry(path, to_datetime(lastmod), fingerprint, route=route)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None
