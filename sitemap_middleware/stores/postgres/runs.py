"""A PostgreSQL part read back: its fragments and its entries, in keyset runs
on seq (never OFFSET), in binary.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import psycopg

from ...model import Entry
from .. import layout
from ..contract import Listed
from .pages import _one

# Rows read per query when streaming a part's entries or the visits (keyset
# pagination, no OFFSET): more than sitemaps.RUN, since each run here is a
# round trip to the server and a pooled connection taken and given back. The
# fragments are read in the runs of the other stores (see fragments).
READ_RUN = 5000


class RunsMixin:
    if TYPE_CHECKING:  # the store's

        def _sql(self, statement: str) -> str: ...
        def _borrow(self) -> AbstractContextManager[psycopg.Connection[Any]]: ...

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
        columns = "path, to_timestamp(lastmod), fingerprint, route, title, description"
        for rows in self._runs(number, columns):
            for _, path, lastmod, fingerprint, route, title, about in rows:
                yield Entry(
                    path,
                    lastmod,
                    fingerprint,
                    route=route,
                    title=title,
                    description=about,
                )

    def listing(self, number: int) -> Iterator[list[Listed]]:
        # The runs' first column is their keyset's seq, not shown.
        for rows in self._runs(number, "path, route, title, description, lastmod"):
            yield [row[1:] for row in rows]
