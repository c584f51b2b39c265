"""``postgresql://user@host/db``: one sitemap shared by the workers of many machines
through three PostgreSQL tables, written one transaction per batch.
"""

from __future__ import annotations

import re
import struct
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import chain
from typing import Any, cast
from urllib.parse import parse_qsl, urlencode, urlsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.types.array import ListBinaryDumper
from psycopg_pool import ConnectionPool, PoolTimeout

from ...errors import StoreError
from ...sitemaps import MAX_PART_BYTES, MAX_URLS_PER_PART
from ...urls import redacted
from ..base import RENAMED, StoreBase
from ..sql import SideTables, decisions, mapped, news, pushes, removals, shared, visits
from ..sql.dialect import postgres
from ..sql.pages import COLUMNS_ADDED, SECTIONS
from .pages import PagesMixin, _one
from .runs import READ_RUN, RunsMixin

SCHEMA_VERSION = 2
# Paths collate as "C": byte order is the order Python sorts them in (the one
# lock order of every writer), and memcmp is far cheaper than a locale's rules.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS {p}meta (
    id smallint PRIMARY KEY CHECK (id = 1),
    schema integer NOT NULL,
    epoch text NOT NULL,
    next_seq bigint NOT NULL        -- first-seen order, allocated under the row lock
);
CREATE TABLE IF NOT EXISTS {p}url (
    path text COLLATE "C" PRIMARY KEY,
    seq bigint NOT NULL,
    page integer NOT NULL,
    lastmod bigint NOT NULL,        -- epoch seconds, UTC
    fingerprint text,
    route text,
    fragment bytea NOT NULL,        -- the finished <url> element (NUL: the origin)
    declared text,                  -- hreflang alternates as declared (hreflang.pack)
    title text,                     -- the page's title, not in the fragment
    description text,               -- what the page says it is about, neither
    -- where it falls on the site map (sql/mapped.py), NULL: not placed yet
    mapgroup text, mapown boolean, maploose boolean, maphead text, mapkey bytea
);
CREATE UNIQUE INDEX IF NOT EXISTS {p}url_page ON {p}url (page, seq);
CREATE INDEX IF NOT EXISTS {p}url_route ON {p}url (route);
CREATE TABLE IF NOT EXISTS {p}page (
    page integer PRIMARY KEY,
    urls integer NOT NULL,
    bytes bigint NOT NULL,          -- rendered size of its fragments
    lastmod bigint NOT NULL,
    version bigint NOT NULL,
    changed bigint NOT NULL
)
"""
# count(route) needs an index on route: tables made before it get it.
_ROUTE_INDEX = "CREATE INDEX IF NOT EXISTS {p}url_route ON {p}url (route)"
# The tables releases added after the first, each made when the store is
# opened: the table to look for, and its statements.
_ADDED = (
    ("{p}setting", shared.POSTGRES.split(";")),
    ("{p}push", [pushes.POSTGRES]),
    ("{p}decision", decisions.POSTGRES.split(";")),
    ("{p}removal", [removals.POSTGRES]),
    ("{p}news", news.POSTGRES.split(";")),
    ("{p}section", [SECTIONS]),
    ("{p}visit", [visits.POSTGRES]),
)
_OWN_OPTIONS = {
    "part_size": int,
    "part_bytes": int,
    "statement_timeout": int,
    "table_prefix": str,
}


class PostgresStore(
    PagesMixin,
    RunsMixin,
    SideTables,
    StoreBase[ConnectionPool],
):
    """A connection pool per process, opened on first use and again after fork.
    Writers of one sitemap take turns on its meta row (``SELECT ... FOR UPDATE``).

    :param uri: a libpq URI; the options ``part_size``, ``part_bytes``,
        ``statement_timeout`` (ms, default 5000) and ``table_prefix`` (default
        ``sitemap_``) are ours, the others go to libpq (``connect_timeout``
        defaults to 2 seconds).
    """

    errors = (psycopg.Error, PoolTimeout)
    label = "PostgreSQL"

    def __init__(self, uri: str) -> None:
        self.where = redacted(uri)
        parts = urlsplit(uri)
        ours: dict[str, Any] = {}
        theirs = []
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            if key in _OWN_OPTIONS:
                try:
                    ours[key] = _OWN_OPTIONS[key](value)
                except ValueError as exc:
                    raise ValueError(f"option {key!r} must be a number") from exc
            elif key in RENAMED:
                raise ValueError(f"option {key!r} is now called {RENAMED[key]!r}")
            else:
                theirs.append((key, value))
        super().__init__(
            ours.get("part_size", MAX_URLS_PER_PART),
            ours.get("part_bytes", MAX_PART_BYTES),
        )
        self.prefix = ours.get("table_prefix", "sitemap_")
        if not re.fullmatch(r"[a-z_][a-z0-9_]{0,40}", self.prefix):
            raise ValueError(f"table_prefix {self.prefix!r}: use [a-z0-9_], 41 at most")
        try:
            params = conninfo_to_dict(parts._replace(query=urlencode(theirs)).geturl())
        except psycopg.Error as exc:
            raise ValueError(str(exc)) from exc
        params.setdefault("connect_timeout", 2)
        # Appended to the user's own server options, if any. In UTC, the server's
        # to_timestamp() gives datetimes in the zone the other stores use. Every
        # query here walks a btree; a page the statistics do not know yet (the
        # newest, or any before the first ANALYZE) looks nearly empty to the
        # planner, which would then bitmap-scan all of it and sort, once a run,
        # instead of reading its next rows in (page, seq) order.
        timeout = f"-c statement_timeout={ours.get('statement_timeout', 5000)}"
        options = (
            f"{params.get('options', '')} {timeout} -c TimeZone=UTC"
            " -c enable_bitmapscan=off"
        )
        params["options"] = options.strip()
        self._params = params
        self.dialect = postgres(self.prefix, READ_RUN)
        self._epoch = ""
        self._pinned = threading.local()  # conn: this thread's snapshot's
        # Whether the last batch written held no stored path (the next is
        # then copied in without a read first, see _upsert).
        self._unread = False

    def _sql(self, statement: str) -> str:
        return self.dialect.sql(statement)

    @contextmanager
    def _borrow(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection of this process's pool, for one statement or transaction
        (this thread's snapshot's, inside :meth:`snapshot`)."""
        pinned: psycopg.Connection[Any] | None = getattr(self._pinned, "conn", None)
        if pinned is not None:
            yield pinned
            return
        with self._connection().connection() as conn:
            yield conn

    # What other sites' writers read (declarations): READ COMMITTED, without
    # a lock, it never waits for a writer.
    _committed = _borrow

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._borrow() as conn:
            return conn.execute(sql, params).fetchall()

    @contextmanager
    def _writing(self) -> Iterator[psycopg.Connection[Any]]:
        with self._borrow() as conn, conn.transaction():
            yield conn

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One REPEATABLE READ, READ ONLY transaction on one connection of the
        pool, which this thread's reads use until the block ends."""
        try:
            with self._borrow() as conn, conn.transaction():
                conn.execute(
                    "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"
                )
                self._pinned.conn = conn
                try:
                    yield
                finally:
                    self._pinned.conn = None
        except self.errors as exc:
            raise StoreError(self._said(exc)) from exc

    def _connect(self) -> ConnectionPool:
        # One plain connection first: a server that is down fails at once
        # with libpq's own error, rather than after the pool's wait, its
        # retries and its log lines, on every probe.
        params: dict[str, Any] = {**self._params, "autocommit": True}
        with psycopg.connect(**params) as conn:
            self._epoch = self._setup(conn)
        return ConnectionPool(
            kwargs=params,
            min_size=1,
            max_size=4,
            timeout=float(str(self._params["connect_timeout"])) + 1,
            check=ConnectionPool.check_connection,
            configure=_configure,
            open=True,
        )

    def _setup(self, conn: psycopg.Connection[Any]) -> str:
        """Create the tables unless they exist; return the sitemap's epoch."""
        try:
            row = conn.execute(
                self._sql("SELECT schema, epoch FROM {p}meta")
            ).fetchone()
        except psycopg.errors.UndefinedTable:
            row = None
        if row is not None:
            self._add(conn, "{p}url_route", [_ROUTE_INDEX])
            self._add_columns(conn)
        if row is None:
            with conn.transaction():
                # Two processes creating the same tables at once would collide.
                self.dialect.lock(conn, "")
                for statement in self._sql(_SCHEMA).split(";"):
                    conn.execute(statement)
                for statement in mapped.INDEXES:
                    conn.execute(self._sql(statement))
                conn.execute(
                    self._sql(
                        "INSERT INTO {p}meta VALUES (1, %s, %s, 0)"
                        " ON CONFLICT DO NOTHING"
                    ),
                    (SCHEMA_VERSION, self._new_epoch()),
                )
                row = conn.execute(
                    self._sql("SELECT schema, epoch FROM {p}meta")
                ).fetchone()
        if row is None:
            raise StoreError(self._said(f"table {self.prefix}meta has no row"))
        schema, epoch = row
        self._check_schema(f"table {self.prefix}meta", schema, SCHEMA_VERSION)
        for table, statements in _ADDED:
            self._add(conn, table, statements)
        return str(epoch)

    def _add(
        self, conn: psycopg.Connection[Any], table: str, statements: list[str]
    ) -> None:
        """A table (or index) a release added, made once under the setup lock
        when the store is opened, so that tables of an earlier release
        upgrade in place."""
        (found,) = _one(conn.execute("SELECT to_regclass(%s)", (self._sql(table),)))
        if found is not None:
            return
        with conn.transaction():
            self.dialect.lock(conn, "")  # the setup's
            for statement in statements:
                conn.execute(self._sql(statement))

    def _add_columns(self, conn: psycopg.Connection[Any]) -> None:
        """Version-2 tables made before rows kept their declared alternates,
        their title, their description or their place on the site map get
        the columns (NULL: not known) and the map's indexes when first
        opened, under the setup lock. Nullable without a default: the server
        changes its catalogue only, no row is rewritten (a row without a
        place gets one from the writer, sql/mapped.py). Additive, so the
        schema stays 2 and a worker of an earlier release still reads and
        writes the tables."""
        wanted = dict.fromkeys(COLUMNS_ADDED, "text")
        wanted.update(zip(mapped.COLUMNS, mapped.TYPES["postgres"], strict=True))
        if not self._lacking(conn, wanted):
            return
        with conn.transaction():
            self.dialect.lock(conn, "")  # the setup's
            conn.execute(
                self._sql("ALTER TABLE {p}url ")
                + ", ".join(
                    f"ADD COLUMN IF NOT EXISTS {name} {kind}"
                    for name, kind in wanted.items()
                )
            )
            for statement in mapped.INDEXES:
                conn.execute(self._sql(statement))

    def _lacking(self, conn: psycopg.Connection[Any], wanted: dict[str, str]) -> bool:
        """Whether the pages table lacks one of these columns or one of the
        map's indexes (one read, of the catalogue)."""
        columns, indexes = _one(
            conn.execute(
                "SELECT (SELECT count(*) FROM information_schema.columns"
                " WHERE table_schema = current_schema() AND table_name = %s"
                " AND column_name = ANY(%s)),"
                " (SELECT count(to_regclass(name)) FROM unnest(%s::text[]) name)",
                (
                    self._sql("{p}url"),
                    list(wanted),
                    [self._sql(name) for name in mapped.INDEX_NAMES],
                ),
            )
        )
        return bool(columns < len(wanted) or indexes < len(mapped.INDEX_NAMES))

    def present(self) -> bool:
        """:meth:`.contract.Present.present`: the prefix's meta table, asked of
        the catalogue on a connection of its own (the pool's first one makes
        the tables)."""
        params: dict[str, Any] = {**self._params, "autocommit": True}
        with psycopg.connect(**params) as conn:
            (found,) = _one(
                conn.execute("SELECT to_regclass(%s)", (self._sql("{p}meta"),))
            )
        return found is not None

    def epoch(self) -> str:
        with self._borrow() as conn:
            row = conn.execute(self._sql("SELECT epoch FROM {p}meta")).fetchone()
        return str(row[0]) if row else ""


# A binary array's header (dimensions, has nulls, element oid), its one
# dimension (length, lower bound), and an element's length.
_ARRAY_HEAD = struct.Struct("!IIIII")
_LENGTH = struct.Struct("!i").pack


class _FlatListDumper(ListBinaryDumper):
    """psycopg's binary array dumper, the same bytes out, with the loop over
    a flat list's items run by builtins rather than a Python loop: a bulk
    write sends its rows as a few arrays of hundreds of items each. Lists it
    does not shortcut (nested, empty, or holding NULLs) go to psycopg's own
    ``dump`` (a list of NULLs alone never comes here: psycopg sends it as
    text)."""

    def dump(self, obj: list[Any]) -> bytes | None:
        sub = self.sub_dumper
        if sub is None or not obj or isinstance(obj[0], list):
            return super().dump(obj)  # type: ignore[return-value]
        if None in obj:
            return super().dump(obj)  # type: ignore[return-value]
        dumped = list(map(sub.dump, obj))
        if None in dumped:  # a value dumped as NULL: psycopg's loop marks it
            return super().dump(obj)  # type: ignore[return-value]
        items = cast("list[bytes]", dumped)
        lengths = map(_LENGTH, map(len, items))
        return b"".join(
            [
                _ARRAY_HEAD.pack(1, 0, sub.oid, len(items), 1),
                *chain.from_iterable(zip(lengths, items, strict=True)),
            ]
        )


def _configure(conn: psycopg.Connection[Any]) -> None:
    """Set up a pooled connection: lists dumped by :class:`_FlatListDumper`."""
    conn.adapters.register_dumper(list, _FlatListDumper)
