"""Sections in the stores: each part holds one section's pages, membership stays
put, a page whose section changes moves, and a store without sections is laid
out, byte for byte, as before sections existed."""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from support.helpers import validate

from sitemap_middleware import Entry, Store
from sitemap_middleware.render import urlset

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
BASE = "https://example.com"


def layout_digest(store: Store) -> str:
    """The parts' numbers, sizes, dates and served bytes, as one digest."""
    digest = hashlib.sha256()
    for info in store.parts():
        xml = gzip.decompress(urlset(BASE, store.fragments(info.number)))
        validate(xml)
        digest.update(f"{info.number} {info.urls} {info.lastmod}\n".encode())
        digest.update(xml)
    return digest.hexdigest()


def unsectioned_history(store: Store) -> None:
    """Writes of every kind a store sees without sections: new pages in
    batches, updates, pages grown past their part's bytes, removals, then
    more new pages."""
    store.upsert(
        Entry(f"/p/{n}", T0 + timedelta(hours=n), f"a{n}", route="/p/<n>")
        for n in range(120)
    )
    store.upsert(
        Entry(f"/p/{n}", T0 + timedelta(days=30, hours=n), f"b{n}", route="/p/<n>")
        for n in range(0, 120, 7)
    )
    # Grown: twenty images each no longer fit their part's bytes.
    store.upsert(
        Entry(
            f"/p/{n}",
            T0 + timedelta(days=60),
            f"c{n}",
            route="/p/<n>",
            images=tuple(f"/img/{n}/{i}.png" for i in range(20)),
        )
        for n in (3, 4, 5)
    )
    store.remove([f"/p/{n}" for n in range(10, 40, 3)])
    store.upsert(Entry(f"/q/{n}", T0 + timedelta(minutes=n)) for n in range(50))


# The digest of unsectioned_history's parts before sections existed: a store
# without sections writes exactly those bytes.
UNSECTIONED = "aad0df74d600afe5bc0b85dc156ec36416336803a79a8aed95dcd564c2ba3c2c"


def test_a_store_without_sections_is_laid_out_as_before(
    make_store: Callable[..., Store],
) -> None:
    store = make_store(part_size=25, part_bytes=12_000)
    unsectioned_history(store)
    assert layout_digest(store) == UNSECTIONED
