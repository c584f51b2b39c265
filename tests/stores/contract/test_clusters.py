"""hreflang clusters that span two sites' listings (``sites``), on every
shipped store: a page lists a member of the other site only once that site's
listing holds it declaring the same set, in either order of writes, with
members removed or changing their set, and with both sites writing at once."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.reciprocal import Links, stored_links, unreciprocated
from support.store_kinds import Fresh
from support.stored import T0

from sitemap_middleware import Entry, Store, open_store
from sitemap_middleware.stores import link_sites
from sitemap_middleware.stores.abroad import Abroad, Clusters

CAPABILITIES = (Clusters,)


DE, FR = "https://example.de", "https://example.fr"
# What the sites serve once both pages are listed.
CLUSTER = frozenset({("de", f"{DE}/x"), ("fr", f"{FR}/x")})


def page(site: str, *extra: tuple[str, str], print_: str = "p") -> Entry:
    """Page /x of site ``site`` (DE or FR), declaring itself and /x of the
    other site, and ``extra`` pairs as stored (paths or other sites' URLs)."""
    own, other = ("de", "fr") if site == DE else ("fr", "de")
    there = FR if site == DE else DE
    pairs = ((own, "/x"), (other, f"{there}/x"), *extra)
    return Entry("/x", T0, f"{print_}-{own}", alternates=tuple(sorted(pairs)))


@pytest.fixture
def uris(kind: str, tmp_path: Path, fresh: Fresh) -> dict[str, str]:
    """Each site's base URL -> the URI of its listing."""
    found = {}
    for base, name in ((DE, "de"), (FR, "fr")):
        (tmp_path / name).mkdir()
        found[base] = fresh.uri(kind, tmp_path / name)
    return found


@pytest.fixture
def sites(uris: dict[str, str]) -> Iterator[tuple[Store, Store]]:
    """The stores of two sites' pipelines, linked as core.py links them."""
    stores = {base: open_store(uri) for base, uri in uris.items()}
    opened = link_sites({base: (uris[base], stores[base]) for base in uris})
    yield stores[DE], stores[FR]
    for store in [*stores.values(), *opened]:
        store.close()


@pytest.fixture
def both_listed(sites: tuple[Store, Store]) -> tuple[Store, Store]:
    """The two sites' stores, each holding its /x declaring both."""
    de, fr = sites
    de.upsert([page(DE)])
    fr.upsert([page(FR)])
    return de, fr


def served(de: Store, fr: Store) -> dict[str, Links]:
    """loc -> its links, over both sites' validated sitemaps."""
    return {**stored_links(de, DE), **stored_links(fr, FR)}


@pytest.mark.parametrize("first", ["de", "fr"])
def test_a_cross_site_cluster_is_listed_once_both_sites_hold_it(
    sites: tuple[Store, Store], first: str
) -> None:
    de, fr = sites
    order = [(de, page(DE)), (fr, page(FR))]
    if first == "fr":
        order.reverse()
    (store, entry), (later, other) = order
    with store.hreflang() as decided:
        store.upsert([entry])
    assert decided == {"/x": "hreflang_incomplete"}
    assert not any(served(de, fr).values())
    with later.hreflang() as decided:
        later.upsert([other])
    assert decided == {"/x": None}
    listed = served(de, fr)
    assert listed == {f"{DE}/x": CLUSTER, f"{FR}/x": CLUSTER}
    assert not unreciprocated(listed)


def test_a_member_added_lists_the_other_site_s_page(
    sites: tuple[Store, Store],
) -> None:
    """An add (the import's write) settles the other site's members as an
    upsert does."""
    de, fr = sites
    de.upsert([page(DE)])
    assert fr.add([page(FR)]) == 1  # type: ignore[attr-defined]
    listed = served(de, fr)
    assert listed == {f"{DE}/x": CLUSTER, f"{FR}/x": CLUSTER}


def test_a_member_removed_unlists_the_other_site_s_page(
    both_listed: tuple[Store, Store],
) -> None:
    de, fr = both_listed
    assert fr.remove(["/x"]) == 1
    assert served(de, fr) == {f"{DE}/x": frozenset()}
    fr.upsert([page(FR)])
    assert served(de, fr) == {f"{DE}/x": CLUSTER, f"{FR}/x": CLUSTER}


def test_a_member_changing_its_set_unlists_both_until_they_agree(
    both_listed: tuple[Store, Store],
) -> None:
    de, fr = both_listed
    # FR's page names a third member, on its own site, that DE's does not.
    with fr.hreflang() as decided:
        fr.upsert([page(FR, ("en", "/en/x"))])
    assert decided["/x"] == "hreflang_mismatch"
    assert not any(served(de, fr).values())
    fr.upsert(
        [Entry("/en/x", T0, "e", alternates=page(FR, ("en", "/en/x")).alternates)]
    )
    assert not any(served(de, fr).values())
    de.upsert([page(DE, ("en", f"{FR}/en/x"))])
    three = CLUSTER | {("en", f"{FR}/en/x")}
    listed = served(de, fr)
    assert listed == {f"{DE}/x": three, f"{FR}/x": three, f"{FR}/en/x": three}
    assert not unreciprocated(listed)


def test_a_member_of_no_configured_site_is_never_listed(
    sites: tuple[Store, Store],
) -> None:
    de, fr = sites
    elsewhere = ("it", "https://example.it/x")
    de.upsert([page(DE, elsewhere)])
    fr.upsert([page(FR, ("it", "https://example.it/x"))])
    assert not any(served(de, fr).values())


def test_both_sites_writing_at_once_end_reciprocal(
    sites: tuple[Store, Store],
) -> None:
    """Each round, both sites write their page at once, each with one of two
    sets (a language spelled another way: not the same cluster); once both
    writes are done, both pages are listed exactly when the sets agree."""
    de, fr = sites
    variants = {
        DE: [page(DE), page(DE, ("de-at", "/x"), print_="q")],
        FR: [page(FR), page(FR, ("de-at", f"{DE}/x"), print_="q")],
    }
    rounds = [(a, b) for a in (0, 1) for b in (0, 1)] * 16
    errors: list[BaseException] = []

    def write(start: threading.Barrier, store: Store, entry: Entry) -> None:
        try:
            start.wait()
            store.upsert([entry])
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    for a, b in rounds:
        start = threading.Barrier(2)
        threads = [
            threading.Thread(target=write, args=(start, de, variants[DE][a])),
            threading.Thread(target=write, args=(start, fr, variants[FR][b])),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        # Each write waits for no lock the other holds while it waits
        # (SQLite's declarations read on a connection of their own).
        assert not any(thread.is_alive() for thread in threads), "deadlocked"
        assert not errors
        listed = served(de, fr)
        assert not unreciprocated(listed), (a, b, listed)
        assert all(listed.values()) == (a == b), (a, b, listed)


class Paused:
    """Another site's listing whose first read of members waits for ``go``:
    the write that reads it holds its transaction (its lock, or its WATCH)
    meanwhile."""

    def __init__(self, store: Clusters) -> None:
        self.store = store
        self.abroad = store.abroad
        self.read = threading.Event()
        self.go = threading.Event()

    def declarations(self, paths: Iterable[str]) -> dict[str, str]:
        found = self.store.declarations(paths)
        if found and not self.read.is_set():
            self.read.set()
            self.go.wait(10)
        return found

    def resettle(self, paths: Iterable[str]) -> None:
        self.store.resettle(paths)


def test_a_member_changed_while_the_other_site_writes(
    sites: tuple[Store, Store], uris: dict[str, str]
) -> None:
    """DE writes its page and reads FR's, which agrees; before DE commits,
    FR's page changes its set and FR asks DE to settle its page again. That
    settling waits for DE's lock (Redis: fails DE's WATCH), so it reads FR's
    new set: once both are done, neither page is listed."""
    de, fr = sites
    fr.upsert([page(FR)])
    assert isinstance(de, Clusters) and isinstance(fr, Clusters)
    far = fr if uris[FR].startswith("memory:") else open_store(uris[FR])
    assert isinstance(far, Clusters)
    far.abroad = fr.abroad
    paused = Paused(far)
    de.abroad = Abroad(DE, {FR: paused})
    errors: list[BaseException] = []

    def write(store: Store, entry: Entry) -> None:
        try:
            store.upsert([entry])
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    first = threading.Thread(target=write, args=(de, page(DE)))
    first.start()
    assert paused.read.wait(10)  # DE read FR's page, agreeing
    second = threading.Thread(target=write, args=(fr, page(FR, ("en", "/en/x"))))
    second.start()
    # FR's change committed; FR now asks DE to settle its page again.
    deadline = time.monotonic() + 10
    while "en" not in fr.declarations(["/x"]).get("/x", ""):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    time.sleep(0.3)
    paused.go.set()
    first.join()
    second.join()
    if far is not fr:
        far.close()
    assert not errors
    assert not any(served(de, fr).values())


def test_settlings_crossing_at_once_wait_for_no_one(
    sites: tuple[Store, Store],
) -> None:
    """Each site's listing settled again for the other's write at the same
    moment, each reading the other's declarations from inside its own write
    transaction: neither waits for a lock the other holds while it waits
    (SQLite reads declarations on a connection of their own)."""
    de, fr = sites
    de.upsert([page(DE)])
    fr.upsert([page(FR)])
    opened, both = threading.Barrier(2), threading.Barrier(2)

    def meet(barrier: threading.Barrier) -> None:
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait(5)

    for store in (de, fr):
        assert isinstance(store, Clusters) and store.abroad is not None
        ready, read = store.abroad.ready, store.abroad.declared

        def readied(ready: Any = ready) -> None:
            ready()
            meet(opened)  # both have opened the other's listing, no lock held

        def declared(urls: Iterable[str], read: Any = read) -> Any:
            meet(both)  # both settlings hold their write lock here
            return read(urls)

        store.abroad.ready = readied  # type: ignore[method-assign]
        store.abroad.declared = declared  # type: ignore[method-assign]
    assert de.abroad is not None and fr.abroad is not None
    threads = [
        threading.Thread(target=de.abroad.resettle, args=([f"{FR}/x"],)),
        threading.Thread(target=fr.abroad.resettle, args=([f"{DE}/x"],)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not any(thread.is_alive() for thread in threads), "deadlocked"
    listed = served(de, fr)
    assert listed == {f"{DE}/x": CLUSTER, f"{FR}/x": CLUSTER}
