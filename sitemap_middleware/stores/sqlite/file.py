"""The SQLite store's file: opened writable (made, under a lock on its folder,
without the sidecars of a file gone) or read-only, damaged or not there, let go
when replaced; and the checks at start-up (``place``, ``check``).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING
from urllib.parse import quote

from ...errors import ConfigError, StoreFault
from ..base import StoreBase
from . import schema
from .schema import SCHEMA as _SCHEMA
from .schema import SCHEMA_VERSION, transaction

if TYPE_CHECKING:  # the store this is mixed into
    from ...model import Entry

    _Store = StoreBase[sqlite3.Connection]
else:
    _Store = object

try:  # the lock that serialises making a new file (not on Windows)
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]


# The file opened read-only: ``mode=ro`` sees what other processes write (it
# needs the -shm beside the file, or a folder where it can be made);
# ``immutable=1`` when neither is there (a read-only file system), which
# SQLite then trusts not to change.
_READ_ONLY = ("mode=ro", "immutable=1")


class FileMixin(_Store):
    """The file of :class:`~sitemap_middleware.stores.sqlite.SQLiteStore`."""

    if TYPE_CHECKING:  # the store's
        path: str
        where: str
        timeout: float
        _busy: threading.Lock
        _epoch: str
        _file: tuple[int, int] | None
        _stale: dict[str, tuple[int, int]]
        _fault: StoreFault | None
        _faulted: tuple[int, ...] | None

        def _use(self) -> sqlite3.Connection: ...
        def _close_unlocked(self) -> None: ...
        def _upsert(self, conn: sqlite3.Connection, batch: dict[str, Entry]) -> int: ...

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
        """The file opened without a write (:data:`_READ_ONLY`)."""
        problem = self._unopenable()
        if problem is not None:
            raise problem
        failure: sqlite3.Error | None = None
        for option in _READ_ONLY:
            conn = self._read_only_connection(option)
            try:
                if not schema.made(conn):
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

    def _read_only_connection(self, option: str) -> sqlite3.Connection:
        """The file opened with ``option`` of :data:`_READ_ONLY`: never made,
        never written."""
        return sqlite3.connect(
            f"file:{quote(os.path.abspath(self.path))}?{option}",
            uri=True,
            timeout=self.timeout,
            isolation_level=None,
            check_same_thread=False,
        )

    def present(self) -> bool:
        """:meth:`.contract.Present.present`: the file's meta table, read on a
        connection of its own that writes nothing (opening the store makes
        the tables, in any SQLite file). A file not there is not made; a
        database SQLite holds in memory is made with its tables."""
        if not self._named():
            return True
        if not os.path.isfile(self.path):
            return False
        failure: sqlite3.OperationalError | None = None
        for option in _READ_ONLY:
            conn = self._read_only_connection(option)
            try:
                return schema.made(conn)
            except sqlite3.OperationalError as exc:  # no -shm to share: immutable
                failure = exc
            finally:
                conn.close()
        assert failure is not None
        raise failure

    def _damaged(self, detail: object) -> StoreFault:
        words = " ".join(str(detail).split())  # quick_check's lines, on one
        return StoreFault(
            self._said(
                f"is damaged ({words}): restore it from a backup, or delete it (with"
                " its -wal and -shm files) to start again; its pages are"
                " recorded again as they are visited"
            )
        )

    def _fault_found(self, fault: StoreFault) -> StoreFault:
        """Keep ``fault`` for every call until the file changes."""
        self._faulted = None
        with suppress(OSError):
            self._faulted = _signature(os.stat(self.path))
        self._fault = fault
        return fault

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
