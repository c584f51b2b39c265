"""The PostgreSQL store's pages: rows in first-seen order (seq, allocated under
the meta row's lock), parts and their summaries, each section's parts,
written a batch a transaction, planned a run at a time while the server
writes the run before, and read back in keyset runs.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg_pool import ConnectionPool

from ...errors import StoreError
from ...model import Entry
from .. import hreflang, layout
from ..base import Placing, StoreBase
from ..hreflang import Settled
from ..layout import batches, leaving, now
from ..records import Change, Fill, Plan, Row, Stored, Totals
from ..sql import mapped
from ..sql.pages import Locked

if TYPE_CHECKING:  # the store this is mixed into
    _Store = StoreBase[ConnectionPool]
else:
    _Store = object

# What runs a statement: a connection, or a cursor of one.
_Executes = psycopg.Connection[Any] | psycopg.Cursor[Any]
# The listing's write lock, which every writer takes first, and the next seq.
_LOCK = "SELECT next_seq FROM {p}meta FOR UPDATE"
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
# A row's columns after its path and part (Row's fields, then its place on
# the site map, sql/mapped.py), and their types.
_NAMES = (*Row._fields, *mapped.COLUMNS)
_ROW = ", ".join(_NAMES)
_ROW_TYPES = (
    *("int8", "text", "text", "bytea", "text", "text", "text"),
    *mapped.TYPES["postgres"],
)
# New rows of an upsert, copied in once its other statements are sent (as
# _write's inserts, with no ON CONFLICT: see there why none is needed).
# (Without places, while the store keeps none: no column of NULLs sent.)
_COPY = {
    placing: (
        f"COPY {{p}}url (path, seq, page, {', '.join(names)})"
        " FROM STDIN (FORMAT BINARY)",
        ["text", "int8", "int4", *_ROW_TYPES[: len(names)]],
    )
    for placing, names in ((True, _NAMES), (False, Row._fields))
}
# A copied row's values without a place: its path, seq, part and Row.
_PLAIN_COPY = 3 + len(Row._fields)
# _write's statements: a new row's seq counted by the server from the last
# one allocated, in plan order; an update sets every column but the part.
_ARRAYS = ", ".join(f"%b::{kind}[]" for kind in _ROW_TYPES)
_INSERT = (
    f"INSERT INTO {{p}}url (path, seq, page, {_ROW}) SELECT path, %b::bigint + n,"
    f" page, {_ROW} FROM unnest(%b::text[], %b::int4[], {_ARRAYS})"
    f" WITH ORDINALITY AS t(path, page, {_ROW}, n)"
)
_UPDATE = (
    "UPDATE {p}url SET "
    + ", ".join(f"{name} = t.{name}" for name in _NAMES)
    + f" FROM unnest(%b::text[], {_ARRAYS}) AS t(path, {_ROW})"
    " WHERE {p}url.path = t.path"
)
# Entries planned at a time in an upsert, from MIN_RUN up to RUN: the server
# writes one run while the next is planned (see _split).
RUN = 256
MIN_RUN = 64


class PagesMixin(Placing, _Store):
    """The pages of :class:`~sitemap_middleware.stores.postgres.PostgresStore`."""

    _unread: bool

    if TYPE_CHECKING:

        def _sql(self, statement: str) -> str: ...
        def _borrow(self) -> AbstractContextManager[psycopg.Connection[Any]]: ...
        def _queue(self, conn: Any, paths: Collection[str]) -> None: ...

    # -- the write path -------------------------------------------------------------
    # StoreBase's steps: _read takes the rows with their parts' fill and
    # section, _OPEN each section's open part; _apply queues the plan's pushes
    # too, and _summaries follows. remove and resettle: sql/pages.py, through
    # _locked and _rewrite. Here the steps interleave: the reads of a batch's
    # runs are pipelined, and each run is planned and applied while the server
    # reads the next. After a batch of new paths alone, the next goes without
    # _read, each run planned while the server copies in the one before
    # (_copied).

    def _upserts(self, entries: Iterable[Entry], adding: bool) -> int:
        changed = 0
        for batch in batches(entries):
            with self._borrow() as conn, conn.transaction():
                changed += self._upsert(conn, batch, adding)
        return changed

    def _upsert(
        self, conn: psycopg.Connection[Any], batch: dict[str, Entry], adding: bool
    ) -> int:
        """Write a batch: how many rows changed, or for an add (``adding``),
        how many of its entries were written."""
        if self._unread and not any(entry.alternates for entry in batch.values()):
            # After a batch of new paths alone, the next is copied in as one
            # too, without reading first (a bulk load's): a path stored after
            # all fails the copy on the primary key; back to the savepoint
            # (the meta row's lock goes with it), the batch is written again
            # from a read.
            try:
                changed = self._copied(conn, batch)
            except psycopg.errors.UniqueViolation:
                conn.execute("ROLLBACK TO SAVEPOINT unread")
            else:
                return len(batch) if adding else changed
        # Pipelined: statements go out without waiting for the ones before;
        # the new rows are copied in once it is over (COPY leaves pipeline
        # mode), in the same transaction.
        new: list[tuple[Any, ...]] = []
        with conn.pipeline():
            changed = self._pipelined(conn, batch, new, adding)
        if new:
            # With places or without, as _write made them (a store asked to
            # keep them meanwhile fails this copy once: the batch is retried).
            statement, types = _COPY[len(new[0]) > _PLAIN_COPY]
            with conn.cursor() as cur, cur.copy(self._sql(statement)) as copy:
                copy.set_types(types)
                for row in new:
                    copy.write_row(row)
        return changed

    def _copied(self, conn: psycopg.Connection[Any], batch: dict[str, Entry]) -> int:
        """:meth:`_upsert` of a batch taken for new paths alone (no stored row
        read): planned a run at a time into the copy, so that the server
        inserts a run while the next is planned."""
        current = now()
        placing = self.placing  # one copy: with places or without, throughout
        with conn.pipeline():
            conn.execute("SAVEPOINT unread")
            lock = conn.execute(self._sql(_LOCK), binary=True)
            tail = conn.execute(self._sql(_OPEN), binary=True)
            (seq,) = _one(lock)
            sizes: dict[int, Fill] = {}
            number, opened = _opened(tail.fetchall(), sizes)
        parts: dict[int, Totals] = {}
        pushes: list[str] = []
        changed = 0
        with conn.cursor(binary=True) as cur:
            statement, types = _COPY[placing]
            with cur.copy(self._sql(statement)) as copy:
                copy.set_types(types)
                for run in _split(list(batch.items())):
                    todo = self._plan(
                        run, {}, sizes, number, current, hreflang.NOTHING, opened
                    )
                    pushes += self._pushes(todo, {})
                    todo.advance(sizes, {})
                    for part, totals in todo.parts.items():
                        parts.setdefault(part, Totals(section=totals.section)).add(
                            totals
                        )
                    placed = self._placed(todo.changes, copy=placing)
                    for (path, page, row, _), place in zip(
                        todo.changes, placed, strict=True
                    ):
                        seq += 1
                        copy.write_row((path, seq, page, *row, *place))
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
        adding: bool,
    ) -> int:
        """:meth:`_upsert` but for the new rows, which go to ``new``."""
        current = now()
        runs = _split(list(batch.items()))
        # In pipeline mode the server answers when asked to flush, once it has
        # run everything sent before: so we ask for the lock (and the first
        # run's stored rows), send the other reads, plan the first run while
        # the server works on them, and take their rows before any write.
        lock = conn.execute(self._sql(_LOCK), binary=True)
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
        settled = hreflang.NOTHING
        if eager:
            found += [read.fetchall() for read in reads[1:]]
            for rows in found:
                _take(rows, old, sizes)
            if adding:
                batch = layout.unstored(batch, old)
            self._read_members(conn, hreflang.members(batch, old), old, sizes)
            settled = self._settle(batch, old)
        in_runs = settled._replace(rewrites={})
        # Planned a run at a time, each from where the one before left off
        # (the plan one call would make), so that the server writes a run while
        # the next is planned. A bad entry still fails its whole batch: its
        # error rolls back the transaction.
        written = 0
        for index, run in enumerate(runs):
            _take(found[index], old, sizes)
            if adding:
                run = layout.unstored(run, old)
                written += len(run)
            todo = self._plan(run, old, sizes, number, current, in_runs, opened)
            if not index and not eager:
                found += [read.fetchall() for read in reads[1:]]
            seq = self._apply(cur, todo, old, sizes, parts, seq, current, new)
            number, opened = todo.last_part, todo.open
            changed += len(todo.changes)
        if not eager:  # an eager batch was read whole, and settled, above
            if adding:
                batch = layout.unstored(batch, old)
            if any(stored.row.declared for stored in old.values()):
                self._read_members(conn, hreflang.members(batch, old), old, sizes)
                settled = self._settle(batch, old)
        if settled.rewrites:
            todo = self._plan({}, old, sizes, number, current, settled, opened)
            seq = self._apply(cur, todo, old, sizes, parts, seq, current, new)
            changed += len(todo.changes)
        if changed:
            self._summaries(cur, parts, seq, current)
        self._unread = not old
        return written if adding else changed

    def _locked(self, conn: psycopg.Connection[Any], wanted: list[str]) -> Locked:
        """The listing's write lock (its meta row), the next seq, and the
        stored rows of ``wanted`` with their parts' fill."""
        (seq,) = _one(conn.execute(self._sql(_LOCK)))
        held = Locked({}, {}, seq, now())
        _take(self._read(conn, wanted), held.rows, held.sizes)
        return held

    def _rewrite(
        self, conn: psycopg.Connection[Any], held: Locked, settled: Settled
    ) -> None:
        """Write again the stored rows whose listing ``settled`` changes (a
        removal's or a settling's), into parts filled as ``held`` says."""
        rows, sizes, current = held.rows, held.sizes, held.current
        number, opened = _opened(conn.execute(self._sql(_OPEN)).fetchall(), sizes)
        parts: dict[int, Totals] = {}
        with conn.cursor(binary=True) as cur:
            todo = self._plan({}, rows, sizes, number, current, settled, opened)
            seq = self._apply(cur, todo, rows, sizes, parts, held.seq, current)
            self._summaries(cur, parts, seq, current)

    def _read(
        self, conn: psycopg.Connection[Any], run: Collection[str]
    ) -> psycopg.Cursor[Any]:
        """Send the query for the stored rows of these paths, with their parts'
        fill (``_take`` notes them): a cursor, read when the pipeline flushes."""
        return conn.execute(
            self._sql(
                "SELECT u.path, u.page, u.lastmod, u.fingerprint, u.route,"
                " u.fragment, u.declared, u.title, u.description, p.urls, p.bytes,"
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
        """Note the stored rows of these hreflang members (``hreflang.members``)
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

    def _delete(self, cur: _Executes, rows: dict[str, Stored], current: int) -> int:
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
            placed = zip(inserts, self._placed(inserts, copy=self.placing), strict=True)
            new += [
                (path, seq + n, page, *row, *place)
                for n, ((path, page, row, _), place) in enumerate(placed, 1)
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
                self._sql(_INSERT),
                [
                    seq,
                    list(paths),
                    list(pages),
                    *_columns(rows),
                    *_columns(self._placed(inserts)),
                ],
            )
            seq += len(inserts)
        if updates:
            updates.sort()
            paths, _, rows, _ = zip(*updates, strict=True)
            cur.execute(
                self._sql(_UPDATE),
                [list(paths), *_columns(rows), *_columns(self._placed(updates))],
            )
        return seq

    def _placed(
        self, changes: list[Change], copy: bool | None = None
    ) -> list[tuple[Any, ...]]:
        """The changed rows' places on the site map (sql/mapped.py); while
        the store keeps none, NULL places, or for rows of a copy whose
        ``_COPY`` leaves them out (``copy`` false), none at all."""
        if copy is False:
            return [()] * len(changes)
        placed = self.places_of(changes)
        return [mapped.UNPLACED] * len(changes) if placed is None else list(placed)

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
        if not numbers:  # titles or descriptions alone: no part's bytes changed
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
        description,
        urls,
        size,
        section,
    ) in rows:
        row = Row(lastmod, print_, route, piece, declared, title, description)
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
