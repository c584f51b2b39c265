"""``postgresql://user@host/db``: one sitemap shared by the workers of many machines
through three PostgreSQL tables, written one transaction per batch.
"""

from __future__ import annotations

import os
import re
import secrets
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool

from ..errors import StoreError
from .base import Entry, PageInfo, StoreBase, dedupe, now, plan

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS {p}meta (
    id smallint PRIMARY KEY CHECK (id = 1),
    schema integer NOT NULL,
    epoch text NOT NULL,
    next_seq bigint NOT NULL        -- first-seen order, allocated under the row lock
);
CREATE TABLE IF NOT EXISTS {p}url (
    path text PRIMARY KEY,
    seq bigint NOT NULL,
    page integer NOT NULL,
    lastmod bigint NOT NULL,        -- epoch seconds, UTC
    fingerprint text,
    changefreq text,
    priority double precision,
    route text
);
CREATE UNIQUE INDEX IF NOT EXISTS {p}url_page ON {p}url (page, seq);
CREATE TABLE IF NOT EXISTS {p}page (
    page integer PRIMARY KEY,
    urls integer NOT NULL,
    lastmod bigint NOT NULL,
    version bigint NOT NULL,
    changed bigint NOT NULL
)
"""
# Rows read per query when streaming a page (keyset pagination, no OFFSET).
CHUNK = 5000
_OWN_OPTIONS = {"page_size": int, "statement_timeout": int, "table_prefix": str}


class PostgresStore(StoreBase):
    """A connection pool per process, opened on first use and again after fork.
    Writers of one sitemap take turns on its meta row (``SELECT ... FOR UPDATE``).

    :param uri: a libpq URI; the options ``page_size``, ``statement_timeout`` (ms,
        default 5000) and ``table_prefix`` (default ``sitemap_``) are ours, the
        others go to libpq (``connect_timeout`` defaults to 2 seconds).
    """

    def __init__(self, uri: str) -> None:
        parts = urlsplit(uri)
        ours: dict[str, Any] = {}
        theirs = []
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            if key in _OWN_OPTIONS:
                try:
                    ours[key] = _OWN_OPTIONS[key](value)
                except ValueError as exc:
                    raise ValueError(f"option {key!r} must be a number") from exc
            else:
                theirs.append((key, value))
        super().__init__(ours.get("page_size", 50_000))
        self.prefix = ours.get("table_prefix", "sitemap_")
        if not re.fullmatch(r"[a-z_][a-z0-9_]{0,40}", self.prefix):
            raise ValueError(f"table_prefix {self.prefix!r}: use [a-z0-9_], 41 at most")
        try:
            params = conninfo_to_dict(parts._replace(query=urlencode(theirs)).geturl())
        except psycopg.Error as exc:
            raise ValueError(str(exc)) from exc
        params.setdefault("connect_timeout", 2)
        # Appended to the user's own server options, if any. In UTC, the server's
        # to_timestamp() gives datetimes in the zone the other stores use.
        timeout = f"-c statement_timeout={ours.get('statement_timeout', 5000)}"
        options = f"{params.get('options', '')} {timeout} -c TimeZone=UTC"
        params["options"] = options.strip()
        self._params = params
        self._lock = threading.Lock()
        self._pool: ConnectionPool | None = None
        self._pid = 0
        self._epoch = ""

    def _sql(self, statement: str) -> str:
        return statement.replace("{p}", self.prefix)

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self._connect().connection() as conn:
                yield conn
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL: {exc}") from exc

    def _connect(self) -> ConnectionPool:
        # A pool inherited across fork must not be used by the child: its
        # connections are the parent's. psycopg closes them only in the process
        # that opened them, so dropping the parent's pool is safe.
        pool = self._pool
        if pool is not None and self._pid == os.getpid():
            return pool
        with self._lock:
            if self._pool is None or self._pid != os.getpid():
                pool = ConnectionPool(
                    kwargs={**self._params, "autocommit": True},
                    min_size=1,
                    max_size=4,
                    timeout=float(str(self._params["connect_timeout"])) + 1,
                    check=ConnectionPool.check_connection,
                    open=True,
                )
                try:
                    with pool.connection() as conn:
                        self._epoch = self._setup(conn)
                except BaseException:
                    pool.close()
                    raise
                self._pool, self._pid = pool, os.getpid()
            return self._pool

    def _setup(self, conn: psycopg.Connection[Any]) -> str:
        """Create the tables unless they exist; return the sitemap's epoch."""
        try:
            row = conn.execute(
                self._sql("SELECT schema, epoch FROM {p}meta")
            ).fetchone()
        except psycopg.errors.UndefinedTable:
            row = None
        if row is None:
            with conn.transaction():
                # Two processes creating the same tables at once would collide.
                conn.execute(
                    "SELECT pg_advisory_xact_lock(hashtext(%s))", (self.prefix,)
                )
                for statement in self._sql(_SCHEMA).split(";"):
                    conn.execute(statement)
                conn.execute(
                    self._sql(
                        "INSERT INTO {p}meta VALUES (1, %s, %s, 0)"
                        " ON CONFLICT DO NOTHING"
                    ),
                    (SCHEMA_VERSION, secrets.token_hex(4)),
                )
                row = conn.execute(
                    self._sql("SELECT schema, epoch FROM {p}meta")
                ).fetchone()
        assert row is not None
        if row[0] != SCHEMA_VERSION:
            raise StoreError(
                f"table {self.prefix}meta holds sitemap schema {row[0]}, "
                f"expected {SCHEMA_VERSION}"
            )
        return str(row[1])

    def upsert(self, entries: Iterable[Entry]) -> int:
        batch = dedupe(entries)
        if not batch:
            return 0
        with self._connection() as conn, conn.transaction(), conn.cursor() as cur:
            return self._upsert(cur, batch)

    def _upsert(self, cur: psycopg.Cursor[Any], batch: dict[str, Entry]) -> int:
        current = now()
        (seq,) = _one(cur.execute(self._sql("SELECT next_seq FROM {p}meta FOR UPDATE")))
        cur.execute(
            self._sql(
                "SELECT path, seq, page, lastmod, fingerprint, changefreq, priority,"
                " route FROM {p}url WHERE path = ANY(%b)"
            ),
            (list(batch),),
        )
        found = {path: (number, page, tuple(row)) for path, number, page, *row in cur}
        last = cur.execute(
            self._sql("SELECT page, urls FROM {p}page ORDER BY page DESC LIMIT 1")
        ).fetchone()
        old = {path: (page, row) for path, (_, page, row) in found.items()}
        todo = plan(batch, old, last or (1, 0), self.page_size, current)
        rows: list[tuple[Any, ...]] = []
        for path, page, row, new in todo.changes:
            if new:
                seq += 1
            rows.append((path, seq if new else found[path][0], page, *row))
        if not rows:
            return 0
        # Parameters are binary (%b): psycopg escapes every string of a text array
        # with a regex, binary ones are copied.
        rows.sort()  # one lock order for every writer: no deadlocks
        numbers = sorted((page, *stats) for page, stats in todo.pages.items())
        cur.execute(
            self._sql(
                "INSERT INTO {p}url SELECT * FROM unnest(%b::text[], %b::bigint[],"
                " %b::integer[], %b::bigint[], %b::text[], %b::text[], %b::float8[],"
                " %b::text[]) ON CONFLICT (path) DO UPDATE SET"
                " lastmod = excluded.lastmod, fingerprint = excluded.fingerprint,"
                " changefreq = excluded.changefreq, priority = excluded.priority,"
                " route = excluded.route"
            ),
            [list(column) for column in zip(*rows, strict=True)],
        )
        cur.execute(
            self._sql(
                "INSERT INTO {p}page SELECT n, urls, lastmod, 1, %b::bigint FROM"
                " unnest(%b::integer[], %b::integer[], %b::bigint[])"
                " AS t(n, urls, lastmod)"
                " ON CONFLICT (page) DO UPDATE SET urls = {p}page.urls + excluded.urls,"
                " lastmod = greatest({p}page.lastmod, excluded.lastmod),"
                " version = {p}page.version + 1, changed = excluded.changed"
            ),
            (current, *(list(c) for c in zip(*numbers, strict=True))),
        )
        cur.execute(self._sql("UPDATE {p}meta SET next_seq = %b"), (seq,))
        return len(rows)

    def remove(self, paths: Iterable[str]) -> int:
        wanted = sorted(set(paths))
        if not wanted:
            return 0
        with self._connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.execute(self._sql("SELECT 1 FROM {p}meta FOR UPDATE"))
            cur.execute(
                self._sql(
                    "WITH gone AS (DELETE FROM {p}url WHERE path = ANY(%s)"
                    " RETURNING page)"
                    " SELECT page, count(*) FROM gone GROUP BY page ORDER BY page"
                ),
                (wanted,),
            )
            gone = cur.fetchall()
            cur.execute(
                self._sql(
                    "UPDATE {p}page SET urls = urls - t.n, version = version + 1,"
                    " changed = %s, lastmod = coalesce((SELECT max(lastmod) FROM"
                    " {p}url WHERE page = t.page), 0)"
                    " FROM unnest(%s::integer[], %s::integer[]) AS t(page, n)"
                    " WHERE {p}page.page = t.page"
                ),
                (now(), [page for page, _ in gone], [n for _, n in gone]),
            )
        return sum(n for _, n in gone)

    def count(self) -> int:
        with self._connection() as conn:
            query = "SELECT coalesce(sum(urls), 0) FROM {p}page"
            return int(_one(conn.execute(self._sql(query)))[0])

    def pages(self) -> list[PageInfo]:
        with self._connection() as conn:
            rows = conn.execute(
                self._sql(
                    "SELECT page, urls, lastmod, version, changed FROM {p}page"
                    " WHERE urls > 0 ORDER BY page"
                )
            ).fetchall()
        return [PageInfo.from_row(self._epoch, *row) for row in rows]

    def page(self, number: int) -> PageInfo | None:
        with self._connection() as conn:
            row = conn.execute(
                self._sql(
                    "SELECT page, urls, lastmod, version, changed FROM {p}page"
                    " WHERE page = %s AND urls > 0"
                ),
                (number,),
            ).fetchone()
        return PageInfo.from_row(self._epoch, *row) if row else None

    def entries(self, number: int) -> Iterator[Entry]:
        after = -1
        # The server makes the datetimes: psycopg loads them in C, far faster.
        query = self._sql(
            "SELECT seq, path, to_timestamp(lastmod), fingerprint, changefreq,"
            " priority, route FROM {p}url WHERE page = %s AND seq > %s"
            " ORDER BY seq LIMIT %s"
        )
        while True:
            with self._connection() as conn, conn.cursor(binary=True) as cur:
                rows = cur.execute(
                    query, (number, after, CHUNK), prepare=True
                ).fetchall()
            for _, path, lastmod, fingerprint, changefreq, priority, route in rows:
                yield Entry(path, lastmod, fingerprint, changefreq, priority, route)
            if len(rows) < CHUNK:
                return
            after = rows[-1][0]

    def close(self) -> None:
        with self._lock:
            if self._pool is not None and self._pid == os.getpid():
                self._pool.close()
            self._pool = None


def _one(cur: psycopg.Cursor[Any]) -> Any:
    row = cur.fetchone()
    if row is None:
        raise StoreError("the sitemap's meta row is missing")
    return row
