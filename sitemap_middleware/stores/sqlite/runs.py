"""A SQLite part read back: its fragments and its entries, in runs of seq
ranges (keyset, never OFFSET).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ...model import Entry, to_datetime
from .. import layout
from ..contract import Listed

# A part's first and last seq, its URLs and bytes. Each end is a subquery of
# its own: SQLite reads a lone min() or max() as one probe of the (page, seq)
# index, but both in one SELECT as a walk over all the part's entries.
_ENDS = (
    "SELECT (SELECT min(seq) FROM sitemap_url WHERE page = ?1),"
    " (SELECT max(seq) FROM sitemap_url WHERE page = ?1), urls, bytes"
    " FROM (SELECT 1) LEFT JOIN sitemap_page ON page = ?1"
)
_RUN = "FROM sitemap_url WHERE seq >= ? AND seq <= ? AND +page = ? ORDER BY seq"
# The run of a part whose rows share their seq range with other parts' (parts
# of several sections fill side by side): read through the (page, seq) index.
_SPARSE_RUN = "FROM sitemap_url WHERE seq >= ? AND seq <= ? AND page = ? ORDER BY seq"
# SQLite joins a run's fragments itself: one bytes object a run rather than one
# a URL halves the read. Straight from the scan, not an ordered subquery (a
# co-routine, a third more work): both plans a run has walk seq in order, the
# rowid range or the (page, seq) index (no other index serves these terms).
_JOINED = "SELECT CAST(group_concat(fragment, '') AS BLOB) FROM sitemap_url"
_JOINED_RUN = f"{_JOINED} WHERE seq >= ? AND seq <= ? AND +page = ?"
_SPARSE_JOINED_RUN = f"{_JOINED} WHERE seq >= ? AND seq <= ? AND page = ?"
_ENTRY_RUN = f"SELECT path, lastmod, fingerprint, route, title, description {_RUN}"
_LISTED_RUN = f"SELECT path, route, title, description, lastmod {_RUN}"
_SPARSE_ENTRY_RUN = _ENTRY_RUN.replace(_RUN, _SPARSE_RUN)
_SPARSE_LISTED_RUN = _LISTED_RUN.replace(_RUN, _SPARSE_RUN)


class RunsMixin:
    if TYPE_CHECKING:  # the store's

        def _query(self, sql: str, params: Any = ()) -> list[Any]: ...

    def _ranges(self, number: int) -> Iterator[tuple[bool, tuple[int, int, int]]]:
        """Whether each run is sparse, and its (first seq, last seq, part):
        runs of at most the part's ``layout.run_rows``.

        Without sections, new rows always join the last part, so each part's
        rows fill one range of seq that no other part's rows enter: after one
        index lookup for its ends, a part is read as rowid ranges (keyset,
        never OFFSET), which SQLite walks in order without touching the index.
        A part whose range is more than twice its rows (sections filling
        side by side, many rows gone) is read through the (page, seq) index,
        each run's end found by one probe of it.
        """
        ((low, high, urls, size),) = self._query(_ENDS, (number,))
        if low is None:
            return
        rows = layout.run_rows(urls or 0, size or 0)
        if high - low < 2 * (urls or 0) + rows:
            for start in range(low, high + 1, rows):
                yield False, (start, min(start + rows - 1, high), number)
            return
        start = low
        while start <= high:
            found = self._query(
                "SELECT seq FROM sitemap_url WHERE page = ? AND seq >= ?"
                " ORDER BY seq LIMIT 1 OFFSET ?",
                (number, start, rows),
            )
            end = found[0][0] - 1 if found else high
            yield True, (start, end, number)
            start = end + 1

    def fragments(self, number: int) -> Iterator[bytes]:
        for sparse, run in self._ranges(number):
            query = _SPARSE_JOINED_RUN if sparse else _JOINED_RUN
            ((joined,),) = self._query(query, run)
            if joined is not None:
                yield joined

    def entries(self, number: int) -> Iterator[Entry]:
        for sparse, run in self._ranges(number):
            query = _SPARSE_ENTRY_RUN if sparse else _ENTRY_RUN
            for path, lastmod, print_, route, title, about in self._query(query, run):
                when = to_datetime(lastmod)
                yield Entry(
                    path, when, print_, route=route, title=title, description=about
                )

    def listing(self, number: int) -> Iterator[list[Listed]]:
        for sparse, run in self._ranges(number):
            yield self._query(_SPARSE_LISTED_RUN if sparse else _LISTED_RUN, run)
