"""``sqlite:///path``: the default store, embedded, shared by the processes of one
machine through one file (WAL mode, so readers never wait for the writer).
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import threading
from collections.abc import Iterable, Iterator

from ..errors import StoreError
from .base import Entry, PageInfo, Row, StoreBase, dedupe, now, plan, to_datetime

SCHEMA_VERSION = "1"
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
    changefreq TEXT,
    priority REAL,
    route TEXT
);
CREATE INDEX IF NOT EXISTS sitemap_url_page ON sitemap_url (page, seq);
CREATE TABLE IF NOT EXISTS sitemap_page (
    page INTEGER PRIMARY KEY,
    urls INTEGER NOT NULL,
    lastmod INTEGER NOT NULL,
    version INTEGER NOT NULL,
    changed INTEGER NOT NULL
);
"""
# Rows read per query when streaming a page (keyset pagination, no OFFSET).
CHUNK = 2000
# SQLite's default limit on bound parameters is 32766 (999 before 3.32).
_IN_BATCH = 500


class SQLiteStore(StoreBase):
    """One connection per process, opened on first use and reopened after fork.

    :param path: the database file; its folder must exist.
    :param page_size: URLs per sitemap page (at most 50,000).
    :param timeout: seconds to wait for another process's write lock.
    """

    def __init__(
        self, path: str, page_size: int = 50_000, timeout: float = 5.0
    ) -> None:
        super().__init__(page_size)
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
        batch = dedupe(entries)
        if not batch:
            return 0
        with self._lock:
            conn = self._connect()
            conn.execute("BEGIN IMMEDIATE")
            try:
                changed = self._upsert(conn, batch)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        return changed

    def _upsert(self, conn: sqlite3.Connection, batch: dict[str, Entry]) -> int:
        current = now()
        last = conn.execute(
            "SELECT page, urls FROM sitemap_page ORDER BY page DESC LIMIT 1"
        ).fetchone()
        todo = plan(
            batch,
            self._rows(conn, list(batch)),
            last or (1, 0),
            self.page_size,
            current,
        )
        inserts = [(path, page, *row) for path, page, row, new in todo.changes if new]
        updates = [(*row, path) for path, _, row, new in todo.changes if not new]
        conn.executemany(
            "INSERT INTO sitemap_url (path, page, lastmod, fingerprint, changefreq,"
            " priority, route) VALUES (?, ?, ?, ?, ?, ?, ?)",
            inserts,
        )
        conn.executemany(
            "UPDATE sitemap_url SET lastmod = ?, fingerprint = ?, changefreq = ?,"
            " priority = ?, route = ? WHERE path = ?",
            updates,
        )
        conn.executemany(
            "INSERT INTO sitemap_page VALUES (?, ?, ?, 1, ?) ON CONFLICT (page) DO"
            " UPDATE SET urls = urls + excluded.urls,"
            " lastmod = max(lastmod, excluded.lastmod), version = version + 1,"
            " changed = excluded.changed",
            [(page, n, newest, current) for page, (n, newest) in todo.pages.items()],
        )
        return len(todo.changes)

    def _rows(
        self, conn: sqlite3.Connection, paths: list[str]
    ) -> dict[str, tuple[int, Row]]:
        found: dict[str, tuple[int, Row]] = {}
        for i in range(0, len(paths), _IN_BATCH):
            chunk = paths[i : i + _IN_BATCH]
            marks = ",".join("?" * len(chunk))
            for path, page, *row in conn.execute(
                "SELECT path, page, lastmod, fingerprint, changefreq, priority, route"
                f" FROM sitemap_url WHERE path IN ({marks})",
                chunk,
            ):
                found[path] = (page, tuple(row))
        return found

    def remove(self, paths: Iterable[str]) -> int:
        wanted = list(set(paths))
        if not wanted:
            return 0
        with self._lock:
            conn = self._connect()
            conn.execute("BEGIN IMMEDIATE")
            try:
                gone = self._rows(conn, wanted)
                conn.executemany(
                    "DELETE FROM sitemap_url WHERE path = ?", [(p,) for p in gone]
                )
                pages: dict[int, int] = {}
                for page, _ in gone.values():
                    pages[page] = pages.get(page, 0) + 1
                conn.executemany(
                    "UPDATE sitemap_page SET urls = urls - ?, version = version + 1,"
                    " changed = ?, lastmod = coalesce((SELECT max(lastmod) FROM"
                    " sitemap_url WHERE page = ?), 0) WHERE page = ?",
                    [(n, now(), page, page) for page, n in pages.items()],
                )
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        return len(gone)

    def count(self) -> int:
        with self._lock:
            (total,) = (
                self._connect()
                .execute("SELECT coalesce(sum(urls), 0) FROM sitemap_page")
                .fetchone()
            )
        return int(total)

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

    def entries(self, number: int) -> Iterator[Entry]:
        after = -1
        while True:
            with self._lock:
                rows = (
                    self._connect()
                    .execute(
                        "SELECT seq, path, lastmod, fingerprint, changefreq, priority,"
                        " route FROM sitemap_url WHERE page = ? AND seq > ?"
                        " ORDER BY seq LIMIT ?",
                        (number, after, CHUNK),
                    )
                    .fetchall()
                )
            for _, path, lastmod, *rest in rows:
                yield Entry(path, to_datetime(lastmod), *rest)
            if len(rows) < CHUNK:
                return
            after = rows[-1][0]

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None
