"""Writing pages, on every store: upserts, lastmod, metadata, removal, counts."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from support.store_kinds import Fresh
from support.stored import T0, paths, rendered

from sitemap_middleware import Entry, Store, StoreError, open_store
from sitemap_middleware.stores.layout import BATCH


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
            Entry("/b", T0, "f", route="/<x>", title="B", description="About B"),
            Entry("/c", T0, route="/<x>"),
        ]
    )
    store.upsert([Entry("/d", T0), Entry("/e", T0)])
    kept = {
        e.path: (e.fingerprint, e.route, e.title, e.description)
        for e in store.entries(1)
    }
    assert kept == {
        "/a": (None, None, None, None),
        "/b": ("f", "/<x>", "B", "About B"),
        "/c": (None, "/<x>", None, None),
        "/d": (None, None, None, None),
        "/e": (None, None, None, None),
    }
    assert store.count("/<x>") == 2


def test_descriptions_are_kept_beside_the_fragment(
    make_store: Callable[..., Store],
) -> None:
    """A description is stored and returned (bulk and single), never in the
    fragment; a new one alone moves neither lastmod nor the part's version
    or bytes; an entry without one keeps the stored one; a path removed and
    stored again has none."""
    store = make_store()
    store.upsert(
        Entry(f"/p/{n}", T0, "f", description=f"Page {n} [é]") for n in range(50)
    )
    store.upsert([Entry("/a", T0, "f", title="A", description="Old")])
    got = {e.path: e.description for e in store.entries(1)}
    assert got["/p/7"] == "Page 7 [é]" and got["/a"] == "Old"
    (before,) = store.parts()
    fragments = b"".join(store.fragments(1))
    assert b"Old" not in fragments and b"Page 7" not in fragments
    assert store.upsert([Entry("/a", T0 + timedelta(days=1), "f", description="New")])
    (after,) = store.parts()
    assert (after.version, after.lastmod) == (before.version, before.lastmod)
    assert b"".join(store.fragments(1)) == fragments
    assert store.upsert([Entry("/a", T0, "f", title="A")]) == 0
    entry = {e.path: e for e in store.entries(1)}["/a"]
    assert (entry.title, entry.description) == ("A", "New")
    store.remove(["/a"])
    store.upsert([Entry("/a", T0, "f")])
    assert {e.path: e.description for e in store.entries(1)}["/a"] is None


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


def test_a_path_another_writer_stored_between_two_batches(
    shared_kind: str, fresh: Fresh, tmp_path: Path
) -> None:
    """A writer whose last batch held new paths alone learns, in its next
    batch, of a path another writer stored meanwhile: merged, not doubled."""
    uri = fresh.uri(shared_kind, tmp_path)
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


def test_last_entry_in_batch_wins(make_store: Callable[..., Store]) -> None:
    store = make_store()
    store.upsert([Entry("/a", T0, "f1"), Entry("/a", T0, "f2")])
    assert store.count() == 1 and next(store.entries(1)).fingerprint == "f2"


def test_context_manager(make_store: Callable[..., Store]) -> None:
    with make_store() as store:
        store.upsert([Entry("/a", T0)])
        assert store.count() == 1


ROUTES: list[str | None] = [None, "/<a>", "/<b>"]


@pytest.mark.slow
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
