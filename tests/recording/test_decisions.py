"""The decisions log: the writers note what they decided about each page they
digested, in their batches; every store keeps the last few per path and a bounded
number of paths, so that made-up URLs cannot grow it."""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone

from sitemap_middleware import Store, StoreError
from sitemap_middleware.config import Config
from sitemap_middleware.reasons import RECORD, REMOVE, Seen, Skipped
from sitemap_middleware.recording.observation import Observation, Observed
from sitemap_middleware.recording.recorder import Recorder
from sitemap_middleware.routes import Routes
from sitemap_middleware.stores.contract import (
    DECISION_PATHS,
    DECISIONS_KEPT,
    Decision,
    Decisions,
)
from sitemap_middleware.stores.memory import MemoryStore
from sitemap_middleware.watching.policy import Policy

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
CONFIG = Config.from_mapping(
    {"base_url": "https://www.example.com", "store": "memory://"}
    | {"new_urls_per_minute": None, "max_urls": 3}
)
HTML = [("Content-Type", "text/html; charset=utf-8")]


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_every_store_keeps_decisions(store: Store) -> None:
    assert isinstance(store, Decisions)
    assert store.decisions("/a") == []
    store.note([("/a", "recorded", at(0)), ("/b", "noindex", at(1))])
    store.note([("/a", "unchanged", at(2))])
    assert store.decisions("/a") == [("recorded", at(0)), ("unchanged", at(2))]
    assert store.decisions("/b") == [("noindex", at(1))]
    store.note([])  # nothing to write: no error


def test_the_last_few_per_path(store: Store) -> None:
    assert isinstance(store, Decisions)
    store.note(("/a", f"r{n}", at(n)) for n in range(DECISIONS_KEPT + 3))
    store.note([("/a", "last", at(100))])
    kept = store.decisions("/a")
    assert len(kept) == DECISIONS_KEPT
    assert kept[-1] == ("last", at(100))
    assert kept[0] == ("r4", at(4))


def test_the_paths_decided_about_most_lately(store: Store) -> None:
    """Beyond the bound, the paths decided about longest ago go first; a path
    decided about again is new again."""
    assert isinstance(store, Decisions)
    assert DECISION_PATHS == 10_000  # the default bound, set smaller here
    store.decision_paths = 5  # type: ignore[attr-defined]
    store.note((f"/{n}", "recorded", at(n)) for n in range(5))
    store.note([("/0", "unchanged", at(10))])  # /0 is the newest now
    store.note((f"/made-up/{n}", "not_exact", at(20)) for n in range(3))
    held = [path for path in ("/0", "/1", "/2", "/3", "/4") if store.decisions(path)]
    assert held == ["/0", "/4"]
    assert all(store.decisions(f"/made-up/{n}") for n in range(3))


def observed(path: str, head: str = "", action: str = RECORD) -> Observation:
    chunk = f"<html><head>{head}</head><body>{path}</body></html>".encode()
    body = [chunk] if action == RECORD else []
    route = Routes(CONFIG).unknown
    return Observed(
        action, path, path, "", False, route, HTML, body, len(chunk), time.time()
    )


def reasons(store: Decisions, path: str) -> list[str]:
    return [reason for reason, _ in store.decisions(path)]


def test_the_writer_notes_its_decisions() -> None:
    """Recorded, unchanged, removed, noindex, another spelling, a cap: each
    noted for the stored spelling; a removal of a page never stored, a secret
    and an excluded path are not (explain works those out from the config)."""
    store = MemoryStore()
    recorder = Recorder(CONFIG, Policy(CONFIG), store)
    try:
        for path in ("/a", "/b", "/c"):
            recorder.submit(observed(path))
        assert recorder.flush(5.0)
        recorder.submit(observed("/d"))  # over max_urls
        recorder._recent.clear()  # as another process: the digest decides again
        recorder.submit(observed("/a"))
        recorder.submit(observed("/b", '<meta name="robots" content="noindex">'))
        recorder.submit(observed("/x/../c", action=REMOVE))  # not exact
        recorder.submit(observed("/c", action=REMOVE))
        recorder.submit(observed("/never", action=REMOVE))
        recorder.submit(observed("/admin/x"))
        recorder.submit(observed("/reset/0123456789abcdef0123456789abcdef"))
        assert recorder.flush(5.0)
        recorder.submit(observed("/a"))  # the same bytes: unchanged
        assert recorder.flush(5.0)
    finally:
        recorder.close()
    assert reasons(store, "/a") == ["recorded", "recorded", Seen.UNCHANGED]
    assert reasons(store, "/b") == ["recorded", Skipped.NOINDEX]
    assert reasons(store, "/c") == ["recorded", Skipped.NOT_EXACT, "removed"]
    assert reasons(store, "/d") == ["not_admitted"]
    assert store.decisions("/never") == []
    assert store.decisions("/admin/x") == []
    assert not any("reset" in path for path in store._log)


class DownStore(MemoryStore):
    """A memory store whose log cannot be written while ``down``."""

    down = True

    def note(self, decisions: Iterable[Decision]) -> None:
        if self.down:
            raise StoreError("connection refused")
        super().note(decisions)


def test_decisions_wait_out_an_outage() -> None:
    """A store that fails keeps nothing from the writer's pages: the decisions
    stay pending and are noted once it is back."""
    store = DownStore()
    recorder = Recorder(CONFIG, Policy(CONFIG), store)
    try:
        recorder.submit(observed("/a"))
        assert not recorder.flush(5.0)
        assert [e.path for e in store.entries(1)] == ["/a"]
        assert store.decisions("/a") == []
        store.down = False
        assert recorder.flush(5.0)
    finally:
        recorder.close()
    assert reasons(store, "/a") == ["recorded"]
