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
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import quote

from ...errors import ConfigError, StoreError, StoreFault, StoreReadOnly
from ...sitemaps import MAX_PART_BYTES, MAX_URLS_PER_PART
from ..base import StoreBase
from ..sql.decisions import DecisionsMixin
from ..sql.dialect import SQLITE
from ..sql.news import NewsMixin
from ..sql.parts import PartsMixin
from ..sql.pushes import PushesMixin
from ..sql.removals import RemovalsMixin
from ..sql.shared import SharedMixin
from ..sql.visits import VisitsMixin
from . import schema
from .pages import PagesMixin
from .runs import RunsMixin
from .schema import SCHEMA as _SCHEMA
from .schema import SCHEMA_VERSION, transaction

try:  # the lock that serialises making a new file (not on Windows)
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

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
_DAMAGED_WORDS = ("file is not a database", "database disk image is malformed")


class SQLiteStore(
    PagesMixin,
    RunsMixin,
    PartsMixin,
    SharedMixin,
    PushesMixin,
    DecisionsMixin,
    RemovalsMixin,
    VisitsMixin,
    NewsMixin,
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

    def _named(self) -> bool:
        """Whether the path names a file to watch (not ":memory:" or a URI)."""
        return self.path not in ("", ":memory:") and not self.path.startswith("file:")

    def _writable(self) -> bool:
        """Whether this process may write the file and its folder (WAL keeps
        two files beside it). A missing folder counts as writable: opening
        says what is wrong (:meth:`place` refuses it at start-up)."""
        folder = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(folder):
            return True
        if not os.access(folder, os.W_OK):
            return False
        return not os.path.exists(self.path) or os.access(self.path, os.W_OK)

    @contextmanager
    def _creating(self) -> Iterator[None]:
        """Held while this process opens the file: when it is missing (never
        made, or deleted while in use) or was replaced under this store, under
        a lock on its folder that the other processes opening it take too,
        and without the -wal and -shm the file that went left (SQLite would
        take them for the new file's, its rows with them). Those of a
        replaced file are known by their identity as this store last saw
        them: another process may have made the new file's already."""
        where = os.path.dirname(os.path.abspath(self.path))
        stale, self._stale = self._stale, {}
        if fcntl is None or not os.path.isdir(where):
            yield  # a missing folder: opening says so (an outage)
            return
        if os.path.exists(self.path) and not stale:
            yield
            return
        folder = os.open(where, os.O_RDONLY)
        try:
            fcntl.flock(folder, fcntl.LOCK_EX)
            missing = not os.path.exists(self.path)
            for suffix, left in _sidecars(self.path).items():
                if missing or left == stale.get(suffix):
                    with suppress(FileNotFoundError):
                        os.unlink(self.path + suffix)
            yield
        finally:
            os.close(folder)  # and the lock with it

    def _open_writable(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path,
            timeout=self.timeout,
            isolation_level=None,  # explicit BEGIN/COMMIT
            check_same_thread=False,  # guarded by self._busy
        )
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            with transaction(conn):
                if schema.held(conn) == schema.SCHEMA_1:
                    schema.upgrade_1(conn, self._upsert, self.path)
                for statement in [*_SCHEMA.split(";"), *schema.ADDED]:
                    conn.execute(statement)
                conn.execute(
                    "INSERT OR IGNORE INTO sitemap_meta"
                    " VALUES ('schema', ?), ('epoch', ?)",
                    (SCHEMA_VERSION, self._new_epoch()),
                )
            meta = dict(conn.execute("SELECT key, value FROM sitemap_meta"))
            self._check_schema(
                f"{self.label} {self.where}", meta["schema"], SCHEMA_VERSION
            )
            schema.add_columns(conn)
        except BaseException:
            conn.close()
            raise
        self._epoch = meta["epoch"]
        return conn

    def _open_read_only(self) -> sqlite3.Connection:
        """The file opened without a write: ``mode=ro`` sees what other
        processes write (it needs the -shm beside the file, or a folder where
        it can be made); ``immutable=1`` when neither is there (a read-only
        file system), which SQLite then trusts not to change."""
        problem = self._unopenable()
        if problem is not None:
            raise problem
        uri = "file:" + quote(os.path.abspath(self.path))
        failure: sqlite3.Error | None = None
        for option in ("mode=ro", "immutable=1"):
            conn = sqlite3.connect(
                f"{uri}?{option}",
                uri=True,
                timeout=self.timeout,
                isolation_level=None,
                check_same_thread=False,
            )
            try:
                has_meta = conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE name = 'sitemap_meta'"
                ).fetchall()
                if not has_meta:
                    raise StoreFault(
                        self._said(
                            "holds no sitemap and cannot be written: make it"
                            " writable, or point the store elsewhere"
                        )
                    )
                meta = dict(conn.execute("SELECT key, value FROM sitemap_meta"))
                if meta.get("schema") == schema.SCHEMA_1:
                    raise StoreFault(
                        self._said(
                            "holds sitemap schema 1, upgraded when first opened"
                            " by a worker that can write it: make it writable once"
                        )
                    )
                self._check_schema(
                    f"{self.label} {self.where}", meta.get("schema"), SCHEMA_VERSION
                )
                schema.as_this_release(conn)
            except sqlite3.OperationalError as exc:  # no -shm to share: immutable
                conn.close()
                failure = exc
                continue
            except BaseException:
                conn.close()
                raise
            self._epoch = meta["epoch"]
            return conn
        assert failure is not None
        raise failure

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

    def _damaged(self, detail: object) -> StoreFault:
        words = " ".join(str(detail).split())  # quick_check's lines, on one
        return StoreFault(
            self._said(
                f"is damaged ({words}): restore it from a backup, or delete it (with"
                " its -wal and -shm files) to start again; its pages are"
                " recorded again as they are visited"
            )
        )

    def _store_error(self, exc: BaseException) -> StoreError:
        """A damaged file is a fault, a refused write is read-only, anything
        else (locked, busy, a full disk, a folder not there) an outage."""
        code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
        words = str(exc)
        if (code is not None and code & 0xFF in (_CORRUPT, _NOTADB)) or any(
            w in words for w in _DAMAGED_WORDS
        ):
            return self._fault_found(self._damaged(exc))
        if code is not None and code & 0xFF == _READONLY:
            self._look_at = 0.0  # opened again, read-only, at the next call
            return StoreReadOnly(self._said(f"cannot be written ({exc})"))
        if code is not None and code & 0xFF == _CANTOPEN:
            # A folder gone since start-up (a mount): an outage, said plainly.
            problem = self._unopenable()
            if problem is not None:
                return StoreError(str(problem))
        return super()._store_error(exc)

    def _fault_found(self, fault: StoreFault) -> StoreFault:
        """Keep ``fault`` for every call until the file changes."""
        self._faulted = None
        with suppress(OSError):
            self._faulted = _signature(os.stat(self.path))
        self._fault = fault
        return fault

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

    def _disconnect(self, conn: sqlite3.Connection) -> None:
        """Close a connection: one to a file no longer at its path is let go
        without the checkpoint SQLite makes on close, which ends by deleting
        ``<path>-wal`` by name: by now perhaps the WAL of the file that
        replaced it, in use by the other workers."""
        if self._file is None or self._same_file():
            conn.close()
        else:
            _abandon(conn)

    def _same_file(self) -> bool:
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self._file

    def _unopenable(self) -> ConfigError | StoreFault | None:
        """Why the file cannot be opened here, from the file system alone: the
        one place that says so. A name no file can have (its folder missing
        or not a folder, the name a folder's) is a ``ConfigError``; a file not
        there in a folder this process cannot write, a ``StoreFault``. Each
        names the absolute path and what to do; ``None``: it may be opened."""
        if not self._named():
            return None
        folder = os.path.dirname(self.where)
        if os.path.isdir(self.where):
            return ConfigError(
                self._said("is a folder: name a file in it in the store URI")
            )
        if not os.path.isdir(folder):
            state = "is not a folder" if os.path.exists(folder) else "does not exist"
            return ConfigError(
                self._said(
                    f"its folder {folder} {state}: create the folder, or fix"
                    " the store URI"
                )
            )
        if not os.path.exists(self.where) and not os.access(folder, os.W_OK):
            return StoreFault(
                self._said(
                    "does not exist and its folder cannot be written: make the"
                    " folder writable, or point the store elsewhere"
                )
            )
        return None

    def place(self, own: str | None = None) -> None:
        """Refuse, before anything is opened, a file named where none can
        ever be (its folder missing or not a folder, the name a folder's):
        waiting mends none of these, so each is a ``ConfigError`` at start-up
        rather than an outage retried forever. A folder that is ``own``, one
        the app owns (Flask's instance folder), is made first.

        :raises ConfigError: naming the absolute path and what to do.
        """
        if own is not None and os.path.dirname(self.where) == os.path.abspath(own):
            os.makedirs(own, exist_ok=True)
        problem = self._unopenable()
        if isinstance(problem, ConfigError):
            raise problem

    def check(self) -> None:
        """Open the file now (at start-up): ``StoreFault`` if it cannot be
        used until someone acts, ``StoreError`` for an outage. A file not
        there yet is left to be made at first use (by then the app may have
        been loaded only to look at it, as ``verify`` does)."""
        if self._named() and not os.path.exists(self.path) and self._writable():
            return
        with self._busy:
            self._use()
            # Let go at once: a process that forks its workers (a preloading
            # master) must not hand them a connection. (":memory:" is kept:
            # closing it would lose it.)
            if self._named():
                self._close_unlocked()

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


def _of_file(epoch: str, file: tuple[int, int] | None) -> str:
    """The epoch of the data: the one the file holds, and the file's inode. A
    copy renamed over the path (a backup restored) holds the epoch of the data
    it copied, yet its part versions may repeat ones served since, and the
    writers must record again what they wrote after the copy was made."""
    return epoch if file is None else f"{epoch}-{file[1]:x}"


def _sidecars(path: str) -> dict[str, tuple[int, int]]:
    """The identities of the file's -wal and -shm that exist."""
    found = {}
    for suffix in ("-wal", "-shm"):
        with suppress(FileNotFoundError):
            st = os.stat(path + suffix)
            found[suffix] = (st.st_dev, st.st_ino)
    return found


def _signature(st: os.stat_result) -> tuple[int, ...]:
    """What changes when a file is replaced, restored or written."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _abandon(conn: sqlite3.Connection) -> None:
    """Release a connection to a file deleted or replaced under it without a
    checkpoint, so without deleting the -wal and -shm now at its path."""
    setconfig = getattr(conn, "setconfig", None)
    flag = getattr(sqlite3, "SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE", None)
    if setconfig is not None and flag is not None:  # Python 3.12+
        setconfig(flag, True)
        conn.close()
        return
    # Before 3.12 Python cannot turn that checkpoint off: the connection is
    # kept open until the process ends, when the kernel drops its files and
    # locks. Freed (at interpreter exit too) it would close and checkpoint,
    # so it is given a reference that nothing ever releases.
    import ctypes

    ctypes.pythonapi.Py_IncRef(ctypes.py_object(conn))
