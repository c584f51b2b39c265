"""``memory://``: a store in process memory, for tests and single-process demos:
the SQLite store's pages and tables, in a database SQLite holds in memory.

Nothing is shared between processes and nothing survives a restart: each store
object is a database of its own, and a forked child starts its own, empty, under
an epoch of its own (SQLite cannot carry a connection across fork, so the
parent's rows stay the parent's). It has no backend to lose, so it never raises
``StoreError``: only ``ValueError`` for an entry no sitemap may hold.
"""

from __future__ import annotations

import functools
import itertools
import os
import sqlite3
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..sitemaps import MAX_PART_BYTES, MAX_URLS_PER_PART
from .base import StoreBase
from .sql import SideTables, mapped
from .sql.dialect import SQLITE
from .sqlite.pages import PagesMixin
from .sqlite.runs import RunsMixin
from .sqlite.schema import ADDED, SCHEMA, transaction

# Each database's name in SQLite's shared cache, where the store's two
# connections find it: never one another object (or a forked child) has used.
_NUMBERS = itertools.count()


class MemoryStore(PagesMixin, RunsMixin, SideTables, StoreBase[sqlite3.Connection]):
    """The SQLite store's statements on a database in memory, one per object
    and process: the writes and reads take turns on one connection
    (``_busy``); the other sites' writers read what pages declare on a
    second, which reads uncommitted rows and so never waits for this one's
    writer (one may be reading theirs in its transaction), as the file
    store's reader reads what is committed."""

    # A failure of SQLite in memory (none is known but running out of it, a
    # MemoryError) is a bug of this code, never an outage to wait out.
    errors = ()
    dialect = SQLITE
    # The site map reads entries(), as of a store without Listing: a part in
    # memory is at hand either way. (A protocol's method set to None is one
    # the object does not have.)
    listing = None  # type: ignore[assignment]

    def __init__(
        self, part_size: int = MAX_URLS_PER_PART, part_bytes: int = MAX_PART_BYTES
    ) -> None:
        super().__init__(part_size, part_bytes)
        self._busy = threading.Lock()  # one statement or write at a time
        self._reading = threading.Lock()  # the other sites' reads, on _reader
        self._reader: sqlite3.Connection | None = None
        self._epoch = ""  # the database's: made with it
        self._unread = False  # see PagesMixin._upsert

    def _connect(self) -> sqlite3.Connection:
        name = f"file:sitemap-{os.getpid()}-{next(_NUMBERS)}?mode=memory&cache=shared"
        conn, reader = (
            sqlite3.connect(
                name, uri=True, isolation_level=None, check_same_thread=False
            )
            for _ in range(2)
        )
        _tables(os.getpid()).backup(conn)
        reader.execute("PRAGMA read_uncommitted = 1")
        # The database lasts while one of its connections is open: both are
        # kept until the object goes (close() keeps them, as dicts were kept).
        # Not at the interpreter's exit: a daemon writer thread may be inside
        # a statement on them then, and closing under it crashes the process.
        weakref.finalize(self, _closed, conn, reader).atexit = False
        self._reader = reader
        self._epoch = self._new_epoch()
        return conn

    def close(self) -> None:
        """Nothing to release before the object goes: closing the database
        would lose it."""

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        if self.abroad is not None:
            self.abroad.ready()
        with self._busy:
            conn = self._connection()
            with transaction(conn):
                yield conn

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._busy:
            return self._connection().execute(sql, params).fetchall()

    @contextmanager
    def _committed(self) -> Iterator[sqlite3.Connection]:
        self._connection()  # this process's database, and its reader
        with self._reading:
            assert self._reader is not None
            yield self._reader

    def epoch(self) -> str:
        self._connection()
        return self._epoch

    def present(self) -> bool:
        """:meth:`.contract.Present.present`: always, the database being
        made with the object (its tables with it)."""
        return True

    def _of_data(self, epoch: object) -> str:
        return self._epoch  # the object's, not a row: nothing else reads it


@functools.cache
def _tables(pid: int) -> sqlite3.Connection:
    """An empty database of the SQLite store's tables, made once a process and
    copied into each new store: a tenth of the time of making them again."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    with transaction(conn):
        for statement in [*SCHEMA.split(";"), *ADDED]:
            conn.execute(statement)
        for statement in mapped.INDEXES:
            conn.execute(SQLITE.sql(statement))
    return conn


def _closed(*connections: sqlite3.Connection) -> None:
    for conn in connections:
        conn.close()
