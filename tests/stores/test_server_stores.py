"""The Redis and PostgreSQL stores, on what their servers keep: data across
reopens, and forked processes writing at once; a server not there."""

from __future__ import annotations

import multiprocessing
import time

import pytest
from support.store_kinds import SERVER_KINDS, Fresh
from support.stored import T0, paths, rendered

from sitemap_middleware import Entry, StoreError, open_store


@pytest.mark.parametrize("kind", SERVER_KINDS)
def test_server_store_persists_across_reopen(kind: str, fresh: Fresh) -> None:
    uri = fresh.uri(kind)
    with open_store(uri) as store:
        store.upsert([Entry("/a", T0, "f", "daily", 0.3, "/<x>")])
        version = store.part(1).version  # type: ignore[union-attr]
    with open_store(uri) as store:
        assert list(store.entries(1)) == [Entry("/a", T0, "f", route="/<x>")]
        assert b"<changefreq>daily</changefreq>" in rendered(store, 1)
        assert store.part(1).version == version  # type: ignore[union-attr]


def _write_uri_from_child(uri: str, start: int) -> None:
    store = open_store(uri)
    store.upsert([Entry(f"/only/{start}", T0)])
    for n in range(start, start + 500, 50):
        store.upsert(Entry(f"/c/{i}", T0) for i in range(n, n + 50))
    assert store.remove([f"/only/{start}"]) == 1
    store.close()


@pytest.mark.parametrize("kind", SERVER_KINDS)
def test_server_store_after_fork_and_across_processes(kind: str, fresh: Fresh) -> None:
    """Forked children reuse no connection of the parent's; concurrent writers
    of overlapping batches lose nothing, duplicate nothing and do not deadlock."""
    uri = fresh.uri(kind, part_size=100)
    store = open_store(uri)
    store.upsert([Entry("/parent", T0)])
    context = multiprocessing.get_context("fork")
    starts = (0, 250, 500, 750)
    children = [
        context.Process(target=_write_uri_from_child, args=(uri, start))
        for start in starts
    ]
    for child in children:
        child.start()
    for child in children:
        child.join(60)
        assert child.exitcode == 0
    expected = {"/parent", *(f"/c/{n}" for n in range(1250))}
    # The parent's connection still works after its children's writes.
    assert store.count() == len(expected)
    listed = paths(store)
    assert len(listed) == len(set(listed)) and set(listed) == expected
    assert sum(p.urls for p in store.parts()) == len(expected)
    assert all(p.urls <= 100 for p in store.parts())
    store.close()


@pytest.mark.parametrize(
    ("uri", "label", "within"),
    [
        ("redis://127.0.0.1:1/0?connect_timeout=0.5", "Redis", 2),
        ("postgresql://postgres@127.0.0.1:1/test?connect_timeout=1", "PostgreSQL", 5),
    ],
    ids=["redis", "postgres"],
)
def test_unreachable_server_fails_within_timeout(
    uri: str, label: str, within: float
) -> None:
    store = open_store(uri)
    started = time.monotonic()
    with pytest.raises(StoreError, match=label):
        store.count()
    assert time.monotonic() - started < within
