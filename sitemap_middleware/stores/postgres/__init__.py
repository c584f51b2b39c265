"""``postgresql://user@host/db``: one sitemap shared by the workers of many machines
through three PostgreSQL tables, written one transaction per batch.
"""

from __future__ import annotations

import re
import struct
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from itertools import chain
from typing import Any, cast
from urllib.parse import parse_qsl, urlencode, urlsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.types.array import ListBinaryDumper
from psycopg_pool import ConnectionPool, PoolTimeout

from ...errors import StoreError
from ...model import Entry, PartInfo
from ...sitemaps import MAX_NEWS, MAX_PART_BYTES, MAX_URLS_PER_PART
from ...urls import redacted
from .. import layout
from ..base import (
    MAX_COUNT,
    NEWS_KEPT,
    RENAMED,
    Article,
    Decision,
    Removed,
    StoreBase,
    Visit,
    deltas,
    latest,
    logged,
    news_cutoff,
    removed,
    unlogged,
)
from ..layout import Change, Fill, Plan, Row, Stored, Totals, batches, leaving, now

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
    declared text,                  -- hreflang alternates as declared (layout.pack)
    title text                      -- the page's title, not in the fragment
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
# The site's counters and the writers' shared settings: added to older
# tables when first opened, so kept out of _SCHEMA's version.
_SITE = """
CREATE TABLE IF NOT EXISTS {p}count (
    reason text PRIMARY KEY,
    n bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS {p}setting (
    name text PRIMARY KEY,
    value text NOT NULL
)
"""
# The pending IndexNow pushes (stores.base.Pushes), apart from the sitemap's
# own tables; made when first opened by a release that has them.
_PUSHES = """
CREATE TABLE IF NOT EXISTS {p}push (
    id bigserial NOT NULL,          -- queued order
    path text COLLATE "C" PRIMARY KEY,
    lease double precision NOT NULL DEFAULT 0  -- claimed until (epoch s); 0: free
)
"""
_QUEUE = (
    "INSERT INTO {p}push (path) SELECT unnest(%b::text[])"
    " ON CONFLICT (path) DO UPDATE SET lease = 0"
)
# The writers' last decisions per path (note), bounded: added like _SITE.
_DECISIONS = """
CREATE SEQUENCE IF NOT EXISTS {p}decision_seq;
CREATE TABLE IF NOT EXISTS {p}decision (
    path text COLLATE "C" PRIMARY KEY,
    seq bigint NOT NULL,            -- newest: the path decided about most lately
    log text NOT NULL               -- JSON [[reason, epoch seconds], ...]
);
CREATE INDEX IF NOT EXISTS {p}decision_recent ON {p}decision (seq)
"""
# The removals log (stores.base.Removals): the last paths removed, numbered by
# seq under the meta row's lock (so numbers commit in order); made like _PUSHES.
_REMOVALS = """
CREATE TABLE IF NOT EXISTS {p}removal (
    seq bigint PRIMARY KEY,
    path text NOT NULL
)
"""
# The news articles (stores.base.News); made like _PUSHES.
_NEWS = """
CREATE TABLE IF NOT EXISTS {p}news (
    path text COLLATE "C" PRIMARY KEY,
    published bigint NOT NULL,      -- epoch seconds, UTC
    title text NOT NULL,
    language text NOT NULL,         -- as <news:language>, '' for none
    name text NOT NULL              -- og:site_name, '' for none
);
CREATE INDEX IF NOT EXISTS {p}news_published ON {p}news (published DESC, path)
"""
# published 0: the stored date stays (and a row without one goes at the trim).
_PUBLISH = (
    "INSERT INTO {p}news SELECT * FROM unnest(%s::text[], %s::int8[], %s::text[],"
    " %s::text[], %s::text[]) ON CONFLICT (path) DO UPDATE SET published = CASE"
    " WHEN excluded.published = 0 THEN {p}news.published ELSE excluded.published"
    " END, title = excluded.title, language = excluded.language,"
    " name = excluded.name"
)
_NEWS_TRIM = (
    "DELETE FROM {p}news WHERE published < %s OR path IN (SELECT path FROM"
    " {p}news ORDER BY published DESC, path OFFSET %s)"
)
# Only the pages the store holds: a removal takes the article out.
_NEWS_READ = (
    "SELECT n.path, n.published, n.title, n.language, n.name FROM {p}news n"
    " JOIN {p}url u ON u.path = n.path WHERE n.published >= %s"
    " ORDER BY n.published DESC, n.path LIMIT %s"
)
# The section of each part that holds a section's pages (sections.py): the
# default section's parts have no row, so that tables of an earlier release
# read as all default, and its workers still write them. Made like _PUSHES.
_SECTIONS = """
CREATE TABLE IF NOT EXISTS {p}section (
    page integer PRIMARY KEY,
    section text NOT NULL
)
"""
# Each section's open part (its highest; the default's: the highest part no
# section names) with its fill, and the highest part of all, in one read.
_OPEN = """
WITH open AS (
    SELECT section, max(page) AS page FROM {p}section GROUP BY section
    UNION ALL
    SELECT '', max(page) FROM {p}page p
    WHERE NOT EXISTS (SELECT FROM {p}section s WHERE s.page = p.page)
)
SELECT o.section, o.page, p.urls, p.bytes,
    (SELECT coalesce(max(page), 0) FROM {p}page)
FROM open o JOIN {p}page p ON p.page = o.page
"""
# The last visit of each path per kind of client (stores.base.Visits): made
# like _PUSHES. Unlisted paths beyond the most lately visited
# unlisted_visits_kept are trimmed (_TRIM_VISITS) now and then.
_VISITS = """
CREATE TABLE IF NOT EXISTS {p}visit (
    path text COLLATE "C" NOT NULL,
    agent text COLLATE "C" NOT NULL, -- an engine's name; '': any client
    at bigint NOT NULL,             -- epoch seconds
    status integer NOT NULL,
    PRIMARY KEY (path, agent)
)
"""
_VISITED = """
INSERT INTO {p}visit
SELECT * FROM unnest(%s::text[], %s::text[], %s::int8[], %s::int4[])
ON CONFLICT (path, agent) DO UPDATE SET at = excluded.at, status = excluded.status
WHERE {p}visit.at <= excluded.at
"""
_TRIM_VISITS = """
DELETE FROM {p}visit WHERE path IN (
    SELECT path FROM {p}visit AS v
    WHERE NOT EXISTS (SELECT 1 FROM {p}url AS u WHERE u.path = v.path)
    GROUP BY path ORDER BY max(at) DESC, path OFFSET %s)
"""
# count(route) needs an index on route: tables made before it get it.
_ROUTE_INDEX = "CREATE INDEX IF NOT EXISTS {p}url_route ON {p}url (route)"
# The tables releases added after the first, each made when the store is
# opened: the table to look for, and its statements.
_ADDED = (
    ("{p}setting", _SITE.split(";")),
    ("{p}push", [_PUSHES]),
    ("{p}decision", _DECISIONS.split(";")),
    ("{p}removal", [_REMOVALS]),
    ("{p}news", _NEWS.split(";")),
    ("{p}section", [_SECTIONS]),
    ("{p}visit", [_VISITS]),
)
# New rows of an upsert, copied in once its other statements are sent (as
# _write's inserts, with no ON CONFLICT: see there why none is needed).
_COPY = (
    "COPY {p}url (path, seq, page, lastmod, fingerprint, route, fragment,"
    " declared, title) FROM STDIN (FORMAT BINARY)"
)
_PART = (
    "SELECT p.page, urls, lastmod, version, changed, coalesce(s.section, '')"
    " FROM {p}page p LEFT JOIN {p}section s ON s.page = p.page WHERE urls > 0"
)
_COPY_TYPES = ["text", "int8", "int4", "int8", "text", "text", "bytea", "text", "text"]
# Rows read per query when streaming a part's entries or the visits (keyset
# pagination, no OFFSET): more than sitemaps.RUN, since each run here is a
# round trip to the server and a pooled connection taken and given back. The
# fragments are read in the runs of the other stores (see fragments).
READ_RUN = 5000
# Entries planned at a time in an upsert, from MIN_RUN up to RUN: the server
# writes one run while the next is planned (see _split).
RUN = 256
MIN_RUN = 64
_OWN_OPTIONS = {
    "part_size": int,
    "part_bytes": int,
    "statement_timeout": int,
    "table_prefix": str,
}


class PostgresStore(StoreBase[ConnectionPool]):
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
        self._epoch = ""
        self._pinned = threading.local()  # conn: this thread's snapshot's
        # Whether the last batch written held no stored path (the next is
        # then copied in without a read first, see _upsert).
        self._unread = False

    def _sql(self, statement: str) -> str:
        return statement.replace("{p}", self.prefix)

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
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self.prefix,))
            for statement in statements:
                conn.execute(self._sql(statement))

    def _add_columns(self, conn: psycopg.Connection[Any]) -> None:
        """Version-2 tables made before rows kept their declared alternates or
        their title get the columns (NULL: not known) when first opened, under
        the setup lock. Nullable without a default: the server changes its
        catalogue only, no row is rewritten. Additive, so the schema stays 2
        and a worker of an earlier release still reads and writes the tables."""
        (found,) = _one(
            conn.execute(
                "SELECT count(*) FROM information_schema.columns"
                " WHERE table_schema = current_schema() AND table_name = %s"
                " AND column_name IN ('declared', 'title')",
                (self._sql("{p}url"),),
            )
        )
        if found == 2:
            return
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self.prefix,))
            for name in ("declared", "title"):
                conn.execute(
                    self._sql(
                        f"ALTER TABLE {{p}}url ADD COLUMN IF NOT EXISTS {name} text"
                    )
                )

    # -- the write path -------------------------------------------------------------
    # The steps, named alike in every store (redis.py, sqlite.py, memory.py):
    #   _read          the stored rows of the batch, with their parts' fill
    #                  and section, and each section's open part (_OPEN)
    #   _read_members  the stored rows of the hreflang clusters' other members
    #   _settle, _plan layout's decisions on them (StoreBase)
    #   _apply         a plan: _queue its pushes, _delete its moved rows from
    #                  their parts, _write its rows
    #   _summaries     add what the writes added to their parts' summaries
    # remove: _read, _read_members, _settle, _delete, _queue, _log_removed, and
    # the members written again through _plan, _apply and _summaries. After
    # either, StoreBase's _tell_abroad; resettle: _read, _read_members, _settle, _plan,
    # _apply, _summaries. Here the steps interleave: the reads of a batch's
    # runs are pipelined, and each run is planned and applied while the server
    # reads the next. After a batch of new paths alone, the next goes without
    # _read, each run planned while the server copies in the one before
    # (_copied).

    def upsert(self, entries: Iterable[Entry]) -> int:
        changed = 0
        for batch in batches(entries):
            with self._borrow() as conn, conn.transaction():
                changed += self._upsert(conn, batch)
        return changed

    def _upsert(self, conn: psycopg.Connection[Any], batch: dict[str, Entry]) -> int:
        if self._unread and not any(entry.alternates for entry in batch.values()):
            # After a batch of new paths alone, the next is copied in as one
            # too, without reading first (a bulk load's): a path stored after
            # all fails the copy on the primary key; back to the savepoint
            # (the meta row's lock goes with it), the batch is written again
            # from a read.
            try:
                return self._copied(conn, batch)
            except psycopg.errors.UniqueViolation:
                conn.execute("ROLLBACK TO SAVEPOINT unread")
        # Pipelined: statements go out without waiting for the ones before;
        # the new rows are copied in once it is over (COPY leaves pipeline
        # mode), in the same transaction.
        new: list[tuple[Any, ...]] = []
        with conn.pipeline():
            changed = self._pipelined(conn, batch, new)
        if new:
            with conn.cursor() as cur, cur.copy(self._sql(_COPY)) as copy:
                copy.set_types(_COPY_TYPES)
                for row in new:
                    copy.write_row(row)
        return changed

    def _copied(self, conn: psycopg.Connection[Any], batch: dict[str, Entry]) -> int:
        """:meth:`_upsert` of a batch taken for new paths alone (no stored row
        read): planned a run at a time into the copy, so that the server
        inserts a run while the next is planned."""
        current = now()
        with conn.pipeline():
            conn.execute("SAVEPOINT unread")
            lock = conn.execute(
                self._sql("SELECT next_seq FROM {p}meta FOR UPDATE"), binary=True
            )
            tail = conn.execute(self._sql(_OPEN), binary=True)
            (seq,) = _one(lock)
            sizes: dict[int, Fill] = {}
            number, opened = _opened(tail.fetchall(), sizes)
        parts: dict[int, Totals] = {}
        pushes: list[str] = []
        changed = 0
        with conn.cursor(binary=True) as cur:
            with cur.copy(self._sql(_COPY)) as copy:
                copy.set_types(_COPY_TYPES)
                for run in _split(list(batch.items())):
                    todo = self._plan(
                        run, {}, sizes, number, current, layout.NOTHING, opened
                    )
                    pushes += self._pushes(todo, {})
                    todo.advance(sizes, {})
                    for part, totals in todo.parts.items():
                        parts.setdefault(part, Totals(section=totals.section)).add(
                            totals
                        )
                    for path, page, row, _ in todo.changes:
                        seq += 1
                        copy.write_row((path, seq, page, *row))
                    number, opened = todo.last_part, todo.open
                    changed += len(todo.changes)
            with conn.pipeline():
                self._queue(cur, pushes)
                self._summaries(cur, parts, seq, current)
        return changed

    def _pipelined(
        self,
        conn: psycopg.Connection[Any],
        batch: dict[str, Entry],
        new: list[tuple[Any, ...]],
    ) -> int:
        """:meth:`_upsert` but for the new rows, which go to ``new``."""
        current = now()
        runs = _split(list(batch.items()))
        # In pipeline mode the server answers when asked to flush, once it has
        # run everything sent before: so we ask for the lock (and the first
        # run's stored rows), send the other reads, plan the first run while
        # the server works on them, and take their rows before any write.
        lock = conn.execute(
            self._sql("SELECT next_seq FROM {p}meta FOR UPDATE"), binary=True
        )
        # Statements of their own after the lock: in READ COMMITTED each one
        # sees what the writer before us committed.
        tail = conn.execute(self._sql(_OPEN), binary=True)
        # The reads are index probes whatever the statistics say: a table
        # that grew since its last ANALYZE looks nearly empty, and the planner
        # would scan all of it once a run.
        conn.execute("SET LOCAL enable_seqscan = off")
        reads = [self._read(conn, runs[0])]
        (seq,) = _one(lock)
        reads += [self._read(conn, run) for run in runs[1:]]
        conn.execute("SET LOCAL enable_seqscan = on")
        found = [reads[0].fetchall()]
        # The Fill of the parts the plans need, as the batch leaves them.
        sizes: dict[int, Fill] = {}
        number, opened = _opened(tail.fetchall(), sizes)
        old: dict[str, Stored] = {}
        parts: dict[int, Totals] = {}
        cur = conn.cursor(binary=True)
        changed = 0
        # A batch that declares alternates is read whole, with the members of
        # its clusters, and settled before its first run is planned. Any other
        # lists nothing; once its runs are planned, the members that its
        # stored rows named are settled (they may lose their links).
        eager = any(entry.alternates for entry in batch.values())
        settled = layout.NOTHING
        if eager:
            found += [read.fetchall() for read in reads[1:]]
            for rows in found:
                _take(rows, old, sizes)
            self._read_members(conn, layout.members(batch, old), old, sizes)
            settled = self._settle(batch, old)
        in_runs = settled._replace(rewrites={})
        # Planned a run at a time, each from where the one before left off
        # (the plan one call would make), so that the server writes a run while
        # the next is planned. A bad entry still fails its whole batch: its
        # error rolls back the transaction.
        for index, run in enumerate(runs):
            _take(found[index], old, sizes)
            todo = self._plan(run, old, sizes, number, current, in_runs, opened)
            if not index and not eager:
                found += [read.fetchall() for read in reads[1:]]
            seq = self._apply(cur, todo, old, sizes, parts, seq, current, new)
            number, opened = todo.last_part, todo.open
            changed += len(todo.changes)
        if not eager and any(stored.row.declared for stored in old.values()):
            self._read_members(conn, layout.members(batch, old), old, sizes)
            settled = self._settle(batch, old)
        if settled.rewrites:
            todo = self._plan({}, old, sizes, number, current, settled, opened)
            seq = self._apply(cur, todo, old, sizes, parts, seq, current, new)
            changed += len(todo.changes)
        if changed:
            self._summaries(cur, parts, seq, current)
        self._unread = not old
        return changed

    def remove(self, paths: Iterable[str]) -> int:
        wanted = sorted(set(paths))
        if not wanted:
            return 0
        with self._borrow() as conn, conn.cursor(binary=True) as cur:
            # A flood of 404s for paths never stored costs one read, not a
            # write that queues behind (and holds up) every other writer.
            cur.execute(
                self._sql("SELECT path FROM {p}url WHERE path = ANY(%b)"), (wanted,)
            )
            wanted = [path for (path,) in cur]
        if not wanted:
            return 0
        with (
            self._borrow() as conn,
            conn.transaction(),
            conn.cursor(binary=True) as cur,
        ):
            seq, gone, sizes = self._locked(conn, cur, wanted)
            # The other members of the removed pages' clusters lose their links.
            others: dict[str, Stored] = {}
            self._read_members(conn, layout.members({}, gone, gone), others, sizes)
            current = now()
            settled = self._settle({}, {**gone, **others}, gone)
            removed = self._delete(cur, gone, current)
            if self._is_pushing():
                self._queue(cur, gone)
            self._log_removed(cur, gone)
            if settled.rewrites:
                # As the removal leaves them: fewer URLs, fewer bytes.
                for part, totals in leaving(gone.values()).items():
                    urls, size, section = sizes[part]
                    sizes[part] = Fill(urls - totals.urls, size - totals.bytes, section)
                # Read after the delete: the parts' fill as it leaves them.
                self._rewrite(cur, others, sizes, seq, current, settled)
            return removed

    def resettle(self, paths: Iterable[str]) -> None:
        wanted = sorted(set(paths))
        if not wanted:
            return
        with (
            self._borrow() as conn,
            conn.transaction(),
            conn.cursor(binary=True) as cur,
        ):
            seq, rows, sizes = self._locked(conn, cur, wanted)
            if not rows:
                return
            again = list(rows)
            self._read_members(conn, layout.members({}, rows, again), rows, sizes)
            settled = self._settle({}, rows, (), again)
            if settled.rewrites:
                self._rewrite(cur, rows, sizes, seq, now(), settled)

    def _locked(
        self,
        conn: psycopg.Connection[Any],
        cur: psycopg.Cursor[Any],
        wanted: list[str],
    ) -> tuple[int, dict[str, Stored], dict[int, Fill]]:
        """The listing's write lock (its meta row), the next seq, and the
        stored rows of ``wanted`` with their parts' fill."""
        cur.execute(self._sql("SELECT next_seq FROM {p}meta FOR UPDATE"))
        (seq,) = _one(cur)
        rows: dict[str, Stored] = {}
        sizes: dict[int, Fill] = {}
        _take(self._read(conn, wanted), rows, sizes)
        return seq, rows, sizes

    def _rewrite(
        self,
        cur: psycopg.Cursor[Any],
        rows: dict[str, Stored],
        sizes: dict[int, Fill],
        seq: int,
        current: int,
        settled: layout.Settled,
    ) -> None:
        """Write again the stored ``rows`` whose listing ``settled`` changes
        (a removal's or a settling's), into parts filled as ``sizes`` says."""
        number, opened = _opened(cur.execute(self._sql(_OPEN)).fetchall(), sizes)
        parts: dict[int, Totals] = {}
        todo = self._plan({}, rows, sizes, number, current, settled, opened)
        seq = self._apply(cur, todo, rows, sizes, parts, seq, current)
        self._summaries(cur, parts, seq, current)

    def declarations(self, paths: Iterable[str]) -> dict[str, str]:
        # READ COMMITTED, no lock: it never waits for a writer.
        names = list(paths)
        if not names:
            return {}
        with self._borrow() as conn, conn.cursor(binary=True) as cur:
            cur.execute(
                self._sql(
                    "SELECT path, coalesce(declared, '') FROM {p}url"
                    " WHERE path = ANY(%b)"
                ),
                (names,),
            )
            return dict(cur.fetchall())

    def _read(
        self, conn: psycopg.Connection[Any], run: Collection[str]
    ) -> psycopg.Cursor[Any]:
        """Send the query for the stored rows of these paths, with their parts'
        fill (``_take`` notes them): a cursor, read when the pipeline flushes."""
        return conn.execute(
            self._sql(
                "SELECT u.path, u.page, u.lastmod, u.fingerprint, u.route,"
                " u.fragment, u.declared, u.title, p.urls, p.bytes,"
                " coalesce(s.section, '') FROM {p}url u"
                " JOIN {p}page p ON p.page = u.page"
                " LEFT JOIN {p}section s ON s.page = u.page WHERE u.path = ANY(%b)"
            ),
            (list(run),),
            binary=True,
        )

    def _read_members(
        self,
        conn: psycopg.Connection[Any],
        paths: Collection[str],
        old: dict[str, Stored],
        sizes: dict[int, Fill],
    ) -> None:
        """Note the stored rows of these hreflang members (``layout.members``)
        in ``old``, and their parts' fill in ``sizes``."""
        _take(self._read(conn, paths), old, sizes)

    def _apply(
        self,
        cur: psycopg.Cursor[Any],
        todo: Plan,
        old: dict[str, Stored],
        sizes: dict[int, Fill],
        parts: dict[int, Totals],
        seq: int,
        current: int,
        new: list[tuple[Any, ...]] | None = None,
    ) -> int:
        """Send a plan's pushes and writes, noting what it adds to each part;
        the last seq allocated. New rows go to ``new`` when given (the caller
        copies them in), else are inserted."""
        self._queue(cur, self._pushes(todo, old))
        todo.advance(sizes, old)
        for part, totals in todo.parts.items():
            parts.setdefault(part, Totals(section=totals.section)).add(totals)
        if todo.moved:
            # Out of their parts first; written again as new rows.
            self._delete(cur, {path: old[path] for path in todo.moved}, current)
        return self._write(cur, todo.changes, seq, new)

    def _queue(self, cur: psycopg.Cursor[Any], paths: Collection[str]) -> None:
        """Queue IndexNow pushes in the write's transaction."""
        if paths:
            cur.execute(self._sql(_QUEUE), (sorted(paths),))  # one lock order

    def _log_removed(self, cur: psycopg.Cursor[Any], paths: Collection[str]) -> None:
        """Number the removed paths in the removals log, keeping the last
        ``removals_kept``; in the caller's transaction, under the meta row's
        lock: the next numbers are read after the last remover committed."""
        cur.execute(
            self._sql(
                "INSERT INTO {p}removal SELECT coalesce((SELECT max(seq) FROM"
                " {p}removal), 0) + n, path FROM unnest(%b::text[])"
                " WITH ORDINALITY AS t(path, n)"
            ),
            (sorted(paths),),
        )
        cur.execute(
            self._sql(
                "DELETE FROM {p}removal"
                " WHERE seq <= (SELECT max(seq) FROM {p}removal) - %b::bigint"
            ),
            (self.removals_kept,),
        )

    def _delete(
        self, cur: psycopg.Cursor[Any], rows: dict[str, Stored], current: int
    ) -> int:
        """Delete stored rows and shrink their parts: fewer URLs and bytes, the
        newest lastmod of the rows left; in the caller's transaction."""
        if not rows:
            return 0
        cur.execute(
            self._sql("DELETE FROM {p}url WHERE path = ANY(%b)"), (sorted(rows),)
        )
        gone = sorted(
            (part, totals.urls, totals.bytes)
            for part, totals in leaving(rows.values()).items()
        )
        cur.execute(
            self._sql(
                "UPDATE {p}page SET urls = urls - t.n, bytes = bytes - t.size,"
                " version = version + 1, changed = %b, lastmod = coalesce((SELECT"
                " max(lastmod) FROM {p}url WHERE page = t.page), 0)"
                " FROM unnest(%b::integer[], %b::integer[], %b::bigint[])"
                " AS t(page, n, size) WHERE {p}page.page = t.page"
            ),
            (current, *_columns(gone)),
        )
        return len(rows)

    def _write(
        self,
        cur: psycopg.Cursor[Any],
        changes: list[Change],
        seq: int,
        new: list[tuple[Any, ...]] | None = None,
    ) -> int:
        """Send the rows of planned changes; return the last seq allocated.
        New rows are inserted, or noted in ``new`` (``_COPY``'s columns)."""
        inserts = [change for change in changes if change.new]
        updates = [change for change in changes if not change.new]
        if inserts and new is not None:
            new += [
                (path, seq + n, page, *row)
                for n, (path, page, row, _) in enumerate(inserts, 1)
            ]
            seq += len(inserts)
            inserts = []
        # De-duplicated (no row affected twice); updates sorted (one lock order
        # for every writer: no deadlocks). New paths need no ON CONFLICT: every
        # writer holds the meta row, and none of these was there when we
        # looked. They get the next seqs in plan order, counted by the server.
        # Parameters are binary (%b): psycopg escapes every string of a text
        # array with a regex, binary ones are copied.
        if inserts:
            paths, pages, rows, _ = zip(*inserts, strict=True)
            cur.execute(
                self._sql(
                    "INSERT INTO {p}url (path, seq, page, lastmod, fingerprint, route,"
                    " fragment, declared, title) SELECT path, %b::bigint + n, page,"
                    " lastmod, fingerprint, route, fragment, declared, title"
                    " FROM unnest(%b::text[], %b::integer[], %b::bigint[], %b::text[],"
                    " %b::text[], %b::bytea[], %b::text[], %b::text[])"
                    " WITH ORDINALITY AS t(path, page, lastmod, fingerprint, route,"
                    " fragment, declared, title, n)"
                ),
                [seq, list(paths), list(pages), *_columns(rows)],
            )
            seq += len(inserts)
        if updates:
            updates.sort()
            paths, _, rows, _ = zip(*updates, strict=True)
            cur.execute(
                self._sql(
                    "UPDATE {p}url SET lastmod = t.lastmod,"
                    " fingerprint = t.fingerprint, route = t.route,"
                    " fragment = t.fragment, declared = t.declared, title = t.title"
                    " FROM unnest(%b::text[], %b::bigint[], %b::text[], %b::text[],"
                    " %b::bytea[], %b::text[], %b::text[]) AS t(path, lastmod,"
                    " fingerprint, route, fragment, declared, title)"
                    " WHERE {p}url.path = t.path"
                ),
                [list(paths), *_columns(rows)],
            )
        return seq

    def _summaries(
        self,
        cur: psycopg.Cursor[Any],
        parts: dict[int, Totals],
        seq: int,
        current: int,
    ) -> None:
        """Add what the writes added to their parts' summaries; keep the seq."""
        numbers = sorted(
            (part, totals.urls, totals.bytes, totals.newest)
            for part, totals in parts.items()
        )
        if not numbers:  # titles alone: no part's bytes changed
            cur.execute(self._sql("UPDATE {p}meta SET next_seq = %b"), (seq,))
            return
        cur.execute(
            self._sql(
                "INSERT INTO {p}page SELECT n, urls, bytes, lastmod, 1, %b::bigint"
                " FROM unnest(%b::integer[], %b::integer[], %b::bigint[],"
                " %b::bigint[]) AS t(n, urls, bytes, lastmod)"
                " ON CONFLICT (page) DO UPDATE SET urls = {p}page.urls + excluded.urls,"
                " bytes = {p}page.bytes + excluded.bytes,"
                " lastmod = greatest({p}page.lastmod, excluded.lastmod),"
                " version = {p}page.version + 1, changed = excluded.changed"
            ),
            (current, *_columns(numbers)),
        )
        named = sorted((n, t.section) for n, t in parts.items() if t.section)
        if named:
            cur.execute(
                self._sql(
                    "INSERT INTO {p}section SELECT * FROM unnest(%b::integer[],"
                    " %b::text[]) ON CONFLICT (page) DO NOTHING"
                ),
                _columns(named),
            )
        cur.execute(self._sql("UPDATE {p}meta SET next_seq = %b"), (seq,))

    def epoch(self) -> str:
        with self._borrow() as conn:
            row = conn.execute(self._sql("SELECT epoch FROM {p}meta")).fetchone()
        return str(row[0]) if row else ""

    def removed_since(self, seq: int | None) -> Removed:
        # One statement: the epoch, the number now, the oldest kept and the
        # paths after seq (none asked for: none read).
        with self._borrow() as conn:
            row = _one(
                conn.execute(
                    self._sql(
                        "SELECT m.epoch, r.top, r.bottom, ARRAY(SELECT path FROM"
                        " {p}removal WHERE seq > %s ORDER BY seq) FROM {p}meta m,"
                        " (SELECT coalesce(max(seq), 0) AS top, min(seq) AS bottom"
                        " FROM {p}removal) r"
                    ),
                    (2**62 if seq is None else seq,),
                )
            )
        epoch, top, bottom, paths = row
        return removed(str(epoch), seq, int(top), bottom, paths)

    def add_counts(self, counts: Mapping[str, int]) -> None:
        # Sorted: concurrent writers lock the rows in one order (no deadlock).
        rows = deltas(counts)
        if not rows:
            return
        with self._borrow() as conn:
            # Saturated: a bigint sum past MAX_COUNT is an error, every time.
            conn.execute(
                self._sql(
                    "INSERT INTO {p}count"
                    " SELECT * FROM unnest(%s::text[], %s::bigint[])"
                    " ON CONFLICT (reason) DO UPDATE SET n = CASE"
                    f" WHEN {{p}}count.n > {MAX_COUNT} - excluded.n THEN {MAX_COUNT}"
                    " ELSE {p}count.n + excluded.n END"
                ),
                ([reason for reason, _ in rows], [n for _, n in rows]),
            )

    def counts(self) -> dict[str, int]:
        with self._borrow() as conn:
            found = conn.execute(self._sql("SELECT reason, n FROM {p}count"))
            return {str(reason): int(n) for reason, n in found}

    def setting(self, name: str) -> str | None:
        with self._borrow() as conn:
            row = conn.execute(
                self._sql("SELECT value FROM {p}setting WHERE name = %s"), (name,)
            ).fetchone()
        return None if row is None else str(row[0])

    def set_setting(self, name: str, value: str) -> None:
        with self._borrow() as conn:
            conn.execute(
                self._sql(
                    "INSERT INTO {p}setting VALUES (%s, %s)"
                    " ON CONFLICT (name) DO UPDATE SET value = excluded.value"
                ),
                (name, value),
            )

    def queue_pushes(self, paths: Iterable[str]) -> None:
        wanted = set(paths)
        if wanted:
            with self._borrow() as conn, conn.cursor() as cur:
                self._queue(cur, wanted)

    def claim_pushes(self, limit: int, now: float, until: float) -> list[str]:
        # SKIP LOCKED: a row a writer is queueing again is left to the next claim.
        with self._borrow() as conn:
            found = conn.execute(
                self._sql(
                    "UPDATE {p}push SET lease = %s WHERE path IN (SELECT path"
                    " FROM {p}push WHERE lease <= %s ORDER BY id LIMIT %s"
                    " FOR UPDATE SKIP LOCKED) RETURNING path"
                ),
                (until, now, limit),
            )
            return [str(path) for (path,) in found]

    def pushed(self, paths: Iterable[str], until: float) -> int:
        with self._borrow() as conn:
            cur = conn.execute(
                self._sql("DELETE FROM {p}push WHERE path = ANY(%s) AND lease = %s"),
                (sorted(set(paths)), until),
            )
            return cur.rowcount

    def retry_pushes(self, paths: Iterable[str], until: float, at: float) -> None:
        with self._borrow() as conn:
            conn.execute(
                self._sql(
                    "UPDATE {p}push SET lease = %s WHERE path = ANY(%s) AND lease = %s"
                ),
                (at, sorted(set(paths)), until),
            )

    def pending_pushes(self) -> int:
        with self._borrow() as conn:
            return int(_one(conn.execute(self._sql("SELECT count(*) FROM {p}push")))[0])

    def note(self, decisions: Iterable[Decision]) -> None:
        grouped = self._grouped(decisions)
        if not grouped:
            return
        paths = sorted(grouped)  # one lock order for every writer
        with self._borrow() as conn, conn.transaction():
            # Writers take turns: each log is read, extended and written whole.
            conn.execute(
                "SELECT pg_advisory_xact_lock(hashtext(%s))",
                (self.prefix + "decision",),
            )
            held = dict(
                conn.execute(
                    self._sql("SELECT path, log FROM {p}decision WHERE path = ANY(%s)"),
                    (paths,),
                ).fetchall()
            )
            logs = [logged(held.get(p), grouped[p], self.decisions_kept) for p in paths]
            conn.execute(
                self._sql(
                    "INSERT INTO {p}decision SELECT path, nextval('{p}decision_seq'),"
                    " log FROM unnest(%s::text[], %s::text[]) AS t(path, log)"
                    " ON CONFLICT (path) DO UPDATE SET seq = excluded.seq,"
                    " log = excluded.log"
                ),
                (paths, logs),
            )
            conn.execute(
                self._sql(
                    "DELETE FROM {p}decision WHERE seq <= (SELECT seq FROM {p}decision"
                    " ORDER BY seq DESC OFFSET %s LIMIT 1)"
                ),
                (self.decision_paths,),
            )

    def decisions(self, path: str) -> list[tuple[str, datetime]]:
        with self._borrow() as conn:
            row = conn.execute(
                self._sql("SELECT log FROM {p}decision WHERE path = %s"), (path,)
            ).fetchone()
        return unlogged(None if row is None else row[0])

    def visited(self, visits: Iterable[Visit]) -> None:
        rows = latest(visits)  # sorted: one lock order for every writer
        if not rows:
            return
        trim = self._trim_due(len(rows))
        with self._borrow() as conn, conn.transaction():
            if trim:
                # A trim's delete takes its rows' locks in no set order:
                # writers wait for it rather than deadlock with it.
                conn.execute(
                    "SELECT pg_advisory_xact_lock(hashtext(%s))",
                    (self.prefix + "visit",),
                )
            else:
                conn.execute(
                    "SELECT pg_advisory_xact_lock_shared(hashtext(%s))",
                    (self.prefix + "visit",),
                )
            conn.execute(self._sql(_VISITED), _columns(rows))
            if trim:
                conn.execute(self._sql(_TRIM_VISITS), (self.unlisted_visits_kept,))

    def visits(self, paths: Iterable[str] | None = None) -> Iterator[Visit]:
        query = "SELECT path, agent, at, status FROM {p}visit"
        if paths is None:
            # A run at a time, in key order: bounded memory, no connection
            # held while the caller works.
            after: tuple[str, str] = ("", "")
            while True:
                with self._borrow() as conn:
                    rows = conn.execute(
                        self._sql(
                            f"{query} WHERE (path, agent) > (%s, %s)"
                            f" ORDER BY path, agent LIMIT {READ_RUN}"
                        ),
                        after,
                    ).fetchall()
                yield from (Visit(*row) for row in rows)
                if len(rows) < READ_RUN:
                    return
                after = rows[-1][:2]
        wanted = sorted(set(paths))
        for start in range(0, len(wanted), READ_RUN):
            with self._borrow() as conn:
                rows = conn.execute(
                    self._sql(f"{query} WHERE path = ANY(%s)"),
                    (wanted[start : start + READ_RUN],),
                ).fetchall()
            yield from (Visit(*row) for row in rows)

    def count(self, route: str | None = None) -> int:
        with self._borrow() as conn:
            if route is None:
                query = "SELECT coalesce(sum(urls), 0) FROM {p}page"
                return int(_one(conn.execute(self._sql(query)))[0])
            query = "SELECT count(*) FROM {p}url WHERE route = %s"
            return int(_one(conn.execute(self._sql(query), (route,)))[0])

    def known(self, paths: Iterable[str]) -> set[str]:
        wanted = sorted(set(paths))
        if not wanted:
            return set()
        with self._borrow() as conn, conn.cursor(binary=True) as cur:
            cur.execute(
                self._sql("SELECT path FROM {p}url WHERE path = ANY(%b)"), (wanted,)
            )
            return {path for (path,) in cur}

    def parts(self) -> list[PartInfo]:
        with self._borrow() as conn:
            rows = conn.execute(self._sql(f"{_PART} ORDER BY p.page")).fetchall()
        return [PartInfo.from_row(self._epoch, *row) for row in rows]

    def part(self, number: int) -> PartInfo | None:
        with self._borrow() as conn:
            row = conn.execute(
                self._sql(f"{_PART} AND p.page = %s"), (number,)
            ).fetchone()
        return PartInfo.from_row(self._epoch, *row) if row else None

    def _runs(self, number: int, columns: str) -> Iterator[list[tuple[Any, ...]]]:
        """A part's rows in runs of READ_RUN, by keyset on seq (never OFFSET), in
        binary: bytea and integers are copied, not parsed. A connection is held
        for one query at a time, not while the caller works on a run."""
        query = self._sql(
            f"SELECT seq, {columns} FROM {{p}}url WHERE page = %b::integer"
            " AND seq > %b::bigint ORDER BY seq LIMIT %b::bigint"
        )
        after = -1
        while True:
            with self._borrow() as conn, conn.cursor(binary=True) as cur:
                rows = cur.execute(
                    query, (number, after, READ_RUN), prepare=True
                ).fetchall()
            if rows:
                yield rows
            if len(rows) < READ_RUN:
                return
            after = rows[-1][0]

    def fragments(self, number: int) -> Iterator[bytes]:
        """A part's fragments, a run of ``layout.run_rows`` joined by the
        server: one bytea and the run's last seq come back, not a row object
        per URL (which held a part's peak memory at three times its gzip
        body). The run is the other stores', shorter than READ_RUN: the
        render holds a joined run twice (once with its origin put in), most
        of its peak memory, and the round trips a longer run saves are not
        measurable."""
        with self._borrow() as conn:
            found = conn.execute(
                self._sql("SELECT urls, bytes FROM {p}page WHERE page = %s"),
                (number,),
            ).fetchone()
        urls, size = found or (0, 0)
        run = layout.run_rows(urls, size)
        query = self._sql(
            "SELECT string_agg(fragment, ''::bytea ORDER BY seq), max(seq),"
            " count(*) FROM (SELECT seq, fragment FROM {p}url WHERE"
            " page = %b::integer AND seq > %b::bigint ORDER BY seq"
            " LIMIT %b::bigint) AS run"
        )
        after = -1
        while True:
            with self._borrow() as conn, conn.cursor(binary=True) as cur:
                joined, last, count = _one(
                    cur.execute(query, (number, after, run), prepare=True)
                )
            if count:
                yield joined
            if count < run:
                return
            after = last

    def entries(self, number: int) -> Iterator[Entry]:
        # The server makes the datetimes: psycopg loads them in C, far faster.
        columns = "path, to_timestamp(lastmod), fingerprint, route, title"
        for rows in self._runs(number, columns):
            for _, path, lastmod, fingerprint, route, title in rows:
                yield Entry(path, lastmod, fingerprint, route=route, title=title)

    def publish(self, articles: Iterable[Article], now: int) -> None:
        # By path: concurrent writers lock the rows in one order.
        rows = sorted({a.path: a for a in articles}.values())
        with self._borrow() as conn, conn.transaction():
            if rows:
                conn.execute(
                    self._sql(_PUBLISH), [list(c) for c in zip(*rows, strict=True)]
                )
            conn.execute(self._sql(_NEWS_TRIM), (news_cutoff(now), NEWS_KEPT))

    def news(self, since: int, limit: int = MAX_NEWS) -> list[Article]:
        with self._borrow() as conn:
            found = conn.execute(self._sql(_NEWS_READ), (since, limit)).fetchall()
        return [Article(*row) for row in found]


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


def _one(cur: psycopg.Cursor[Any]) -> Any:
    row = cur.fetchone()
    if row is None:
        raise StoreError("the sitemap's meta row is missing")
    return row


def _take(
    rows: Iterable[tuple[Any, ...]], old: dict[str, Stored], sizes: dict[int, Fill]
) -> None:
    """Note looked-up rows and their parts' sizes, keeping what is noted."""
    for (
        path,
        page,
        lastmod,
        print_,
        route,
        piece,
        declared,
        title,
        urls,
        size,
        section,
    ) in rows:
        row = Row(lastmod, print_, route, piece, declared, title)
        old.setdefault(path, Stored(page, row))
        sizes.setdefault(page, Fill(urls, size, section))


def _opened(
    rows: Iterable[tuple[Any, ...]], sizes: dict[int, Fill]
) -> tuple[int, dict[str, int]]:
    """The highest part and each section's open part, from ``_OPEN``'s rows;
    their fill noted in ``sizes``, keeping what is noted."""
    last, opened = 0, {}
    for section, page, urls, size, highest in rows:
        opened[section] = page
        sizes.setdefault(page, Fill(urls, size, section))
        last = highest
    return last, opened


def _columns(rows: Iterable[tuple[Any, ...]]) -> list[list[Any]]:
    """Rows as the column lists unnest() takes."""
    return [list(column) for column in zip(*rows, strict=True)]


def _split(items: list[tuple[str, Entry]]) -> list[dict[str, Entry]]:
    """A batch in runs: MIN_RUN entries first (soon planned, soon written),
    doubling up to RUN, then halving towards the end, whose write is waited for."""
    runs: list[dict[str, Entry]] = []
    start, size = 0, MIN_RUN
    while start < len(items):
        left = len(items) - start
        size = max(min(size, left // 2), MIN_RUN)
        if left - size < MIN_RUN:
            size = left
        runs.append(dict(items[start : start + size]))
        start += size
        size = min(2 * size, RUN)
    return runs
