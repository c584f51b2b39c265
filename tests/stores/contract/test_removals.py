"""Removals (stores.base): every removal numbered and logged, bounded, read by
every writer."""

from __future__ import annotations

from collections.abc import Callable

from support.stored import T0

from sitemap_middleware import Entry, Store
from sitemap_middleware.stores.contract import Removals, Removed

CAPABILITIES = (Removals,)


def test_removals_are_numbered_and_logged(make_store: Callable[..., Store]) -> None:
    """removed_since (stores.contract.Removals): each stored path removed takes the
    next number, in the removal's own write; paths never stored, upserts and
    moves log nothing; the epoch comes with it, in the same read."""
    store = make_store(part_size=2)
    epoch = store.epoch()  # type: ignore[attr-defined]
    assert store.removed_since(None) == Removed(epoch, 0, ())
    assert store.removed_since(0) == Removed(epoch, 0, ())
    store.upsert([Entry(f"/{n}", T0, "f") for n in range(5)])
    store.upsert([Entry("/0", T0, "g" * 9000)])  # moved to the end: no removal
    assert store.remove(["/3", "/1", "/missing"]) == 2
    assert store.remove(["/missing"]) == 0
    assert store.removed_since(None) == Removed(epoch, 2, ())
    assert store.removed_since(0) == Removed(epoch, 2, ("/1", "/3"))
    assert store.removed_since(1) == Removed(epoch, 2, ("/3",))
    assert store.removed_since(2) == Removed(epoch, 2, ())
    store.upsert([Entry("/1", T0, "f")])  # back: the log keeps its removal
    store.remove(["/1"])
    assert store.removed_since(0) == Removed(epoch, 3, ("/1", "/3", "/1"))
    # A number this data never gave (it was made again): everything.
    assert store.removed_since(4) == Removed(epoch, 3, None)


def test_the_removals_log_is_bounded(make_store: Callable[..., Store]) -> None:
    """The log keeps the last removals_kept paths; asked about a number it no
    longer reaches back to, it says so (None: forget everything)."""
    store = make_store()
    store.removals_kept = 3  # type: ignore[attr-defined]
    store.upsert([Entry(f"/{n}", T0, "f") for n in range(6)])
    store.remove(["/0", "/1"])
    store.remove(["/2"])
    store.remove(["/3", "/4"])
    epoch = store.epoch()  # type: ignore[attr-defined]
    assert store.removed_since(2) == Removed(epoch, 5, ("/2", "/3", "/4"))
    assert store.removed_since(3) == Removed(epoch, 5, ("/3", "/4"))
    assert store.removed_since(1) == Removed(epoch, 5, None)
    assert store.removed_since(0) == Removed(epoch, 5, None)
    store.remove(["/5"])
    assert store.removed_since(2) == Removed(epoch, 6, None)
    assert store.removed_since(4) == Removed(epoch, 6, ("/4", "/5"))


def test_a_removal_is_read_by_another_process(two_stores: tuple[Store, Store]) -> None:
    """What one process removes, another's removed_since reads."""
    first, second = two_stores
    assert isinstance(second, Removals)
    first.upsert([Entry("/a", T0, "f"), Entry("/b", T0, "f")])
    seq = second.removed_since(None).seq
    first.remove(["/b"])
    assert second.removed_since(seq).paths == ("/b",)
