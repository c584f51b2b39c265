"""One contract for every store: upserts, lastmod, removal, order, pages, versions."""

from __future__ import annotations

import gzip
import logging
import multiprocessing
import re
import secrets
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from support.example_store import ShelfStore
from support.helpers import locs, parse, validate
from support.reciprocal import stored_links, unreciprocated
from support.services import require_postgres, require_redis
from support.store_kinds import KINDS, SERVER_KINDS, Fresh

from sitemap_middleware import (
    ConfigError,
    Entry,
    Store,
    StoreError,
    open_store,
    register_store,
)
from sitemap_middleware.render import urlset
from sitemap_middleware.sitemaps import (
    MAX_NEWS,
    MAX_ORIGIN_BYTES,
    NEWS_WINDOW,
    RUN,
    RUN_BYTES,
)
from sitemap_middleware.stores.contract import (
    MAX_COUNT,
    NEWS_KEPT,
    Article,
    News,
    Removals,
    Removed,
    Shared,
    Snapshot,
    Visit,
    Visits,
)
from sitemap_middleware.stores.layout import BATCH
from sitemap_middleware.stores.memory import MemoryStore
from sitemap_middleware.stores.sqlite import SQLiteStore

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def paths(store: Store) -> list[str]:
    return [e.path for p in store.parts() for e in store.entries(p.number)]


# The longest base URL a config accepts: pages must fit with it.
LONG_BASE = "https://example.com/" + "b" * (MAX_ORIGIN_BYTES - 20)


def rendered(store: Store, number: int, base: str = LONG_BASE) -> bytes:
    """A page as served, uncompressed, validated."""
    xml = gzip.decompress(urlset(base, store.fragments(number)))
    validate(xml)
    return xml


def test_upsert_is_idempotent(make_store: Callable[..., Store]) -> None:
    store = make_store()
    batch = [Entry("/a", T0, "f1"), Entry("/b", T0, "f2")]
    assert store.upsert(batch) == 2
    version = store.part(1).version  # type: ignore[union-attr]
    assert store.upsert(batch) == 0
    assert store.count() == 2
    assert paths(store) == ["/a", "/b"]
    assert store.part(1).version == version  # type: ignore[union-attr]


def test_lastmod_moves_only_with_fingerprint(make_store: Callable[..., Store]) -> None:
    store = make_store()
    store.upsert([Entry("/a", T0, "f1")])
    store.upsert([Entry("/a", T0 + timedelta(days=1), "f1")])
    assert next(store.entries(1)).lastmod == T0
    store.upsert([Entry("/a", T0 + timedelta(days=2), "f2")])
    assert next(store.entries(1)).lastmod == T0 + timedelta(days=2)
    # A new fingerprint observed "earlier" (clock skew) never moves lastmod back.
    store.upsert([Entry("/a", T0, "f3")])
    entry = next(store.entries(1))
    assert (entry.lastmod, entry.fingerprint) == (T0 + timedelta(days=2), "f3")


def test_lastmod_never_in_the_future(make_store: Callable[..., Store]) -> None:
    store = make_store()
    store.upsert([Entry("/a", datetime(2999, 1, 1, tzinfo=timezone.utc), "f")])
    lastmod = next(store.entries(1)).lastmod
    assert lastmod is not None and lastmod <= datetime.now(timezone.utc)


def test_naive_lastmod_refused(make_store: Callable[..., Store]) -> None:
    """A naive datetime is an error, and nothing of the batch is stored."""
    store = make_store()
    store.upsert([Entry("/kept", T0)])
    with pytest.raises(ValueError, match="timezone-aware"):
        store.upsert([Entry("/a", T0), Entry("/b", datetime(2024, 1, 1))])
    assert paths(store) == ["/kept"]


def test_explicit_lastmod_without_fingerprint(make_store: Callable[..., Store]) -> None:
    """Seeded entries (no fingerprint) take a newer explicit lastmod."""
    store = make_store()
    store.upsert([Entry("/a", T0)])
    store.upsert([Entry("/a", T0 + timedelta(hours=1))])
    assert next(store.entries(1)).lastmod == T0 + timedelta(hours=1)
    store.upsert([Entry("/a", T0)])
    assert next(store.entries(1)).lastmod == T0 + timedelta(hours=1)


def test_metadata_updates(make_store: Callable[..., Store]) -> None:
    store = make_store()
    store.upsert([Entry("/a", T0, "f")])
    store.upsert([Entry("/a", T0, "f", changefreq="daily", priority=0.4, route="/<x>")])
    entry = next(store.entries(1))
    assert (entry.route, entry.lastmod) == ("/<x>", T0)
    xml = rendered(store, 1)
    assert b"<changefreq>daily</changefreq><priority>0.4</priority>" in xml
    store.upsert([Entry("/a", T0, "f", route="/<x>")])
    assert b"changefreq" not in rendered(store, 1)


def test_new_rows_keep_what_only_some_of_their_batch_have(
    make_store: Callable[..., Store],
) -> None:
    """A batch of new paths where some entries lack a fingerprint, route or
    title (the first of them among those) stores each entry's own; one where
    none has any stores none."""
    store = make_store()
    store.upsert(
        [
            Entry("/a", T0),
            Entry("/b", T0, "f", route="/<x>", title="B"),
            Entry("/c", T0, route="/<x>"),
        ]
    )
    store.upsert([Entry("/d", T0), Entry("/e", T0)])
    kept = {e.path: (e.fingerprint, e.route, e.title) for e in store.entries(1)}
    assert kept == {
        "/a": (None, None, None),
        "/b": ("f", "/<x>", "B"),
        "/c": (None, "/<x>", None),
        "/d": (None, None, None),
        "/e": (None, None, None),
    }
    assert store.count("/<x>") == 2


def test_a_batch_after_new_paths_may_hold_stored_ones(
    make_store: Callable[..., Store],
) -> None:
    """After batches of new paths alone, a batch that mixes stored and new
    ones merges the stored (lastmod moves with a new fingerprint only, each
    stays in its part) and appends the new, once each."""
    store = make_store(part_size=3)
    store.upsert([Entry("/a", T0, "f"), Entry("/b", T0, "f")])
    store.upsert([Entry("/c", T0, "f")])
    later = T0 + timedelta(days=1)
    assert store.upsert([Entry("/d", T0, "f"), Entry("/a", later, "f2")]) == 2
    assert paths(store) == ["/a", "/b", "/c", "/d"]
    dates = {e.path: e.lastmod for p in store.parts() for e in store.entries(p.number)}
    assert dates == {"/a": later, "/b": T0, "/c": T0, "/d": T0}
    assert [(p.number, p.urls) for p in store.parts()] == [(1, 3), (2, 1)]
    assert store.count() == 4


@pytest.mark.parametrize("kind", ("postgres", "redis", "sqlite"))
def test_a_path_another_writer_stored_between_two_batches(
    kind: str, fresh: Fresh, tmp_path: Path
) -> None:
    """A writer whose last batch held new paths alone learns, in its next
    batch, of a path another writer stored meanwhile: merged, not doubled."""
    uri = fresh.uri(kind, tmp_path)
    with open_store(uri) as first, open_store(uri) as other:
        first.upsert([Entry("/a", T0, "f")])
        other.upsert([Entry("/b", T0, "f")])
        later = T0 + timedelta(days=1)
        assert first.upsert([Entry("/c", T0, "f"), Entry("/b", later, "f2")]) == 2
        assert paths(first) == ["/a", "/b", "/c"]
        assert [e.lastmod for e in first.entries(1)] == [T0, later, T0]
        assert first.count() == 3 and first.part(1).urls == 3  # type: ignore[union-attr]


def test_remove(make_store: Callable[..., Store]) -> None:
    store = make_store()
    store.upsert([Entry(f"/{n}", T0 + timedelta(seconds=n)) for n in range(4)])
    version = store.part(1).version  # type: ignore[union-attr]
    assert store.remove(["/3", "/1", "/missing"]) == 2
    assert paths(store) == ["/0", "/2"]
    page = store.part(1)
    assert page is not None and page.version != version
    assert page.urls == 2 and page.lastmod == T0 + timedelta(seconds=2)
    assert store.remove(["/missing"]) == 0
    assert store.remove([]) == 0


def test_removals_are_numbered_and_logged(make_store: Callable[..., Store]) -> None:
    """removed_since (stores.contract.Removals): each stored path removed takes the
    next number, in the removal's own write; paths never stored, upserts and
    moves log nothing; the epoch comes with it, in the same read."""
    store = make_store(part_size=2)
    assert isinstance(store, Removals)
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
    assert isinstance(store, Removals)
    epoch = store.epoch()  # type: ignore[attr-defined]
    assert store.removed_since(2) == Removed(epoch, 5, ("/2", "/3", "/4"))
    assert store.removed_since(3) == Removed(epoch, 5, ("/3", "/4"))
    assert store.removed_since(1) == Removed(epoch, 5, None)
    assert store.removed_since(0) == Removed(epoch, 5, None)
    store.remove(["/5"])
    assert store.removed_since(2) == Removed(epoch, 6, None)
    assert store.removed_since(4) == Removed(epoch, 6, ("/4", "/5"))


def test_visits_keep_each_path_and_agent_s_latest(
    make_store: Callable[..., Store],
) -> None:
    """visited (stores.contract.Visits): a visit is kept as its (path, agent)'s
    last unless the one kept is later, within a batch and across batches;
    visits() reads every kept one, or those of the paths asked about."""
    store = make_store()
    assert isinstance(store, Visits)
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
    assert isinstance(store, Visits)
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


def test_count_by_route_and_known(make_store: Callable[..., Store]) -> None:
    """count(route) follows inserts, route changes on update, moves and
    removals; known() says which paths are stored."""
    store = make_store(part_size=50, part_bytes=8192)
    store.upsert(
        [Entry(f"/p/{n}", T0, route="/p/<n>") for n in range(5)]
        + [Entry(f"/b/{n}", T0, route="/b/<n>") for n in range(3)]
        + [Entry("/about", T0)]
    )
    assert (store.count(), store.count("/p/<n>"), store.count("/b/<n>")) == (9, 5, 3)
    assert store.count("/nope") == 0
    # Re-upserted with another route, an entry moves between the counts.
    store.upsert([Entry("/p/0", T0, route="/b/<n>"), Entry("/about", T0, route="/a")])
    assert [store.count(r) for r in ("/p/<n>", "/b/<n>", "/a")] == [4, 4, 1]
    # Unchanged entries leave the counts alone.
    store.upsert([Entry("/p/1", T0, route="/p/<n>")])
    assert store.count("/p/<n>") == 4
    # A grown entry moves to the end and keeps its route; one that moves and
    # changes route at once moves between the counts.
    images = tuple(f"/img/{n}/" + "i" * 100 for n in range(15))
    store.upsert([Entry("/p/2", T0, images=images, route="/p/<n>")])
    store.upsert([Entry("/p/3", T0, images=images, route="/b/<n>")])
    assert {e.path for e in store.entries(1)}.isdisjoint({"/p/2", "/p/3"})
    assert [store.count(r) for r in ("/p/<n>", "/b/<n>")] == [3, 5]
    # A route dropped on update leaves its count.
    store.upsert([Entry("/about", T0)])
    assert store.count("/a") == 0
    assert store.remove(["/p/1", "/b/0", "/b/9"]) == 2
    assert [store.count(r) for r in ("/p/<n>", "/b/<n>")] == [2, 4]
    assert store.count() == 7
    assert store.known(["/p/1", "/p/2", "/b/1", "/about", "/missing", "/p/2"]) == {
        "/p/2",
        "/b/1",
        "/about",
    }
    assert store.known([]) == set()
    assert store.known(iter(["/p/4"])) == {"/p/4"}
    many = [f"/m/{n}" for n in range(3000)]
    store.upsert(Entry(path, T0, route="/m") for path in many[::2])
    assert store.count("/m") == 1500
    assert store.known(many) == set(many[::2])


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
@pytest.mark.parametrize("kind", KINDS)
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


def test_large_iterables_are_written_in_batches(
    make_store: Callable[..., Store],
) -> None:
    """A generator streams in transactions of BATCH entries: a bad entry fails
    its own batch with a clear error, and the batches before it stay."""

    def seed() -> Iterator[Entry]:
        for n in range(BATCH + 10):
            yield Entry(f"/p/{n}", T0)
        yield Entry("not a path", T0)

    store = make_store()
    with pytest.raises(ValueError, match="'not a path'"):
        store.upsert(seed())
    assert store.count() == BATCH
    assert paths(store)[-1] == f"/p/{BATCH - 1}"


def test_a_bad_entry_is_a_value_error_and_writes_nothing(
    make_store: Callable[..., Store],
) -> None:
    """An entry no sitemap may hold is a bug in the input, not an outage: it
    raises ValueError (never StoreError) and nothing of its batch is stored."""
    store = make_store()
    store.upsert([Entry("/kept", T0, "f")])
    version = store.part(1).version  # type: ignore[union-attr]
    for bad in (Entry("not a path", T0), Entry("/naive", datetime(2024, 1, 1))):
        with pytest.raises(ValueError) as caught:
            store.upsert([Entry("/new", T0), bad, Entry("/kept", T0, "f2")])
        assert not isinstance(caught.value, StoreError)
    assert paths(store) == ["/kept"]
    assert next(store.entries(1)).fingerprint == "f"
    assert store.part(1).version == version  # type: ignore[union-attr]


def test_example_store_is_a_third_party_store(tmp_path: Path) -> None:
    """The example store is built on the exported base and found by scheme."""
    with open_store(f"example:///{tmp_path}/shelf?part_size=2") as store:
        assert isinstance(store, ShelfStore) and isinstance(store, Store)
        assert store.part_size == 2


def test_counts_add_up_and_settings_keep(make_store: Callable[..., Store]) -> None:
    store = make_store()
    assert isinstance(store, Shared)
    assert store.counts() == {} and store.setting("config") is None
    store.add_counts({"recorded": 2, "vary": 1, "host": 0})
    store.add_counts({"recorded": 3})
    store.add_counts({})
    assert store.counts() == {"recorded": 5, "vary": 1}
    store.set_setting("config", "a")
    store.set_setting("config", "b")
    assert store.setting("config") == "b" and store.setting("other") is None
    assert paths(store) == []  # neither is a page


def test_counters_stop_at_the_largest_64_bit_integer(
    make_store: Callable[..., Store],
) -> None:
    """A counter summed past MAX_COUNT stays an integer at MAX_COUNT (SQLite
    made it a float; PostgreSQL and Redis refused every later write), and the
    other counters of the same write are still added."""
    store = make_store()
    assert isinstance(store, Shared)
    store.add_counts({"recorded": MAX_COUNT - 5})
    store.add_counts({"recorded": 10, "vary": 1})
    store.add_counts({"recorded": 1, "vary": 1})
    store.add_counts({"host": 2**70})  # beyond any integer a store holds
    counts = store.counts()
    assert counts == {"recorded": MAX_COUNT, "vary": 2, "host": MAX_COUNT}
    assert all(type(n) is int for n in counts.values())


def test_last_entry_in_batch_wins(make_store: Callable[..., Store]) -> None:
    store = make_store()
    store.upsert([Entry("/a", T0, "f1"), Entry("/a", T0, "f2")])
    assert store.count() == 1 and next(store.entries(1)).fingerprint == "f2"


def test_context_manager(make_store: Callable[..., Store]) -> None:
    with make_store() as store:
        store.upsert([Entry("/a", T0)])
        assert store.count() == 1


def test_sqlite_persists_across_reopen(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path}/s.sqlite3"
    with open_store(uri) as store:
        store.upsert([Entry("/a", T0, "f")])
        version = store.part(1).version  # type: ignore[union-attr]
    with open_store(uri) as store:
        assert paths(store) == ["/a"]
        assert store.part(1).version == version  # type: ignore[union-attr]


def test_sqlite_uses_wal(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path}/s.sqlite3") as store:
        store.count()
    (mode,) = (
        sqlite3.connect(tmp_path / "s.sqlite3")
        .execute("PRAGMA journal_mode")
        .fetchone()
    )
    assert mode == "wal"


# Two paths of the route "/<x>" and one without a route.
ROUTED = [Entry("/a", T0, route="/<x>"), Entry("/b", T0, route="/<x>"), Entry("/c", T0)]


def test_sqlite_adds_the_route_index_to_older_files(tmp_path: Path) -> None:
    """A version-2 file made before count(route) gets its index when opened."""
    path = tmp_path / "s.sqlite3"
    with open_store(f"sqlite:///{path}") as store:
        store.upsert(ROUTED)
    conn = sqlite3.connect(path)
    conn.execute("DROP INDEX sitemap_url_route")
    conn.commit()
    with open_store(f"sqlite:///{path}") as store:
        assert store.count("/<x>") == 2
    indexes = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    assert "sitemap_url_route" in indexes
    conn.close()


def test_sqlite_adds_declared_alternates_to_older_files(tmp_path: Path) -> None:
    """A version-2 file made before rows kept their declared alternates gets
    the column when opened; its rows declare nothing known, and a cluster
    member written next to one of them is not listed."""
    path = tmp_path / "s.sqlite3"
    with open_store(f"sqlite:///{path}") as store:
        store.upsert([Entry("/de/a", T0)])
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE sitemap_url DROP COLUMN declared")
    conn.commit()
    with open_store(f"sqlite:///{path}") as store:
        store.upsert([member("/en/a", CLUSTER[:2])])
        assert b"xhtml:link" not in b"".join(store.fragments(1))
        store.upsert([member("/de/a", CLUSTER[:2])])
        assert b"".join(store.fragments(1)).count(b"<xhtml:link") == 4
    ((legacy,),) = conn.execute(
        "SELECT count(*) FROM sitemap_url WHERE declared IS NULL"
    )
    assert legacy == 0
    conn.close()


def test_sqlite_refuses_other_schema(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    with open_store(f"sqlite:///{path}") as store:
        store.count()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE sitemap_meta SET value = '99' WHERE key = 'schema'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="schema 99"):
        SQLiteStore(str(path)).count()


def _write_from_child(path: str, start: int) -> None:
    store = open_store(f"sqlite:///{path}")
    store.upsert(Entry(f"/c/{n}", T0) for n in range(start, start + 500))
    store.close()


def test_sqlite_after_fork_and_across_processes(tmp_path: Path) -> None:
    """A store opened in the parent works in forked children; concurrent writers
    lose nothing and duplicate nothing."""
    path = str(tmp_path / "s.sqlite3")
    store = open_store(f"sqlite:///{path}")
    store.upsert([Entry("/parent", T0)])
    context = multiprocessing.get_context("fork")
    children = [
        context.Process(target=_write_from_child, args=(path, start))
        for start in (0, 250, 500, 750)
    ]
    for child in children:
        child.start()
    for child in children:
        child.join(30)
        assert child.exitcode == 0
    assert store.count() == 1 + 1250
    assert sorted(paths(store)) == sorted(
        ["/parent", *(f"/c/{n}" for n in range(1250))]
    )
    store.close()


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


@pytest.mark.services
def test_redis_options(fresh: Fresh) -> None:
    uri = fresh.redis_uri(part_size=10, timeout=0.5, connect_timeout=0.25)
    with open_store(uri) as store:
        assert (store.part_size, store.timeout, store.connect_timeout) == (
            10,
            0.5,
            0.25,
        )
        assert store.prefix.startswith("{test-")
        store.upsert([Entry("/a", T0)])
        import redis

        with redis.Redis.from_url(require_redis()) as client:
            keys = client.keys(f"{store.prefix}*")
        assert keys and all(k.decode().startswith(store.prefix) for k in keys)
    with pytest.raises(ConfigError, match="unknown option 'db'"):
        open_store("redis://127.0.0.1/0?db=1")
    with pytest.raises(ConfigError, match="hash tag"):
        open_store("redis://127.0.0.1/0?prefix={}:")
    with pytest.raises(ConfigError, match="part_size"):
        open_store("redis://127.0.0.1/0?part_size=0")


@pytest.mark.services
@pytest.mark.parametrize(
    ("given", "used"),
    [("plain", "{plain}:"), ("plain:", "{plain}:"), ("{tag}:x:", "{tag}:x:")],
)
def test_redis_prefix_gets_a_hash_tag(given: str, used: str, fresh: Fresh) -> None:
    # A plain prefix (?prefix=flaskr) works: the store adds the hash tag.
    url = require_redis()
    name = secrets.token_hex(4)
    given, used = given.replace("plain", name), used.replace("plain", name)
    given, used = given.replace("tag", name), used.replace("tag", name)
    fresh.delete_redis_keys(used)
    with open_store(f"{url}?{urlencode({'prefix': given})}") as store:
        assert store.prefix == used
        store.upsert([Entry("/a", T0)])
        assert paths(store) == ["/a"]
        import redis

        with redis.Redis.from_url(url) as client:
            keys = client.keys(f"{used}*")
        assert keys and all(k.decode().startswith(used) for k in keys)


def test_redis_unreachable_fails_within_timeout() -> None:
    store = open_store("redis://127.0.0.1:1/0?connect_timeout=0.5")
    started = time.monotonic()
    with pytest.raises(StoreError, match="Redis"):
        store.count()
    assert time.monotonic() - started < 2


@pytest.mark.services
def test_redis_refuses_other_schema(fresh: Fresh) -> None:
    """Data of another layout (schema 1: rows without fragments) is refused,
    never read as this one."""
    import redis

    uri = fresh.redis_uri()
    with open_store(uri) as store:
        store.count()
        meta = store.prefix + "meta"  # type: ignore[attr-defined]
    with redis.Redis.from_url(require_redis()) as client:
        client.hset(meta, "schema", "1")
    with pytest.raises(StoreError, match="schema 1, expected 2"):
        open_store(uri).count()


@pytest.mark.services
def test_redis_counts_routes_of_older_data(fresh: Fresh) -> None:
    """Data written before the per-route counts is counted once when opened."""
    import redis

    uri = fresh.redis_uri()
    with open_store(uri) as store:
        store.upsert(ROUTED)
        prefix = store.prefix  # type: ignore[attr-defined]
    with redis.Redis.from_url(require_redis()) as client:
        client.delete(prefix + "routes")
        client.hdel(prefix + "meta", "routes")
    with open_store(uri) as store:
        assert (store.count("/<x>"), store.count()) == (2, 3)
        store.upsert([Entry("/c", T0, route="/<x>")])
        store.remove(["/a"])
        assert store.count("/<x>") == 2


@pytest.mark.services
def test_redis_write_after_data_loss_starts_a_new_epoch(fresh: Fresh) -> None:
    """Redis emptied under a connected store (a restart without persistence):
    the next write sets a new epoch, so its parts are listed, with versions
    never served before."""
    import redis

    with open_store(fresh.redis_uri()) as store:
        store.upsert([Entry("/a", T0)])
        version = store.part(1).version  # type: ignore[union-attr]
        with redis.Redis.from_url(require_redis()) as client:
            client.delete(*client.keys(f"{store.prefix}*"))  # type: ignore[attr-defined]
        assert store.parts() == []
        store.upsert([Entry("/b", T0)])
        assert [p.urls for p in store.parts()] == [1]
        assert store.part(1).version != version  # type: ignore[union-attr]


@pytest.mark.services
def test_redis_remove_takes_paths_verbatim(fresh: Fresh) -> None:
    """Paths go to Redis joined by NUL: one holding a NUL removes nothing."""
    with open_store(fresh.redis_uri()) as store:
        store.upsert([Entry("/a", T0), Entry("/b", T0)])
        assert store.remove(["/a\x00/b"]) == 0
        assert paths(store) == ["/a", "/b"]


@pytest.mark.services
def test_redis_warns_when_eviction_could_drop_entries(
    caplog: pytest.LogCaptureFixture,
    fresh: Fresh,
) -> None:
    import redis

    uri = fresh.redis_uri()
    with redis.Redis.from_url(require_redis(), decode_responses=True) as client:
        old = client.config_get("maxmemory-policy")["maxmemory-policy"]
        try:
            client.config_set("maxmemory-policy", "volatile-lru")
            with (
                caplog.at_level(logging.WARNING, "sitemap_middleware"),
                open_store(uri) as store,
            ):
                store.count()
            assert not caplog.records
            client.config_set("maxmemory-policy", "allkeys-lru")
            with caplog.at_level(logging.WARNING, "sitemap_middleware"):
                store = open_store(uri)
                store.count()
                store.close()
                store.count()  # reconnects, does not warn again
                store.close()
        finally:
            client.config_set("maxmemory-policy", old)
    [record] = caplog.records
    assert record.name == "sitemap_middleware"
    assert "allkeys-lru" in record.getMessage()
    assert "noeviction" in record.getMessage()


@pytest.mark.services
def test_postgres_options(fresh: Fresh) -> None:
    uri = fresh.postgres_uri(part_size=10, statement_timeout=250, application_name="t")
    with open_store(uri) as store:
        assert store.part_size == 10
        with store._borrow() as conn:  # type: ignore[attr-defined]
            assert _one(conn, "SHOW statement_timeout") == "250ms"
            assert _one(conn, "SHOW application_name") == "t"
        store.upsert([Entry("/a", T0)])
        with store._borrow() as conn:  # type: ignore[attr-defined]
            assert _one(conn, f"SELECT count(*) FROM {store.prefix}url") == 1
    with pytest.raises(ConfigError, match="bogus"):
        open_store("postgresql://127.0.0.1/test?bogus=1")
    with pytest.raises(ConfigError, match="table_prefix"):
        open_store("postgresql://127.0.0.1/test?table_prefix=x;drop")


def _one(conn: Any, query: str) -> Any:
    return conn.execute(query).fetchone()[0]


@pytest.mark.services
def test_postgres_adds_the_route_index_to_older_tables(fresh: Fresh) -> None:
    """Version-2 tables made before count(route) get its index when opened."""
    import psycopg

    uri = fresh.postgres_uri()
    with open_store(uri) as store:
        store.upsert(ROUTED)
        prefix = store.prefix  # type: ignore[attr-defined]
    with psycopg.connect(require_postgres(), autocommit=True) as conn:
        conn.execute(f"DROP INDEX {prefix}url_route")
        with open_store(uri) as store:
            assert store.count("/<x>") == 2
        found = conn.execute("SELECT to_regclass(%s)", (f"{prefix}url_route",))
        assert found.fetchone() == (f"{prefix}url_route",)


@pytest.mark.services
def test_postgres_refuses_other_schema(fresh: Fresh) -> None:
    import psycopg

    uri = fresh.postgres_uri()
    with open_store(uri) as store:
        store.count()
        prefix = store.prefix  # type: ignore[attr-defined]
    with psycopg.connect(require_postgres(), autocommit=True) as conn:
        conn.execute(f"UPDATE {prefix}meta SET schema = 99")
    with pytest.raises(StoreError, match="schema 99, expected 2"):
        open_store(uri).count()


def test_postgres_unreachable_fails_within_timeout() -> None:
    store = open_store("postgresql://postgres@127.0.0.1:1/test?connect_timeout=1")
    started = time.monotonic()
    with pytest.raises(StoreError, match="PostgreSQL"):
        store.count()
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(
    ("module", "uri", "extra"),
    [
        ("redis", "redis://127.0.0.1/0", "redis"),
        ("redis", "rediss://127.0.0.1/0", "redis"),
        ("psycopg", "postgresql://127.0.0.1/test", "postgres"),
        ("psycopg_pool", "postgres://127.0.0.1/test", "postgres"),
    ],
)
def test_missing_driver_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, module: str, uri: str, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # type: ignore[arg-type]
    for name in ("redis", "postgres"):  # forget our modules, so they import again
        monkeypatch.delitem(sys.modules, f"sitemap_middleware.stores.{name}", False)
    hint = f'pip install "sitemap-middleware[{extra}]"'
    with pytest.raises(ConfigError, match=re.escape(hint)):
        open_store(uri)


def test_registry(tmp_path: Path) -> None:
    """Third-party stores plug in by scheme."""
    made: list[str] = []

    def factory(uri: str) -> Store:
        made.append(uri)
        return MemoryStore()

    register_store("custom+test", factory)
    assert isinstance(open_store("custom+test://x"), MemoryStore)
    assert made == ["custom+test://x"]
    ready = MemoryStore()
    assert open_store(ready) is ready
    with pytest.raises(ConfigError, match="unknown store scheme 'nope'"):
        open_store("nope://x")


ROUTES: list[str | None] = [None, "/<a>", "/<b>"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_state_machine_matches_model(
    kind: str, tmp_path_factory: Any, fresh: Fresh
) -> None:
    """Random upserts and removals: the store always equals a simple model."""

    class Model(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.store = fresh.store(kind, tmp_path_factory.mktemp("sm"), part_size=3)
            self.model: dict[str, tuple[datetime, str | None]] = {}
            self.order: list[str] = []
            self.routes: dict[str, str | None] = {}

        @rule(
            path=st.sampled_from([f"/{c}" for c in "abcdefgh"]),
            fingerprint=st.sampled_from(["x", "y", None]),
            hours=st.integers(0, 48),
            route=st.sampled_from(ROUTES),
        )
        def upsert(
            self, path: str, fingerprint: str | None, hours: int, route: str | None
        ) -> None:
            moment = T0 + timedelta(hours=hours)
            self.store.upsert([Entry(path, moment, fingerprint, route=route)])
            self.routes[path] = route
            old = self.model.get(path)
            if old is None:
                self.model[path] = (moment, fingerprint)
                self.order.append(path)
            elif fingerprint is not None and fingerprint != old[1]:
                self.model[path] = (max(old[0], moment), fingerprint)
            elif fingerprint is None and moment > old[0]:
                self.model[path] = (moment, old[1])

        @rule(path=st.sampled_from([f"/{c}" for c in "abcdefgh"]))
        def remove(self, path: str) -> None:
            assert self.store.remove([path]) == (path in self.model)
            if path in self.model:
                del self.model[path]
                self.order.remove(path)

        @invariant()
        def same(self) -> None:
            entries = [
                e for p in self.store.parts() for e in self.store.entries(p.number)
            ]
            assert [e.path for e in entries] == self.order
            assert {e.path: (e.lastmod, e.fingerprint) for e in entries} == self.model
            assert self.store.count() == len(self.model)
            for route in ROUTES[1:]:
                assert self.store.count(route) == sum(
                    self.routes[path] == route for path in self.model
                )
            assert self.store.known([f"/{c}" for c in "abcdefghz"]) == set(self.model)
            for page in self.store.parts():
                assert 0 < page.urls <= 3
                assert page.lastmod == max(
                    e.lastmod
                    for e in self.store.entries(page.number)  # type: ignore[type-var]
                )

        def teardown(self) -> None:
            self.store.close()

    Model.TestCase.settings = settings(
        max_examples=30,
        stateful_step_count=25,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    Model.TestCase().runTest()


# -- hreflang clusters across processes ---------------------------------------------


@pytest.fixture(params=KINDS)
def two_stores(
    request: pytest.FixtureRequest, tmp_path: Path, fresh: Fresh
) -> Iterator[tuple[Store, Store]]:
    """Two store objects on one sitemap, as two processes hold them (the
    memory and shelf stores share nothing between objects: one object)."""
    kind = request.param
    if kind in ("memory", "example"):
        store = fresh.store(kind, tmp_path, part_size=4)
        yield store, store
        store.close()
        return
    uri = fresh.uri(kind, tmp_path, part_size=4)
    first, second = open_store(uri), open_store(uri)
    yield first, second
    first.close()
    second.close()


CLUSTER = (("de", "/de/a"), ("en", "/en/a"), ("x-default", "/a"))


def member(path: str, alternates: Any = CLUSTER, when: datetime = T0) -> Entry:
    return Entry(path, when, f"print-{path}", alternates=tuple(alternates))


def clustered(store: Store) -> dict[str, frozenset[tuple[str, str]]]:
    """path -> the (hreflang, path) links it is served with."""
    return {
        loc.removeprefix("http://example.com"): frozenset(
            (lang, href.removeprefix("http://example.com")) for lang, href in links
        )
        for loc, links in stored_links(store).items()
    }


def test_clusters_complete_across_processes(
    two_stores: tuple[Store, Store],
) -> None:
    """Each "process" writes one member: the links appear on every member
    once the last is stored, in both processes' view, and lastmod stays."""
    a, b = two_stores
    with a.hreflang() as decided:
        a.upsert([member("/en/a")])
    assert decided == {"/en/a": "hreflang_incomplete"}
    b.upsert([member("/de/a")])
    assert all(not links for links in clustered(a).values())
    before = {e.path: e.lastmod for p in a.parts() for e in a.entries(p.number)}
    with b.hreflang() as decided:
        b.upsert([member("/a", when=T0 + timedelta(days=1))])
    assert decided == {"/a": None, "/en/a": None, "/de/a": None}
    full = frozenset(CLUSTER)
    assert clustered(a) == clustered(b) == dict.fromkeys(("/en/a", "/de/a", "/a"), full)
    assert unreciprocated(stored_links(a)) == []
    after = {e.path: e.lastmod for p in a.parts() for e in a.entries(p.number)}
    assert after["/en/a"] == before["/en/a"] and after["/de/a"] == before["/de/a"]


def test_a_member_changed_elsewhere_unlists_the_cluster(
    two_stores: tuple[Store, Store],
) -> None:
    """A member declaring another set, then going away, then coming back,
    each written by the other process: the output is reciprocal throughout,
    and the pages keep their parts."""
    a, b = two_stores
    a.upsert([member("/en/a"), member("/de/a"), member("/a"), Entry("/other", T0)])
    assert unreciprocated(stored_links(b)) == []
    assert all(clustered(b)[p] for p in ("/en/a", "/de/a", "/a"))
    order = paths(a)
    with b.hreflang() as decided:
        b.upsert([member("/de/a", (*CLUSTER, ("fr", "/fr/a")))])
    assert decided["/de/a"] == "hreflang_mismatch"
    assert all(not links for links in clustered(a).values())
    b.upsert([member("/de/a")])
    assert all(clustered(a)[p] for p in ("/en/a", "/de/a", "/a"))
    with b.hreflang() as decided:
        assert b.remove(["/en/a"]) == 1
    assert decided == {"/de/a": "hreflang_incomplete", "/a": "hreflang_incomplete"}
    assert all(not links for links in clustered(a).values())
    a.upsert([member("/en/a")])
    assert all(clustered(b)[p] for p in ("/en/a", "/de/a", "/a"))
    assert unreciprocated(stored_links(b)) == []
    # Rewrites keep membership: only the removed page came back, at the end.
    assert paths(a) == [p for p in order if p != "/en/a"] + ["/en/a"]


def test_a_page_declaring_nothing_any_more_unlists_its_members(
    two_stores: tuple[Store, Store],
) -> None:
    a, b = two_stores
    a.upsert([member("/en/a"), member("/de/a"), member("/a")])
    b.upsert([Entry("/a", T0, "print-/a")])  # its head lost the links
    assert all(not links for links in clustered(a).values())


def test_cluster_members_in_one_batch_and_case(
    make_store: Callable[..., Store],
) -> None:
    """Members in one batch list each other; languages compare without case,
    each page keeping its own spelling; a page missing from its own set, or a
    bad tag, is never listed."""
    store = make_store()
    store.upsert(
        [
            member("/en/a", [("EN", "/en/a"), ("de", "/de/a")]),
            member("/de/a", [("en", "/en/a"), ("DE", "/de/a")]),
            member("/b", [("en", "/en/a"), ("de", "/de/a")]),
        ]
    )
    xml = rendered(store, 1)
    assert xml.count(b"<xhtml:link") == 4 and b'hreflang="EN"' in xml
    assert clustered(store)["/b"] == frozenset()
    with pytest.raises(ValueError, match="hreflang must be a language tag"):
        store.upsert([member("/c", [("not a tag", "/c")])])


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_clusters_match_a_model(kind: str, tmp_path_factory: Any, fresh: Fresh) -> None:
    """Random upserts and removals of the members of a few clusters, over two
    store objects: after each, the store serves exactly what the rule gives
    for what is stored (a page lists its set when it is in it and every
    member is stored declaring the same), so every link set is reciprocal."""
    pages = [f"/{lang}/{n}" for n in range(3) for lang in ("en", "de", "fr")]
    sets = st.sets(st.sampled_from(pages), max_size=4).map(
        lambda members: tuple(sorted((p.split("/")[1], p) for p in members))
    )
    steps = st.lists(
        st.tuples(st.booleans(), st.sampled_from(pages), sets, st.booleans()),
        min_size=1,
        max_size=12,
    )

    @settings(
        max_examples=10 if kind in SERVER_KINDS else 40,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(steps)
    def check(plan: list[tuple[bool, str, Any, bool]]) -> None:
        tmp = tmp_path_factory.mktemp("clusters")
        first = fresh.store(kind, tmp, part_size=5)
        if kind in ("memory", "example"):
            second = first
        elif kind == "sqlite":
            second = fresh.store("sqlite", tmp, part_size=5)
        else:
            second = first  # a fresh prefix per store: one object
        model: dict[str, frozenset[tuple[str, str]]] = {}
        try:
            for on_first, path, declared, remove in plan:
                store = first if on_first else second
                if remove:
                    store.remove([path])
                    model.pop(path, None)
                else:
                    store.upsert([member(path, declared)])
                    model[path] = frozenset(declared)
                expected = {
                    p: own
                    if p in {m for _, m in own}
                    and all(model.get(m) == own for _, m in own)
                    else frozenset()
                    for p, own in model.items()
                }
                assert clustered(second) == expected
        finally:
            first.close()
            second.close()

    check()


def test_a_removal_is_read_by_another_process(two_stores: tuple[Store, Store]) -> None:
    """What one process removes, another's removed_since reads."""
    first, second = two_stores
    assert isinstance(second, Removals)
    first.upsert([Entry("/a", T0, "f"), Entry("/b", T0, "f")])
    seq = second.removed_since(None).seq
    first.remove(["/b"])
    assert second.removed_since(seq).paths == ("/b",)


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_reads_in_a_snapshot_see_one_state(
    kind: str, fresh: Fresh, tmp_path: Path
) -> None:
    """Inside ``snapshot()`` the parts, their summaries and their rows stay
    as they were at its first read, whatever another writer commits; after
    it, the writes are there."""
    uri = fresh.uri(kind, tmp_path, part_size=2)
    reader, writer = open_store(uri), open_store(uri)
    try:
        writer.upsert([Entry(f"/{n}", T0) for n in range(3)])
        assert isinstance(reader, Snapshot)
        with reader.snapshot():
            before = reader.parts()
            writer.upsert([Entry(f"/{n}", T0) for n in range(3, 6)])
            writer.remove(["/0"])
            assert reader.parts() == before and reader.part(3) is None
            assert paths(reader) == ["/0", "/1", "/2"]
            assert b"/0<" in b"".join(reader.fragments(1))
        assert [p.number for p in reader.parts()] == [1, 2, 3]
        assert paths(reader) == ["/1", "/2", "/3", "/4", "/5"]
    finally:
        reader.close()
        writer.close()


# -- news articles (stores.contract.News) -------------------------------------------

NOW = int(T0.timestamp()) + 10 * 86400
HOUR = 3600


def _article(path: str, published: int, title: str = "T") -> Article:
    return Article(path, published, title, "en", "The Daily")


def test_news_keeps_the_recent_articles_of_held_pages(
    make_store: Callable[..., Store],
) -> None:
    """Articles of the last two days, newest first, only while their page is
    held; a title, language and name written again replace the stored ones."""
    store = make_store()
    assert isinstance(store, News)
    store.upsert([Entry(p, T0) for p in ("/a", "/b", "/c", "/old")])
    store.publish(
        [
            _article("/a", NOW - HOUR),
            _article("/b", NOW - 2 * HOUR),
            _article("/c", NOW - HOUR, "C & <co>"),
            _article("/old", NOW - NEWS_WINDOW - 1),  # too old: dropped at once
            _article("/unheld", NOW - HOUR),  # no such page: never listed
        ],
        NOW,
    )
    since = NOW - NEWS_WINDOW
    assert [a.path for a in store.news(since)] == ["/a", "/c", "/b"]
    assert store.news(since)[1] == Article(
        "/c", NOW - HOUR, "C & <co>", "en", "The Daily"
    )
    assert [a.path for a in store.news(since, 2)] == ["/a", "/c"]
    assert store.news(NOW - HOUR + 1) == []
    store.publish([Article("/a", NOW - 3 * HOUR, "New", "fr", "Le Quotidien")], NOW)
    assert store.news(since)[-1] == Article(
        "/a", NOW - 3 * HOUR, "New", "fr", "Le Quotidien"
    )
    # A removed page leaves the news; back, so is its article while recent.
    store.remove(["/c"])
    assert [a.path for a in store.news(since)] == ["/b", "/a"]
    store.upsert([Entry("/c", T0)])
    assert [a.path for a in store.news(since)] == ["/c", "/b", "/a"]
    # Two days on, the articles age out: the read asks from a later time,
    # and the next write drops them.
    later = NOW + NEWS_WINDOW
    assert store.news(later - NEWS_WINDOW) == []
    store.publish([_article("/b", later - 5)], later)
    assert [a.path for a in store.news(later - NEWS_WINDOW)] == ["/b"]
    store.upsert([Entry("/a", T0)])
    assert [a.path for a in store.news(0)] == ["/b"]  # /a's row is gone


def test_news_without_a_date_keeps_the_stored_one(
    make_store: Callable[..., Store],
) -> None:
    """An article written with ``published`` 0 (a page held before it was
    known as an article) keeps the date stored and takes the rest; without
    one stored it is not kept."""
    store = make_store()
    store.upsert([Entry("/a", T0), Entry("/b", T0)])
    store.publish([_article("/a", NOW - HOUR, "First")], NOW)
    store.publish([_article("/a", 0, "Second"), _article("/b", 0)], NOW)
    assert store.news(0) == [Article("/a", NOW - HOUR, "Second", "en", "The Daily")]


def test_news_is_bounded(make_store: Callable[..., Store]) -> None:
    """At most NEWS_KEPT articles are kept, the newest."""
    store = make_store()
    extra = 3
    count = NEWS_KEPT + extra
    store.upsert([Entry(f"/{n}", T0) for n in range(count)])
    store.publish([_article(f"/{n}", NOW - count + n) for n in range(count)], NOW)
    kept = store.news(0, count)
    assert len(kept) == NEWS_KEPT
    assert kept[0].path == f"/{count - 1}" and kept[-1].path == f"/{extra}"
    assert len(store.news(0)) == MAX_NEWS


def test_news_text_round_trips(make_store: Callable[..., Store]) -> None:
    """Titles and names hold any text: quotes, markup, non-ASCII, emoji."""
    store = make_store()
    store.upsert([Entry("/a", T0)])
    title = "Ünïcode \"quotes\" 'and' <b>markup</b> & 🚀 — 你好"
    store.publish([Article("/a", NOW, title, "zh-tw", '名字 & "Co"')], NOW)
    assert store.news(0) == [Article("/a", NOW, title, "zh-tw", '名字 & "Co"')]
