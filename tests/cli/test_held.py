"""cli.held: the held store keeps the meaning of ``withdrawing()``: removals made
inside it are of URLs the config refuses, withdrawn rather than pushed when applied.
"""

from __future__ import annotations

import threading
from datetime import datetime, timezone

from sitemap_middleware import Entry
from sitemap_middleware.cli.held import held
from sitemap_middleware.stores.contract import Pushes, Pushing, Withdrawing
from sitemap_middleware.stores.memory import MemoryStore

OLD = datetime(2020, 1, 1, tzinfo=timezone.utc)


def _store() -> MemoryStore:
    store = MemoryStore()
    store.upsert([Entry(path, OLD) for path in ("/a", "/b", "/c")])
    return store


def test_the_re_check_sees_a_held_store_withdraw_and_no_push_goes_through_it() -> None:
    """The re-check asks ``Withdrawing``; the writer asks ``Pushing`` to queue
    pushes, which a held store leaves to :meth:`Held.apply`."""
    store = held(_store(), writes=True)
    assert isinstance(store, Withdrawing)
    assert not isinstance(store, Pushing)
    assert not isinstance(store, Pushes)


def test_only_this_thread_s_removals_inside_withdrawing_are_refused() -> None:
    store = held(_store(), writes=True)
    store.remove(["/a"])
    with store.withdrawing():
        other = threading.Thread(target=store.remove, args=(["/b"],))
        other.start()
        other.join()
        store.remove(["/a", "/c"])  # /a held already: refused now too
    store.remove(["/c"])
    assert list(store.removed) == ["/a", "/b", "/c"]
    assert store.refused == {"/a", "/c"}


def test_apply_withdraws_the_refused_and_pushes_the_rest() -> None:
    inner = _store()
    inner.queue_pushes(["/a"])
    store = held(inner, writes=True)
    with store.withdrawing():
        store.remove(["/a"])
    store.remove(["/b"])
    assert inner.pending_pushes() == 1  # held: nothing written yet
    assert store.apply(indexnow=True) == 2
    assert sorted(inner.claim_pushes(10, 0, 60)) == ["/b"]
