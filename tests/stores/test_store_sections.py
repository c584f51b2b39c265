"""Sections in the stores: each part holds one section's pages, membership stays
put, a page whose section changes moves, and a store without sections is laid
out, byte for byte, as before sections existed."""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

import pytest
from support.helpers import validate

from sitemap_middleware import Entry, Store
from sitemap_middleware.render import urlset
from sitemap_middleware.stores.contract import Pushes

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


def sections_of(store: Store) -> list[tuple[int, str, list[str]]]:
    """Each non-empty part: its number, section and paths in order."""
    return [
        (info.number, info.section, [e.path for e in store.entries(info.number)])
        for info in store.parts()
    ]


def page(path: str, section: str | None, hours: int = 0) -> Entry:
    return Entry(path, T0 + timedelta(hours=hours), f"f{path}", section=section)


def test_sections_never_share_a_part(make_store: Callable[..., Store]) -> None:
    """Interleaved sections each fill parts of their own, numbered in the
    order they open, in first-seen order within each."""
    store = make_store(part_size=3)
    kinds = ["posts", "tags", None, "posts", "legal"]
    store.upsert(page(f"/{n}", kinds[n % len(kinds)]) for n in range(20))
    laid = sections_of(store)
    assert [number for number, _, _ in laid] == list(range(1, len(laid) + 1))
    for _, section, paths in laid:
        assert 1 <= len(paths) <= 3
        want = {n for n in range(20) if (kinds[n % len(kinds)] or "") == section}
        assert {int(p[1:]) for p in paths} <= want
        assert paths == sorted(paths, key=lambda p: int(p[1:]))
    assert {section for _, section, _ in laid} == {"posts", "tags", "", "legal"}
    # Every section's parts but its last are full.
    for section in ("posts", "tags", "", "legal"):
        sizes = [len(paths) for _, s, paths in laid if s == section]
        assert all(size == 3 for size in sizes[:-1])
    for info in store.parts():
        validate(gzip.decompress(urlset(BASE, store.fragments(info.number))))


def test_new_pages_join_their_sections_open_part(
    make_store: Callable[..., Store],
) -> None:
    """Membership is stable: a later write adds to each section's open part
    or opens the next part of the store, and leaves the other parts alone."""
    store = make_store(part_size=3)
    store.upsert([page("/p1", "posts"), page("/t1", "tags"), page("/p2", "posts")])
    before = {info.number: info.version for info in store.parts()}
    assert sections_of(store) == [(1, "posts", ["/p1", "/p2"]), (2, "tags", ["/t1"])]
    store.upsert([page("/t2", "tags"), page("/p3", "posts"), page("/p4", "posts")])
    assert sections_of(store) == [
        (1, "posts", ["/p1", "/p2", "/p3"]),
        (2, "tags", ["/t1", "/t2"]),
        (3, "posts", ["/p4"]),
    ]
    store.upsert([page("/d1", None), page("/t3", "tags")])
    laid = sections_of(store)
    assert laid[:2] == [
        (1, "posts", ["/p1", "/p2", "/p3"]),
        (2, "tags", ["/t1", "/t2", "/t3"]),
    ]
    assert laid[3] == (4, "", ["/d1"])
    after = {info.number: info.version for info in store.parts()}
    # /p1's part changed once (p3), not when tags and the default grew.
    store.upsert([page("/t4", "tags")])
    assert store.part(1).version == after[1] != before[1]  # type: ignore[union-attr]
    assert sections_of(store)[-1] == (5, "tags", ["/t4"])


def test_a_page_whose_section_changes_moves_and_keeps_its_lastmod(
    make_store: Callable[..., Store],
) -> None:
    """A stored page written with another section leaves its part for its
    section's open part, unchanged (lastmod and bytes); a page written with
    no section stays where it is; the parts it neither leaves nor joins keep
    their versions."""
    store = make_store(part_size=3)
    store.upsert([page("/a", "posts", 1), page("/b", "posts", 2)])
    store.upsert([page("/c", "tags", 3), page("/d", "legal", 4)])
    versions = {info.number: info.version for info in store.parts()}
    lastmod = store.parts()[0].lastmod
    # The same page, said to be of no section: nothing moves, nothing changes.
    assert store.upsert([page("/a", None, 1)]) == 0
    assert store.upsert([page("/a", "tags", 1)]) == 1
    assert sections_of(store) == [
        (1, "posts", ["/b"]),
        (2, "tags", ["/c", "/a"]),
        (3, "legal", ["/d"]),
    ]
    infos = {info.number: info for info in store.parts()}
    assert infos[3].version == versions[3]
    assert infos[1].version != versions[1] and infos[2].version != versions[2]
    assert infos[2].lastmod == lastmod.replace(hour=3)
    moved = [e for e in store.entries(2) if e.path == "/a"]
    assert moved[0].lastmod == T0 + timedelta(hours=1)
    assert store.count() == 4
    # To a section that has no part yet: the next part of the store.
    store.upsert([page("/d", "", 4)])
    assert sections_of(store)[-1] == (4, "", ["/d"])
    assert store.part(3) is None


@pytest.mark.slow
def test_parts_filled_side_by_side_read_whole_and_in_order(
    make_store: Callable[..., Store],
) -> None:
    """Sections filling side by side interleave their rows in first-seen
    order: each part still reads back whole, in order, in runs (more rows
    than a run of the SQLite store's reads, whose part spans three times its
    rows)."""
    store = make_store()
    kinds = ("posts", "tags", "")
    store.upsert(page(f"/{n}", kinds[n % 3]) for n in range(3 * 2100))
    laid = sections_of(store)
    assert [(number, section) for number, section, _ in laid] == [
        (1, "posts"),
        (2, "tags"),
        (3, ""),
    ]
    for number, section, paths in laid:
        start = kinds.index(section)
        assert paths == [f"/{n}" for n in range(start, 3 * 2100, 3)]
        xml = gzip.decompress(urlset(BASE, store.fragments(number)))
        assert xml.count(b"<url>") == 2100
        assert xml.index(f"{BASE}/{start}<".encode()) < xml.index(
            f"{BASE}/{start + 3}<".encode()
        )


def test_a_move_queues_no_indexnow_push(make_store: Callable[..., Store]) -> None:
    """A page moved to its section's part did not change: nothing to push."""
    store = make_store()
    if not isinstance(store, Pushes):
        pytest.skip("a store without IndexNow pushes")
    with store.pushing():  # type: ignore[attr-defined]
        store.upsert([page("/a", "posts"), page("/b", "posts")])
        assert store.pending_pushes() == 2
        assert store.claim_pushes(10, 0, 1) and store.pushed(["/a", "/b"], 1) == 2
        assert store.upsert([page("/a", "tags")]) == 1
        assert store.pending_pushes() == 0
        assert [s for _, s, _ in sections_of(store)] == ["posts", "tags"]
