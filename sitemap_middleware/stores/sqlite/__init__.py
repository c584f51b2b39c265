"""``sqlite:///path``: the default store, embedded, shared by the processes of one
machine through one file (WAL mode, so readers never wait for the writer). The file
is watched: deleted or replaced, it is opened again; damaged or of a schema this
release cannot read, a ``StoreFault``; not writable, it is served read-only.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ...errors import StoreError, StoreFault, StoreReadOnly
from ...sitemaps import MAX_PART_BYTES, MAX_URLS_PER_PART
from ..base import StoreBase
from ..sql import SideTables
from ..sql.dialect import SQLITE
from .file import FileMixin, _of_file, _sidecars, _signature
from .pages import PagesMixin
from .runs import RunsMixin
from .schema import SCHEMA as _SCHEMA  # noqa: F401  (the benchmarks read it here)
from .schema import transaction

logger = logging.getLogger("sitemap_middleware")

# Seconds between two looks at the file (one stat() and two access() calls):
# deleted or replaced, it is opened again; made read-only or writable again,
# it is opened in the other mode; damaged, it is looked at again only once
# it changed (restored from a backup). Never on a page request: only the store
# calls of the writer thread and of the sitemap's own documents look.
WATCH_INTERVAL = 1.0
# A file up to this size is checked whole (PRAGMA quick_check) when a process
# opens it: a damaged file is then refused at start-up rather than when a
# crawler asks for its damaged part. Larger files are checked as they are read.
QUICK_CHECK_BYTES = 64 * 1024 * 1024
# SQLite's primary result codes (https://sqlite.org/rescode.html) of a file
# that is not (or no longer) a sound database, and of a write it refused.
_CORRUPT, _NOTADB, _READONLY, _CANTOPEN = 11, 26, 8, 14
# SQLite's words for them (sqlite3_errstr): read where an error carries no code
# (Python 3.10 has no sqlite_errorcode) or a damaged file shows under another.
_WORDS = {
    "database disk image is malformed": _CORRUPT,
    "file is not a database": _NOTADB,
    "attempt to write a readonly database": _READONLY,
    "unable to open database file": _CANTOPEN,
}


class SQLiteStore(
    PagesMixin,
    RunsMixin,
    SideTables,
    FileMixin,
    StoreBase[sqlite3.Connection],
):
    """One connection per process, opened on first use and reopened after fork,
    used by one thread at a time.

    The file is looked at about once a second by the store's calls: one that
    was deleted or replaced is opened again (one WARNING naming it; a new file
    has a new epoch, so that writers record again what they wrote into the old
    one); one that cannot be written (its folder, its file, the file system)
    is opened read-only, without a write, and writes raise ``StoreReadOnly``.
    A damaged file, or one of a schema this release cannot read, raises
    ``StoreFault`` until it changes.

    :param path: the database file; its folder must exist.
    :param part_size: URLs per sitemap part (at most 50,000).
    :param part_bytes: uncompressed bytes per part (at most 50 MiB).
    :param timeout: seconds to wait for another process's write lock.
    """

    errors = (sqlite3.Error,)
    label = "SQLite"
    dialect = SQLITE

    def __init__(
        self,
        path: str,
        part_size: int = MAX_URLS_PER_PART,
        part_bytes: int = MAX_PART_BYTES,
        timeout: float = 5.0,
    ) -> None:
        super().__init__(part_size, part_bytes)
        self.path = path
        self.where = os.path.abspath(path) if self._named() else path
        self.timeout = timeout
        self._busy = threading.Lock()  # one statement at a time on the connection
        # What other sites' writers read (declarations): a connection of its
        # own, guarded by a lock never held while waiting for another, for
        # the process and the file it was opened on.
        self._reading = threading.Lock()
        self._reader: tuple[int, tuple[int, int] | None, sqlite3.Connection] | None = (
            None
        )
        self._epoch = ""
        # The file as opened: its identity (st_dev, st_ino), None for a
        # special name (":memory:"); whether it was opened read-only; when to
        # look at it next (monotonic).
        self._file: tuple[int, int] | None = None
        # The identities of its -wal and -shm, as opened; those of a file
        # gone, to delete before the new one is opened (_creating).
        self._sidecar_ids: dict[str, tuple[int, int]] = {}
        self._stale: dict[str, tuple[int, int]] = {}
        self._read_only = False
        self._look_at = 0.0
        # A fault found in the file, raised again without touching it until
        # the file changes (its signature: identity, size, mtime).
        self._fault: StoreFault | None = None
        self._faulted: tuple[int, ...] | None = None
        # The signature of the file last checked whole (inherited across fork:
        # a worker does not check again the file its master checked).
        self._checked: tuple[int, ...] | None = None
        # Whether the last batch written held no stored path (the next is
        # then written without a read first, see _upsert).
        self._unread = False

    # -- opening and watching the file ----------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        self._look_at = time.monotonic() + WATCH_INTERVAL
        if not self._named():
            conn, self._read_only = self._open_writable(), False
            self._file = None
            return conn
        if self._writable():
            with self._creating():
                conn = self._open_writable()
            self._read_only = False
        else:
            conn = self._open_read_only()
            self._read_only = True
        self._sidecar_ids = _sidecars(self.path)
        try:
            st = os.stat(self.path)
            self._file = (st.st_dev, st.st_ino)
            self._epoch = _of_file(self._epoch, self._file)
            self._quick_check(conn, _signature(st))
        except BaseException:
            conn.close()
            raise
        return conn

    def _quick_check(
        self, conn: sqlite3.Connection, signature: tuple[int, ...]
    ) -> None:
        """A file of at most ``QUICK_CHECK_BYTES`` checked whole, once per
        signature: a damaged one raises ``StoreFault`` now."""
        if signature == self._checked or signature[2] > QUICK_CHECK_BYTES:
            return
        found = conn.execute("PRAGMA quick_check(1)").fetchall()
        if found != [("ok",)]:
            raise self._damaged(found[0][0] if found else "no answer")
        self._checked = signature

    def _store_error(self, exc: BaseException) -> StoreError:
        """A damaged file is a fault, a refused write is read-only, anything
        else (locked, busy, a full disk, a folder not there) an outage."""
        words = str(exc)
        codes = {code for said, code in _WORDS.items() if said in words}
        code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
        if code is not None:
            codes.add(code & 0xFF)
        if codes & {_CORRUPT, _NOTADB}:
            return self._fault_found(self._damaged(exc))
        if _READONLY in codes:
            self._look_at = 0.0  # opened again, read-only, at the next call
            return StoreReadOnly(self._said(f"cannot be written ({exc})"))
        if _CANTOPEN in codes:
            # A folder gone since start-up (a mount): an outage, said plainly.
            problem = self._unopenable()
            if problem is not None:
                return StoreError(str(problem))
        return super()._store_error(exc)

    def _use(self) -> sqlite3.Connection:
        """The connection for one statement or transaction (``_busy`` held),
        after a look at the file when one is due; a fault found raises again."""
        current = time.monotonic()
        if current >= self._look_at:
            self._look(current)
        if self._fault is not None:
            raise self._fault
        try:
            return self._connection()
        except StoreFault as fault:
            self._fault_found(fault)
            raise
        except self.errors as exc:  # opening is a call too
            raise self._store_error(exc) from exc

    def _look(self, current: float) -> None:
        """Look at the file (``_busy`` held): deleted or replaced, opened again;
        made read-only or writable, opened again in that mode; a fault kept
        until the file changes."""
        self._look_at = current + WATCH_INTERVAL
        if not self._named():
            return
        try:
            st: os.stat_result | None = os.stat(self.path)
        except FileNotFoundError:
            st = None
        except OSError:
            return  # the folder cannot be read: the statements will say
        if self._fault is not None:
            if st is None or _signature(st) != self._faulted:
                self._fault = self._faulted = None
                self._close_unlocked()
            return
        if self._conn is None or self._pid != os.getpid():
            return
        identity = None if st is None else (st.st_dev, st.st_ino)
        if identity != self._file:
            logger.warning(
                "sitemap store %s was %s while in use: opened again%s",
                self.path,
                "deleted" if st is None else "replaced",
                " (a new, empty file)" if st is None else "",
            )
            self._stale = self._sidecar_ids
            self._close_unlocked()
        elif self._read_only == self._writable():
            self._close_unlocked()

    def _close_unlocked(self) -> None:
        """Close this process's connection; the next call opens the file."""
        StoreBase.close(self)

    def close(self) -> None:
        with self._busy:  # not under a statement of another thread
            super().close()
        with self._reading:
            reader, self._reader = self._reader, None
            if reader is not None and reader[0] == os.getpid():
                reader[2].close()

    @contextmanager
    def _committed(self) -> Iterator[sqlite3.Connection]:
        """A connection that reads what is committed (WAL) without waiting
        for this store's writer, which may be reading another site's listing
        in its transaction while that site's writer asks this one: each
        would wait for the other's lock. The file is opened (and made) under
        the writer's lock when this process has no reader on it yet, which
        ``Abroad.ready`` asks before any write lock is taken, and never
        while the reading lock is held; a file not watched (":memory:") or
        opened read-only is read on the writer's connection."""
        reader = self._reader
        if reader is None or reader[:2] != (os.getpid(), self._file):
            with self._busy:  # Abroad.ready: before any write lock is taken
                self._use()
        if not self._named() or self._read_only:
            with self._busy:
                yield self._use()
            return
        with self._reading:
            reader = self._reader
            if reader is None or reader[:2] != (os.getpid(), self._file):
                conn = sqlite3.connect(
                    self.path,
                    timeout=self.timeout,
                    isolation_level=None,
                    check_same_thread=False,  # guarded by self._reading
                )
                if reader is not None and reader[0] == os.getpid():
                    reader[2].close()
                reader = self._reader = (os.getpid(), self._file, conn)
            yield reader[2]

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """The connection, in a write transaction of its own."""
        if self.abroad is not None:
            self.abroad.ready()
        with self._busy:
            conn = self._use()
            if self._read_only:
                raise StoreReadOnly(
                    f"SQLite: {self.path} is read-only (the file, its folder"
                    " or its file system): its pages are served, none recorded"
                )
            with transaction(conn):
                yield conn

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._busy:
            return self._use().execute(sql, params).fetchall()

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: in WAL mode its reads see the database as of
        the first of them, whatever commits after. The connection is this
        object's, shared by its threads: their writes fail meanwhile."""
        try:
            self._query("BEGIN")
        except self.errors as exc:
            raise StoreError(self._said(exc)) from exc
        try:
            yield
        finally:
            try:
                self._query("COMMIT")  # it wrote nothing: it only ends the read
            except self.errors as exc:
                raise StoreError(self._said(exc)) from exc

    def epoch(self) -> str:
        rows = self._query("SELECT value FROM sitemap_meta WHERE key = 'epoch'")
        return _of_file(str(rows[0][0]), self._file) if rows else ""

    def _of_data(self, epoch: object) -> str:
        return _of_file(str(epoch), self._file) if epoch else ""
