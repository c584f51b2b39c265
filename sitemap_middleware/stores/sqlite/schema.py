"""The SQLite file's tables: made when a writable file is opened (a table a
release added, too), upgraded from the first release's schema, and read as
this release's when the file cannot be written.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ...model import Entry, to_datetime
from ..base import new_epoch
from ..layout import batches
from ..sql import decisions, mapped, news, pushes, removals, shared, visits
from ..sql.dialect import SQLITE
from ..sql.pages import COLUMNS_ADDED, SECTIONS

logger = logging.getLogger("sitemap_middleware")

# The schema the first release wrote (no fragments): upgraded when opened.
SCHEMA_1 = "1"

SCHEMA_VERSION = "2"
# The pages' tables, with the counters and the decisions log between them
# (the order the first files made them in).
_PAGES = """
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
    declared TEXT,                  -- hreflang alternates as declared (hreflang.pack)
    title TEXT,                     -- the page's title, not in the fragment
    description TEXT,               -- what the page says it is about, neither
    -- where it falls on the site map (sql/mapped.py), NULL: not placed yet
    mapgroup TEXT, mapown INTEGER, maploose INTEGER, maphead TEXT, mapkey BLOB
);
CREATE INDEX IF NOT EXISTS sitemap_url_page ON sitemap_url (page, seq);
-- count(route): added to version-2 files as they are opened
CREATE INDEX IF NOT EXISTS sitemap_url_route ON sitemap_url (route)"""
_PARTS = """
CREATE TABLE IF NOT EXISTS sitemap_page (
    page INTEGER PRIMARY KEY,
    urls INTEGER NOT NULL,
    bytes INTEGER NOT NULL,         -- rendered size of its fragments
    lastmod INTEGER NOT NULL,
    version INTEGER NOT NULL,
    changed INTEGER NOT NULL
);
"""
SCHEMA = ";".join([_PAGES, shared.SQLITE, decisions.SQLITE, _PARTS])
# The tables releases added after the first, apart from the sitemap's own:
# made when a writable file is opened, in this order.
ADDED = (
    pushes.SQLITE,
    removals.SQLITE,
    news.SQLITE,
    news.SQLITE_INDEX,
    SQLITE.sql(SECTIONS),
    visits.SQLITE,
)


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE (the write lock up front: no upgrade deadlock), COMMIT,
    or ROLLBACK on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def made(conn: sqlite3.Connection) -> bool:
    """Whether the file holds the sitemap's tables, of any release: its meta
    table (read, never made)."""
    return bool(
        conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'sitemap_meta'"
        ).fetchall()
    )


def held(conn: sqlite3.Connection) -> str | None:
    """The schema the file holds, ``None`` for a new one."""
    if not made(conn):
        return None
    rows = conn.execute("SELECT value FROM sitemap_meta WHERE key = 'schema'")
    found = rows.fetchall()
    return str(found[0][0]) if found else None


def upgrade_1(
    conn: sqlite3.Connection,
    write: Callable[[sqlite3.Connection, dict[str, Entry]], int],
    path: str,
) -> None:
    """A file of the first release (rows without their fragment, parts
    without their size) made a file of this schema in the caller's
    transaction: every row written again in first-seen order, through
    this release's layout, under a new epoch (the parts' versions start
    again, and must not repeat one served before)."""
    conn.execute("DROP INDEX IF EXISTS sitemap_url_page")
    conn.execute("DROP INDEX IF EXISTS sitemap_url_route")
    conn.execute("ALTER TABLE sitemap_url RENAME TO sitemap_url_1")
    conn.execute("ALTER TABLE sitemap_page RENAME TO sitemap_page_1")
    for statement in SCHEMA.split(";"):
        conn.execute(statement)
    conn.execute(SQLITE.sql(SECTIONS))
    rows = conn.execute(
        "SELECT path, lastmod, fingerprint, changefreq, priority, route"
        " FROM sitemap_url_1 ORDER BY seq"
    ).fetchall()
    entries = (
        Entry(path, to_datetime(lastmod), print_, freq, priority, route)
        for path, lastmod, print_, freq, priority, route in rows
    )
    for batch in batches(entries):
        write(conn, batch)
    conn.execute("DROP TABLE sitemap_url_1")
    conn.execute("DROP TABLE sitemap_page_1")
    conn.executemany(
        "UPDATE sitemap_meta SET value = ? WHERE key = ?",
        [(SCHEMA_VERSION, "schema"), (new_epoch(), "epoch")],
    )
    logger.info(
        "sitemap store %s upgraded from schema 1 to %s (%d pages)",
        path,
        SCHEMA_VERSION,
        len(rows),
    )


def add_columns(conn: sqlite3.Connection) -> None:
    """Files of version 2 made before rows kept their declared alternates,
    their title, their description or their place on the site map get the
    columns (NULL: not known) and the map's indexes (sql/mapped.py) when
    first opened: looked for again under the write lock, since other
    processes may be opening the file too. Additive, so the schema stays 2
    and a worker of an earlier release still reads and writes the file (a
    row without a place gets one from the writer)."""
    wanted = dict.fromkeys(COLUMNS_ADDED, "TEXT")
    wanted.update(zip(mapped.COLUMNS, mapped.TYPES["sqlite"], strict=True))
    if _lacking(conn, wanted) or _unindexed(conn):
        with transaction(conn):
            for name in _lacking(conn, wanted):
                conn.execute(
                    f"ALTER TABLE sitemap_url ADD COLUMN {name} {wanted[name]}"
                )
            for statement in mapped.INDEXES:
                conn.execute(SQLITE.sql(statement))


def _lacking(conn: sqlite3.Connection, wanted: dict[str, str]) -> list[str]:
    columns = {row[1] for row in conn.execute("PRAGMA table_info(sitemap_url)")}
    return [name for name in wanted if name not in columns]


def _unindexed(conn: sqlite3.Connection) -> bool:
    """Whether the pages table lacks one of the map's indexes."""
    indexes = {
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE tbl_name = 'sitemap_url'"
        )
    }
    return not indexes.issuperset(map(SQLITE.sql, mapped.INDEX_NAMES))


def as_this_release(conn: sqlite3.Connection) -> None:
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
    for statement in [
        *SCHEMA.split(";"),
        pushes.SQLITE,
        news.SQLITE,
        SQLITE.sql(SECTIONS),
        visits.SQLITE,
    ]:
        kept = "\n".join(
            x for x in statement.splitlines() if not x.strip().startswith("--")
        )
        words = kept.split()
        if words[:2] == ["CREATE", "TABLE"] and words[5] not in tables:
            conn.execute(kept.replace("CREATE TABLE", "CREATE TEMP TABLE", 1))
    columns = {row[1] for row in conn.execute("PRAGMA main.table_info(sitemap_url)")}
    missing = [
        name for name in (*COLUMNS_ADDED, *mapped.COLUMNS) if name not in columns
    ]
    if missing:
        added = ", ".join(f"NULL AS {name}" for name in missing)
        conn.execute(
            f"CREATE TEMP VIEW sitemap_url AS SELECT *, {added} FROM main.sitemap_url"
        )
