"""The site map's order kept with the pages (stores.contract.Mapped): each row's
place (places.py) in five columns written with it, three indexes over them, and
a page of the map read through them rather than arranged from every row.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...model import UNDATED_SECONDS
from ..contract import Listed, MapCount

# A row's place, as the columns after its own (places.Place's fields).
COLUMNS = ("mapgroup", "mapown", "maploose", "maphead", "mapkey")
TYPES = ("TEXT", "INTEGER", "INTEGER", "TEXT", "BLOB")
# The group's pages in the map's order (title key, then path: the index's
# order, a sort left only for equal keys); the loose pages of a group and the
# groups some page lies deeper in, each asked of a few rows.
_INDEXED = {
    "sitemap_url_map": "(mapgroup, mapown, mapkey, path)",
    "sitemap_url_loose": "(mapgroup, mapown) WHERE maploose",
    "sitemap_url_deep": "(maphead) WHERE maphead IS NOT NULL",
}
INDEX_NAMES = frozenset(_INDEXED)
INDEXES = tuple(
    f"CREATE INDEX IF NOT EXISTS {name} ON sitemap_url {columns}"
    for name, columns in _INDEXED.items()
)
_COUNTS = "SELECT mapgroup, mapown, count(*) FROM sitemap_url GROUP BY mapgroup, mapown"
_LOOSE = (
    "SELECT mapgroup, mapown, count(*), EXISTS (SELECT 1 FROM sitemap_url d"
    " WHERE d.maphead = l.mapgroup) FROM sitemap_url l WHERE maploose"
    " GROUP BY mapgroup, mapown"
)
_ROWS = "SELECT path, route, title, description, lastmod FROM sitemap_url WHERE "
# Newest first, pages without a date after every dated one.
_NEWEST = (
    f"lastmod <= {UNDATED_SECONDS},"
    f" CASE WHEN lastmod <= {UNDATED_SECONDS} THEN 0 ELSE -lastmod END, "
)


class MapMixin:
    if TYPE_CHECKING:  # the store's

        def _query(self, sql: str, params: Any = ()) -> list[Any]: ...

    def map_counts(self) -> list[MapCount] | None:
        if self._query("SELECT 1 FROM sitemap_url WHERE mapgroup IS NULL LIMIT 1"):
            return None
        loose = {
            (group, bool(own)): (n, bool(deep))
            for group, own, n, deep in self._query(_LOOSE)
        }
        counts = []
        for group, own, n in self._query(_COUNTS):
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
        params: list[Any] = [group, int(own)]
        if joined:
            where = (
                f"({where}) OR (maploose AND mapgroup IN"
                " (SELECT value FROM json_each(?)))"
            )
            params.append(json.dumps(list(joined)))
        order = f"{_NEWEST if newest else ''}mapkey, path"
        params += [-1 if limit is None else limit, offset]
        return self._query(f"{_ROWS}{where} ORDER BY {order} LIMIT ? OFFSET ?", params)
