"""``sqlite:///path``: the default store, embedded, shared by the processes of one
machine through one file (WAL mode, so readers never wait for the writer).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from ..errors import StoreError
from ..model import Entry, PartInfo, to_datetime
from ..sitemaps import MAX_PART_BYTES, MAX_URLS_PER_PART, RUN
from . import layout
from .base import Decision, StoreBase, logged, unlogged
from .layout import Change, Fill, Plan, Row, Stored, Totals, batches, leaving, now

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
    fragment BLOB NOT NULL,         -- the finished <url> element
    declared TEXT,                  -- hreflang alternates as declared (layout.pack)
    title TEXT                      -- the page's title, not in the fragment
);
CREATE INDEX IF NOT EXISTS sitemap_url_page ON sitemap_url (page, seq);
-- count(route): added to version-2 files as they are opened
CREATE INDEX IF NOT EXISTS sitemap_url_route ON sitemap_url (route);
-- the site's counters, summed from every writer's deltas (add_counts)
CREATE TABLE IF NOT EXISTS sitemap_count (
    reason TEXT PRIMARY KEY,
    n INTEGER NOT NULL
);
-- the writers' last decisions per path (note), newest seq last, bounded
CREATE TABLE IF NOT EXISTS sitemap_decision (
    seq INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    log TEXT NOT NULL               -- JSON [[reason, epoch seconds], ...]
);
CREATE TABLE IF NOT EXISTS sitemap_page (
    page INTEGER PRIMARY KEY,
    urls INTEGER NOT NULL,
    bytes INTEGER NOT NULL,         -- rendered size of its fragments
    lastmod INTEGER NOT NULL,
    version INTEGER NOT NULL,
    changed INTEGER NOT NULL
);
"""
# The pending IndexNow pushes (stores.base.Pushes): made by every release
# that has them, apart from the sitemap's own tables.
_PUSHES = """
CREATE TABLE IF NOT EXISTS sitemap_push (
    path TEXT PRIMARY KEY,
    lease REAL NOT NULL DEFAULT 0   -- claimed until (epoch seconds); 0: free
)
"""
_QUEUE = (
    "INSERT INTO sitemap_push (path) VALUES (?)"
    " ON CONFLICT (path) DO UPDATE SET lease = 0"
)
_RUN = "FROM sitemap_url WHERE seq >= ? AND seq <= ? AND +page = ? ORDER BY seq"
# SQLite joins a run's fragments itself: one bytes object a run rather than one
# a URL halves the read. An aggregate's ordered subquery is not flattened, so
# group_concat sees the rows in seq order.
_JOINED_RUN = (
    f"SELECT CAST(group_concat(f, '') AS BLOB) FROM (SELECT fragment f {_RUN})"
)
_ENTRY_RUN = f"SELECT path, lastmod, fingerprint, route, title {_RUN}"


class SQLiteStore(StoreBase[sqlite3.Connection]):
    """One connection per process, opened on first use and reopened after fork,
    used by one thread at a time.

    :param path: the database file; its folder must exist.
    :param part_size: URLs per sitemap part (at most 50,000).
    :param part_bytes: uncompressed bytes per part (at most 50 MiB).
    :param timeout: seconds to wait for another process's write lock.
    """

    errors = (sqlite3.Error,)
    label = "SQLite"

    def __init__(
        self,
        path: str,
        part_size: int = MAX_URLS_PER_PART,
        part_bytes: int = MAX_PART_BYTES,
        timeout: float = 5.0,
    ) -> None:
        super().__init__(part_size, part_bytes)
        self.path = path
        self.timeout = timeout
        self._busy = threading.Lock()  # one statement at a time on the connection
        self._epoch = ""

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path,
            timeout=self.timeout,
            isolation_level=None,  # explicit BEGIN/COMMIT
            check_same_thread=False,  # guarded by self._busy
        )
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            with _transaction(conn):
                for statement in _SCHEMA.split(";"):
                    conn.execute(statement)
                conn.execute(_PUSHES)
                conn.execute(
                    "INSERT OR IGNORE INTO sitemap_meta"
                    " VALUES ('schema', ?), ('epoch', ?)",
                    (SCHEMA_VERSION, self._new_epoch()),
                )
            meta = dict(conn.execute("SELECT key, value FROM sitemap_meta"))
            self._check_schema(self.path, meta["schema"], SCHEMA_VERSION)
            self._add_columns(conn)
        except BaseException:
            conn.close()
            raise
        self._epoch = meta["epoch"]
        return conn

    @staticmethod
    def _add_columns(conn: sqlite3.Connection) -> None:
        """Files of version 2 made before rows kept their declared alternates
        or their title get the columns (NULL: not known) when first opened:
        looked for again under the write lock, since other processes may be
        opening the file too. Additive, so the schema stays 2 and a worker
        of an earlier release still reads and writes the file."""
        wanted = {"declared", "title"}
        columns = {row[1] for row in conn.execute("PRAGMA table_info(sitemap_url)")}
        if wanted - columns:
            with _transaction(conn):
                columns = {
                    row[1] for row in conn.execute("PRAGMA table_info(sitemap_url)")
                }
                for name in sorted(wanted - columns):
                    conn.execute(f"ALTER TABLE sitemap_url ADD COLUMN {name} TEXT")

    def close(self) -> None:
        with self._busy:  # not under a statement of another thread
            super().close()

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """The connection, in a write transaction of its own."""
        with self._busy:
            conn = self._connection()
            with _transaction(conn):
                yield conn

    # -- the write path -------------------------------------------------------------
    # The steps, named alike in every store (redis.py, postgres.py, memory.py),
    # each batch in one BEGIN IMMEDIATE transaction (_writing):
    #   _read          the stored rows of the batch
    #   _read_members  the stored rows of the hreflang clusters' other members
    #   _sizes         the fill of their parts and of the last part
    #   _settle, _plan layout's decisions on them (StoreBase)
    #   _apply         a plan: _delete its moved rows from their parts, _write
    #                  its rows, and add to the parts' _summaries
    #   _queue         the IndexNow pushes
    # remove: _read, _read_members, _settle, _delete, _queue, and the members
    # written again through _plan and _apply.

    def upsert(self, entries: Iterable[Entry]) -> int:
        changed = 0
        for batch in batches(entries):
            with self._writing() as conn:
                changed += self._upsert(conn, batch)
        return changed

    def _upsert(self, conn: sqlite3.Connection, batch: dict[str, Entry]) -> int:
        current = now()
        old = self._read(conn, list(batch))
        self._read_members(conn, layout.members(batch, old), old)
        todo = self._plan(batch, old, *self._sizes(conn, old), current)
        self._apply(conn, todo, old, current)
        self._queue(conn, self._pushes(todo, old))
        return len(todo.changes)

    def remove(self, paths: Iterable[str]) -> int:
        wanted = list(set(paths))
        if not wanted:
            return 0
        # A flood of 404s for paths never stored costs one read, not a write
        # lock taken from every other process.
        with self._busy:
            if not self._read(self._connection(), wanted):
                return 0
        with self._writing() as conn:
            current = now()
            gone = self._read(conn, wanted)
            # The other members of the removed pages' clusters lose their links.
            others: dict[str, Stored] = {}
            self._read_members(conn, layout.members({}, gone, gone), others)
            settled = self._settle({}, {**gone, **others}, gone)
            removed = self._delete(conn, gone, current)
            if self._is_pushing():
                self._queue(conn, gone)
            if settled.rewrites:
                todo = self._plan(
                    {}, others, *self._sizes(conn, others), current, settled
                )
                self._apply(conn, todo, others, current)
            return removed

    @staticmethod
    def _read(conn: sqlite3.Connection, paths: list[str]) -> dict[str, Stored]:
        """The stored rows of these paths."""
        # One statement for the whole batch: the paths go in as one JSON array
        # (SQLite has JSON built in since 3.38, and as JSON1 in most builds).
        found = conn.execute(
            "SELECT path, page, lastmod, fingerprint, route, fragment, declared,"
            " title FROM sitemap_url WHERE path IN (SELECT value FROM json_each(?))",
            (json.dumps(paths),),
        )
        return {path: Stored(page, Row(*row)) for path, page, *row in found}

    def _read_members(
        self, conn: sqlite3.Connection, paths: Collection[str], old: dict[str, Stored]
    ) -> None:
        """Add the stored rows of these hreflang members (``layout.members``)
        to ``old``."""
        if paths:
            old.update(self._read(conn, list(paths)))

    @staticmethod
    def _sizes(
        conn: sqlite3.Connection, old: dict[str, Stored]
    ) -> tuple[dict[int, Fill], int]:
        """The Fill of the last part and of every part in ``old``; the last."""
        ((last,),) = conn.execute("SELECT coalesce(max(page), 0) FROM sitemap_page")
        wanted = sorted({stored.part for stored in old.values()} | {last})
        sizes = {
            page: Fill(urls, size)
            for page, urls, size in conn.execute(
                "SELECT page, urls, bytes FROM sitemap_page"
                f" WHERE page IN ({','.join('?' * len(wanted))})",
                wanted,
            )
        }
        return sizes, last

    def _apply(
        self,
        conn: sqlite3.Connection,
        todo: Plan,
        old: dict[str, Stored],
        current: int,
    ) -> None:
        """Write a plan; in the caller's transaction."""
        self._delete(conn, {path: old[path] for path in todo.moved}, current)
        self._write(conn, todo.changes)
        self._summaries(conn, todo.parts, current)

    @staticmethod
    def _queue(conn: sqlite3.Connection, paths: Collection[str]) -> None:
        """Queue IndexNow pushes in the write's transaction."""
        if paths:
            conn.executemany(_QUEUE, [(path,) for path in paths])

    @staticmethod
    def _delete(conn: sqlite3.Connection, rows: dict[str, Stored], current: int) -> int:
        """Delete stored rows and shrink their parts; in the caller's transaction."""
        conn.executemany("DELETE FROM sitemap_url WHERE path = ?", [(p,) for p in rows])
        conn.executemany(
            "UPDATE sitemap_page SET urls = urls - ?, bytes = bytes - ?,"
            " version = version + 1, changed = ?, lastmod = coalesce((SELECT"
            " max(lastmod) FROM sitemap_url WHERE page = ?), 0) WHERE page = ?",
            [
                (totals.urls, totals.bytes, current, part, part)
                for part, totals in leaving(rows.values()).items()
            ],
        )
        return len(rows)

    @staticmethod
    def _write(conn: sqlite3.Connection, changes: list[Change]) -> None:
        """Write the rows of planned changes: new ones take the next seq."""
        conn.executemany(
            "INSERT INTO sitemap_url (path, page, lastmod, fingerprint, route,"
            " fragment, declared, title) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(path, part, *row) for path, part, row, new in changes if new],
        )
        conn.executemany(
            "UPDATE sitemap_url SET lastmod = ?, fingerprint = ?, route = ?,"
            " fragment = ?, declared = ?, title = ? WHERE path = ?",
            [(*row, path) for path, _, row, new in changes if not new],
        )

    @staticmethod
    def _summaries(
        conn: sqlite3.Connection, parts: dict[int, Totals], current: int
    ) -> None:
        """Add what the writes added to their parts' summaries."""
        conn.executemany(
            "INSERT INTO sitemap_page VALUES (?, ?, ?, ?, 1, ?) ON CONFLICT (page)"
            " DO UPDATE SET urls = urls + excluded.urls,"
            " bytes = bytes + excluded.bytes,"
            " lastmod = max(lastmod, excluded.lastmod), version = version + 1,"
            " changed = excluded.changed",
            [
                (part, totals.urls, totals.bytes, totals.newest, current)
                for part, totals in parts.items()
            ],
        )

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        with self._busy:
            return self._connection().execute(sql, params).fetchall()

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: in WAL mode its reads see the database as of
        the first of them, whatever commits after. The connection is this
        object's, shared by its threads: their writes fail meanwhile."""
        try:
            self._query("BEGIN")
        except self.errors as exc:
            raise StoreError(f"{self.label}: {exc}") from exc
        try:
            yield
        finally:
            try:
                self._query("COMMIT")  # it wrote nothing: it only ends the read
            except self.errors as exc:
                raise StoreError(f"{self.label}: {exc}") from exc

    def epoch(self) -> str:
        rows = self._query("SELECT value FROM sitemap_meta WHERE key = 'epoch'")
        return str(rows[0][0]) if rows else ""

    def add_counts(self, counts: Mapping[str, int]) -> None:
        rows = [(reason, n) for reason, n in counts.items() if n]
        if rows:
            with self._writing() as conn:
                conn.executemany(
                    "INSERT INTO sitemap_count VALUES (?, ?)"
                    " ON CONFLICT (reason) DO UPDATE SET n = n + excluded.n",
                    rows,
                )

    def counts(self) -> dict[str, int]:
        return dict(self._query("SELECT reason, n FROM sitemap_count"))

    def setting(self, name: str) -> str | None:
        rows = self._query(
            "SELECT value FROM sitemap_meta WHERE key = ?", (f"setting.{name}",)
        )
        return str(rows[0][0]) if rows else None

    def set_setting(self, name: str, value: str) -> None:
        with self._writing() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO sitemap_meta VALUES (?, ?)",
                (f"setting.{name}", value),
            )

    def queue_pushes(self, paths: Iterable[str]) -> None:
        wanted = list(paths)
        if wanted:
            with self._writing() as conn:
                self._queue(conn, wanted)

    def claim_pushes(self, limit: int, now: float, until: float) -> list[str]:
        with self._writing() as conn:
            rows = conn.execute(
                "UPDATE sitemap_push SET lease = ? WHERE rowid IN (SELECT rowid"
                " FROM sitemap_push WHERE lease <= ? ORDER BY rowid LIMIT ?)"
                " RETURNING path",
                (until, now, limit),
            ).fetchall()
        return [path for (path,) in rows]

    def pushed(self, paths: Iterable[str], until: float) -> int:
        with self._writing() as conn:
            before = conn.total_changes
            conn.executemany(
                "DELETE FROM sitemap_push WHERE path = ? AND lease = ?",
                [(path, until) for path in paths],
            )
            return conn.total_changes - before

    def retry_pushes(self, paths: Iterable[str], until: float, at: float) -> None:
        with self._writing() as conn:
            conn.executemany(
                "UPDATE sitemap_push SET lease = ? WHERE path = ? AND lease = ?",
                [(at, path, until) for path in paths],
            )

    def pending_pushes(self) -> int:
        return int(self._query("SELECT count(*) FROM sitemap_push")[0][0])

    def note(self, decisions: Iterable[Decision]) -> None:
        grouped = self._grouped(decisions)
        if not grouped:
            return
        with self._writing() as conn:
            held = dict(
                conn.execute(
                    "SELECT path, log FROM sitemap_decision"
                    " WHERE path IN (SELECT value FROM json_each(?))",
                    (json.dumps(list(grouped)),),
                )
            )
            # Written again, so that it takes the newest seq: the bound keeps
            # the paths decided about most lately.
            conn.executemany(
                "DELETE FROM sitemap_decision WHERE path = ?", [(p,) for p in held]
            )
            conn.executemany(
                "INSERT INTO sitemap_decision (path, log) VALUES (?, ?)",
                [
                    (path, logged(held.get(path), added, self.decisions_kept))
                    for path, added in grouped.items()
                ],
            )
            conn.execute(
                "DELETE FROM sitemap_decision WHERE seq <= (SELECT seq FROM"
                " sitemap_decision ORDER BY seq DESC LIMIT 1 OFFSET ?)",
                (self.decision_paths,),
            )

    def decisions(self, path: str) -> list[tuple[str, datetime]]:
        rows = self._query("SELECT log FROM sitemap_decision WHERE path = ?", (path,))
        return unlogged(rows[0][0] if rows else None)

    def count(self, route: str | None = None) -> int:
        if route is None:
            rows = self._query("SELECT coalesce(sum(urls), 0) FROM sitemap_page")
        else:
            rows = self._query(
                "SELECT count(*) FROM sitemap_url WHERE route = ?", (route,)
            )
        return int(rows[0][0])

    def known(self, paths: Iterable[str]) -> set[str]:
        wanted = list(set(paths))
        if not wanted:
            return set()
        rows = self._query(
            "SELECT path FROM sitemap_url"
            " WHERE path IN (SELECT value FROM json_each(?))",
            (json.dumps(wanted),),
        )
        return {path for (path,) in rows}

    def parts(self) -> list[PartInfo]:
        rows = self._query(
            "SELECT page, urls, lastmod, version, changed FROM sitemap_page"
            " WHERE urls > 0 ORDER BY page"
        )
        return [PartInfo.from_row(self._epoch, *row) for row in rows]

    def part(self, number: int) -> PartInfo | None:
        rows = self._query(
            "SELECT page, urls, lastmod, version, changed FROM sitemap_page"
            " WHERE page = ? AND urls > 0",
            (number,),
        )
        return PartInfo.from_row(self._epoch, *rows[0]) if rows else None

    def _ranges(self, number: int) -> Iterator[tuple[int, int, int]]:
        """(first seq, last seq, part) of each run of at most RUN rows.

        New rows always join the last part, so each part's rows fill one
        range of seq that no other part's rows enter: after one index lookup
        for its ends, a part is read as rowid ranges (keyset, never OFFSET),
        which SQLite walks in order without touching the index.
        """
        ((low, high),) = self._query(
            "SELECT min(seq), max(seq) FROM sitemap_url WHERE page = ?", (number,)
        )
        if low is not None:
            for start in range(low, high + 1, RUN):
                yield start, min(start + RUN - 1, high), number

    def fragments(self, number: int) -> Iterator[bytes]:
        for run in self._ranges(number):
            ((joined,),) = self._query(_JOINED_RUN, run)
            if joined is not None:
                yield joined

    def entries(self, number: int) -> Iterator[Entry]:
        for run in self._ranges(number):
            for path, lastmod, print_, route, title in self._query(_ENTRY_RUN, run):
                when = to_datetime(lastmod)
                yield Entry(path, when, print_, route=route, title=title)


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE (the write lock up front: no upgrade deadlock), COMMIT,
    or ROLLBACK on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
