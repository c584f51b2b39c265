"""The SQLite store's pages: rows in first-seen order (seq), parts and their
summaries, each section's parts, written a batch a transaction in the steps
every store names alike, and read back in keyset runs.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterable
from contextlib import AbstractContextManager
from operator import add, itemgetter
from typing import TYPE_CHECKING, Any

from ...model import Entry
from ...places import Place
from ...sections import DEFAULT
from .. import hreflang, layout
from ..base import Placing, StoreBase
from ..hreflang import Settled
from ..layout import batches, leaving, now
from ..records import Change, Fill, Plan, Row, Stored, Totals
from ..sql import mapped
from ..sql.pages import Locked

if TYPE_CHECKING:  # the store this is mixed into
    _Store = StoreBase[sqlite3.Connection]
else:
    _Store = object


class PagesMixin(Placing, _Store):
    """The pages of :class:`~sitemap_middleware.stores.sqlite.SQLiteStore`:
    the upsert, and the steps ``sql.pages`` writes a removal with."""

    _unread: bool

    if TYPE_CHECKING:

        def _writing(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def _queue(self, conn: Any, paths: Collection[str]) -> None: ...

    # -- the write path -------------------------------------------------------------
    # StoreBase's steps, each batch in one BEGIN IMMEDIATE transaction
    # (_writing); _sizes reads the fill of the parts a plan needs and of each
    # section's open part. remove and resettle: sql/pages.py, through _locked
    # and _rewrite. After a batch of new paths alone, the next goes without
    # _read (_upsert).

    def _upserts(self, entries: Iterable[Entry], adding: bool) -> int:
        changed = 0
        for batch in batches(entries):
            with self._writing() as conn:
                changed += self._upsert(conn, batch, adding)
        return changed

    def _upsert(
        self, conn: sqlite3.Connection, batch: dict[str, Entry], adding: bool = False
    ) -> int:
        """Write a batch: how many rows changed, or for an add (``adding``),
        how many of its entries were written."""
        current = now()
        if self._unread and not any(entry.alternates for entry in batch.values()):
            # After a batch of new paths alone, the next is written as one
            # too, without reading first (a bulk load's): the insert of a
            # path stored after all fails on its unique index, and the batch
            # is written again from a read.
            conn.execute("SAVEPOINT unread")
            try:
                changed = self._written(conn, batch, {}, current, hreflang.NOTHING)
            except sqlite3.IntegrityError:
                conn.execute("ROLLBACK TO unread")
                conn.execute("RELEASE unread")
            else:
                conn.execute("RELEASE unread")
                return len(batch) if adding else changed
        old = self._read(conn, list(batch))
        if adding:
            batch = layout.unstored(batch, old)
            if not batch:
                return 0
        self._read_members(conn, hreflang.members(batch, old), old)
        self._unread = not old
        changed = self._written(conn, batch, old, current)
        return len(batch) if adding else changed

    def _written(
        self,
        conn: sqlite3.Connection,
        batch: dict[str, Entry],
        old: dict[str, Stored],
        current: int,
        settled: hreflang.Settled | None = None,
    ) -> int:
        """Plan and write a batch on the stored rows read (``old``; ``settled``
        their clusters, worked out when not given): how many rows changed."""
        sizes, last, opened = self._sizes(conn, old)
        todo = self._plan(batch, old, sizes, last, current, settled, opened)
        self._apply(conn, todo, old, current)
        self._queue(conn, self._pushes(todo, old))
        return len(todo.changes)

    def _locked(self, conn: sqlite3.Connection, wanted: list[str]) -> Locked:
        """The stored rows of ``wanted``, in a transaction that holds the file:
        no seq to allocate (a new row's is its rowid), and the parts' fill is
        read when a plan needs it (:meth:`_rewrite`)."""
        return Locked(self._read(conn, wanted), {}, 0, now())

    def _rewrite(
        self, conn: sqlite3.Connection, held: Locked, settled: Settled
    ) -> None:
        """Write again the stored rows whose listing ``settled`` changes (a
        removal's or a settling's), planned on the parts' fill read now."""
        rows, current = held.rows, held.current
        sizes, last, opened = self._sizes(conn, rows)
        todo = self._plan({}, rows, sizes, last, current, settled, opened)
        self._apply(conn, todo, rows, current)

    @staticmethod
    def _read(conn: sqlite3.Connection, paths: list[str]) -> dict[str, Stored]:
        """The stored rows of these paths."""
        # One statement for the whole batch: the paths go in as one JSON array
        # (SQLite has JSON built in since 3.38, and as JSON1 in most builds).
        found = conn.execute(
            "SELECT path, page, lastmod, fingerprint, route, fragment, declared,"
            " title, description FROM sitemap_url"
            " WHERE path IN (SELECT value FROM json_each(?))",
            (json.dumps(paths),),
        )
        return {path: Stored(page, Row(*row)) for path, page, *row in found}

    def _read_members(
        self,
        conn: sqlite3.Connection,
        paths: Collection[str],
        old: dict[str, Stored],
        sizes: dict[int, Fill] | None = None,
    ) -> None:
        """Add the stored rows of these hreflang members (``hreflang.members``)
        to ``old`` (their parts' fill is read when planned)."""
        if paths:
            old.update(self._read(conn, list(paths)))

    def _sizes(
        self, conn: sqlite3.Connection, old: dict[str, Stored]
    ) -> tuple[dict[int, Fill], int, dict[str, int]]:
        """The Fill of each section's open part and of every part in ``old``;
        the highest part; each section's open part."""
        ((last,),) = conn.execute("SELECT coalesce(max(page), 0) FROM sitemap_page")
        named = dict(conn.execute("SELECT page, section FROM sitemap_section"))
        opened = layout.opened(named, last)
        wanted = sorted({stored.part for stored in old.values()} | {*opened.values()})
        sizes = {
            page: Fill(urls, size, named.get(page, DEFAULT))
            for page, urls, size in conn.execute(
                "SELECT page, urls, bytes FROM sitemap_page"
                f" WHERE page IN ({','.join('?' * len(wanted))})",
                wanted,
            )
        }
        return sizes, last, opened

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

    def _write(self, conn: sqlite3.Connection, changes: list[Change]) -> None:
        """Write the rows of planned changes: new ones take the next seq;
        each with its place on the site map while the store keeps them (an
        update without one leaves the row unplaced)."""
        inserts = [change for change in changes if change.new]
        if inserts:
            _insert(conn, inserts, self.places_of(inserts))
        updates = [change for change in changes if not change.new]
        if not updates:
            return
        placed = self.places_of(updates)
        if placed is None:
            conn.executemany(
                f"UPDATE sitemap_url SET {_UPDATED}, mapgroup = NULL WHERE path = ?",
                [(*row, path) for path, _, row, _ in updates],
            )
            return
        conn.executemany(
            f"UPDATE sitemap_url SET {_UPDATED}, {_MAPPED} WHERE path = ?",
            [
                (*row, *place, path)
                for (path, _, row, _), place in zip(updates, placed, strict=True)
            ],
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
        conn.executemany(
            "INSERT OR IGNORE INTO sitemap_section VALUES (?, ?)",
            [(part, t.section) for part, t in parts.items() if t.section != DEFAULT],
        )


# The columns of a new row after its path and part (Row's fields), and
# those that may hold NULL.
_ROW_COLUMNS = (
    "lastmod",
    "fingerprint",
    "route",
    "fragment",
    "declared",
    "title",
    "description",
)
_NULLABLE = frozenset({1, 2, 4, 5, 6})


def _insert(
    conn: sqlite3.Connection, new: list[Change], placed: list[Place] | None
) -> None:
    """Insert the rows of new paths, in order, with their places if given.
    A column NULL in every row (a bulk load's titles and descriptions, the
    places a store does not keep) is left to its default rather than bound:
    the driver looks each None it binds up in its adapters' registry, which
    costs more than the rest of the row's binding."""
    first = new[0].row
    kept = [
        i
        for i in range(len(_ROW_COLUMNS))
        if i not in _NULLABLE
        or first[i] is not None
        or any(change.row[i] is not None for change in new)
    ]
    pick = itemgetter(*kept)
    rows: Iterable[tuple[Any, ...]] = ((path, part, *row) for path, part, row, _ in new)
    if len(kept) < len(_ROW_COLUMNS):
        rows = ((path, part, *pick(row)) for path, part, row, _ in new)
    columns = ["path", "page", *(_ROW_COLUMNS[i] for i in kept)]
    if placed is not None:
        columns += mapped.COLUMNS
        rows = map(add, rows, placed)
    conn.executemany(
        f"INSERT INTO sitemap_url ({', '.join(columns)})"
        f" VALUES ({', '.join('?' * len(columns))})",
        rows,
    )


# What an update sets: the row's columns after its path and part, and its
# place on the site map (sql/mapped.py).
_UPDATED = ", ".join(f"{name} = ?" for name in _ROW_COLUMNS)
_MAPPED = ", ".join(f"{name} = ?" for name in mapped.COLUMNS)
