"""The site map's order kept with the pages (stores.contract.Mapped): each row's
place (places.py) in five columns written with it, three indexes over them, and
a page of the map read through them rather than arranged from every row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...model import UNDATED_SECONDS
from ...places import Place, places
from ..contract import Listed, MapCount
from ..records import Change
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
_INDEXED = {
    "{p}url_map": "(mapgroup, mapown, mapkey, path)",
    "{p}url_loose": "(mapgroup, mapown) WHERE maploose",
    "{p}url_deep": "(maphead) WHERE maphead IS NOT NULL",
}
INDEX_NAMES = tuple(_INDEXED)
INDEXES = tuple(
    f"CREATE INDEX IF NOT EXISTS {name} ON {{p}}url {columns}"
    for name, columns in _INDEXED.items()
)
# Whether a row has no place yet (an earlier release's worker wrote it): the
# map's index finds one, or none, at once.
UNPLACED = "SELECT 1 FROM {p}url WHERE mapgroup IS NULL LIMIT 1"
_COUNTS = "SELECT mapgroup, mapown, count(*) FROM {p}url GROUP BY mapgroup, mapown"
_LOOSE = (
    "SELECT mapgroup, mapown, count(*), EXISTS (SELECT 1 FROM {p}url d"
    " WHERE d.maphead = l.mapgroup) FROM {p}url l WHERE maploose"
    " GROUP BY mapgroup, mapown"
)
_ROWS = "SELECT path, route, title, description, lastmod FROM {p}url WHERE "
# Newest first, pages without a date after every dated one.
_NEWEST = (
    f"lastmod <= {UNDATED_SECONDS},"
    f" CASE WHEN lastmod <= {UNDATED_SECONDS} THEN 0 ELSE -lastmod END, "
)


def places_of(changes: Sequence[Change]) -> list[Place]:
    """Where each changed row falls on the site map (its path, route and
    title decide): the columns a store writes with the row."""
    return places(
        [change.path for change in changes],
        [change.row.route for change in changes],
        [change.row.title for change in changes],
    )


class MapMixin(Tables):
    def map_counts(self) -> list[MapCount] | None:
        if self._select(UNPLACED):
            return None
        loose = {
            (group, bool(own)): (n, bool(deep))
            for group, own, n, deep in self._select(_LOOSE)
        }
        counts = []
        for group, own, n in self._select(_COUNTS):
            many, deep = loose.get((group, bool(own)), (0, False))
            counts.append(MapCount(group, bool(own), n, many, deep))
        return counts

    def map_rows(
        self,
        group: str,
        own: bool,
        *,
        loose: bool = True,
        joined: Sequence[str] = (),
        newest: bool = False,
        offset: int = 0,
        limit: int | None = None,
    ) -> list[Listed]:
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
