"""How SQLite and PostgreSQL spell what the statements of sql/ leave open, and
what a mixin of sql/ asks of the store it is mixed into (``Tables``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, NamedTuple

from ...sitemaps import RUN

if TYPE_CHECKING:
    from ..contract import Decision


class Dialect(NamedTuple):
    """One database's spellings. A shared statement writes ``{p}`` before a
        table's name, ``?`` for a parameter, ``{among}`` for "is one of the list
        given as one parameter" (``listed``), ``{skip} ?`` for the rows an ORDER BY
        skips, and ``{rows}`` for the rows an INSERT takes (``many``; PostgreSQL's
    own statements may take them as ``{unnest}``, the function)."""

    name: str  # "sqlite" or "postgres": the key of a statement spelled apart
    prefix: str  # of every table's name
    mark: str  # a parameter's placeholder
    among: str
    skip: str
    # Whether parameters may be arrays (PostgreSQL): many rows go as one
    # statement over unnest(), a list as one array. Else (SQLite) many rows
    # go by executemany, a list as a JSON array that json_each() reads.
    arrays: bool
    # Rows a keyset read takes at a time: a PostgreSQL read is a round trip
    # and a pooled connection taken and given back.
    run: int

    def sql(self, statement: str) -> str:
        """``statement`` as this database spells it."""
        if self.mark != "?":
            statement = statement.replace("?", self.mark)
        return (
            statement.replace("{p}", self.prefix)
            .replace("{among}", self.among)
            .replace("{skip}", self.skip)
        )

    def listed(self, values: list[str]) -> object:
        """A list as the one parameter ``{among}`` takes."""
        return values if self.arrays else json.dumps(values)

    def many(
        self, conn: Any, statement: str, types: Sequence[str], rows: Sequence[Any]
    ) -> None:
        """Run ``statement`` on ``rows``, their columns of these PostgreSQL
        types: one statement over arrays (binary: psycopg copies them rather
        than escape each string of a text array), or one a row."""
        if not rows:
            return
        if self.arrays:
            arrays = ", ".join(f"%b::{kind}[]" for kind in types)
            sql = self.sql(statement).replace("{rows}", "SELECT * FROM {unnest}")
            columns = [list(column) for column in zip(*rows, strict=True)]
            conn.execute(sql.replace("{unnest}", f"unnest({arrays})"), columns)
        else:
            values = f"VALUES ({', '.join('?' * len(types))})"
            conn.executemany(self.sql(statement).replace("{rows}", values), rows)

    def lock(self, conn: Any, name: str, shared: bool = False) -> None:
        """Take turns with the other writers of a table, to the transaction's
        end (PostgreSQL's advisory lock; a SQLite write transaction holds the
        whole file already)."""
        if self.arrays:
            kind = "_shared" if shared else ""
            conn.execute(
                f"SELECT pg_advisory_xact_lock{kind}(hashtext(%s))",
                (self.prefix + name,),
            )


SQLITE = Dialect(
    name="sqlite",
    prefix="sitemap_",
    mark="?",
    among="IN (SELECT value FROM json_each(?))",
    skip="LIMIT -1 OFFSET",
    arrays=False,
    run=RUN,
)


def postgres(prefix: str, run: int) -> Dialect:
    """PostgreSQL's dialect for tables named ``{prefix}...``."""
    return Dialect("postgres", prefix, "%s", "= ANY(%b)", "OFFSET", True, run)


class Tables:
    """What a mixin of sql/ asks of its store: the dialect, a read, and a
    write transaction. StoreBase brings the rest (the bounds, the helpers)."""

    dialect: Dialect

    if TYPE_CHECKING:  # StoreBase's, which every store class brings
        decisions_kept: int
        decision_paths: int
        removals_kept: int
        unlisted_visits_kept: int

        def _trim_due(self, written: int) -> bool: ...

        @staticmethod
        def _grouped(
            decisions: Iterable[Decision],
        ) -> dict[str, list[tuple[str, int]]]: ...

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """The rows of one read, ``sql`` as the database spells it."""
        raise NotImplementedError

    def _writing(self) -> AbstractContextManager[Any]:
        """A connection (or cursor) in a write transaction of its own."""
        raise NotImplementedError

    def _select(self, statement: str, params: Sequence[Any] = ()) -> list[Any]:
        """The rows of one read of a shared statement."""
        return self._query(self.dialect.sql(statement), params)
