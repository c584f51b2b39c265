"""The pages' reads that need no run, alike in both databases: how many pages
(all, or a route's), which of some paths are held, the parts' summaries.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...model import PartInfo
from .dialect import Tables

_PART = (
    "SELECT p.page, urls, lastmod, version, changed, coalesce(s.section, '')"
    " FROM {p}page p LEFT JOIN {p}section s ON s.page = p.page WHERE urls > 0"
)


class PartsMixin(Tables):
    _epoch: str  # the data's, as the store opened it

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
