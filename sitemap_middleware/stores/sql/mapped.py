"""The site map's order kept with the pages (stores.contract.Mapped): each row's
place (places.py) in five columns written with it, three indexes over them, and
a page of the map read through them rather than arranged from every row.
"""

from __future__ import annotations

from typing import Any

from ...model import UNDATED_SECONDS
from ...places import places
from ..base import Placing
from ..contract import Listed, MapCount, MapSpan
from .dialect import Tables

# A row's place, as the columns after its own (places.Place's fields), and
# their types in each database.
COLUMNS = ("mapgroup", "mapown", "maploose", "maphead", "mapkey")
TYPES = {
    "sqlite": ("TEXT", "INTEGER", "INTEGER", "TEXT", "BLOB"),
    "postgres": ("text", "boolean", "boolean", "text", "bytea"),
}
# A group's pages in the map's order (title key, then path: read in the
# index's order, an OFFSET skipping entries of the index alone); the loose
# pages of a group, and the groups some page lies deeper in, each asked of a
# few rows. (PostgreSQL's paths collate as "C", byte order, as SQLite's.)
# Partial: a row written without a place (the store keeps none, see
# MapMixin.placing) costs no index a thing.
_INDEXED = {
    "{p}url_map": "(mapgroup, mapown, mapkey, path) WHERE mapgroup IS NOT NULL",
    "{p}url_loose": "(mapgroup, mapown) WHERE maploose",
    "{p}url_deep": "(maphead) WHERE maphead IS NOT NULL",
}
INDEX_NAMES = tuple(_INDEXED)
INDEXES = tuple(
    f"CREATE INDEX IF NOT EXISTS {name} ON {{p}}url {columns}"
    for name, columns in _INDEXED.items()
)
# A place not kept: the columns of a row a store writes without one.
UNPLACED: tuple[None, ...] = (None,) * len(COLUMNS)
_COUNTS = (
    "SELECT mapgroup, mapown, count(*) FROM {p}url WHERE mapgroup IS NOT NULL"
    " GROUP BY mapgroup, mapown"
)
_LOOSE = (
    "SELECT mapgroup, mapown, count(*), EXISTS (SELECT 1 FROM {p}url d"
    " WHERE d.maphead = l.mapgroup) FROM {p}url l WHERE maploose"
    " GROUP BY mapgroup, mapown"
)
_TOTAL = "SELECT coalesce(sum(urls), 0) FROM {p}page"
_ROWS = "SELECT path, route, title, description, lastmod FROM {p}url WHERE "
# Newest first, pages without a date after every dated one.
_NEWEST = (
    f"lastmod <= {UNDATED_SECONDS},"
    f" CASE WHEN lastmod <= {UNDATED_SECONDS} THEN 0 ELSE -lastmod END, "
)
# The rows without a place, read in the placing's write transaction (a
# PostgreSQL writer changing one meanwhile waits for it), and their places
# written: SQLite a row a statement, PostgreSQL an array a column.
_UNPLACED_ROWS = {
    "sqlite": "SELECT path, route, title FROM {p}url WHERE mapgroup IS NULL LIMIT ?",
    "postgres": "SELECT path, route, title FROM {p}url WHERE mapgroup IS NULL"
    " LIMIT ? FOR UPDATE",
}
_PLACE = {
    "sqlite": "UPDATE {p}url SET "
    + ", ".join(f"{name} = ?" for name in COLUMNS)
    + " WHERE path = ?",
    "postgres": "UPDATE {p}url SET "
    + ", ".join(f"{name} = t.{name}" for name in COLUMNS)
    + " FROM unnest(%b::text[], "
    + ", ".join(f"%b::{kind}[]" for kind in TYPES["postgres"])
    + f") AS t(path, {', '.join(COLUMNS)}) WHERE {{p}}url.path = t.path",
}


class MapMixin(Placing, Tables):
    """Places kept in columns and read by the indexes: rows written before,
    or by a store object that keeps none, are placed by :meth:`place_rows`."""

    def place_rows(self, limit: int) -> int:
        name = self.dialect.name
        with self._writing() as conn:
            rows = conn.execute(
                self.dialect.sql(_UNPLACED_ROWS[name]), (limit,)
            ).fetchall()
            if rows:
                paths, routes, titles = (list(c) for c in zip(*rows, strict=True))
                found = places(paths, routes, titles)
                statement = self.dialect.sql(_PLACE[name])
                if self.dialect.arrays:
                    columns = [list(column) for column in zip(*found, strict=True)]
                    conn.execute(statement, [paths, *columns])
                else:
                    conn.executemany(
                        statement,
                        [(*at, path) for at, path in zip(found, paths, strict=True)],
                    )
        if len(rows) < limit:
            self.place_due = False
        return len(rows)

    def map_counts(self) -> list[MapCount] | None:
        loose = {
            (group, bool(own)): (n, bool(deep))
            for group, own, n, deep in self._select(_LOOSE)
        }
        counts = []
        for group, own, n in self._select(_COUNTS):
            many, deep = loose.get((group, bool(own)), (0, False))
            counts.append(MapCount(group, bool(own), n, many, deep))
        ((total,),) = self._select(_TOTAL)
        if sum(count.pages for count in counts) < total:
            # A row without a place: the map is arranged until it has one.
            self.place_due = True
            return None
        return counts

    def map_rows(
        self, span: MapSpan, offset: int = 0, limit: int | None = None
    ) -> list[Listed]:
        group, own, loose, joined, newest = span
        where = "mapgroup = ? AND mapown = ?" + ("" if loose else " AND NOT maploose")
        params: list[Any] = [group, own]
        if joined:
            where = f"({where}) OR (maploose AND mapgroup {{among}})"
            params.append(self.dialect.listed(list(joined)))
        order = f"{_NEWEST if newest else ''}mapkey, path"
        if limit is None:
            page = "{skip} ?"
        else:
            page = "LIMIT ? OFFSET ?"
            params.append(limit)
        params.append(offset)
        return self._select(f"{_ROWS}{where} ORDER BY {order} {page}", params)
