"""Listing (stores.contract): a part's pages read for the site map, the
columns it shows as the store keeps them, alike on every store that has it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from support.stored import T0

from sitemap_middleware import Entry, Store
from sitemap_middleware.model import UNDATED, UNDATED_SECONDS
from sitemap_middleware.stores.contract import Listing

CAPABILITIES = (Listing,)


def test_listing_gives_what_entries_give_of_the_shown_columns(
    make_store: Callable[..., Store],
) -> None:
    """Each part's pages in first-seen order, in runs: path, route, title,
    description and lastmod in epoch seconds (UNDATED_SECONDS for none),
    what ``entries()`` gives of them; a removed page is gone."""
    store = make_store(part_size=3)
    store.upsert(
        [
            Entry("/", T0, title="Home", description="All of it"),
            Entry("/b/1", T0 + timedelta(days=1), route="/b/<id>", title="B 1"),
            Entry("/b/2", UNDATED, route="/b/<id>"),
            Entry("/c", T0, title="C", description="The letter"),
            Entry("/gone", T0, title="Gone"),
        ]
    )
    store.remove(["/gone"])
    assert isinstance(store, Listing)
    for part in store.parts():
        runs = list(store.listing(part.number))
        assert all(runs)  # no empty run
        listed = [row for run in runs for row in run]
        assert listed == [
            (
                e.path,
                e.route,
                e.title,
                e.description,
                int(e.lastmod.timestamp()) if e.lastmod else UNDATED_SECONDS,
            )
            for e in store.entries(part.number)
        ]
    rows = [
        row for p in store.parts() for run in store.listing(p.number) for row in run
    ]
    assert rows == [
        ("/", None, "Home", "All of it", int(T0.timestamp())),
        ("/b/1", "/b/<id>", "B 1", None, int(T0.timestamp()) + 86400),
        ("/b/2", "/b/<id>", None, None, UNDATED_SECONDS),
        ("/c", None, "C", "The letter", int(T0.timestamp())),
    ]
    assert list(store.listing(9)) == []


def test_listing_reads_a_large_part_in_runs(make_store: Callable[..., Store]) -> None:
    """A part longer than a run comes whole, in order, in several runs."""
    store = make_store()
    store.upsert([Entry(f"/p/{n}", T0, title=f"P {n}") for n in range(12_345)])
    (part,) = store.parts()
    runs = list(store.listing(part.number))
    assert len(runs) > 1
    assert [row[0] for run in runs for row in run] == [f"/p/{n}" for n in range(12_345)]
