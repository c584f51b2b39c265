"""The decisions log (stores.contract.Decisions): the writers' last decisions per
path, the paths decided about most lately kept (``decision_paths``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from ..contract import Decision, logged, unlogged
from .dialect import Tables

# The table: SQLite's is in its first schema; PostgreSQL added it to older
# tables when first opened, with a sequence for the seq.
SQLITE = """
-- the writers' last decisions per path (note), newest seq last, bounded
CREATE TABLE IF NOT EXISTS sitemap_decision (
    seq INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    log TEXT NOT NULL               -- JSON [[reason, epoch seconds], ...]
)"""
POSTGRES = """
CREATE SEQUENCE IF NOT EXISTS {p}decision_seq;
CREATE TABLE IF NOT EXISTS {p}decision (
    path text COLLATE "C" PRIMARY KEY,
    seq bigint NOT NULL,            -- newest: the path decided about most lately
    log text NOT NULL               -- JSON [[reason, epoch seconds], ...]
);
CREATE INDEX IF NOT EXISTS {p}decision_recent ON {p}decision (seq)
"""
# A log written again takes the newest seq, so that the bound keeps the paths
# decided about most lately: SQLite's next rowid, once the row is deleted;
# PostgreSQL's sequence.
_WRITE = {
    "sqlite": "INSERT INTO {p}decision (path, log) {rows}",
    "postgres": "INSERT INTO {p}decision SELECT path, nextval('{p}decision_seq'),"
    " log FROM {unnest} AS t(path, log) ON CONFLICT (path) DO UPDATE"
    " SET seq = excluded.seq, log = excluded.log",
}
_TRIM = (
    "DELETE FROM {p}decision WHERE seq <= (SELECT seq FROM {p}decision"
    " ORDER BY seq DESC LIMIT 1 OFFSET ?)"
)


class DecisionsMixin(Tables):
    def note(self, decisions: Iterable[Decision]) -> None:
        grouped = self._grouped(decisions)
        if not grouped:
            return
        sql = self.dialect.sql
        with self._writing() as conn:
            # Writers take turns: each log is read, extended and written whole.
            self.dialect.lock(conn, "decision")
            held = dict(
                conn.execute(
                    sql("SELECT path, log FROM {p}decision WHERE path {among}"),
                    (self.dialect.listed(sorted(grouped)),),
                ).fetchall()
            )
            if held and not self.dialect.arrays:
                conn.execute(
                    sql("DELETE FROM {p}decision WHERE path {among}"),
                    (self.dialect.listed(sorted(held)),),
                )
            logs = [
                (path, logged(held.get(path), added, self.decisions_kept))
                for path, added in grouped.items()
            ]
            self.dialect.many(conn, _WRITE[self.dialect.name], ("text", "text"), logs)
            conn.execute(sql(_TRIM), (self.decision_paths,))

    def decisions(self, path: str) -> list[tuple[str, datetime]]:
        rows = self._select("SELECT log FROM {p}decision WHERE path = ?", (path,))
        return unlogged(rows[0][0] if rows else None)
