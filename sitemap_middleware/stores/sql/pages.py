"""The pages as both databases handle them alike: the reads that need no run
(how many pages, which are held, the parts' summaries, what pages declare) and
the writes but an upsert (a removal, a settling again), in the steps every store
names alike; each database's ``pages.py`` brings the steps' statements.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ...model import PartInfo
from .. import hreflang
from ..layout import leaving, now
from ..records import Fill, Stored
from .dialect import Tables

if TYPE_CHECKING:  # the store this is mixed into
    from ..base import StoreBase

    _Store = StoreBase[Any]
else:
    _Store = object

_PART = (
    "SELECT p.page, urls, lastmod, version, changed, coalesce(s.section, '')"
    " FROM {p}page p LEFT JOIN {p}section s ON s.page = p.page WHERE urls > 0"
)


class PagesMixin(Tables, _Store):
    _epoch: str  # the data's, as the store opened it

    if TYPE_CHECKING:  # each database's pages.py

        def _committed(self) -> AbstractContextManager[Any]: ...
        def _locked(
            self, conn: Any, wanted: list[str]
        ) -> tuple[int, dict[str, Stored], dict[int, Fill]]: ...
        def _read_members(
            self,
            conn: Any,
            paths: Collection[str],
            old: dict[str, Stored],
            sizes: dict[int, Fill],
        ) -> None: ...
        def _delete(self, conn: Any, rows: dict[str, Stored], current: int) -> int: ...
        def _rewrite(
            self,
            conn: Any,
            rows: dict[str, Stored],
            sizes: dict[int, Fill],
            seq: int,
            current: int,
            settled: hreflang.Settled,
        ) -> None: ...
        def _queue(self, conn: Any, paths: Collection[str]) -> None: ...
        def _log_removed(self, conn: Any, paths: Collection[str]) -> None: ...

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
            seq, gone, sizes = self._locked(conn, wanted)
            # The other members of the removed pages' clusters lose their links.
            others: dict[str, Stored] = {}
            self._read_members(conn, hreflang.members({}, gone, gone), others, sizes)
            current = now()
            settled = self._settle({}, {**gone, **others}, gone)
            removed = self._delete(conn, gone, current)
            if self._is_pushing():
                self._queue(conn, gone)
            self._log_removed(conn, gone)
            if settled.rewrites:
                # The fill read with the rows, as the removal leaves it.
                for part, totals in leaving(gone.values()).items():
                    if part in sizes:
                        urls, size, section = sizes[part]
                        sizes[part] = Fill(
                            urls - totals.urls, size - totals.bytes, section
                        )
                self._rewrite(conn, others, sizes, seq, current, settled)
            return removed

    def resettle(self, paths: Iterable[str]) -> None:
        wanted = sorted(set(paths))
        if not wanted:
            return
        with self._writing() as conn:
            seq, rows, sizes = self._locked(conn, wanted)
            if not rows:
                return
            again = list(rows)
            self._read_members(conn, hreflang.members({}, rows, again), rows, sizes)
            settled = self._settle({}, rows, (), again)
            if settled.rewrites:
                self._rewrite(conn, rows, sizes, seq, now(), settled)
