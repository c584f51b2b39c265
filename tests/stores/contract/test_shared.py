"""Shared (stores.base): the site's counters and settings, shared by the writers."""

from __future__ import annotations

from collections.abc import Callable

from support.stored import paths

from sitemap_middleware import Store
from sitemap_middleware.stores.contract import MAX_COUNT, Shared

CAPABILITIES = (Shared,)


def test_counts_add_up_and_settings_keep(make_store: Callable[..., Store]) -> None:
    store = make_store()
    assert store.counts() == {} and store.setting("config") is None
    store.add_counts({"recorded": 2, "vary": 1, "host": 0})
    store.add_counts({"recorded": 3})
    store.add_counts({})
    assert store.counts() == {"recorded": 5, "vary": 1}
    store.set_setting("config", "a")
    store.set_setting("config", "b")
    assert store.setting("config") == "b" and store.setting("other") is None
    assert paths(store) == []  # neither is a page


def test_counters_stop_at_the_largest_64_bit_integer(
    make_store: Callable[..., Store],
) -> None:
    """A counter summed past MAX_COUNT stays an integer at MAX_COUNT (SQLite
    made it a float; PostgreSQL and Redis refused every later write), and the
    other counters of the same write are still added."""
    store = make_store()
    store.add_counts({"recorded": MAX_COUNT - 5})
    store.add_counts({"recorded": 10, "vary": 1})
    store.add_counts({"recorded": 1, "vary": 1})
    store.add_counts({"host": 2**70})  # beyond any integer a store holds
    counts = store.counts()
    assert counts == {"recorded": MAX_COUNT, "vary": 2, "host": MAX_COUNT}
    assert all(type(n) is int for n in counts.values())
