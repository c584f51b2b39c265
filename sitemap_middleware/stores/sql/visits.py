"""The last visit of each path per kind of client (stores.contract.Visits): kept
unless the one held is later; every listed path's, and the unlisted paths'
visited most lately (``unlisted_visits_kept``), trimmed now and then.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..contract import Visit, latest
from .dialect import Tables

# The table, made when first opened by a release that has it.
SQLITE = """
CREATE TABLE IF NOT EXISTS sitemap_visit (
    path TEXT NOT NULL,
    agent TEXT NOT NULL,            -- an engine's name; '': any client
    at INTEGER NOT NULL,            -- epoch seconds
    status INTEGER NOT NULL,
    PRIMARY KEY (path, agent)
) WITHOUT ROWID
"""
POSTGRES = """
CREATE TABLE IF NOT EXISTS {p}visit (
    path text COLLATE "C" NOT NULL,
    agent text COLLATE "C" NOT NULL, -- an engine's name; '': any client
    at bigint NOT NULL,             -- epoch seconds
    status integer NOT NULL,
    PRIMARY KEY (path, agent)
)
"""
_VISITED = (
    "INSERT INTO {p}visit {rows} ON CONFLICT (path, agent)"
    " DO UPDATE SET at = excluded.at, status = excluded.status"
    " WHERE {p}visit.at <= excluded.at"
)
_TRIM = """
DELETE FROM {p}visit WHERE path IN (
    SELECT path FROM {p}visit AS v
    WHERE NOT EXISTS (SELECT 1 FROM {p}url AS u WHERE u.path = v.path)
    GROUP BY path ORDER BY max(at) DESC, path {skip} ?)
"""
_READ = "SELECT path, agent, at, status FROM {p}visit"


class VisitsMixin(Tables):
    def visited(self, visits: Iterable[Visit]) -> None:
        rows = latest(visits)  # sorted: one lock order for every writer
        if not rows:
            return
        trim = self._trim_due(len(rows))
        with self._writing() as conn:
            # A trim's delete takes its rows' locks in no set order: writers
            # wait for it rather than deadlock with it.
            self.dialect.lock(conn, "visit", shared=not trim)
            self.dialect.many(conn, _VISITED, ("text", "text", "int8", "int4"), rows)
            if trim:
                conn.execute(self.dialect.sql(_TRIM), (self.unlisted_visits_kept,))

    def visits(self, paths: Iterable[str] | None = None) -> Iterator[Visit]:
        run = self.dialect.run
        if paths is None:
            # A run at a time, in key order: bounded memory, no lock or
            # connection held while the caller works.
            after: tuple[str, str] = ("", "")
            while True:
                rows = self._select(
                    f"{_READ} WHERE (path, agent) > (?, ?)"
                    f" ORDER BY path, agent LIMIT {run}",
                    after,
                )
                yield from (Visit(*row) for row in rows)
                if len(rows) < run:
                    return
                after = rows[-1][:2]
        wanted = sorted(set(paths))
        for start in range(0, len(wanted), run):
            listed = self.dialect.listed(wanted[start : start + run])
            rows = self._select(f"{_READ} WHERE path {{among}}", (listed,))
            yield from (Visit(*row) for row in rows)
