"""Pushes and Pushing (stores.base): the pending IndexNow pushes, claimed under a
lease by one worker of all, queued by the writes that change pages."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from support.store_kinds import Fresh
from support.stored import in_section, sections_of

from sitemap_middleware import Entry, Store, open_store
from sitemap_middleware.stores.contract import Pushes, Pushing

CAPABILITIES = (Pushes, Pushing)


def entry(path: str, fingerprint: str = "v1") -> Entry:
    return Entry(path, datetime(2024, 5, 1, tzinfo=timezone.utc), fingerprint)


def test_a_claim_is_leased_and_deleted_once_pushed(store: Any) -> None:
    """A claim takes free paths (up to the limit) and leases them: a second
    claim meanwhile gets the others, then none; ``pushed`` deletes only what
    the claim still holds."""
    store.queue_pushes(["/a", "/b", "/c"])
    assert store.pending_pushes() == 3
    first = store.claim_pushes(2, 100.0, 200.0)
    second = store.claim_pushes(2, 100.0, 201.0)
    assert len(first) == 2 and len(second) == 1
    assert set(first) | set(second) == {"/a", "/b", "/c"}
    assert store.claim_pushes(10, 150.0, 250.0) == []
    assert store.pushed(first, 201.0) == 0  # not that claim's
    assert store.pushed(first, 200.0) == 2
    assert store.pending_pushes() == 1


def test_a_lease_that_ends_frees_its_paths(store: Any) -> None:
    """A worker that died leaves its claim: after its lease anyone claims it,
    and the dead claim can no longer delete it."""
    store.queue_pushes(["/a"])
    assert store.claim_pushes(10, 100.0, 200.0) == ["/a"]
    assert store.claim_pushes(10, 199.0, 299.0) == []
    assert store.claim_pushes(10, 200.0, 300.0) == ["/a"]
    assert store.pushed(["/a"], 200.0) == 0
    assert store.pushed(["/a"], 300.0) == 1


def test_a_path_queued_again_while_claimed_is_pushed_again(store: Any) -> None:
    """A page changed while its push is under way: the push's success does
    not delete it, and it is free at once."""
    store.queue_pushes(["/a"])
    assert store.claim_pushes(10, 100.0, 200.0) == ["/a"]
    store.queue_pushes(["/a"])
    assert store.pushed(["/a"], 200.0) == 0
    assert store.claim_pushes(10, 101.0, 201.0) == ["/a"]


def test_retry_pushes_holds_a_claim_until_the_retry(store: Any) -> None:
    """A push to retry later: free from ``at`` on, for any worker."""
    store.queue_pushes(["/a"])
    store.claim_pushes(10, 100.0, 200.0)
    store.retry_pushes(["/a"], 200.0, 500.0)
    assert store.claim_pushes(10, 400.0, 600.0) == []
    assert store.claim_pushes(10, 500.0, 600.0) == ["/a"]


def test_writes_queue_what_they_add_change_or_remove_when_pushing(
    store: Any,
) -> None:
    """Inside ``pushing()`` an upsert queues its new paths and those whose
    content changed (not the unchanged ones), a removal the removed ones;
    outside it nothing is queued. A path changed three times is pending once."""
    store.upsert([entry("/quiet")])
    assert store.pending_pushes() == 0
    with store.pushing():
        store.upsert([entry("/a"), entry("/b")])
        assert sorted(store.claim_pushes(10, 1.0, 2.0)) == ["/a", "/b"]
        store.pushed(["/a", "/b"], 2.0)
        store.upsert([entry("/a"), entry("/b")])  # unchanged
        assert store.pending_pushes() == 0
        for version in ("v2", "v3", "v4"):
            store.upsert([entry("/a", version)])
        store.remove(["/b", "/never"])
    assert sorted(store.claim_pushes(10, 3.0, 4.0)) == ["/a", "/b"]
    store.upsert([entry("/a", "v5")])
    store.remove(["/quiet"])
    assert store.pending_pushes() == 2


def test_a_removal_inside_withdrawing_withdraws_its_pending_pushes(
    store: Any,
) -> None:
    """Inside ``withdrawing()`` a removal takes the removed paths' pushes out
    of the pending set, free or claimed (the claim then deletes nothing),
    and queues none; the other pending pushes stay."""
    with store.pushing():
        store.upsert([entry("/a"), entry("/b"), entry("/c")])
    assert store.claim_pushes(1, 1.0, 2.0) == ["/a"]
    with store.withdrawing():
        assert store.remove(["/a", "/b", "/never"]) == 2
    assert store.pending_pushes() == 1
    assert store.pushed(["/a"], 2.0) == 0
    assert store.claim_pushes(10, 3.0, 4.0) == ["/c"]
    with store.withdrawing():
        store.remove(["/c"])  # a removal's own push is not queued either
    assert store.pending_pushes() == 0


def test_concurrent_claims_never_share_a_path(
    shared_kind: str, tmp_path: Path, fresh: Fresh
) -> None:
    """Eight workers, each with its own connection to one store, claim at
    once: every path goes to exactly one of them."""
    uri = fresh.uri(shared_kind, tmp_path)
    stores: list[Any] = [open_store(uri) for _ in range(8)]
    stores[0].queue_pushes([f"/p{i}" for i in range(400)])
    claimed: list[list[str]] = [[] for _ in stores]
    start = threading.Barrier(len(stores))

    def claim(i: int) -> None:
        start.wait()
        while paths := stores[i].claim_pushes(7, 100.0, 200.0 + i):
            claimed[i].extend(paths)

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [path for paths in claimed for path in paths]
    assert sorted(every) == sorted(f"/p{i}" for i in range(400))
    for each in stores:
        each.close()


def test_a_move_queues_no_indexnow_push(make_store: Callable[..., Store]) -> None:
    """A page moved to its section's part did not change: nothing to push."""
    store = make_store()
    with store.pushing():  # type: ignore[attr-defined]
        store.upsert([in_section("/a", "posts"), in_section("/b", "posts")])
        assert store.pending_pushes() == 2
        assert store.claim_pushes(10, 0, 1) and store.pushed(["/a", "/b"], 1) == 2
        assert store.upsert([in_section("/a", "tags")]) == 1
        assert store.pending_pushes() == 0
        assert [s for _, s, _ in sections_of(store)] == ["posts", "tags"]
