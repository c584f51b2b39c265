"""The SQLite store's own: its file across reopens and processes, WAL, older
files brought up to date, another schema refused."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest
from support.stored import CLUSTER, ROUTED, T0, member, paths

from sitemap_middleware import Entry, StoreError, StoreFault, open_store
from sitemap_middleware.stores.sqlite import SQLiteStore


def test_sqlite_persists_across_reopen(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path}/s.sqlite3"
    with open_store(uri) as store:
        store.upsert([Entry("/a", T0, "f")])
        version = store.part(1).version  # type: ignore[union-attr]
    with open_store(uri) as store:
        assert paths(store) == ["/a"]
        assert store.part(1).version == version  # type: ignore[union-attr]


def test_sqlite_uses_wal(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path}/s.sqlite3") as store:
        store.count()
    (mode,) = (
        sqlite3.connect(tmp_path / "s.sqlite3")
        .execute("PRAGMA journal_mode")
        .fetchone()
    )
    assert mode == "wal"


def test_sqlite_adds_the_route_index_to_older_files(tmp_path: Path) -> None:
    """A version-2 file made before count(route) gets its index when opened."""
    path = tmp_path / "s.sqlite3"
    with open_store(f"sqlite:///{path}") as store:
        store.upsert(ROUTED)
    conn = sqlite3.connect(path)
    conn.execute("DROP INDEX sitemap_url_route")
    conn.commit()
    with open_store(f"sqlite:///{path}") as store:
        assert store.count("/<x>") == 2
    indexes = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    assert "sitemap_url_route" in indexes
    conn.close()


def test_sqlite_adds_declared_alternates_to_older_files(tmp_path: Path) -> None:
    """A version-2 file made before rows kept their declared alternates gets
    the column when opened; its rows declare nothing known, and a cluster
    member written next to one of them is not listed."""
    path = tmp_path / "s.sqlite3"
    with open_store(f"sqlite:///{path}") as store:
        store.upsert([Entry("/de/a", T0)])
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE sitemap_url DROP COLUMN declared")
    conn.commit()
    with open_store(f"sqlite:///{path}") as store:
        store.upsert([member("/en/a", CLUSTER[:2])])
        assert b"xhtml:link" not in b"".join(store.fragments(1))
        store.upsert([member("/de/a", CLUSTER[:2])])
        assert b"".join(store.fragments(1)).count(b"<xhtml:link") == 4
    ((legacy,),) = conn.execute(
        "SELECT count(*) FROM sitemap_url WHERE declared IS NULL"
    )
    assert legacy == 0
    conn.close()


@pytest.mark.parametrize(
    ("schema", "error", "said"),
    [
        ("99", StoreError, "schema 99"),  # a newer release's
        ("x", StoreFault, "cannot upgrade: delete it to start again"),
    ],
)
def test_sqlite_refuses_a_schema_it_cannot_read(
    tmp_path: Path, schema: str, error: type[StoreError], said: str
) -> None:
    path = tmp_path / "s.sqlite3"
    with open_store(f"sqlite:///{path}") as store:
        store.count()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE sitemap_meta SET value = ? WHERE key = 'schema'", (schema,))
    conn.commit()
    conn.close()
    with pytest.raises(error, match=said):
        SQLiteStore(str(path)).count()


def _write_from_child(path: str, start: int) -> None:
    store = open_store(f"sqlite:///{path}")
    store.upsert(Entry(f"/c/{n}", T0) for n in range(start, start + 500))
    store.close()


def test_sqlite_after_fork_and_across_processes(tmp_path: Path) -> None:
    """A store opened in the parent works in forked children; concurrent writers
    lose nothing and duplicate nothing."""
    path = str(tmp_path / "s.sqlite3")
    store = open_store(f"sqlite:///{path}")
    store.upsert([Entry("/parent", T0)])
    context = multiprocessing.get_context("fork")
    children = [
        context.Process(target=_write_from_child, args=(path, start))
        for start in (0, 250, 500, 750)
    ]
    for child in children:
        child.start()
    for child in children:
        child.join(30)
        assert child.exitcode == 0
    assert store.count() == 1 + 1250
    assert sorted(paths(store)) == sorted(
        ["/parent", *(f"/c/{n}" for n in range(1250))]
    )
    store.close()
