"""Decisions (stores.base): the writers' last decisions about each page, bounded
per path and in paths."""

from __future__ import annotations

from datetime import datetime, timedelta

from support.stored import T0

from sitemap_middleware import Store
from sitemap_middleware.stores.contract import DECISION_PATHS, DECISIONS_KEPT, Decisions

CAPABILITIES = (Decisions,)


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_every_store_keeps_decisions(store: Store) -> None:
    assert store.decisions("/a") == []
    store.note([("/a", "recorded", at(0)), ("/b", "noindex", at(1))])
    store.note([("/a", "unchanged", at(2))])
    assert store.decisions("/a") == [("recorded", at(0)), ("unchanged", at(2))]
    assert store.decisions("/b") == [("noindex", at(1))]
    store.note([])  # nothing to write: no error


def test_the_last_few_per_path(store: Store) -> None:
    store.note(("/a", f"r{n}", at(n)) for n in range(DECISIONS_KEPT + 3))
    store.note([("/a", "last", at(100))])
    kept = store.decisions("/a")
    assert len(kept) == DECISIONS_KEPT
    assert kept[-1] == ("last", at(100))
    assert kept[0] == ("r4", at(4))


def test_the_paths_decided_about_most_lately(store: Store) -> None:
    """Beyond the bound, the paths decided about longest ago go first; a path
    decided about again is new again."""
    assert DECISION_PATHS == 10_000  # the default bound, set smaller here
    store.decision_paths = 5  # type: ignore[attr-defined]
    store.note((f"/{n}", "recorded", at(n)) for n in range(5))
    store.note([("/0", "unchanged", at(10))])  # /0 is the newest now
    store.note((f"/made-up/{n}", "not_exact", at(20)) for n in range(3))
    held = [path for path in ("/0", "/1", "/2", "/3", "/4") if store.decisions(path)]
    assert held == ["/0", "/4"]
    assert all(store.decisions(f"/made-up/{n}") for n in range(3))
