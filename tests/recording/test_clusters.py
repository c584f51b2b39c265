"""The cluster rule's pieces: a fragment relinked is the fragment rendered with
those alternates, and what a page declares survives the row it is packed in."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware.model import Entry
from sitemap_middleware.recording.clusters import declared
from sitemap_middleware.render import fragment, links, relink
from sitemap_middleware.stores import hreflang, records

pairs = st.lists(
    st.tuples(
        st.sampled_from(["en", "de-AT", "x-default", "EN"]),
        st.from_regex(r"(https://example\.fr)?/[a-z&'=?]{0,8}", fullmatch=True),
    ),
    max_size=4,
).map(tuple)
entries = st.builds(
    Entry,
    st.from_regex(r"/[a-z&']{0,8}", fullmatch=True),
    changefreq=st.sampled_from([None, "daily"]),
    priority=st.sampled_from([None, 0.5]),
    alternates=pairs,
    images=st.lists(st.sampled_from(["/i.png", "https://x.example/a&b"])).map(tuple),
)


@given(entries, pairs)
def test_relink_is_rendering_with_other_alternates(
    entry: Entry, other: tuple[tuple[str, str], ...]
) -> None:
    rendered = fragment(entry, 0)
    assert relink(rendered, links(other)) == fragment(
        replace(entry, alternates=other), 0
    )
    assert relink(rendered, "") == fragment(replace(entry, alternates=()), 0)


@given(pairs)
def test_declared_alternates_pack_and_unpack(
    alternates: tuple[tuple[str, str], ...],
) -> None:
    assert hreflang.unpack(hreflang.pack(alternates)) == alternates


def test_a_batch_without_alternates_settles_nothing() -> None:
    """The bulk path: no alternates declared now or before, nothing to read."""
    old = {"/a": records.Stored(1, records.Row(0, None, None, b"", ""))}
    batch = {"/a": Entry("/a"), "/b": Entry("/b")}
    assert hreflang.members(batch, old) == set()
    assert hreflang.settle(batch, old) is hreflang.NOTHING


def test_members_are_those_declared_now_and_before() -> None:
    before = hreflang.pack([("en", "/en"), ("fr", "/fr")])
    old = {"/de": records.Stored(1, records.Row(0, None, None, b"", before))}
    batch = {"/de": Entry("/de", alternates=(("de", "/de"), ("it", "/it")))}
    assert hreflang.members(batch, old) == {"/en", "/fr", "/it"}
    assert hreflang.members({}, old, ["/de"]) == {"/en", "/fr"}


def test_a_member_on_another_site_is_kept_as_its_url() -> None:
    """An href on another of the app's sites is kept as that site's URL (its
    base URL and stored path); one on no site of the app is dropped; one on
    the page's own site is a path."""
    head = (
        ("de", "https://example.de/x"),
        ("fr", "https://Example.FR:443/./x?utm_source=a"),
        ("it", "https://example.it/x"),
        ("es", "/es/x"),
    )
    abroad = ("https://example.fr", "https://example.com/en")
    assert declared(head, "https://example.de", "/x", frozenset(), abroad) == (
        ("de", "/x"),
        ("es", "/es/x"),
        ("fr", "https://example.fr/x"),
    )
    assert declared(
        (("en", "https://example.com/en/x"), ("nl", "https://example.com/nl")),
        "https://example.de",
        "/x",
        frozenset(),
        abroad,
    ) == (("en", "https://example.com/en/x"),)
    # One site: only its own hrefs, as before.
    assert declared(head, "https://example.de", "/x", frozenset()) == (
        ("de", "/x"),
        ("es", "/es/x"),
    )
