"""``sqlite:///path``: the default store, embedded, shared by the processes of one
machine through one file (WAL mode, so readers never wait for the writer). The file
is watched: deleted or replaced, it is opened again; damaged or of a schema this
release cannot read, a ``StoreFault``; not writable, it is served read-only.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from datetime import datetime
from operator import itemgetter
from typing import Any
from urllib.parse import quote

from ...errors import ConfigError, StoreError, StoreFault, StoreReadOnly
from ...model import Entry, PartInfo, to_datetime
from ...sections import DEFAULT
from ...sitemaps import MAX_NEWS, MAX_PART_BYTES, MAX_URLS_PER_PART, RUN
from .. import layout
from ..base import (
    MAX_COUNT,
    NEWS_KEPT,
    Article,
    Decision,
    Removed,
    StoreBase,
    Visit,
    deltas,
    latest,
    logged,
    news_cutoff,
    removed,
    unlogged,
)
from ..layout import Change, Fill, Plan, Row, Stored, Totals, batches, leaving, now

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
# The schema the first release wrote (no fragments): upgraded when opened.
_SCHEMA_1 = "1"

SCHEMA_VERSION = "2"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sitemap_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sitemap_url (
    seq INTEGER PRIMARY KEY,        -- first-seen order
    path TEXT NOT NULL UNIQUE,
    page INTEGER NOT NULL,
    lastmod INTEGER NOT NULL,       -- epoch seconds, UTC
    fingerprint TEXT,
    route TEXT,
    fragment BLOB NOT NULL,         -- the finished <url> element
    declared TEXT,                  -- hreflang alternates as declared (layout.pack)
    title TEXT                      -- the page's title, not in the fragment
);
CREATE INDEX IF NOT EXISTS sitemap_url_page ON sitemap_url (page, seq);
-- count(route): added to version-2 files as they are opened
CREATE INDEX IF NOT EXISTS sitemap_url_route ON sitemap_url (route);
-- the site's counters, summed from every writer's deltas (add_counts)
CREATE TABLE IF NOT EXISTS sitemap_count (
    reason TEXT PRIMARY KEY,
    n INTEGER NOT NULL
);
-- the writers' last decisions per path (note), newest seq last, bounded
CREATE TABLE IF NOT EXISTS sitemap_decision (
    seq INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    log TEXT NOT NULL               -- JSON [[reason, epoch seconds], ...]
);
CREATE TABLE IF NOT EXISTS sitemap_page (
    page INTEGER PRIMARY KEY,
    urls INTEGER NOT NULL,
    bytes INTEGER NOT NULL,         -- rendered size of its fragments
    lastmod INTEGER NOT NULL,
    version INTEGER NOT NULL,
    changed INTEGER NOT NULL
);
"""
# The pending IndexNow pushes (stores.base.Pushes): made by every release
# that has them, apart from the sitemap's own tables.
_PUSHES = """
CREATE TABLE IF NOT EXISTS sitemap_push (
    path TEXT PRIMARY KEY,
    lease REAL NOT NULL DEFAULT 0   -- claimed until (epoch seconds); 0: free
)
"""
_QUEUE = (
    "INSERT INTO sitemap_push (path) VALUES (?)"
    " ON CONFLICT (path) DO UPDATE SET lease = 0"
)
# The section of each part that holds a section's pages (sections.py): the
# default section's parts have no row, so that a file of an earlier release
# reads as all default, and its workers still write it.
_SECTIONS = """
CREATE TABLE IF NOT EXISTS sitemap_section (
    page INTEGER PRIMARY KEY,
    section TEXT NOT NULL
)
"""
# The removals log (stores.base.Removals): the last paths removed, numbered by
# seq, made when first opened by a release that has it (rowid allocation: the
# largest seq plus one, and the largest is never trimmed).
_REMOVALS = """
CREATE TABLE IF NOT EXISTS sitemap_removal (
    seq INTEGER PRIMARY KEY,
    path TEXT NOT NULL
)
"""
# The news articles (stores.base.News), made when first opened by a release
# that has them; the index keeps the window's read and its trimming short.
_NEWS = """
CREATE TABLE IF NOT EXISTS sitemap_news (
    path TEXT PRIMARY KEY,
    published INTEGER NOT NULL,     -- epoch seconds, UTC
    title TEXT NOT NULL,
    language TEXT NOT NULL,         -- as <news:language>, "" for none
    name TEXT NOT NULL              -- og:site_name, "" for none
)
"""
_NEWS_INDEX = (
    "CREATE INDEX IF NOT EXISTS sitemap_news_published"
    " ON sitemap_news (published DESC, path)"
)
# published 0: the stored date stays (and a row without one goes at the trim).
_PUBLISH = (
    "INSERT INTO sitemap_news VALUES (?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE"
    " SET published = CASE WHEN excluded.published = 0 THEN published"
    " ELSE excluded.published END, title = excluded.title,"
    " language = excluded.language, name = excluded.name"
)
_NEWS_TRIM = (
    "DELETE FROM sitemap_news WHERE published < ? OR path IN (SELECT path FROM"
    " sitemap_news ORDER BY published DESC, path LIMIT -1 OFFSET ?)"
)
# Only the pages the store holds: a removal takes the article out.
_NEWS_READ = (
    "SELECT n.path, n.published, n.title, n.language, n.name FROM sitemap_news n"
    " JOIN sitemap_url u ON u.path = n.path WHERE n.published >= ?"
    " ORDER BY n.published DESC, n.path LIMIT ?"
)
# The last visit of each path per kind of client (stores.base.Visits): made
# like _REMOVALS. The unlisted paths beyond the most lately visited
# unlisted_visits_kept are trimmed (_TRIM_VISITS) now and then.
_VISITS = """
CREATE TABLE IF NOT EXISTS sitemap_visit (
    path TEXT NOT NULL,
    agent TEXT NOT NULL,            -- an engine's name; '': any client
    at INTEGER NOT NULL,            -- epoch seconds
    status INTEGER NOT NULL,
    PRIMARY KEY (path, agent)
) WITHOUT ROWID
"""
_VISITED = (
    "INSERT INTO sitemap_visit VALUES (?, ?, ?, ?) ON CONFLICT (path, agent)"
    " DO UPDATE SET at = excluded.at, status = excluded.status"
    " WHERE excluded.at >= at"
)
_TRIM_VISITS = """
DELETE FROM sitemap_visit WHERE path IN (
    SELECT path FROM sitemap_visit AS v
    WHERE NOT EXISTS (SELECT 1 FROM sitemap_url AS u WHERE u.path = v.path)
    GROUP BY path ORDER BY max(at) DESC, path LIMIT -1 OFFSET ?)
"""
# Epoch, removal number now, the oldest kept and the paths after ?: one read.
_REMOVED_SINCE = """
SELECT (SELECT value FROM sitemap_meta WHERE key = 'epoch'),
    (SELECT coalesce(max(seq), 0) FROM sitemap_removal),
    (SELECT min(seq) FROM sitemap_removal),
    (SELECT json_group_array(path) FROM
        (SELECT path FROM sitemap_removal WHERE seq > ? ORDER BY seq))
"""
# A part's first and last seq, its URLs and bytes. Each end is a subquery of
# its own: SQLite reads a lone min() or max() as one probe of the (page, seq)
# index, but both in one SELECT as a walk over all the part's entries.
_ENDS = (
    "SELECT (SELECT min(seq) FROM sitemap_url WHERE page = ?1),"
    " (SELECT max(seq) FROM sitemap_url WHERE page = ?1), urls, bytes"
    " FROM (SELECT 1) LEFT JOIN sitemap_page ON page = ?1"
)
_RUN = "FROM sitemap_url WHERE seq >= ? AND seq <= ? AND +page = ? ORDER BY seq"
# The run of a part whose rows share their seq range with other parts' (parts
# of several sections fill side by side): read through the (page, seq) index.
_SPARSE_RUN = "FROM sitemap_url WHERE seq >= ? AND seq <= ? AND page = ? ORDER BY seq"
# SQLite joins a run's fragments itself: one bytes object a run rather than one
# a URL halves the read. An aggregate's ordered subquery is not flattened, so
# group_concat sees the rows in seq order.
_JOINED_RUN = (
    f"SELECT CAST(group_concat(f, '') AS BLOB) FROM (SELECT fragment f {_RUN})"
)
_ENTRY_RUN = f"SELECT path, lastmod, fingerprint, route, title {_RUN}"
_SPARSE_JOINED_RUN = _JOINED_RUN.replace(_RUN, _SPARSE_RUN)
_SPARSE_ENTRY_RUN = _ENTRY_RUN.replace(_RUN, _SPARSE_RUN)
_PART = (
    "SELECT p.page, urls, lastmod, version, changed, coalesce(s.section, '')"
    " FROM sitemap_page p LEFT JOIN sitemap_section s ON s.page = p.page"
    " WHERE urls > 0"
)


class SQLiteStore(StoreBase[sqlite3.Connection]):
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
            with _transaction(conn):
                if self._schema(conn) == _SCHEMA_1:
                    self._upgrade_1(conn)
                for statement in _SCHEMA.split(";"):
                    conn.execute(statement)
                conn.execute(_PUSHES)
                conn.execute(_REMOVALS)
                conn.execute(_NEWS)
                conn.execute(_NEWS_INDEX)
                conn.execute(_SECTIONS)
                conn.execute(_VISITS)
                conn.execute(
                    "INSERT OR IGNORE INTO sitemap_meta"
                    " VALUES ('schema', ?), ('epoch', ?)",
                    (SCHEMA_VERSION, self._new_epoch()),
                )
            meta = dict(conn.execute("SELECT key, value FROM sitemap_meta"))
            self._check_schema(
                f"{self.label} {self.where}", meta["schema"], SCHEMA_VERSION
            )
            self._add_columns(conn)
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
                if meta.get("schema") == _SCHEMA_1:
                    raise StoreFault(
                        self._said(
                            "holds sitemap schema 1, upgraded when first opened"
                            " by a worker that can write it: make it writable once"
                        )
                    )
                self._check_schema(
                    f"{self.label} {self.where}", meta.get("schema"), SCHEMA_VERSION
                )
                self._as_this_release(conn)
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

    @staticmethod
    def _as_this_release(conn: sqlite3.Connection) -> None:
        """A file an earlier release wrote, read as one of this release
        without a write to it: the tables and columns it lacks (which a
        writable file gets when opened) are made in the connection's own
        temporary schema, empty, and found before the file's by name."""
        tables = {
            name
            for (name,) in conn.execute(
                "SELECT name FROM main.sqlite_master WHERE type = 'table'"
            )
        }
        for statement in [*_SCHEMA.split(";"), _PUSHES, _NEWS, _SECTIONS, _VISITS]:
            kept = "\n".join(
                x for x in statement.splitlines() if not x.strip().startswith("--")
            )
            words = kept.split()
            if words[:2] == ["CREATE", "TABLE"] and words[5] not in tables:
                conn.execute(kept.replace("CREATE TABLE", "CREATE TEMP TABLE", 1))
        columns = {
            row[1] for row in conn.execute("PRAGMA main.table_info(sitemap_url)")
        }
        missing = [name for name in ("declared", "title") if name not in columns]
        if missing:
            added = ", ".join(f"NULL AS {name}" for name in missing)
            conn.execute(
                f"CREATE TEMP VIEW sitemap_url AS SELECT *, {added}"
                " FROM main.sitemap_url"
            )

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

    @staticmethod
    def _schema(conn: sqlite3.Connection) -> str | None:
        """The schema the file holds, ``None`` for a new one."""
        if not conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'sitemap_meta'"
        ).fetchall():
            return None
        rows = conn.execute("SELECT value FROM sitemap_meta WHERE key = 'schema'")
        found = rows.fetchall()
        return str(found[0][0]) if found else None

    def _upgrade_1(self, conn: sqlite3.Connection) -> None:
        """A file of the first release (rows without their fragment, parts
        without their size) made a file of this schema in the caller's
        transaction: every row written again in first-seen order, through
        this release's layout, under a new epoch (the parts' versions start
        again, and must not repeat one served before)."""
        conn.execute("DROP INDEX IF EXISTS sitemap_url_page")
        conn.execute("DROP INDEX IF EXISTS sitemap_url_route")
        conn.execute("ALTER TABLE sitemap_url RENAME TO sitemap_url_1")
        conn.execute("ALTER TABLE sitemap_page RENAME TO sitemap_page_1")
        for statement in _SCHEMA.split(";"):
            conn.execute(statement)
        conn.execute(_SECTIONS)
        rows = conn.execute(
            "SELECT path, lastmod, fingerprint, changefreq, priority, route"
            " FROM sitemap_url_1 ORDER BY seq"
        ).fetchall()
        entries = (
            Entry(path, to_datetime(lastmod), print_, freq, priority, route)
            for path, lastmod, print_, freq, priority, route in rows
        )
        for batch in batches(entries):
            self._upsert(conn, batch)
        conn.execute("DROP TABLE sitemap_url_1")
        conn.execute("DROP TABLE sitemap_page_1")
        conn.executemany(
            "UPDATE sitemap_meta SET value = ? WHERE key = ?",
            [(SCHEMA_VERSION, "schema"), (self._new_epoch(), "epoch")],
        )
        logger.info(
            "sitemap store %s upgraded from schema 1 to %s (%d pages)",
            self.path,
            SCHEMA_VERSION,
            len(rows),
        )

    @staticmethod
    def _add_columns(conn: sqlite3.Connection) -> None:
        """Files of version 2 made before rows kept their declared alternates
        or their title get the columns (NULL: not known) when first opened:
        looked for again under the write lock, since other processes may be
        opening the file too. Additive, so the schema stays 2 and a worker
        of an earlier release still reads and writes the file."""
        wanted = {"declared", "title"}
        columns = {row[1] for row in conn.execute("PRAGMA table_info(sitemap_url)")}
        if wanted - columns:
            with _transaction(conn):
                columns = {
                    row[1] for row in conn.execute("PRAGMA table_info(sitemap_url)")
                }
                for name in sorted(wanted - columns):
                    conn.execute(f"ALTER TABLE sitemap_url ADD COLUMN {name} TEXT")

    def close(self) -> None:
        with self._busy:  # not under a statement of another thread
            super().close()

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
            with _transaction(conn):
                yield conn

    # -- the write path -------------------------------------------------------------
    # The steps, named alike in every store (redis.py, postgres.py, memory.py),
    # each batch in one BEGIN IMMEDIATE transaction (_writing):
    #   _read          the stored rows of the batch
    #   _read_members  the stored rows of the hreflang clusters' other members
    #   _sizes         the fill of their parts and of each section's open
    #                  part, with the parts' sections
    #   _settle, _plan layout's decisions on them (StoreBase)
    #   _apply         a plan: _delete its moved rows from their parts, _write
    #                  its rows, and add to the parts' _summaries
    #   _queue         the IndexNow pushes
    # remove: _read, _read_members, _settle, _delete, _queue, _log_removed, and
    # the members written again through _plan and _apply. After either,
    # StoreBase's _tell_abroad; resettle: _read, _read_members, _settle, _plan,
    # _apply.
    # After a batch of new paths alone, the next goes without _read (_upsert).

    def upsert(self, entries: Iterable[Entry]) -> int:
        changed = 0
        for batch in batches(entries):
            with self._writing() as conn:
                changed += self._upsert(conn, batch)
        return changed

    def _upsert(self, conn: sqlite3.Connection, batch: dict[str, Entry]) -> int:
        current = now()
        if self._unread and not any(entry.alternates for entry in batch.values()):
            # After a batch of new paths alone, the next is written as one
            # too, without reading first (a bulk load's): the insert of a
            # path stored after all fails on its unique index, and the batch
            # is written again from a read.
            conn.execute("SAVEPOINT unread")
            try:
                changed = self._written(conn, batch, {}, current, layout.NOTHING)
            except sqlite3.IntegrityError:
                conn.execute("ROLLBACK TO unread")
                conn.execute("RELEASE unread")
            else:
                conn.execute("RELEASE unread")
                return changed
        old = self._read(conn, list(batch))
        self._read_members(conn, layout.members(batch, old), old)
        self._unread = not old
        return self._written(conn, batch, old, current)

    def _written(
        self,
        conn: sqlite3.Connection,
        batch: dict[str, Entry],
        old: dict[str, Stored],
        current: int,
        settled: layout.Settled | None = None,
    ) -> int:
        """Plan and write a batch on the stored rows read (``old``; ``settled``
        their clusters, worked out when not given): how many rows changed."""
        sizes, last, opened = self._sizes(conn, old)
        todo = self._plan(batch, old, sizes, last, current, settled, opened)
        self._apply(conn, todo, old, current)
        self._queue(conn, self._pushes(todo, old))
        return len(todo.changes)

    def remove(self, paths: Iterable[str]) -> int:
        wanted = list(set(paths))
        if not wanted:
            return 0
        # A flood of 404s for paths never stored costs one read, not a write
        # lock taken from every other process.
        with self._busy:
            if not self._read(self._use(), wanted):
                return 0
        with self._writing() as conn:
            current = now()
            gone = self._read(conn, wanted)
            # The other members of the removed pages' clusters lose their links.
            others: dict[str, Stored] = {}
            self._read_members(conn, layout.members({}, gone, gone), others)
            settled = self._settle({}, {**gone, **others}, gone)
            removed = self._delete(conn, gone, current)
            if self._is_pushing():
                self._queue(conn, gone)
            self._log_removed(conn, gone)
            if settled.rewrites:
                sizes, last, opened = self._sizes(conn, others)
                todo = self._plan({}, others, sizes, last, current, settled, opened)
                self._apply(conn, todo, others, current)
            return removed

    def resettle(self, paths: Iterable[str]) -> None:
        wanted = list(set(paths))
        if not wanted:
            return
        with self._writing() as conn:
            current = now()
            rows = self._read(conn, wanted)
            if not rows:
                return
            again = list(rows)
            self._read_members(conn, layout.members({}, rows, again), rows)
            settled = self._settle({}, rows, (), again)
            if settled.rewrites:
                sizes, last, opened = self._sizes(conn, rows)
                todo = self._plan({}, rows, sizes, last, current, settled, opened)
                self._apply(conn, todo, rows, current)

    def declarations(self, paths: Iterable[str]) -> dict[str, str]:
        # A read of what is committed (WAL): it never waits for a writer.
        names = list(paths)
        with self._busy:
            conn = self._use()  # opened even for none: Abroad.ready
            if not names:
                return {}
            found = conn.execute(
                "SELECT path, coalesce(declared, '') FROM sitemap_url"
                " WHERE path IN (SELECT value FROM json_each(?))",
                (json.dumps(names),),
            )
            return dict(found.fetchall())

    @staticmethod
    def _read(conn: sqlite3.Connection, paths: list[str]) -> dict[str, Stored]:
        """The stored rows of these paths."""
        # One statement for the whole batch: the paths go in as one JSON array
        # (SQLite has JSON built in since 3.38, and as JSON1 in most builds).
        found = conn.execute(
            "SELECT path, page, lastmod, fingerprint, route, fragment, declared,"
            " title FROM sitemap_url WHERE path IN (SELECT value FROM json_each(?))",
            (json.dumps(paths),),
        )
        return {path: Stored(page, Row(*row)) for path, page, *row in found}

    def _read_members(
        self, conn: sqlite3.Connection, paths: Collection[str], old: dict[str, Stored]
    ) -> None:
        """Add the stored rows of these hreflang members (``layout.members``)
        to ``old``."""
        if paths:
            old.update(self._read(conn, list(paths)))

    def _sizes(
        self, conn: sqlite3.Connection, old: dict[str, Stored]
    ) -> tuple[dict[int, Fill], int, dict[str, int]]:
        """The Fill of each section's open part and of every part in ``old``;
        the highest part; each section's open part."""
        ((last,),) = conn.execute("SELECT coalesce(max(page), 0) FROM sitemap_page")
        named = dict(conn.execute("SELECT page, section FROM sitemap_section"))
        opened = layout.opened(named, last)
        wanted = sorted({stored.part for stored in old.values()} | {*opened.values()})
        sizes = {
            page: Fill(urls, size, named.get(page, DEFAULT))
            for page, urls, size in conn.execute(
                "SELECT page, urls, bytes FROM sitemap_page"
                f" WHERE page IN ({','.join('?' * len(wanted))})",
                wanted,
            )
        }
        return sizes, last, opened

    def _apply(
        self,
        conn: sqlite3.Connection,
        todo: Plan,
        old: dict[str, Stored],
        current: int,
    ) -> None:
        """Write a plan; in the caller's transaction."""
        self._delete(conn, {path: old[path] for path in todo.moved}, current)
        self._write(conn, todo.changes)
        self._summaries(conn, todo.parts, current)

    @staticmethod
    def _queue(conn: sqlite3.Connection, paths: Collection[str]) -> None:
        """Queue IndexNow pushes in the write's transaction."""
        if paths:
            conn.executemany(_QUEUE, [(path,) for path in paths])

    def _log_removed(self, conn: sqlite3.Connection, paths: Collection[str]) -> None:
        """Number the removed paths in the removals log, keeping the last
        ``removals_kept``; in the caller's transaction."""
        conn.executemany(
            "INSERT INTO sitemap_removal (path) VALUES (?)",
            [(path,) for path in sorted(paths)],
        )
        conn.execute(
            "DELETE FROM sitemap_removal"
            " WHERE seq <= (SELECT max(seq) FROM sitemap_removal) - ?",
            (self.removals_kept,),
        )

    @staticmethod
    def _delete(conn: sqlite3.Connection, rows: dict[str, Stored], current: int) -> int:
        """Delete stored rows and shrink their parts; in the caller's transaction."""
        conn.executemany("DELETE FROM sitemap_url WHERE path = ?", [(p,) for p in rows])
        conn.executemany(
            "UPDATE sitemap_page SET urls = urls - ?, bytes = bytes - ?,"
            " version = version + 1, changed = ?, lastmod = coalesce((SELECT"
            " max(lastmod) FROM sitemap_url WHERE page = ?), 0) WHERE page = ?",
            [
                (totals.urls, totals.bytes, current, part, part)
                for part, totals in leaving(rows.values()).items()
            ],
        )
        return len(rows)

    @staticmethod
    def _write(conn: sqlite3.Connection, changes: list[Change]) -> None:
        """Write the rows of planned changes: new ones take the next seq."""
        inserts = [change for change in changes if change.new]
        if inserts:
            _insert(conn, inserts)
        conn.executemany(
            "UPDATE sitemap_url SET lastmod = ?, fingerprint = ?, route = ?,"
            " fragment = ?, declared = ?, title = ? WHERE path = ?",
            [(*row, path) for path, _, row, new in changes if not new],
        )

    @staticmethod
    def _summaries(
        conn: sqlite3.Connection, parts: dict[int, Totals], current: int
    ) -> None:
        """Add what the writes added to their parts' summaries."""
        conn.executemany(
            "INSERT INTO sitemap_page VALUES (?, ?, ?, ?, 1, ?) ON CONFLICT (page)"
            " DO UPDATE SET urls = urls + excluded.urls,"
            " bytes = bytes + excluded.bytes,"
            " lastmod = max(lastmod, excluded.lastmod), version = version + 1,"
            " changed = excluded.changed",
            [
                (part, totals.urls, totals.bytes, totals.newest, current)
                for part, totals in parts.items()
            ],
        )
        conn.executemany(
            "INSERT OR IGNORE INTO sitemap_section VALUES (?, ?)",
            [(part, t.section) for part, t in parts.items() if t.section != DEFAULT],
        )

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
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

    def removed_since(self, seq: int | None) -> Removed:
        # No paths read when none are asked for.
        after = 2**62 if seq is None else seq
        ((epoch, top, bottom, paths),) = self._query(_REMOVED_SINCE, (after,))
        data = _of_file(str(epoch), self._file) if epoch else ""
        return removed(data, seq, top, bottom, json.loads(paths))

    def add_counts(self, counts: Mapping[str, int]) -> None:
        rows = deltas(counts)
        if rows:
            with self._writing() as conn:
                # Saturated, never summed past MAX_COUNT: SQLite would make
                # the sum a float.
                conn.executemany(
                    "INSERT INTO sitemap_count VALUES (?, ?)"
                    " ON CONFLICT (reason) DO UPDATE SET n = CASE"
                    f" WHEN n > {MAX_COUNT} - excluded.n THEN {MAX_COUNT}"
                    " ELSE n + excluded.n END",
                    rows,
                )

    def counts(self) -> dict[str, int]:
        return dict(self._query("SELECT reason, n FROM sitemap_count"))

    def setting(self, name: str) -> str | None:
        rows = self._query(
            "SELECT value FROM sitemap_meta WHERE key = ?", (f"setting.{name}",)
        )
        return str(rows[0][0]) if rows else None

    def set_setting(self, name: str, value: str) -> None:
        with self._writing() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO sitemap_meta VALUES (?, ?)",
                (f"setting.{name}", value),
            )

    def queue_pushes(self, paths: Iterable[str]) -> None:
        wanted = list(paths)
        if wanted:
            with self._writing() as conn:
                self._queue(conn, wanted)

    def claim_pushes(self, limit: int, now: float, until: float) -> list[str]:
        with self._writing() as conn:
            rows = conn.execute(
                "UPDATE sitemap_push SET lease = ? WHERE rowid IN (SELECT rowid"
                " FROM sitemap_push WHERE lease <= ? ORDER BY rowid LIMIT ?)"
                " RETURNING path",
                (until, now, limit),
            ).fetchall()
        return [path for (path,) in rows]

    def pushed(self, paths: Iterable[str], until: float) -> int:
        with self._writing() as conn:
            before = conn.total_changes
            conn.executemany(
                "DELETE FROM sitemap_push WHERE path = ? AND lease = ?",
                [(path, until) for path in paths],
            )
            return conn.total_changes - before

    def retry_pushes(self, paths: Iterable[str], until: float, at: float) -> None:
        with self._writing() as conn:
            conn.executemany(
                "UPDATE sitemap_push SET lease = ? WHERE path = ? AND lease = ?",
                [(at, path, until) for path in paths],
            )

    def pending_pushes(self) -> int:
        return int(self._query("SELECT count(*) FROM sitemap_push")[0][0])

    def note(self, decisions: Iterable[Decision]) -> None:
        grouped = self._grouped(decisions)
        if not grouped:
            return
        with self._writing() as conn:
            held = dict(
                conn.execute(
                    "SELECT path, log FROM sitemap_decision"
                    " WHERE path IN (SELECT value FROM json_each(?))",
                    (json.dumps(list(grouped)),),
                )
            )
            # Written again, so that it takes the newest seq: the bound keeps
            # the paths decided about most lately.
            conn.executemany(
                "DELETE FROM sitemap_decision WHERE path = ?", [(p,) for p in held]
            )
            conn.executemany(
                "INSERT INTO sitemap_decision (path, log) VALUES (?, ?)",
                [
                    (path, logged(held.get(path), added, self.decisions_kept))
                    for path, added in grouped.items()
                ],
            )
            conn.execute(
                "DELETE FROM sitemap_decision WHERE seq <= (SELECT seq FROM"
                " sitemap_decision ORDER BY seq DESC LIMIT 1 OFFSET ?)",
                (self.decision_paths,),
            )

    def decisions(self, path: str) -> list[tuple[str, datetime]]:
        rows = self._query("SELECT log FROM sitemap_decision WHERE path = ?", (path,))
        return unlogged(rows[0][0] if rows else None)

    def visited(self, visits: Iterable[Visit]) -> None:
        rows = latest(visits)
        if not rows:
            return
        trim = self._trim_due(len(rows))
        with self._writing() as conn:
            conn.executemany(_VISITED, rows)
            if trim:
                conn.execute(_TRIM_VISITS, (self.unlisted_visits_kept,))

    def visits(self, paths: Iterable[str] | None = None) -> Iterator[Visit]:
        query = "SELECT path, agent, at, status FROM sitemap_visit"
        if paths is None:
            # A run at a time, in key order: bounded memory, no lock held
            # while the caller works.
            after: tuple[str, str] = ("", "")
            while True:
                rows = self._query(
                    f"{query} WHERE (path, agent) > (?, ?)"
                    f" ORDER BY path, agent LIMIT {RUN}",
                    after,
                )
                yield from (Visit(*row) for row in rows)
                if len(rows) < RUN:
                    return
                after = rows[-1][:2]
        wanted = sorted(set(paths))
        for start in range(0, len(wanted), RUN):
            rows = self._query(
                f"{query} WHERE path IN (SELECT value FROM json_each(?))",
                (json.dumps(wanted[start : start + RUN]),),
            )
            yield from (Visit(*row) for row in rows)

    def count(self, route: str | None = None) -> int:
        if route is None:
            rows = self._query("SELECT coalesce(sum(urls), 0) FROM sitemap_page")
        else:
            rows = self._query(
                "SELECT count(*) FROM sitemap_url WHERE route = ?", (route,)
            )
        return int(rows[0][0])

    def known(self, paths: Iterable[str]) -> set[str]:
        wanted = list(set(paths))
        if not wanted:
            return set()
        rows = self._query(
            "SELECT path FROM sitemap_url"
            " WHERE path IN (SELECT value FROM json_each(?))",
            (json.dumps(wanted),),
        )
        return {path for (path,) in rows}

    def parts(self) -> list[PartInfo]:
        rows = self._query(f"{_PART} ORDER BY p.page")
        return [PartInfo.from_row(self._epoch, *row) for row in rows]

    def part(self, number: int) -> PartInfo | None:
        rows = self._query(f"{_PART} AND p.page = ?", (number,))
        return PartInfo.from_row(self._epoch, *rows[0]) if rows else None

    def _ranges(self, number: int) -> Iterator[tuple[bool, tuple[int, int, int]]]:
        """Whether each run is sparse, and its (first seq, last seq, part):
        runs of at most the part's ``layout.run_rows``.

        Without sections, new rows always join the last part, so each part's
        rows fill one range of seq that no other part's rows enter: after one
        index lookup for its ends, a part is read as rowid ranges (keyset,
        never OFFSET), which SQLite walks in order without touching the index.
        A part whose range is more than twice its rows (sections filling
        side by side, many rows gone) is read through the (page, seq) index,
        each run's end found by one probe of it.
        """
        ((low, high, urls, size),) = self._query(_ENDS, (number,))
        if low is None:
            return
        rows = layout.run_rows(urls or 0, size or 0)
        if high - low < 2 * (urls or 0) + rows:
            for start in range(low, high + 1, rows):
                yield False, (start, min(start + rows - 1, high), number)
            return
        start = low
        while start <= high:
            found = self._query(
                "SELECT seq FROM sitemap_url WHERE page = ? AND seq >= ?"
                " ORDER BY seq LIMIT 1 OFFSET ?",
                (number, start, rows),
            )
            end = found[0][0] - 1 if found else high
            yield True, (start, end, number)
            start = end + 1

    def fragments(self, number: int) -> Iterator[bytes]:
        for sparse, run in self._ranges(number):
            query = _SPARSE_JOINED_RUN if sparse else _JOINED_RUN
            ((joined,),) = self._query(query, run)
            if joined is not None:
                yield joined

    def entries(self, number: int) -> Iterator[Entry]:
        for sparse, run in self._ranges(number):
            query = _SPARSE_ENTRY_RUN if sparse else _ENTRY_RUN
            for path, lastmod, print_, route, title in self._query(query, run):
                when = to_datetime(lastmod)
                yield Entry(path, when, print_, route=route, title=title)

    def publish(self, articles: Iterable[Article], now: int) -> None:
        rows = [tuple(article) for article in articles]
        with self._writing() as conn:
            conn.executemany(_PUBLISH, rows)
            conn.execute(_NEWS_TRIM, (news_cutoff(now), NEWS_KEPT))

    def news(self, since: int, limit: int = MAX_NEWS) -> list[Article]:
        return [Article(*row) for row in self._query(_NEWS_READ, (since, limit))]


# The columns of a new row after its path and part (layout.Row's fields), and
# those that may hold NULL.
_ROW_COLUMNS = ("lastmod", "fingerprint", "route", "fragment", "declared", "title")
_NULLABLE = frozenset({1, 2, 4, 5})


def _insert(conn: sqlite3.Connection, new: list[Change]) -> None:
    """Insert the rows of new paths, in order. A column NULL in every
    row (a bulk load's titles) is left to its default rather than bound: the
    driver looks each None it binds up in its adapters' registry, which costs
    more than the rest of the row's binding."""
    first = new[0].row
    kept = [
        i
        for i in range(len(_ROW_COLUMNS))
        if i not in _NULLABLE
        or first[i] is not None
        or any(change.row[i] is not None for change in new)
    ]
    columns = ["path", "page", *(_ROW_COLUMNS[i] for i in kept)]
    pick = itemgetter(*kept)
    params = (
        ((path, part, *row) for path, part, row, _ in new)
        if len(kept) == len(_ROW_COLUMNS)
        else ((path, part, *pick(row)) for path, part, row, _ in new)
    )
    conn.executemany(
        f"INSERT INTO sitemap_url ({', '.join(columns)})"
        f" VALUES ({', '.join('?' * len(columns))})",
        params,
    )


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE (the write lock up front: no upgrade deadlock), COMMIT,
    or ROLLBACK on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


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
