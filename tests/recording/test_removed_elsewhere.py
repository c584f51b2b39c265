"""Removals heal: a page removed outside a running worker (by another worker or
machine that saw it answer 404, by the command line's ``remove``) is forgotten by
the worker's recent pages within about a second, and recorded again at its next
visit when it answers as a public page, with no restart (stores.contract.Removals,
recording.sharing.StoreWatch)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.sites import BASE, HTML, ROUTES, Site, html, make_site
from support.store_kinds import Fresh

from sitemap_middleware import Entry, StoreError
from sitemap_middleware.cli import main
from sitemap_middleware.recording import sharing
from sitemap_middleware.recording.sharing import StoreWatch
from sitemap_middleware.stores.memory import MemoryStore

BASE_URL = str(BASE["base_url"])
ABOUT = (200, {"Content-Type": HTML}, [html("About")])
NOT_FOUND = (404, {"Content-Type": HTML}, [html("Not found")])
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def fresh_hits(site: Site) -> int:
    return int(site.middleware.stats()["seen"].get("fresh", 0))


def stored(site: Site, path: str) -> bool:
    assert site.middleware.flush(5.0)
    return path in site.store.known([path])


def removed_by_another_worker(other: Site, path: str) -> None:
    """``other`` (another worker on the same store) sees ``path`` answer 404."""
    saved = ROUTES[path]
    ROUTES[path] = NOT_FOUND
    try:
        assert other.get(path).status == 404
        assert other.middleware.flush(5.0)
    finally:
        ROUTES[path] = saved


@pytest.fixture
def sites() -> Iterator[Callable[..., Site]]:
    made: list[Site] = []

    def build(store: Any, **overrides: Any) -> Site:
        made.append(make_site("wsgi", {**BASE, "store": store, **overrides}))
        return made[-1]

    yield build
    for site in made:
        site.close()


# -- the watch, on its own ----------------------------------------------------------


@pytest.fixture
def every_look(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store is looked at on every call, not once a second."""
    monkeypatch.setattr(sharing, "EPOCH_INTERVAL", 0.0)


@pytest.mark.usefixtures("every_look")
def test_the_watch_gives_the_paths_removed_since_its_last_look() -> None:
    store = MemoryStore()
    store.upsert([Entry(f"/{n}", T0, "f") for n in range(5)])
    store.remove(["/0"])
    watch = StoreWatch(store)
    assert watch.look() is None  # the first: nothing remembered is known held
    store.remove(["/2", "/1"])
    store.remove(["/missing"])  # never stored: nothing logged
    assert watch.look() == ("/1", "/2")
    assert watch.look() == ()
    store.removals_kept = 1
    store.remove(["/3", "/4"])
    assert watch.look() is None  # more than the log keeps: forget everything
    assert watch.look() == ()


def test_the_watch_looks_once_an_interval() -> None:
    store = MemoryStore()
    store.upsert([Entry("/a", T0, "f")])
    watch = StoreWatch(store)
    assert watch.look() is None
    store.remove(["/a"])
    assert watch.look() == ()  # not due yet: one read a second, never more


@pytest.mark.usefixtures("every_look")
def test_the_watch_forgets_everything_when_the_epoch_moves() -> None:
    store = MemoryStore()
    watch = StoreWatch(store)
    assert watch.look() is None
    assert watch.look() == ()
    store._epoch = "another"
    assert watch.look() is None
    assert watch.look() == ()


@pytest.mark.usefixtures("every_look")
def test_a_store_without_a_removals_log_is_watched_for_its_epoch() -> None:
    """A third-party store with an epoch and no Removals: its epoch alone."""

    class EpochOnly:
        value = "a"

        def epoch(self) -> str:
            return self.value

    store = EpochOnly()
    watch = StoreWatch(store)  # type: ignore[arg-type]
    assert watch.look() is None
    assert watch.look() == ()
    store.value = "b"
    assert watch.look() is None


@pytest.mark.usefixtures("every_look")
def test_the_watch_goes_on_through_an_outage() -> None:
    class Failing(MemoryStore):
        failing = False

        def removed_since(self, seq: int | None) -> Any:
            if self.failing:
                raise StoreError("down")
            return super().removed_since(seq)

    store = Failing()
    store.upsert([Entry("/a", T0, "f")])
    watch = StoreWatch(store)
    assert watch.look() is None
    store.remove(["/a"])
    store.failing = True
    assert watch.look() == ()
    store.failing = False
    assert watch.look() == ("/a",)  # read once the store is back
    # A first look that fails: what is written meanwhile is forgotten at the
    # first that succeeds (removals before it are unknown).
    late = StoreWatch(store)
    store.failing = True
    assert late.look() == ()
    store.failing = False
    assert late.look() is None


# -- a running worker, the removal made elsewhere -------------------------------


@pytest.mark.usefixtures("every_look")
def test_a_page_removed_by_another_worker_is_recorded_again(
    sites: Callable[..., Site],
) -> None:
    """Two workers on one store: the second sees /about answer 404 and removes
    it; the first, which holds /about as fresh for recheck_interval (300 s),
    records it again at its next visit."""
    store = MemoryStore()
    first, second = sites(store), sites(store)
    first.visit("/about")
    assert first.get("/about").status == 200
    assert fresh_hits(first) == 1
    removed_by_another_worker(second, "/about")
    assert not stored(first, "/about")
    assert first.middleware.flush(5.0)  # the first worker's next look
    assert first.get("/about").status == 200
    assert stored(first, "/about")
    assert fresh_hits(first) == 1
    assert first.middleware.stats()["recorded"] == 2


@pytest.mark.usefixtures("every_look")
def test_its_own_removal_read_back_changes_nothing(sites: Callable[..., Site]) -> None:
    """A worker reads back its own removals too: forgetting them again is a
    no-op, and a page it recorded again meanwhile stays stored."""
    store = MemoryStore()
    site = sites(store)
    site.visit("/about")
    removed_by_another_worker(site, "/about")  # this very worker
    site.visit("/about")
    assert stored(site, "/about")
    assert site.middleware.flush(5.0)
    site.visit("/about")
    assert stored(site, "/about")
    assert site.middleware.stats()["removed"] == 1


@pytest.mark.usefixtures("every_look")
def test_a_forged_removal_makes_no_worker_forget(sites: Callable[..., Site]) -> None:
    """Invariant 19 still holds: a hostile request at another spelling removes
    nothing, so the log stays empty and the other workers' pages fresh."""
    store = MemoryStore()
    first, second = sites(store), sites(store)
    first.visit("/about")
    ROUTES["/about"] = NOT_FOUND
    for wire in ("/about?page=999", "/x/../about", "/about;jsessionid=1"):
        second.fetch(wire)
    ROUTES["/about"] = ABOUT
    assert second.middleware.flush(5.0)
    assert store.removed_since(0).paths == ()
    assert first.middleware.flush(5.0)
    assert first.get("/about").status == 200
    assert fresh_hits(first) == 1
    assert stored(first, "/about")


@pytest.mark.usefixtures("every_look")
def test_many_removals_forget_only_those_pages(sites: Callable[..., Site]) -> None:
    """A high removal rate (404s for stored pages and for made-up ones) makes
    a worker forget those pages only: its other pages stay fresh, and 404s for
    paths never stored log nothing."""
    store = MemoryStore()
    first, second = sites(store), sites(store)
    first.visit("/about", "/")
    store.upsert([Entry(f"/gone/{n}", T0, "f") for n in range(200)])
    seq = store.removed_since(None).seq
    for n in range(200):
        assert second.get(f"/gone/{n}").status == 404
        assert second.get(f"/made-up/{n}").status == 404
    assert second.middleware.flush(5.0)
    assert len(store.removed_since(seq).paths or ()) == 200
    assert first.middleware.flush(5.0)
    assert first.get("/about").status == 200
    assert first.get("/").status == 200
    assert fresh_hits(first) == 2
    assert first.middleware.stats()["recorded"] == 2


@pytest.mark.usefixtures("every_look")
def test_more_removals_than_the_log_keeps_forget_everything(
    sites: Callable[..., Site],
) -> None:
    store = MemoryStore()
    store.removals_kept = 3
    first = sites(store)
    first.visit("/about")
    assert first.middleware.flush(5.0)  # the first look
    store.upsert([Entry(f"/gone/{n}", T0, "f") for n in range(5)])
    store.remove([f"/gone/{n}" for n in range(5)])
    assert first.middleware.flush(5.0)
    assert first.get("/about").status == 200
    assert stored(first, "/about")
    assert fresh_hits(first) == 0  # read and written again
    assert first.middleware.stats()["recorded"] == 2


# -- in real time, on every store another process can share ------------------------

SHARED_KINDS = ["memory", "sqlite", "redis", "postgres"]


def back_within(site: Site, path: str, seconds: float) -> float:
    """Visit ``path`` until it is stored again; how long that took."""
    start = time.monotonic()
    while True:
        assert site.get(path).status == 200
        if stored(site, path):
            return time.monotonic() - start
        assert time.monotonic() - start < seconds, f"{path} not recorded again"
        time.sleep(0.1)


@pytest.mark.slow
@pytest.mark.parametrize("kind", SHARED_KINDS)
def test_removed_by_another_worker_comes_back_within_a_second_or_so(
    kind: str, sites: Callable[..., Site], fresh: Fresh, tmp_path: Path
) -> None:
    store: Any = MemoryStore() if kind == "memory" else fresh.uri(kind, tmp_path)
    first, second = sites(store), sites(store)
    first.visit("/about")
    removed_by_another_worker(second, "/about")
    assert not stored(first, "/about")
    took = back_within(first, "/about", 3.0)
    assert fresh_hits(first) >= 1  # it was fresh: only the log brought it back
    print(f"{kind}: recorded again after {took:.2f} s")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "redis", "postgres"])
def test_removed_by_the_command_line_comes_back_within_a_second_or_so(
    kind: str, sites: Callable[..., Site], fresh: Fresh, tmp_path: Path
) -> None:
    uri = fresh.uri(kind, tmp_path)
    site = sites(uri)
    site.visit("/about", "/")
    result = CliRunner().invoke(
        main, ["remove", "--store", uri, "--base-url", BASE_URL, f"{BASE_URL}/about"]
    )
    assert result.exit_code == 0, result.output
    assert "removed: " in result.output
    assert not stored(site, "/about")
    took = back_within(site, "/about", 3.0)
    assert site.get("/").status == 200
    assert fresh_hits(site) >= 2  # / stayed fresh: only /about was forgotten
    print(f"{kind}: recorded again after {took:.2f} s")
