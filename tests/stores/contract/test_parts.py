"""Parts, on every store: stable membership, the URL and byte limits, the one
move (a grown entry), and reads in runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.helpers import locs, parse
from support.store_kinds import SERVER_KINDS, Fresh
from support.stored import LONG_BASE, T0, paths, rendered

from sitemap_middleware import Entry, Store
from sitemap_middleware.sitemaps import MAX_ORIGIN_BYTES, RUN, RUN_BYTES


def test_pages_are_stable(make_store: Callable[..., Store]) -> None:
    """New paths append; removals leave a page short and move nothing."""
    store = make_store(part_size=3)
    store.upsert([Entry(f"/{n}", T0) for n in range(7)])
    assert [(p.number, p.urls) for p in store.parts()] == [(1, 3), (2, 3), (3, 1)]
    versions = {p.number: p.version for p in store.parts()}
    store.remove(["/4"])
    store.upsert([Entry("/7", T0), Entry("/8", T0)])
    assert [[e.path for e in store.entries(n)] for n in (1, 2, 3)] == [
        ["/0", "/1", "/2"],
        ["/3", "/5"],
        ["/6", "/7", "/8"],
    ]
    after = {p.number: p.version for p in store.parts()}
    assert after[1] == versions[1]
    assert after[2] != versions[2] and after[3] != versions[3]
    store.remove(["/3", "/5"])
    assert [p.number for p in store.parts()] == [1, 3]
    assert store.part(2) is None and list(store.entries(2)) == []
    store.upsert([Entry("/9", T0)])
    assert [p.number for p in store.parts()] == [1, 3, 4]


def test_pages_split_by_bytes(make_store: Callable[..., Store]) -> None:
    """Long URLs close a page before its URL count does; each page, rendered
    with the longest base URL, stays within the byte limit."""
    store = make_store(part_size=50, part_bytes=8192)
    store.upsert(Entry(f"/{n}/" + "x" * 700, T0) for n in range(20))
    pages = store.parts()
    assert len(pages) > 2 and sum(p.urls for p in pages) == 20
    for page in pages[:-1]:
        size = len(rendered(store, page.number))
        assert size <= 8192
        # Closed only because the next URL would not fit.
        assert size + 700 + MAX_ORIGIN_BYTES > 8192 - 200
    assert paths(store) == [f"/{n}/" + "x" * 700 for n in range(20)]


def test_a_grown_entry_moves_to_the_end(make_store: Callable[..., Store]) -> None:
    """The one documented move: an entry that outgrows its page's byte limit
    is written again at the end; the rest of its page stays put."""
    store = make_store(part_size=50, part_bytes=8192)
    store.upsert(Entry(f"/{n}", T0) for n in range(20))
    assert [p.urls for p in store.parts()] == [20]
    images = tuple(f"/img/{n}/" + "i" * 100 for n in range(10))
    store.upsert([Entry("/3", T0, images=images)])
    assert [p.urls for p in store.parts()] == [19, 1]
    assert paths(store) == [f"/{n}" for n in range(20) if n != 3] + ["/3"]
    assert len(rendered(store, 1)) <= 8192 and len(rendered(store, 2)) <= 8192
    assert rendered(store, 2).count(b"<image:loc>") == 10
    # A small change that still fits stays where it is.
    store.upsert([Entry("/4", T0, priority=0.5)])
    assert paths(store)[3] == "/4"


def test_entry_larger_than_a_page_is_refused(make_store: Callable[..., Store]) -> None:
    store = make_store(part_bytes=8192)
    store.upsert([Entry("/kept", T0)])
    images = tuple(f"/img/{n}/" + "i" * 300 for n in range(30))
    with pytest.raises(ValueError, match="do not fit in a sitemap page"):
        store.upsert([Entry("/new", T0), Entry("/big", T0, images=images)])
    assert paths(store) == ["/kept"]


lengths = st.integers(1, 1500)


entries = st.builds(
    lambda n, length, alternates, images: Entry(
        f"/{n}/" + "p" * length,
        T0,
        alternates=tuple((lang, f"/{lang}/{n}") for lang in alternates),
        images=tuple(f"/i/{n}/{k}/" + "m" * size for k, size in enumerate(images)),
    ),
    st.integers(0, 40),
    lengths,
    st.lists(st.sampled_from(["en", "de", "fr-CA", "x-default"]), unique=True),
    st.lists(st.integers(1, 300), max_size=12),
)


@pytest.mark.slow
def test_pages_never_exceed_the_limits(
    kind: str, tmp_path_factory: Any, fresh: Fresh
) -> None:
    """Any mix of URL lengths, alternates, images and updates: no page holds
    more URLs or bytes than allowed, and the pages together hold each stored
    path exactly once."""

    @settings(
        max_examples=15 if kind in SERVER_KINDS else 40,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(st.lists(st.lists(entries, min_size=1, max_size=15), max_size=6))
    def check(batches: list[list[Entry]]) -> None:
        tmp = tmp_path_factory.mktemp("limits")
        with fresh.store(kind, tmp, part_size=7, part_bytes=16384) as store:
            for batch in batches:
                store.upsert(batch)
            stored = paths(store)
            assert len(stored) == len(set(stored)) == store.count()
            assert set(stored) == {e.path for b in batches for e in b}
            for page in store.parts():
                xml = rendered(store, page.number)
                assert len(xml) <= 16384
                assert xml.count(b"<url>") == page.urls <= 7

    check()


def test_bulk_load_keeps_order(make_store: Callable[..., Store]) -> None:
    store = make_store(part_size=1000)
    store.upsert(Entry(f"/p/{n}", T0) for n in range(5000))
    assert store.count() == 5000
    assert [p.urls for p in store.parts()] == [1000] * 5
    assert paths(store) == [f"/p/{n}" for n in range(5000)]
    # The fragments served come in the same first-seen order.
    served = [u for p in store.parts() for u in locs(parse(rendered(store, p.number)))]
    assert served == [f"{LONG_BASE}/p/{n}" for n in range(5000)]


def test_a_part_read_in_several_runs_comes_whole_and_in_order(
    make_store: Callable[..., Store],
) -> None:
    """A part longer than a run of fragments is read run after run, by keyset:
    every URL once, in first-seen order, the last run a short one."""
    store = make_store()
    store.upsert(Entry(f"/p/{n}", T0) for n in range(2 * RUN + 1))
    assert [p.urls for p in store.parts()] == [2 * RUN + 1]
    assert len(list(store.fragments(1))) >= 3
    served = locs(parse(rendered(store, 1)))
    assert served == [f"{LONG_BASE}/p/{n}" for n in range(2 * RUN + 1)]


def test_a_part_of_large_fragments_is_read_in_shorter_runs(
    make_store: Callable[..., Store],
) -> None:
    """Pages of many images are read fewer at a time, so that a run holds
    about RUN_BYTES however large its fragments: every URL once, in order."""
    store = make_store()
    images = tuple(f"/img/{k}/" + "i" * 300 for k in range(30))
    store.upsert(Entry(f"/p/{n}", T0, images=images) for n in range(150))
    runs = [len(run) for run in store.fragments(1)]
    assert len(runs) >= 3 and max(runs) <= RUN_BYTES
    served = locs(parse(rendered(store, 1)))
    assert served == [f"{LONG_BASE}/p/{n}" for n in range(150)]
