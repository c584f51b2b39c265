"""Hreflang (stores.base): clusters settled as the store writes, across the
processes that share it, and what each write says of them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.reciprocal import stored_links, unreciprocated
from support.store_kinds import SERVER_KINDS, Fresh
from support.stored import CLUSTER, T0, clustered, member, paths, rendered

from sitemap_middleware import Entry, Store
from sitemap_middleware.stores.contract import Hreflang

CAPABILITIES = (Hreflang,)


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
