"""The site-wide counters and settings every writer shares (stores.contract.Shared):
counters summed from each writer's deltas, saturated at MAX_COUNT.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..contract import MAX_COUNT, deltas
from .dialect import Tables

# The tables, made when the store is opened. SQLite keeps the settings in its
# meta table; PostgreSQL added both tables to older ones, so they stand apart
# from its schema's version.
SQLITE = """
-- the site's counters, summed from every writer's deltas (add_counts)
CREATE TABLE IF NOT EXISTS sitemap_count (
    reason TEXT PRIMARY KEY,
    n INTEGER NOT NULL
)"""
POSTGRES = """
CREATE TABLE IF NOT EXISTS {p}count (
    reason text PRIMARY KEY,
    n bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS {p}setting (
    name text PRIMARY KEY,
    value text NOT NULL
)
"""
# Saturated, never summed past MAX_COUNT: SQLite would make the sum a float,
# PostgreSQL fail on a bigint past it, every time.
_ADD = (
    "INSERT INTO {p}count {rows} ON CONFLICT (reason) DO UPDATE SET n = CASE"
    f" WHEN {{p}}count.n > {MAX_COUNT} - excluded.n THEN {MAX_COUNT}"
    " ELSE {p}count.n + excluded.n END"
)
# Where a setting is: its table, its key's column, what its key starts with.
_SETTINGS = {
    "sqlite": ("{p}meta", "key", "setting."),
    "postgres": ("{p}setting", "name", ""),
}


class SharedMixin(Tables):
    def add_counts(self, counts: Mapping[str, int]) -> None:
        rows = deltas(counts)  # sorted: writers lock the rows in one order
        if rows:
            with self._writing() as conn:
                self.dialect.many(conn, _ADD, ("text", "bigint"), rows)

    def counts(self) -> dict[str, int]:
        found = self._select("SELECT reason, n FROM {p}count")
        return {str(reason): int(n) for reason, n in found}

    def setting(self, name: str) -> str | None:
        table, key, start = _SETTINGS[self.dialect.name]
        rows = self._select(
            f"SELECT value FROM {table} WHERE {key} = ?", (start + name,)
        )
        return str(rows[0][0]) if rows else None

    def set_setting(self, name: str, value: str) -> None:
        table, key, start = _SETTINGS[self.dialect.name]
        with self._writing() as conn:
            conn.execute(
                self.dialect.sql(
                    f"INSERT INTO {table} VALUES (?, ?)"
                    f" ON CONFLICT ({key}) DO UPDATE SET value = excluded.value"
                ),
                (start + name, value),
            )
