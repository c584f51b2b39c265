"""Present (stores.contract): a store says whether it holds a sitemap, looking
without making one, so that a command that only reads refuses what holds none
rather than make its tables there."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from support.store_kinds import Fresh
from support.stored import T0

from sitemap_middleware import Entry, Store, open_store
from sitemap_middleware.stores.contract import Present

CAPABILITIES = (Present,)


def test_a_store_written_is_present(store: Store) -> None:
    assert isinstance(store, Present)
    store.upsert([Entry("/a", T0, "f")])
    assert store.present()
    assert store.count() == 1


def test_a_look_makes_nothing_and_a_store_opened_is_present(
    shared_kind: str,
    fresh: Fresh,
    tmp_path: Path,
    capable: Callable[[Store], Store],
) -> None:
    """Where nothing was recorded (a file not there, a table prefix or a key
    prefix nothing was written under) a look says so, again and again: it made
    nothing. A store another object opened (as a worker does) holds one, pages
    or not."""
    uri = fresh.uri(shared_kind, tmp_path)
    looking = capable(open_store(uri))
    opening = open_store(uri)
    try:
        assert isinstance(looking, Present)
        assert not looking.present()
        assert not looking.present()
        assert opening.count() == 0  # opened: its schema made
        assert looking.present()
    finally:
        looking.close()
        opening.close()
