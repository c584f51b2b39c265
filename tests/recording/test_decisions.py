"""The decisions log: the writers note what they decided about each page they
digested, in their batches (what every store keeps of them, the last few per path
and a bounded number of paths, is tests/stores/contract/test_decisions.py)."""

from __future__ import annotations

import time
from collections.abc import Iterable

from sitemap_middleware import StoreError
from sitemap_middleware.config import Config
from sitemap_middleware.reasons import RECORD, REMOVE, Seen, Skipped
from sitemap_middleware.recording.observation import Observation, Observed
from sitemap_middleware.recording.recorder import Recorder
from sitemap_middleware.routes import Routes
from sitemap_middleware.stores.contract import Decision, Decisions
from sitemap_middleware.stores.memory import MemoryStore
from sitemap_middleware.watching.policy import Policy

CONFIG = Config.from_mapping(
    {"base_url": "https://www.example.com", "store": "memory://"}
    | {"new_urls_per_minute": None, "max_urls": 3}
)
HTML = [("Content-Type", "text/html; charset=utf-8")]


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
    assert store.decisions("/reset/0123456789abcdef0123456789abcdef") == []
    assert store.decisions("/reset") == []


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
