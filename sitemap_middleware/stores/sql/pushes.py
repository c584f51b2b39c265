"""IndexNow's pending pushes (stores.contract.Pushes): a path queued in the write's
own transaction, claimed for a lease, deleted once pushed or freed to retry.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from .dialect import Tables

# The table, apart from the sitemap's own: made when first opened by a
# release that has it.
SQLITE = """
CREATE TABLE IF NOT EXISTS sitemap_push (
    path TEXT PRIMARY KEY,
    lease REAL NOT NULL DEFAULT 0   -- claimed until (epoch seconds); 0: free
)
"""
POSTGRES = """
CREATE TABLE IF NOT EXISTS {p}push (
    id bigserial NOT NULL,          -- queued order
    path text COLLATE "C" PRIMARY KEY,
    lease double precision NOT NULL DEFAULT 0  -- claimed until (epoch s); 0: free
)
"""
_QUEUE = "INSERT INTO {p}push (path) {rows} ON CONFLICT (path) DO UPDATE SET lease = 0"
# In queued order. SKIP LOCKED: a row a writer is queueing again is left to
# the next claim (a SQLite write holds the whole file).
_CLAIM = {
    "sqlite": "UPDATE {p}push SET lease = ? WHERE rowid IN (SELECT rowid"
    " FROM {p}push WHERE lease <= ? ORDER BY rowid LIMIT ?) RETURNING path",
    "postgres": "UPDATE {p}push SET lease = ? WHERE path IN (SELECT path"
    " FROM {p}push WHERE lease <= ? ORDER BY id LIMIT ?"
    " FOR UPDATE SKIP LOCKED) RETURNING path",
}


class PushesMixin(Tables):
    def _queue(self, conn: Any, paths: Collection[str]) -> None:
        """Queue IndexNow pushes in the write's transaction."""
        rows = [(path,) for path in sorted(paths)]  # one lock order
        self.dialect.many(conn, _QUEUE, ("text",), rows)

    def _withdraw(self, conn: Any, paths: Collection[str]) -> None:
        """Withdraw a removal's pending pushes in its transaction."""
        listed = self.dialect.listed(sorted(paths))
        conn.execute(
            self.dialect.sql("DELETE FROM {p}push WHERE path {among}"), (listed,)
        )

    def queue_pushes(self, paths: Iterable[str]) -> None:
        wanted = set(paths)
        if wanted:
            with self._writing() as conn:
                self._queue(conn, wanted)

    def claim_pushes(self, limit: int, now: float, until: float) -> list[str]:
        with self._writing() as conn:
            sql = self.dialect.sql(_CLAIM[self.dialect.name])
            rows = conn.execute(sql, (until, now, limit)).fetchall()
        return [str(path) for (path,) in rows]

    def pushed(self, paths: Iterable[str], until: float) -> int:
        return self._leased(
            "DELETE FROM {p}push WHERE path {among} AND lease = ?", paths, until
        )

    def retry_pushes(self, paths: Iterable[str], until: float, at: float) -> None:
        self._leased(
            "UPDATE {p}push SET lease = ? WHERE path {among} AND lease = ?",
            paths,
            until,
            at,
        )

    def _leased(
        self, statement: str, paths: Iterable[str], until: float, *at: float
    ) -> int:
        """Run ``statement`` on the pushes of ``paths`` still leased ``until``:
        how many it touched."""
        listed = self.dialect.listed(sorted(set(paths)))
        with self._writing() as conn:
            cur = conn.execute(self.dialect.sql(statement), (*at, listed, until))
            return int(cur.rowcount)

    def pending_pushes(self) -> int:
        return int(self._select("SELECT count(*) FROM {p}push")[0][0])
