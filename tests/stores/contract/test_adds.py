"""Adding pages only (the import's write), on every store that can: a stored path
is left as it is, decided in the write itself, whatever wrote it and however the
store came to hold it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from support.stored import CLUSTER, T0, clustered, member, paths

from sitemap_middleware import Entry, Store
from sitemap_middleware.stores.contract import Adds
from sitemap_middleware.stores.layout import BATCH

CAPABILITIES = (Adds,)


def _rows(store: Store) -> dict[str, Entry]:
    return {e.path: e for p in store.parts() for e in store.entries(p.number)}


def test_an_add_writes_new_paths_and_leaves_stored_ones(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    recorded = Entry("/a", T0, "seen", title="As served")
    store.upsert([recorded])
    later = T0 + timedelta(days=3)
    written = store.add(  # type: ignore[attr-defined]
        [Entry("/a", later, "claimed", title="As claimed"), Entry("/b", later)]
    )
    assert written == 1
    rows = _rows(store)
    assert rows["/a"] == recorded
    assert rows["/b"].lastmod == later
    assert paths(store) == ["/a", "/b"]


def test_an_add_writes_each_path_once_as_last_given(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    later = T0 + timedelta(days=1)
    assert store.add([Entry("/a", T0), Entry("/a", later)]) == 1  # type: ignore[attr-defined]
    assert _rows(store)["/a"].lastmod == later
    assert store.add([Entry("/a", T0)]) == 0  # type: ignore[attr-defined]
    assert _rows(store)["/a"].lastmod == later


def test_an_add_after_an_add_of_new_paths_reads_what_it_meets(
    make_store: Callable[..., Store],
) -> None:
    """A store writes a batch that follows one of new paths alone without
    reading first (a bulk load's): a stored path met there still stays."""
    store = make_store()
    assert store.add([Entry("/a", T0, "1"), Entry("/b", T0, "1")]) == 2  # type: ignore[attr-defined]
    later = T0 + timedelta(days=1)
    assert store.add([Entry("/b", later, "2"), Entry("/c", later, "2")]) == 1  # type: ignore[attr-defined]
    rows = _rows(store)
    assert (rows["/b"].lastmod, rows["/b"].fingerprint) == (T0, "1")
    assert rows["/c"].lastmod == later
    assert paths(store) == ["/a", "/b", "/c"]


def test_an_add_of_many_batches_leaves_every_stored_path(
    make_store: Callable[..., Store],
) -> None:
    """Across batches and the runs a store splits them into."""
    store = make_store()
    n = 2 * BATCH + 500
    store.upsert([Entry(f"/p/{i}", T0, "seen") for i in range(0, n, 3)])
    later = T0 + timedelta(days=1)
    offered = [Entry(f"/p/{i}", later, "claimed") for i in range(n)]
    assert store.add(offered) == n - len(range(0, n, 3))  # type: ignore[attr-defined]
    rows = _rows(store)
    assert len(rows) == n
    assert all(
        (row.fingerprint == "seen") == (int(path[3:]) % 3 == 0)
        for path, row in rows.items()
    )


def test_an_add_sees_what_another_process_wrote(
    two_stores: tuple[Store, Store],
) -> None:
    """A page the other "process" recorded (a visit, while an import runs) is
    left: the add decides on what the store holds when it writes."""
    visits, importer = two_stores
    importer.add([Entry("/a", T0, "claimed")])  # type: ignore[attr-defined]
    visits.upsert([Entry("/b", T0, "seen", title="Served")])
    later = T0 + timedelta(days=1)
    assert importer.add([Entry("/b", later, "claimed"), Entry("/c", later)]) == 1  # type: ignore[attr-defined]
    rows = _rows(visits)
    assert (rows["/b"].fingerprint, rows["/b"].title) == ("seen", "Served")
    assert sorted(rows) == ["/a", "/b", "/c"]


def test_an_add_of_cluster_members_leaves_the_stored_member(
    make_store: Callable[..., Store],
) -> None:
    """Members declaring alternates: the one stored stays as it was written,
    and the cluster completes with the members added."""
    store = make_store()
    store.upsert([member("/en/a")])
    claimed = Entry("/en/a", T0 + timedelta(days=1), "claimed", alternates=CLUSTER)
    added = store.add([claimed, member("/de/a"), member("/a")])  # type: ignore[attr-defined]
    assert added == 2
    assert _rows(store)["/en/a"].fingerprint == "print-/en/a"
    full = frozenset(CLUSTER)
    assert clustered(store) == dict.fromkeys(("/en/a", "/de/a", "/a"), full)
