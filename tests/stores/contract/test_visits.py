"""Visits (stores.base): each page's last visit per kind of client, bounded."""

from __future__ import annotations

from collections.abc import Callable

from support.stored import T0

from sitemap_middleware import Entry, Store
from sitemap_middleware.stores.contract import Visit, Visits

CAPABILITIES = (Visits,)


def test_visits_keep_each_path_and_agent_s_latest(
    make_store: Callable[..., Store],
) -> None:
    """visited (stores.contract.Visits): a visit is kept as its (path, agent)'s
    last unless the one kept is later, within a batch and across batches;
    visits() reads every kept one, or those of the paths asked about."""
    store = make_store()
    assert list(store.visits()) == []
    store.visited([])
    store.visited(
        [
            Visit("/a", "google", 100, 200),
            Visit("/a", "google", 90, 500),  # earlier in the same batch: lost
            Visit("/a", "", 100, 200),
            Visit("/sitemap.xml", "bing", 50, 304),
            Visit("/b?q=%C3%A9", "google", 70, 404),
        ]
    )
    store.visited([Visit("/a", "google", 80, 503), Visit("/a", "bing", 120, 200)])
    store.visited([Visit("/sitemap.xml", "bing", 60, 200)])  # later: replaces
    assert sorted(store.visits()) == [
        Visit("/a", "", 100, 200),
        Visit("/a", "bing", 120, 200),
        Visit("/a", "google", 100, 200),
        Visit("/b?q=%C3%A9", "google", 70, 404),
        Visit("/sitemap.xml", "bing", 60, 200),
    ]
    assert sorted(store.visits(["/sitemap.xml", "/b?q=%C3%A9", "/none"])) == [
        Visit("/b?q=%C3%A9", "google", 70, 404),
        Visit("/sitemap.xml", "bing", 60, 200),
    ]
    assert list(store.visits([])) == []


def test_visits_keep_listed_paths_and_the_latest_others(
    make_store: Callable[..., Store],
) -> None:
    """Bounded: every listed path's visits stay; of the others, the most
    lately visited unlisted_visits_kept (a store may trim now and then, so
    up to twice as many between two trims, never the newest)."""
    store = make_store()
    store.unlisted_visits_kept = 3  # type: ignore[attr-defined]
    store.upsert([Entry(f"/listed/{n}", T0, "f") for n in range(5)])
    store.visited([Visit(f"/listed/{n}", "", n, 200) for n in range(5)])
    for n in range(20):
        store.visited([Visit(f"/other/{n}", "google", 100 + n, 200)])
    kept = {v.path for v in store.visits()}
    assert {f"/listed/{n}" for n in range(5)} <= kept
    others = kept - {f"/listed/{n}" for n in range(5)}
    assert {"/other/19", "/other/18", "/other/17"} <= others
    assert len(others) <= 6
    assert others <= {f"/other/{n}" for n in range(13, 20)}
    # A large batch of unlisted visits trims at once.
    store.visited([Visit(f"/more/{n}", "bing", 200 + n, 200) for n in range(50)])
    kept = {v.path for v in store.visits()}
    assert {f"/listed/{n}" for n in range(5)} <= kept
    assert kept - {f"/listed/{n}" for n in range(5)} == {
        "/more/49",
        "/more/48",
        "/more/47",
    }
