"""Checked (stores.base): a store checked at start-up, at once, is let go of and
keeps working, with what it held."""

from __future__ import annotations

from support.stored import T0, paths

from sitemap_middleware import Entry, Store
from sitemap_middleware.stores.contract import Checked

CAPABILITIES = (Checked,)


def test_a_usable_store_passes_its_check_new_or_holding_pages(store: Store) -> None:
    assert isinstance(store, Checked)
    store.check()  # new: nothing to read yet
    store.upsert([Entry("/a", T0, "f")])
    store.check()
    store.check()
    assert paths(store) == ["/a"]
    store.upsert([Entry("/b", T0, "f")])
    assert store.count() == 2
