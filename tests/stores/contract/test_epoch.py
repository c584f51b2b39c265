"""Epoch (stores.base): the identity of the data a store holds, which its writes
never change and every store object on the same data reads alike."""

from __future__ import annotations

from support.stored import T0

from sitemap_middleware import Entry, Store
from sitemap_middleware.stores.contract import Epoch, Removals

CAPABILITIES = (Epoch,)


def test_the_epoch_stays_while_the_data_lasts(store: Store) -> None:
    """Writes of every kind leave the epoch as it was: a writer forgets what
    it wrote only when the data is made again."""
    assert isinstance(store, Epoch)
    epoch = store.epoch()
    assert epoch and epoch == store.epoch()
    store.upsert([Entry("/a", T0, "f"), Entry("/b", T0, "f")])
    store.upsert([Entry("/a", T0, "g")])
    store.remove(["/b"])
    assert store.epoch() == epoch


def test_every_store_object_on_the_data_reads_one_epoch(
    two_stores: tuple[Store, Store],
) -> None:
    """Two processes' objects on one sitemap, whichever wrote first, read the
    same epoch, and the removals log answers with it."""
    first, second = two_stores
    assert isinstance(first, Epoch) and isinstance(second, Epoch)
    first.upsert([Entry("/a", T0, "f")])
    assert second.epoch() == first.epoch()
    if isinstance(second, Removals):
        assert second.removed_since(None).epoch == first.epoch()
