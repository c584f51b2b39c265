"""The store error contract: a driver's failure surfaces as ``StoreError`` (its
original as ``__cause__``) from every protocol method of every store, generators
included; serving answers an outage with the last good bytes or 503 in one log
line, and a bug the same way but logged with its traceback.
"""

from __future__ import annotations

import gzip
import logging
import os
import re
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from support.readonly import read_only_folder
from support.services import require_postgres
from support.store_kinds import Fresh
from werkzeug.test import Client

from sitemap_middleware import (
    Entry,
    StoreError,
    StoreFault,
    StoreReadOnly,
    open_store,
)
from sitemap_middleware.config import Config
from sitemap_middleware.serving.server import Server
from sitemap_middleware.stores import Store, StoreBase
from sitemap_middleware.stores import sqlite as sqlite_store
from sitemap_middleware.stores.contract import Checked
from sitemap_middleware.stores.memory import MemoryStore

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)

# Every protocol method, called as the middleware calls it (generators drained).
CALLS: dict[str, Callable[[Store], object]] = {
    "upsert": lambda store: store.upsert([Entry("/a", T0)]),
    "add": lambda store: store.add([Entry("/b", T0)]),  # type: ignore[attr-defined]
    "remove": lambda store: store.remove(["/a"]),
    "count": lambda store: store.count(),
    "count(route)": lambda store: store.count("/<x>"),
    "known": lambda store: store.known(["/a"]),
    "parts": lambda store: store.parts(),
    "part": lambda store: store.part(1),
    "fragments": lambda store: list(store.fragments(1)),
    "entries": lambda store: list(store.entries(1)),
    "add_counts": lambda store: store.add_counts({"recorded": 1}),  # type: ignore[attr-defined]
    "counts": lambda store: store.counts(),  # type: ignore[attr-defined]
    "setting": lambda store: store.setting("config"),  # type: ignore[attr-defined]
    "set_setting": lambda store: store.set_setting("config", "x"),  # type: ignore[attr-defined]
    "removed_since": lambda store: store.removed_since(0),  # type: ignore[attr-defined]
}


def assert_outage(store: Store, cause: type[BaseException] | tuple[type, ...]) -> None:
    """Every method raises StoreError caused by the driver's ``cause``."""
    for name, call in CALLS.items():
        with pytest.raises(StoreError) as caught:
            call(store)
        assert isinstance(caught.value.__cause__, cause), (name, caught.value)


# -- the base ----------------------------------------------------------------------


class _Flaky(StoreBase[object]):
    """A store whose 'driver' raises KeyError: in calls and mid-stream."""

    errors = (KeyError,)
    label = "flaky"

    def count(self, route: str | None = None) -> int:
        raise KeyError("gone")

    def fragments(self, number: int) -> Iterator[bytes]:
        yield b"<url/>"
        raise KeyError("gone mid-part")

    def known(self, paths: Any) -> set[str]:
        raise ValueError("a bug in the input")


def test_base_translates_the_declared_driver_errors_only() -> None:
    store = _Flaky()
    with pytest.raises(StoreError, match="flaky: 'gone'") as caught:
        store.count()
    assert isinstance(caught.value.__cause__, KeyError)
    stream = store.fragments(1)
    assert next(stream) == b"<url/>"  # the run before the failure is served
    with pytest.raises(StoreError, match="gone mid-part"):
        next(stream)
    with pytest.raises(ValueError, match="a bug in the input"):
        store.known(["/a"])


class _FlakyCapabilities(StoreBase[object]):
    """A store whose capabilities' 'driver' raises KeyError, in calls and
    mid-stream."""

    errors = (KeyError,)
    label = "flaky"

    def epoch(self) -> str:
        raise KeyError("gone")

    def add(self, entries: Any) -> int:
        raise KeyError("gone")

    def declarations(self, paths: Any) -> dict[str, str]:
        raise KeyError("gone")

    def resettle(self, paths: Any) -> None:
        raise KeyError("gone")

    def claim_pushes(self, limit: int, now: float, until: float) -> list[str]:
        raise KeyError("gone")

    def note(self, decisions: Any) -> None:
        raise KeyError("gone")

    def publish(self, articles: Any, now: int) -> None:
        raise KeyError("gone")

    def visits(self, paths: Any = None) -> Iterator[Any]:
        yield from ()
        raise KeyError("gone mid-stream")


def test_base_translates_every_capability_it_reads_in_the_contract() -> None:
    """The methods of every capability the contract names (the hreflang
    clusters across sites, the epoch, the adds, the pushes, the decisions, the news,
    the visits: a generator while iterated) turn the driver's errors into
    StoreError, as the pages' do."""
    store = _FlakyCapabilities()
    calls: list[Callable[[], object]] = [
        store.epoch,
        lambda: store.add([]),
        lambda: store.declarations(["/a"]),
        lambda: store.resettle(["/a"]),
        lambda: store.claim_pushes(1, 0.0, 1.0),
        lambda: store.note([]),
        lambda: store.publish([], 0),
        lambda: list(store.visits()),
    ]
    for call in calls:
        with pytest.raises(StoreError, match=r"flaky: .*gone") as caught:
            call()
        assert isinstance(caught.value.__cause__, KeyError)


def test_base_reopens_its_connection_after_fork(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One connection per process: a child (another pid) opens its own and
    never closes the parent's; close() releases this process's."""
    opened: list[list[str]] = []

    class Counted(StoreBase[list[str]]):
        def _connect(self) -> list[str]:
            conn: list[str] = []
            opened.append(conn)
            return conn

        def _disconnect(self, conn: list[str]) -> None:
            conn.append("closed")

    store = Counted()
    assert store._connection() is store._connection() is opened[0]
    import os

    pid = os.getpid()
    monkeypatch.setattr(os, "getpid", lambda: pid + 1)  # as in a forked child
    assert store._connection() is opened[1]
    assert opened[0] == []  # the parent's: not closed by the child
    monkeypatch.undo()
    store._pid = pid
    store.close()
    assert opened[1] == ["closed"] and store._conn is None
    assert store._connection() is opened[2]


def test_memory_store_has_no_outage() -> None:
    """Nothing to lose: the memory store declares no driver errors."""
    assert MemoryStore.errors == ()


# -- SQLite ------------------------------------------------------------------------


def test_sqlite_unopenable_file_is_an_outage(tmp_path: Path) -> None:
    """Its folder gone after start-up (a mount): an outage, saying which."""
    store = open_store(f"sqlite:///{tmp_path}/missing-folder/s.sqlite3")
    assert_outage(store, sqlite3.OperationalError)
    with pytest.raises(StoreError) as caught:
        store.count()
    assert str(caught.value) == (
        f"SQLite {tmp_path}/missing-folder/s.sqlite3: its folder"
        f" {tmp_path}/missing-folder does not exist: create the folder, or fix"
        " the store URI"
    )


# A name no file can have: (the URI's path under tmp_path, what is said).
UNOPENABLE = {
    "missing folder": ("instance/sitemap.sqlite3", "instance does not exist"),
    "a file for a folder": ("notes.txt/sitemap.sqlite3", "notes.txt is not a folder"),
    "a folder for a file": ("data", "is a folder: name a file in it"),
}


@pytest.mark.parametrize("case", sorted(UNOPENABLE))
def test_sqlite_file_no_folder_can_hold_is_refused_at_start_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """The configuration reference's own relative URI, without its folder (or
    a typo): refused as the middleware is made, naming the absolute path and
    what to do, never a silent 503 retried forever; nothing made."""
    from sitemap_middleware import ConfigError, SitemapMiddleware

    name, said = UNOPENABLE[case]
    (tmp_path / "notes.txt").write_text("not a folder")
    (tmp_path / "data").mkdir()
    monkeypatch.chdir(tmp_path)
    config = {"base_url": "http://localhost", "store": f"sqlite:///{name}"}
    with pytest.raises(ConfigError) as caught:
        SitemapMiddleware(_page_app, config)
    words = str(caught.value)
    assert words.startswith(f"SQLite {tmp_path / name}: "), words
    assert said in words and "\n" not in words
    assert "create the folder, or fix the store URI" in words or "name a file" in words
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "notes.txt"]


def test_sqlite_read_only_folder_without_the_file_is_an_error_at_start_up(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A folder that is there but cannot be written, without the file: a
    fault said at ERROR as the app starts (it starts: someone may make the
    folder writable), in the words the missing folder's are made by."""
    from sitemap_middleware import SitemapMiddleware

    caplog.set_level(logging.ERROR, "sitemap_middleware")
    with read_only_folder(tmp_path / "ro", lambda where: None) as where:
        config = {"base_url": "http://localhost", "store": f"sqlite:///{where}/s.db"}
        middleware = SitemapMiddleware(_page_app, config)
        try:
            assert _records(caplog, logging.ERROR) == [
                f"sitemap store unusable at start-up: SQLite {where}/s.db: does not"
                " exist and its folder cannot be written: make the folder"
                " writable, or point the store elsewhere"
            ]
            assert Client(middleware).get("/sitemap.xml").status_code == 503
        finally:
            middleware.close()


def test_sqlite_file_that_is_not_a_database_is_a_fault(
    tmp_path: Path, watch_now: None
) -> None:
    """Not a database: a StoreFault (not an outage) naming the file and what
    to do, from every method; kept without touching the file until the file
    changes, then the store works again (a backup restored)."""
    path = tmp_path / "s.sqlite3"
    path.write_bytes(b"this is no database, " * 200)
    store = open_store(f"sqlite:///{path}")
    assert_outage(store, sqlite3.DatabaseError)
    for call in CALLS.values():
        with pytest.raises(StoreFault, match="restore it from a backup") as caught:
            call(store)
        assert str(path) in str(caught.value)
        assert "delete it" in str(caught.value)
    with open_store(f"sqlite:///{tmp_path}/good.sqlite3") as good:
        good.upsert([Entry("/restored", T0)])
    os.replace(tmp_path / "good.sqlite3", path)
    assert store.known(["/restored"]) == {"/restored"}
    store.close()


@pytest.fixture
def watch_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SQLite store looks at its file at every call, not once a second."""
    monkeypatch.setattr(sqlite_store, "WATCH_INTERVAL", 0.0)


def _damage(path: Path) -> None:
    """Scribble over the middle of a database file (its rows' pages)."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    size = path.stat().st_size
    with path.open("r+b") as file:
        file.seek(size // 2)
        file.write(b"\xff" * 16384)


def _filled(path: Path, pages: int = 2000) -> None:
    with open_store(f"sqlite:///{path}?part_size=100") as store:
        store.upsert(
            Entry(f"/p/{n}", T0, images=(f"/i/{n}/{'x' * 200}",)) for n in range(pages)
        )


def test_sqlite_damaged_file_is_a_fault_when_opened(tmp_path: Path) -> None:
    """A database whose pages are damaged is refused when opened (checked
    whole: it is small), before any part is read."""
    path = tmp_path / "s.sqlite3"
    _filled(path)
    _damage(path)
    store = open_store(f"sqlite:///{path}")
    assert isinstance(store, Checked)
    with pytest.raises(StoreFault, match=r"is damaged \(.*restore it from a backup"):
        store.check()
    with pytest.raises(StoreFault):
        store.parts()
    store.close()


def test_sqlite_damaged_part_faults_every_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A file too large to check whole when opened, whose index reads but one
    of whose parts does not: once the part fails, every document answers 503
    (the index too, never a copy naming parts that fail), the reason said
    once at ERROR."""
    monkeypatch.setattr(sqlite_store, "QUICK_CHECK_BYTES", 0)
    path = tmp_path / "s.sqlite3"
    _filled(path)
    store = open_store(f"sqlite:///{path}")
    config = Config.from_mapping({"base_url": "https://example.com", "store": store})
    server = Server(config, store)
    index = server.serve("GET", "/sitemap.xml", _no_header)
    assert index.status == 200
    parts = store.parts()
    store.close()
    _damage(path)
    with caplog.at_level(logging.DEBUG, "sitemap_middleware"):
        statuses = {
            n: server.serve("GET", f"/sitemap-{n}.xml.gz", _no_header).status
            for n in (p.number for p in parts)
        }
        assert 503 in statuses.values()
        again = server.serve("GET", "/sitemap.xml", _no_header)
    assert again.status == 503 and again.headers
    assert b"needs attention" in again.body
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and str(path) in errors[0], errors
    store.close()


def test_sqlite_deleted_file_is_opened_again(
    tmp_path: Path, watch_now: None, caplog: pytest.LogCaptureFixture
) -> None:
    """Deleted with its -wal and -shm while two stores (two workers) use it:
    each opens the path again (one WARNING each, naming the file), the new
    file has a new epoch, and what is written next is in the file at the path
    (not in the deleted one); the file is sound."""
    path = tmp_path / "s.sqlite3"
    first, second = open_store(f"sqlite:///{path}"), open_store(f"sqlite:///{path}")
    first.upsert([Entry("/a", T0)])
    assert second.count() == 1
    epoch = first.epoch()  # type: ignore[attr-defined]
    for name in ("s.sqlite3", "s.sqlite3-wal", "s.sqlite3-shm"):
        (tmp_path / name).unlink()
    with caplog.at_level(logging.WARNING, "sitemap_middleware"):
        first.upsert([Entry("/b", T0)])
        second.upsert([Entry("/c", T0)])
        assert first.epoch() != epoch  # type: ignore[attr-defined]
        assert first.epoch() == second.epoch()  # type: ignore[attr-defined]
        first.upsert([Entry("/d", T0)])  # nothing more to say
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2, warnings
    assert all(str(path) in w for w in warnings)
    assert "deleted" in warnings[0]
    first.close()
    second.close()
    with open_store(f"sqlite:///{path}") as reader:
        assert reader.known(["/a", "/b", "/c", "/d"]) == {"/b", "/c", "/d"}
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.close()


def test_sqlite_replaced_file_is_opened_again(
    tmp_path: Path, watch_now: None, caplog: pytest.LogCaptureFixture
) -> None:
    """A backup of the store renamed over the path: read from then on (not the
    rows of the -wal the replaced file left), under a new epoch although the
    backup holds the same data's (the pages written since must be recorded
    again, and the versions served since must not be repeated)."""
    path = tmp_path / "s.sqlite3"
    store = open_store(f"sqlite:///{path}")
    store.upsert([Entry("/kept", T0)])
    backup = sqlite3.connect(tmp_path / "backup.sqlite3")
    source = sqlite3.connect(path)
    source.backup(backup)
    source.close()
    backup.close()
    store.upsert([Entry("/later", T0)])
    epoch = store.epoch()  # type: ignore[attr-defined]
    # The writers read the epoch with the removals log: the same identity.
    assert store.removed_since(None).epoch == epoch  # type: ignore[attr-defined]
    version = store.part(1).version  # type: ignore[union-attr]
    os.replace(tmp_path / "backup.sqlite3", path)
    with caplog.at_level(logging.WARNING, "sitemap_middleware"):
        assert store.known(["/kept", "/later"]) == {"/kept"}
    assert store.epoch() != epoch  # type: ignore[attr-defined]
    assert store.removed_since(None).epoch == store.epoch()  # type: ignore[attr-defined]
    store.upsert([Entry("/again", T0)])
    assert store.part(1).version != version  # type: ignore[union-attr]
    assert ["replaced" in r.getMessage() for r in caplog.records] == [True]
    store.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.close()


def test_sqlite_on_a_read_only_folder_is_served_read_only(tmp_path: Path) -> None:
    """A store on a read-only file system (or chmod'ed read-only): opened
    without a write, every page read; writes raise StoreReadOnly."""

    def fill(where: Path) -> None:
        with open_store(f"sqlite:///{where}/s.sqlite3?part_size=10") as store:
            store.upsert(Entry(f"/p/{n}", T0, f"f{n}") for n in range(25))

    with read_only_folder(tmp_path / "ro", fill) as where:
        before = sorted(p.name for p in where.iterdir())
        store = open_store(f"sqlite:///{where}/s.sqlite3")
        assert isinstance(store, Checked)
        store.check()
        assert store.count() == 25
        assert [p.urls for p in store.parts()] == [10, 10, 5]
        listed = [e.path for p in store.parts() for e in store.entries(p.number)]
        assert sorted(listed) == sorted(f"/p/{n}" for n in range(25))
        assert b"/p/3<" in b"".join(store.fragments(1))
        for write in (
            lambda: store.upsert([Entry("/new", T0)]),
            lambda: store.remove(["/p/1"]),
            lambda: store.add_counts({"recorded": 1}),  # type: ignore[attr-defined]
        ):
            with pytest.raises(StoreReadOnly, match="read-only"):
                write()
        assert sorted(p.name for p in where.iterdir()) == before
        store.close()


def test_sqlite_locked_file_is_an_outage(tmp_path: Path) -> None:
    """Another process holds the write lock past the store's timeout: writes
    fail as StoreError (and reads still work: WAL)."""
    path = tmp_path / "s.sqlite3"
    with open_store(f"sqlite:///{path}?timeout=0.1") as store:
        store.upsert([Entry("/a", T0)])
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            for write in (
                lambda: store.upsert([Entry("/b", T0)]),
                lambda: store.remove(["/a"]),
            ):
                with pytest.raises(
                    StoreError, match=re.escape(f"SQLite {path}: database is locked")
                ) as e:
                    write()
                # Transient: an outage, retried; never a fault.
                assert not isinstance(e.value, (StoreFault, StoreReadOnly))
            assert store.count() == 1
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert store.upsert([Entry("/b", T0)]) == 1


# -- Redis -------------------------------------------------------------------------


def test_redis_nothing_listening_is_an_outage() -> None:
    import redis

    store = open_store("redis://127.0.0.1:1/0?connect_timeout=0.2&timeout=0.2")
    assert_outage(store, redis.ConnectionError)


def test_an_outage_names_the_store_its_password_masked_on_one_line() -> None:
    """What every outage warning says (the writer's, serving's, the CLI's)
    is the StoreError's text: the store by its URI, password masked, and the
    driver's words on one line (psycopg's hint folded in)."""
    pytest.importorskip("psycopg")
    uris = {
        "redis://:s3cret@127.0.0.1:1/0?connect_timeout=0.2&timeout=0.2": (
            "Redis redis://:***@127.0.0.1:1/0: "
        ),
        "postgresql://postgres:s3cret@127.0.0.1:1/test?connect_timeout=1": (
            "PostgreSQL postgresql://postgres:***@127.0.0.1:1/test"
            "?connect_timeout=1: connection failed: "
        ),
    }
    for uri, start in uris.items():
        store = open_store(uri)
        with pytest.raises(StoreError) as caught:
            store.count()
        words = str(caught.value)
        assert words.startswith(start), words
        assert "s3cret" not in words and "\n" not in words and "\t" not in words
        assert len(words) > len(start) + 10  # the driver's own words follow


# -- PostgreSQL ----------------------------------------------------------------------


def test_postgres_bad_port_is_an_outage() -> None:
    import psycopg

    store = open_store("postgresql://postgres@127.0.0.1:1/test?connect_timeout=1")
    assert_outage(store, psycopg.OperationalError)


@pytest.fixture
def postgres_store(fresh: Fresh) -> Iterator[tuple[Store, str]]:
    name = f"sitemap-test-{secrets.token_hex(6)}"
    store = open_store(fresh.postgres_uri(statement_timeout=300, application_name=name))
    yield store, name
    store.close()


def test_postgres_statement_timeout_is_an_outage(
    postgres_store: tuple[Store, str],
) -> None:
    """A writer held up past statement_timeout (another holds the sitemap's
    lock) fails as StoreError, and the store works once the lock is gone."""
    import psycopg

    store, _ = postgres_store
    store.upsert([Entry("/a", T0)])
    prefix = store.prefix  # type: ignore[attr-defined]
    with psycopg.connect(require_postgres()) as holder:
        holder.execute(f"SELECT 1 FROM {prefix}meta FOR UPDATE")
        with pytest.raises(StoreError, match="PostgreSQL") as caught:
            store.upsert([Entry("/b", T0)])
        assert isinstance(caught.value.__cause__, psycopg.errors.QueryCanceled)
    assert store.upsert([Entry("/b", T0)]) == 1


@pytest.mark.slow
def test_postgres_terminated_backend_is_an_outage_or_recovered(
    postgres_store: tuple[Store, str],
) -> None:
    """Backends terminated under the store: each call either succeeds (the pool
    checks a connection before lending it) or raises StoreError; never
    anything else, and the store recovers."""
    import psycopg

    store, name = postgres_store
    store.upsert([Entry("/a", T0)])
    with psycopg.connect(require_postgres(), autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = %s",
            (name,),
        )
    for call in CALLS.values():
        try:
            call(store)
        except StoreError:
            pass
    deadline = time.monotonic() + 5
    while True:
        try:
            store.upsert([Entry("/back", T0)])
            break
        except StoreError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    assert "/back" in store.known(["/back"])


# -- serving -------------------------------------------------------------------------


class _Broken(MemoryStore):
    """A memory store whose part reads fail once ``failure`` is set."""

    failure: BaseException | None = None

    def part(self, number: int) -> Any:
        if self.failure is not None:
            raise self.failure
        return super().part(number)


def _server() -> tuple[Server, _Broken]:
    store = _Broken()
    config = Config.from_mapping({"base_url": "https://example.com", "store": store})
    return Server(config, store), store


def _no_header(name: str) -> None:
    return None


@pytest.mark.parametrize(
    ("failure", "traceback"),
    [(StoreError("Redis: connection refused"), False), (RuntimeError("bug"), True)],
    ids=["outage", "bug"],
)
def test_serving_failures(
    caplog: pytest.LogCaptureFixture, failure: BaseException, traceback: bool
) -> None:
    """An outage and a bug are both answered (the last good bytes, else 503);
    an outage logs one line, a bug its traceback."""
    server, store = _server()
    store.failure = failure
    with caplog.at_level(logging.ERROR, "sitemap_middleware"):
        response = server.serve("GET", "/sitemap-1.xml.gz", _no_header)
    assert response.status == 503
    store.failure = None
    store.upsert([Entry("/a", T0)])
    good = server.serve("GET", "/sitemap-1.xml.gz", _no_header)
    assert good.status == 200
    store.failure = failure
    with caplog.at_level(logging.ERROR, "sitemap_middleware"):
        again = server.serve("GET", "/sitemap-1.xml.gz", _no_header)
    assert (again.status, again.body) == (200, good.body)
    assert len(caplog.records) == 2
    for record in caplog.records:
        assert record.name == "sitemap_middleware"
        assert "/sitemap-1.xml.gz" in record.getMessage()
        if traceback:
            assert record.exc_info is not None and record.exc_info[1] is failure
            assert "bug" in record.getMessage()
        else:
            assert record.exc_info is None
            assert "connection refused" in record.getMessage()


# -- recording and start-up on a faulty SQLite file -----------------------------------


def _page_app(
    environ: dict[str, Any], start_response: Callable[..., Any]
) -> list[bytes]:
    body = f"<html><head><title>{environ['PATH_INFO']}</title></head></html>".encode()
    start_response("200 OK", [("Content-Type", "text/html; charset=utf-8")])
    return [body]


def _visit(middleware: Any, paths: list[str]) -> None:
    client = Client(middleware, use_cookies=False)
    for path in paths:
        response = client.get(path)
        assert response.status_code == 200
        response.get_data()
        response.close()


def _records(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "sitemap_middleware" and r.levelno == level
    ]


def test_a_damaged_file_is_an_error_at_start_up_and_never_retried(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Not a database: an ERROR as the middleware is made, naming the file and
    what to do; the writer says it once at ERROR (not an outage "retried" at
    WARNING) however often it meets it; the sitemap answers 503, the reason
    said once; pages are still the app's."""
    from sitemap_middleware import SitemapMiddleware

    path = tmp_path / "s.sqlite3"
    path.write_bytes(b"this is no database, " * 200)
    caplog.set_level(logging.DEBUG, "sitemap_middleware")
    config = {"base_url": "http://localhost", "store": f"sqlite:///{path}"}
    middleware = SitemapMiddleware(_page_app, config)
    try:
        started = _records(caplog, logging.ERROR)
        assert len(started) == 1, started
        assert "at start-up" in started[0] and str(path) in started[0]
        assert "restore it from a backup" in started[0]
        for n in range(3):
            _visit(middleware, [f"/p/{n}"])
            assert not middleware.flush(2.0)
        client = Client(middleware, use_cookies=False)
        for _ in range(3):
            assert client.get("/sitemap.xml").status_code == 503
            assert client.get("/sitemap-1.xml.gz").status_code == 503
        assert middleware.stats()["pending"] == 3
    finally:
        middleware.close()
    errors = _records(caplog, logging.ERROR)
    assert len(errors) == 3, errors  # start-up, the writer, serving: once each
    assert all(str(path) in e for e in errors)
    assert sum(e.startswith("recording stopped") for e in errors) == 1
    assert _records(caplog, logging.WARNING) == []


def test_a_read_only_store_is_served_and_records_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A store on a read-only file system: the sitemap is served from it; the
    writer says once that recording is off, then drops and counts quietly."""
    from sitemap_middleware import SitemapMiddleware

    def fill(where: Path) -> None:
        with open_store(f"sqlite:///{where}/s.sqlite3") as store:
            store.upsert(Entry(f"/p/{n}", T0, f"f{n}") for n in range(25))

    caplog.set_level(logging.DEBUG, "sitemap_middleware")
    with read_only_folder(tmp_path / "ro", fill) as where:
        config = {
            "base_url": "http://localhost",
            "store": f"sqlite:///{where}/s.sqlite3",
        }
        middleware = SitemapMiddleware(_page_app, config)
        try:
            _visit(middleware, [f"/new/{n}" for n in range(5)])
            middleware.flush(2.0)
            _visit(middleware, [f"/new/{n}" for n in range(5, 12)])
            middleware.flush(2.0)
            stats = middleware.stats()
            assert stats["dropped"] == {"read_only": 12}
            assert stats["pending"] == 0 and stats["recorded"] == 0
            client = Client(middleware, use_cookies=False)
            index = client.get("/sitemap.xml")
            assert index.status_code == 200
            part = client.get("/sitemap-1.xml.gz")
            assert part.status_code == 200
            assert gzip.decompress(part.get_data()).count(b"<url>") == 25
        finally:
            middleware.close()
    warnings = _records(caplog, logging.WARNING)
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("recording off") and str(where) in warnings[0]
    assert _records(caplog, logging.ERROR) == []
