"""The recorder's parts on their own: the pure digest, the counters, the writer's
isolation of bugs (invariant 18) and the process hooks shared by all recorders."""

from __future__ import annotations

import atexit
import logging
import os
import time
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from sitemap_middleware.config import Config
from sitemap_middleware.errors import StoreError
from sitemap_middleware.model import Entry
from sitemap_middleware.reasons import RECORD, REMOVE, Errors, Seen, Skipped
from sitemap_middleware.recording import writer
from sitemap_middleware.recording.counters import Counters
from sitemap_middleware.recording.digest import (
    Prints,
    Removal,
    Skip,
    Target,
    Unchanged,
    Upsert,
    digest,
    is_storable,
    locate,
)
from sitemap_middleware.recording.observation import Observation, Observed
from sitemap_middleware.recording.recheck import ConfigJudge
from sitemap_middleware.recording.recorder import PROCESS, Recorder
from sitemap_middleware.routes import Route, Routes
from sitemap_middleware.stores.memory import MemoryStore
from sitemap_middleware.watching.policy import Policy

BASE_URL = "https://www.example.com"
LOGGER = "sitemap_middleware"
CONFIG = Config.from_mapping(
    {"base_url": BASE_URL, "store": "memory://", "new_urls_per_minute": None}
)
ROUTE = Routes(CONFIG).unknown
HTML = [("Content-Type", "text/html; charset=utf-8")]


def page(
    path: str, text: str = "", action: str = RECORD, route: Route = ROUTE
) -> Observation:
    body = [
        f"<html><head><title>{path}</title></head><body>{text}</body></html>".encode()
    ]
    if action != RECORD:
        body = []
    return Observed(
        action,
        path,
        path,
        "",
        False,
        route,
        HTML,
        body,
        sum(map(len, body)),
        time.time(),
    )


def paths(store: MemoryStore) -> list[str]:
    return sorted(entry.path for entry in store.entries(1))


class BuggyStore(MemoryStore):
    """A memory store with a bug: any batch holding ``/bad`` raises TypeError,
    in upsert and remove alike."""

    def upsert(self, entries: Iterable[Entry]) -> int:
        entries = list(entries)
        if any(entry.path == "/bad" for entry in entries):
            raise TypeError("a bug in upsert")
        return super().upsert(entries)

    def remove(self, paths: Iterable[str]) -> int:
        paths = list(paths)
        if "/bad" in paths:
            raise TypeError("a bug in remove")
        return super().remove(paths)


class DownStore(MemoryStore):
    """A memory store whose server is gone while ``down``."""

    down = False

    def upsert(self, entries: Iterable[Entry]) -> int:
        if self.down:
            raise StoreError("connection refused")
        return super().upsert(entries)


def recorder_on(store: MemoryStore) -> Recorder:
    return Recorder(CONFIG, Policy(CONFIG), store)


def break_digest(
    monkeypatch: pytest.MonkeyPatch, error: type[Exception], bad: str
) -> None:
    """A bug in the writer's digest: ``error`` raised for the paths that start
    with ``bad``; the others digested as ever."""
    real = writer.digest

    def buggy(observation: Observation, *args: Any) -> Any:
        if observation.path.startswith(bad):
            raise error("a bug in the digest")
        return real(observation, *args)

    monkeypatch.setattr(writer, "digest", buggy)


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.name == LOGGER and r.levelno == logging.ERROR and r.exc_info
    ]


# -- the digest ------------------------------------------------------------------


def test_digest_gives_typed_outcomes() -> None:
    """A new page is an Upsert with a validated entry; the same bytes again an
    Unchanged; a removal a Removal; a noindex page a Removal with its reason; an
    excluded path a Skip."""
    rules = Policy(CONFIG)
    outcome = digest(page("/a"), CONFIG, rules, None)
    assert type(outcome) is Upsert
    assert outcome.entry.path == "/a" and outcome.key == "/a" and not outcome.known
    again = digest(page("/a"), CONFIG, rules, outcome.prints)
    assert again == Unchanged("/a", "/a", outcome.prints, None)
    assert digest(page("/a", action=REMOVE), CONFIG, rules, None) == Removal(
        "/a", "/a", None
    )
    noindex = page("/n", '<meta name="robots" content="noindex">')
    noindex = noindex._replace(
        body=[b'<html><head><meta name="robots" content="noindex"></head></html>']
    )
    assert digest(noindex, CONFIG, rules, None) == Removal("/n", "/n", Skipped.NOINDEX)
    assert digest(page("/admin/x"), CONFIG, rules, None) == Skip(Skipped.EXCLUDED)
    assert digest(page("/a\x00"), CONFIG, rules, None) == Skip(Skipped.BAD_PATH)


def test_digest_skips_what_no_sitemap_may_hold() -> None:
    """A value that cannot be rendered (here a priority out of 0.0-1.0 on a
    route built by hand) is a counted skip in the digest, never an entry that
    would raise in a store's upsert."""
    bad = Route(None, None, 5.0, False, None, frozenset())
    outcome = digest(page("/a", route=bad), CONFIG, Policy(CONFIG), None)
    assert outcome == Skip(Skipped.UNSTORABLE, "/a")
    assert is_storable(Entry("/a", priority=0.5), 0)
    assert not is_storable(Entry("/a", changefreq="sometimes"), 0)
    assert not is_storable(Entry("/a", alternates=(("de_AT", "/b"),)), 0)
    assert not is_storable(Entry("a"), 0)


def test_digest_is_pure() -> None:
    """The same observation and hit give the same outcome, whatever ran before."""
    rules = Policy(CONFIG)
    observation = page("/p", "text")
    first = digest(observation, CONFIG, rules, Prints("x", "y"))
    assert digest(observation, CONFIG, rules, Prints("x", "y")) == first


QUERY_ROUTE = Routes(
    Config.from_mapping({"base_url": BASE_URL, "store": "memory://", "query": ["page"]})
).unknown


DROPPED = Seen.QUERY_DROPPED


@pytest.mark.parametrize(
    ("wire", "query", "raw", "target"),
    [
        ("/a", "", False, Target("/a", True, None)),
        ("/caf\xc3\xa9", "", False, Target("/caf%C3%A9", True, None)),
        ("/caf%C3%A9", "", True, Target("/caf%C3%A9", True, None)),
        ("/caf%c3%a9", "", True, Target("/caf%C3%A9", False, Seen.OTHER_SPELLING)),
        ("/%61", "", True, Target("/a", False, Seen.OTHER_SPELLING)),
        # A page served to dot segments is routed as sent: no page's.
        ("/x/../a", "", False, Skip(Skipped.BAD_PATH)),
        ("/x/%2E%2E/a", "", True, Skip(Skipped.BAD_PATH)),
        ("/a/.b/..c", "", False, Target("/a/.b/..c", True, None)),
        ("/a;jsessionid=1", "", False, Target("/a", False, Seen.OTHER_SPELLING)),
        ("/a", "page=2", False, Target("/a?page=2", True, None)),
        ("/a", "page=2&utm_source=x", False, Target("/a?page=2", False, DROPPED)),
        ("/a", "page=2&q=x", False, Target("/a?page=2", False, Seen.QUERY_DROPPED)),
        ("/a", "page=%32", False, Target("/a?page=2", False, Seen.QUERY_DROPPED)),
        ("/a", "q=x", False, Target("/a", False, Seen.QUERY_DROPPED)),
        ("//a", "", False, Skip(Skipped.BAD_PATH)),
        ("/a//b", "", True, Skip(Skipped.BAD_PATH)),
    ],
)
def test_locate_tells_the_stored_spelling_from_others(
    wire: str, query: str, raw: bool, target: object
) -> None:
    """The stored spelling, whether the request's target was exactly it (a
    removal counts), and why a page served to it may only add the page."""
    observation = page(wire, route=QUERY_ROUTE)._replace(query=query, raw=raw)
    assert locate(observation, CONFIG, Policy(CONFIG)) == target


def test_digest_refuses_what_another_spelling_asks() -> None:
    """Another spelling's removal is a skip (not_exact), its page a stand-in
    (added only if not stored); with a hit it is nothing to write."""
    rules = Policy(CONFIG)
    other = page("/a;jsessionid=1")
    assert digest(other._replace(action=REMOVE, body=[]), CONFIG, rules, None) == Skip(
        Skipped.NOT_EXACT, "/a"
    )
    noindex = other._replace(body=[b'<head><meta name="robots" content="noindex">'])
    assert digest(noindex, CONFIG, rules, None) == Skip(Skipped.NOT_EXACT, "/a")
    stand_in = digest(other, CONFIG, rules, None)
    assert type(stand_in) is Upsert and stand_in.stand_in == Seen.OTHER_SPELLING
    assert stand_in.entry.path == "/a"
    changed = Prints("other bytes", "other content")
    assert digest(other, CONFIG, rules, changed) == Skip(Seen.OTHER_SPELLING, "/a")
    unchanged = Skip(Seen.UNCHANGED, "/a")
    assert digest(other, CONFIG, rules, stand_in.prints) == unchanged


def test_a_stand_in_is_written_only_where_the_store_has_no_page() -> None:
    """In the writer: a stand-in for a stored path writes nothing (counted),
    one for a new path is recorded; neither cancels a pending removal."""
    store = MemoryStore()
    store.upsert([Entry("/known", fingerprint="stored")])
    recorder = recorder_on(store)
    try:
        for path in ("/known", "/new"):
            recorder.submit(page(path)._replace(query="q=x"))
        assert recorder.flush(5.0)
        assert {e.path: e.fingerprint for e in store.entries(1)}["/known"] == "stored"
        assert paths(store) == ["/known", "/new"]
        recorder._recent.clear()  # as in another process: the writer decides
        recorder.submit(page("/new", action=REMOVE))
        recorder.submit(page("/new", "results for y")._replace(query="q=y"))
        assert recorder.flush(5.0)
        assert paths(store) == ["/known"]
        stats = recorder.stats()
        assert stats["seen"] == {"query_dropped": 2} and stats["recorded"] == 1
    finally:
        recorder.close()


# -- counters ----------------------------------------------------------------------


def test_counters_group_by_reason() -> None:
    """A count names its reason only; stats() puts it in its group."""
    counters = Counters()
    counters.add(Skipped.METHOD)
    counters.add(Seen.FRESH, 2)
    counters.add(Errors.STORE)
    counters.add("recorded", 3)
    assert counters.stats(queued=1, pending=2) == {
        "recorded": 3,
        "removed": 0,
        "skipped": {"method": 1},
        "dropped": {},
        "seen": {"fresh": 2},
        "errors": {"store": 1},
        "crawls": {},
        "queued": 1,
        "pending": 2,
    }


# -- bugs are isolated (invariant 18) ------------------------------------------------


def test_a_store_bug_drops_only_its_entry(caplog: pytest.LogCaptureFixture) -> None:
    """A store whose upsert raises TypeError for one path: the rest of the batch
    lands, the bug is logged once with its traceback and counted, flush()
    returns normally, and a following good page is recorded."""
    store = BuggyStore()
    recorder = recorder_on(store)
    try:
        for path in ("/a", "/bad", "/c", "/d", "/e"):
            recorder.submit(page(path))
        assert recorder.flush(5.0)
        assert paths(store) == ["/a", "/c", "/d", "/e"]
        recorder.submit(page("/f"))
        assert recorder.flush(5.0)
        assert paths(store) == ["/a", "/c", "/d", "/e", "/f"]
        stats = recorder.stats()
        assert stats["recorded"] == 5
        assert stats["errors"] == {"bug": 1}
        assert stats["pending"] == 0
    finally:
        recorder.close()
    logged = tracebacks(caplog)
    assert len(logged) == 1
    assert "a store upsert" in logged[0].getMessage()
    assert logged[0].exc_info is not None and logged[0].exc_info[0] is TypeError


def test_a_removal_bug_drops_only_its_path(caplog: pytest.LogCaptureFixture) -> None:
    """A removal batch with a path the store's remove() chokes on: the other
    paths go, the bug is logged and counted."""
    store = BuggyStore()
    store.upsert([Entry("/a"), Entry("/c")])
    recorder = recorder_on(store)
    try:
        for path in ("/a", "/bad", "/c"):
            recorder.submit(page(path, action=REMOVE))
        assert recorder.flush(5.0)
        assert paths(store) == []
        stats = recorder.stats()
        assert stats["removed"] == 2 and stats["errors"] == {"bug": 1}
    finally:
        recorder.close()
    assert len(tracebacks(caplog)) == 1


def test_a_digest_bug_drops_only_its_observation(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The digest hits an unexpected exception on one observation: the others
    are digested and written; the traceback is logged once however often the
    bug recurs (rate-limited), every occurrence counted."""
    break_digest(monkeypatch, KeyError, "/bad")
    store = MemoryStore()
    recorder = recorder_on(store)
    try:
        for path in ("/a", "/bad1", "/b", "/bad2"):
            recorder.submit(page(path))
        assert recorder.flush(5.0)
        recorder.submit(page("/c"))
        assert recorder.flush(5.0)
        assert paths(store) == ["/a", "/b", "/c"]
        assert recorder.stats()["errors"] == {"bug": 2}
    finally:
        recorder.close()
    logged = tracebacks(caplog)
    assert len(logged) == 1 and "the digest" in logged[0].getMessage()


@pytest.mark.slow
def test_flush_and_close_never_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in the writer's own bookkeeping makes flush() return False, not
    raise; a store whose close() raises does not make close() raise."""

    class BadClose(MemoryStore):
        def close(self) -> None:
            raise RuntimeError("a bug in close")

    recorder = recorder_on(BadClose())
    recorder.submit(page("/a"))

    def broken(self: Any, deadline: float | None = None) -> None:
        raise RuntimeError("a bug in drain")

    monkeypatch.setattr(writer.Writer, "_drain", broken)
    assert recorder.flush(1.0) is False
    recorder.close(1.0)
    assert recorder.stats()["errors"]["bug"] >= 1


def test_a_store_outage_keeps_everything_pending(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """StoreError is an outage, not a bug: nothing is dropped or logged as a
    bug, the batch stays pending and lands whole once the store is back."""
    store = DownStore()
    store.down = True
    recorder = recorder_on(store)
    try:
        for path in ("/a", "/b"):
            recorder.submit(page(path))
        assert not recorder.flush(5.0)
        stats = recorder.stats()
        assert stats["pending"] == 2 and stats["errors"] == {"store": 1}
        store.down = False
        assert recorder.flush(5.0)
        assert paths(store) == ["/a", "/b"]
    finally:
        recorder.close()
    assert tracebacks(caplog) == []


# -- hooks once per process ------------------------------------------------------------


def test_hooks_are_registered_once_per_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A hundred recorders made, used and closed: the process's exit and fork
    hooks are not registered again, and the recorders they serve do not pile up."""
    first = recorder_on(MemoryStore())  # the hooks exist from here on
    registered: list[object] = []
    monkeypatch.setattr(atexit, "register", lambda *a, **k: registered.append(a))
    monkeypatch.setattr(os, "register_at_fork", lambda **k: registered.append(k))
    live = len(PROCESS)
    for n in range(100):
        recorder = recorder_on(MemoryStore())
        recorder.submit(page(f"/p/{n}"))  # starts its writer thread
        assert len(PROCESS) == live + 1
        recorder.close()
    assert len(PROCESS) == live
    assert registered == []
    first.close()
    assert len(PROCESS) == live - 1


def test_the_writer_thread_outlives_a_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without any flush() call, the writer thread meets a digest bug and goes
    on to write the next page."""
    monkeypatch.setattr(writer, "FLUSH_INTERVAL", 0.02)
    break_digest(monkeypatch, ZeroDivisionError, "/bad")
    store = MemoryStore()
    recorder = recorder_on(store)
    try:
        recorder.submit(page("/bad"))
        recorder.submit(page("/good"))
        deadline = time.monotonic() + 5
        while store.count() < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert paths(store) == ["/good"]
        assert recorder._writer._thread is not None
        assert recorder._writer._thread.is_alive()
    finally:
        recorder.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # fork with threads
def test_a_forked_child_records_with_a_writer_of_its_own(tmp_path: Any) -> None:
    """The process's fork hook gives the child's recorder its own queue and
    writer: a page the child records lands, though the parent's writer thread
    does not exist there."""
    from sitemap_middleware.stores import open_store

    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    recorder = Recorder(CONFIG, Policy(CONFIG), store)
    try:
        recorder.submit(page("/parent"))
        assert recorder.flush(5.0)
        pid = os.fork()
        if pid == 0:  # the child: report by exit status only
            ok = False
            try:
                recorder.submit(page("/child"))
                thread = recorder._writer._thread  # started by this submit
                alive = thread is not None and thread.is_alive()
                ok = alive and recorder.flush(5.0)
                ok = ok and recorder.stats()["recorded"] == 2
            finally:
                os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert sorted(e.path for e in store.entries(1)) == ["/child", "/parent"]
    finally:
        recorder.close()


class RecheckedStore(MemoryStore):
    """A memory store whose reads of a part fail while ``down`` (an outage)
    or raise a bug while ``buggy``: what the config re-check reads."""

    down = False
    buggy = False

    def entries(self, number: int) -> Iterator[Entry]:
        if self.down:
            raise StoreError("connection refused")
        if self.buggy:
            raise TypeError("a bug in entries")
        return super().entries(number)


def test_the_recheck_waits_out_an_outage_and_stops_at_a_bug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The re-check runs under the writer's one outage rule: an outage leaves
    the refused page stored and the pass to do again; once the store is back
    it removes it. A bug ends the pass in this process (reported, counted),
    and recording goes on (invariant 18)."""
    config = Config.from_mapping(
        {"base_url": BASE_URL, "new_urls_per_minute": None, "exclude": ["/old/*"]}
    )
    for buggy in (False, True):
        store = RecheckedStore()
        store.upsert([Entry("/a", None, "x"), Entry("/old/1", None, "y")])
        judge = ConfigJudge(config, Policy(config), Routes(config).resolve)
        recorder = Recorder(config, Policy(config), store, judge)
        try:
            store.down = True
            assert not recorder.flush(5.0)
            store.down = False
            assert paths(store) == ["/a", "/old/1"]
            assert recorder.stats()["errors"] == {Errors.STORE: 1}
            store.buggy = buggy
            recorder.submit(page("/b"))
            assert recorder.flush(5.0)
            store.buggy = False
            assert "/b" in paths(store)  # recording went on either way
            stats = recorder.stats()
            if buggy:
                assert "/old/1" in paths(store)
                assert stats["errors"][Errors.BUG] == 1
                assert any(
                    "config re-check" in r.getMessage() for r in tracebacks(caplog)
                )
            else:
                assert paths(store) == ["/a", "/b"]
                assert stats["pruned"] == 1
        finally:
            recorder.close()
