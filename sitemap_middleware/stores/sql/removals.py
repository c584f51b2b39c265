"""The removals log (stores.contract.Removals): each removed path numbered in the
removal's own transaction, the last ``removals_kept`` kept, and read back with
the epoch in one statement (``removed_since``).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from ..contract import Removed, removed
from .dialect import Tables

# The table, made when first opened by a release that has it. SQLite numbers
# by rowid (the largest seq plus one, and the largest is never trimmed);
# PostgreSQL under the meta row's lock, so that numbers commit in order.
SQLITE = """
CREATE TABLE IF NOT EXISTS sitemap_removal (
    seq INTEGER PRIMARY KEY,
    path TEXT NOT NULL
)
"""
POSTGRES = """
CREATE TABLE IF NOT EXISTS {p}removal (
    seq bigint PRIMARY KEY,
    path text NOT NULL
)
"""
_LOG = {
    "sqlite": "INSERT INTO {p}removal (path) {rows}",
    "postgres": "INSERT INTO {p}removal SELECT coalesce((SELECT max(seq) FROM"
    " {p}removal), 0) + n, path FROM {unnest} WITH ORDINALITY AS t(path, n)",
}
_TRIM = "DELETE FROM {p}removal WHERE seq <= (SELECT max(seq) FROM {p}removal) - ?"
# The epoch, the removal number now, the oldest kept and the paths after a
# number: one read.
_SINCE = {
    "sqlite": "SELECT (SELECT value FROM {p}meta WHERE key = 'epoch'),"
    " (SELECT coalesce(max(seq), 0) FROM {p}removal),"
    " (SELECT min(seq) FROM {p}removal),"
    " (SELECT json_group_array(path) FROM"
    " (SELECT path FROM {p}removal WHERE seq > ? ORDER BY seq))",
    "postgres": "SELECT m.epoch, r.top, r.bottom, ARRAY(SELECT path FROM"
    " {p}removal WHERE seq > ? ORDER BY seq) FROM {p}meta m,"
    " (SELECT coalesce(max(seq), 0) AS top, min(seq) AS bottom"
    " FROM {p}removal) r",
}


class RemovalsMixin(Tables):
    def _log_removed(self, conn: Any, paths: Collection[str]) -> None:
        """Number the removed paths in the removals log, keeping the last
        ``removals_kept``; in the caller's transaction."""
        rows = [(path,) for path in sorted(paths)]
        self.dialect.many(conn, _LOG[self.dialect.name], ("text",), rows)
        conn.execute(self.dialect.sql(_TRIM), (self.removals_kept,))

    def removed_since(self, seq: int | None) -> Removed:
        # No paths read when none are asked for.
        after = 2**62 if seq is None else seq
        ((epoch, top, bottom, paths),) = self._select(
            _SINCE[self.dialect.name], (after,)
        )
        if isinstance(paths, str):  # SQLite's JSON array
            paths = json.loads(paths)
        return removed(self._of_data(epoch), seq, int(top), bottom, paths)

    def _of_data(self, epoch: object) -> str:
        """The epoch of the data, from the one the store holds."""
        return str(epoch) if epoch else ""
