"""The SQLite store's own: its file across reopens and processes, WAL, older
files brought up to date, another schema refused."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest
from support.stored import CLUSTER, ROUTED, T0, in_section, member, paths

from sitemap_middleware import Entry, StoreError, StoreFault, open_store
from sitemap_middleware.stores.sqlite import SQLiteStore, runs


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


def _locs(run: bytes) -> list[str]:
    """The paths of a run of plain fragments, in their order."""
    return [line[11 : line.index(b"</loc>")].decode() for line in run.splitlines()]


@pytest.mark.parametrize("sections", [1, 2, 3])
def test_sqlite_joins_a_runs_fragments_in_seq_order(
    tmp_path: Path, sections: int
) -> None:
    """group_concat joins a run's rows in the order its plan walks them: a
    part reads back in first-seen order, not in the order of its paths (the
    UNIQUE index's), whether its rows fill a range alone (one section), with
    another section's between them (two) or spread so far that its runs are
    read through the (page, seq) index (three); and each plan for a run, the
    file's statistics known, walks the rowids or that index, no other index
    nor a sort."""
    path = tmp_path / "s.sqlite3"
    # First seen from the last path to the first: seq order is not path order.
    seen = [f"/{n:04d}" for n in reversed(range(sections * 2100))]
    kinds = ("posts", "tags", "")[:sections]
    with open_store(f"sqlite:///{path}") as store:
        store.upsert(in_section(p, kinds[n % sections]) for n, p in enumerate(seen))
        for number in range(1, sections + 1):
            read = list(store._ranges(number))  # type: ignore[attr-defined]
            assert len(read) > 1
            assert all(is_sparse == (sections == 3) for is_sparse, _ in read)
            joined = b"".join(store.fragments(number))
            assert joined.startswith(b"<url><loc>\x00/")
            assert _locs(joined) == seen[number - 1 :: sections]
    conn = sqlite3.connect(path)
    conn.execute("ANALYZE")
    for query in (runs._JOINED_RUN, runs._SPARSE_JOINED_RUN):
        explained = conn.execute(f"EXPLAIN QUERY PLAN {query}", (1, 9, 1))
        plan = [step for *_, step in explained]
        assert len(plan) == 1, plan
        assert "INTEGER PRIMARY KEY" in plan[0] or "sitemap_url_page" in plan[0]
    conn.close()


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


def test_sqlite_looks_at_another_app_s_database_without_a_write(
    tmp_path: Path,
) -> None:
    """A file of another app (no sitemap in it, WAL or not) holds no sitemap
    store; looking leaves its tables as they were. One the store opened
    holds one, before any page."""
    for mode in ("delete", "wal"):
        path = tmp_path / f"app-{mode}.db"
        conn = sqlite3.connect(path)
        conn.execute(f"PRAGMA journal_mode={mode}")
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY)")
        conn.commit()
        conn.close()
        store = SQLiteStore(str(path))
        assert not store.present()
        assert not store.present()
        conn = sqlite3.connect(path)
        assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("users",)]
        conn.close()
        store.count()  # opened writable: the store's tables made beside
        assert store.present()
        store.close()
    assert not SQLiteStore(str(tmp_path / "none.db")).present()
    assert not (tmp_path / "none.db").exists()


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
