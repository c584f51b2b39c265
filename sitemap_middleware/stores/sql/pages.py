"""The pages as both databases handle them alike: the reads that need no run
(how many pages, which are held, the parts' summaries, what pages declare) and
the writes (an upsert's batches aside: a removal, a settling again), in the steps
every store names alike; each database's ``pages.py`` brings the steps' statements.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, NamedTuple

from ...model import Entry, PartInfo
from .. import hreflang
from ..hreflang import Settled
from ..layout import leaving
from ..records import Fill, Stored
from .dialect import Tables

if TYPE_CHECKING:  # the store this is mixed into
    from ..base import StoreBase

    _Store = StoreBase[Any]
else:
    _Store = object

# The section of each part that holds a section's pages (sections.py): the
# default section's parts have no row, so that a store of an earlier release
# reads as all default, and its workers still write it. Made when first opened
# by a release that has it.
SECTIONS = """
CREATE TABLE IF NOT EXISTS {p}section (
    page integer PRIMARY KEY,
    section text NOT NULL
)
"""
# The columns of the url table that releases added after the first (text,
# NULL when not known): a table without them gets them when opened.
COLUMNS_ADDED = ("declared", "title", "description")
_PART = (
    "SELECT p.page, urls, lastmod, version, changed, coalesce(s.section, '')"
    " FROM {p}page p LEFT JOIN {p}section s ON s.page = p.page WHERE urls > 0"
)


class Locked(NamedTuple):
    """What a removal or a settling reads first, in its write transaction."""

    rows: dict[str, Stored]
    """The stored rows asked for."""
    sizes: dict[int, Fill]
    """Their parts' fill, where the store reads it with them (PostgreSQL)."""
    seq: int
    """The last seq allocated, where the store allocates it (PostgreSQL)."""
    current: int
    """When the write is made, in epoch seconds."""


class PagesMixin(Tables, _Store):
    _epoch: str  # the data's, as the store opened it

    if TYPE_CHECKING:  # each database's pages.py, and its side tables'
        _committed: Callable[[], AbstractContextManager[Any]]
        _locked: Callable[[Any, list[str]], Locked]
        _read_members: Callable[..., None]
        _delete: Callable[[Any, dict[str, Stored], int], int]
        _rewrite: Callable[[Any, Locked, Settled], None]
        _queue: Callable[[Any, Collection[str]], None]
        _withdraw: Callable[[Any, Collection[str]], None]
        _log_removed: Callable[[Any, Collection[str]], None]
        _upserts: Callable[[Iterable[Entry], bool], int]

    # The writes: an upsert (and an add) batch by batch in each database's
    # pages.py (_upserts), a removal and a settling again here.

    def upsert(self, entries: Iterable[Entry]) -> int:
        return self._upserts(entries, False)

    def add(self, entries: Iterable[Entry]) -> int:
        return self._upserts(entries, True)

    def count(self, route: str | None = None) -> int:
        if route is None:
            rows = self._select("SELECT coalesce(sum(urls), 0) FROM {p}page")
        else:
            rows = self._select("SELECT count(*) FROM {p}url WHERE route = ?", (route,))
        return int(rows[0][0])

    def known(self, paths: Iterable[str]) -> set[str]:
        wanted = sorted(set(paths))
        if not wanted:
            return set()
        listed = self.dialect.listed(wanted)
        rows = self._select("SELECT path FROM {p}url WHERE path {among}", (listed,))
        return {path for (path,) in rows}

    def parts(self) -> list[PartInfo]:
        rows = self._select(f"{_PART} ORDER BY p.page")
        return [PartInfo.from_row(self._epoch, *row) for row in rows]

    def part(self, number: int) -> PartInfo | None:
        rows = self._select(f"{_PART} AND p.page = ?", (number,))
        return PartInfo.from_row(self._epoch, *rows[0]) if rows else None

    def declarations(self, paths: Iterable[str]) -> dict[str, str]:
        names = sorted(set(paths))
        with self._committed() as conn:  # opened even for none: Abroad.ready
            if not names:
                return {}
            found = conn.execute(
                self.dialect.sql(
                    "SELECT path, coalesce(declared, '') FROM {p}url WHERE path {among}"
                ),
                (self.dialect.listed(names),),
            )
            return dict(found.fetchall())

    def remove(self, paths: Iterable[str]) -> int:
        # A flood of 404s for paths never stored costs one read, not a write
        # that waits for (and holds up) every other writer.
        wanted = sorted(self.known(paths))
        if not wanted:
            return 0
        with self._writing() as conn:
            held = self._locked(conn, wanted)
            gone, sizes = held.rows, held.sizes
            # The other members of the removed pages' clusters lose their links.
            others: dict[str, Stored] = {}
            self._read_members(conn, hreflang.members({}, gone, gone), others, sizes)
            settled = self._settle({}, {**gone, **others}, gone)
            removed = self._delete(conn, gone, held.current)
            if self._is_pushing():
                self._queue(conn, gone)
            elif self._is_withdrawing():
                self._withdraw(conn, gone)
            self._log_removed(conn, gone)
            if settled.rewrites:
                # The fill read with the rows, as the removal leaves it.
                for part, totals in leaving(gone.values()).items():
                    if part in sizes:
                        urls, size, section = sizes[part]
                        sizes[part] = Fill(
                            urls - totals.urls, size - totals.bytes, section
                        )
                self._rewrite(conn, held._replace(rows=others), settled)
            return removed

    def resettle(self, paths: Iterable[str]) -> None:
        wanted = sorted(set(paths))
        if not wanted:
            return
        with self._writing() as conn:
            held = self._locked(conn, wanted)
            rows = held.rows
            if not rows:
                return
            again = list(rows)
            self._read_members(
                conn, hreflang.members({}, rows, again), rows, held.sizes
            )
            settled = self._settle({}, rows, (), again)
            if settled.rewrites:
                self._rewrite(conn, held, settled)
