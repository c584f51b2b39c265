"""The part planner's shortcut for a batch of new paths only: the plan the
general loop makes, record for record."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware import Entry
from sitemap_middleware.sitemaps import (
    MAX_PART_BYTES,
    MAX_URLS_PER_PART,
    RUN,
    RUN_BYTES,
)
from sitemap_middleware.stores import hreflang, layout
from sitemap_middleware.stores.records import Fill, Row, Stored

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
NOW = int(T0.timestamp()) + 10**6
# A stored row of no path in the batches: only its presence in ``old`` sends
# a plan down the general loop.
ELSEWHERE = {"/elsewhere": Stored(1, Row(0, None, None, b"<url></url>\n", ""))}

new_entries = st.lists(
    st.builds(
        lambda n, lastmod, title, alternates: Entry(
            f"/p/{n}",
            None if lastmod is None else T0 + timedelta(seconds=lastmod),
            f"{n:x}",
            route="/p/<n>",
            title=title,
            alternates=(("en", f"/p/{n}"), ("de", f"/de/{n}")) if alternates else (),
        ),
        st.integers(0, 10**6),
        st.one_of(st.none(), st.integers(-(10**5), 2 * 10**6)),
        st.one_of(st.none(), st.just("A title")),
        st.booleans(),
    ),
    max_size=60,
)


@given(
    new_entries,
    st.integers(0, 3),
    st.integers(0, 5),
    st.integers(1, 7),
    st.integers(400, 3000),
)
def test_a_batch_of_new_paths_is_planned_as_the_general_loop_plans_it(
    entries: list[Entry], last: int, urls: int, part_size: int, part_bytes: int
) -> None:
    batch = {entry.path: entry for entry in entries}
    sizes = {last: Fill(urls, urls * 40)} if last else {}
    sizes[1] = Fill(1, 40) if last <= 1 else sizes.get(1, Fill(1, 40))
    settled = hreflang.settle(batch, {})
    args = (sizes, last, part_size, part_bytes, NOW, settled)
    try:
        quick = layout.plan(batch, {}, *args)
    except ValueError as exc:
        quick_error: str | None = str(exc)
    else:
        quick_error = None
    try:
        general = layout.plan(batch, ELSEWHERE, *args)
    except ValueError as exc:
        assert quick_error == str(exc)
    else:
        assert quick_error is None
        assert quick == general


sectioned_entries = st.lists(
    st.builds(
        lambda n, section, alternates: Entry(
            f"/p/{n}",
            T0,
            f"{n:x}",
            section=section,
            alternates=(("en", f"/p/{n}"), ("de", f"/de/{n}")) if alternates else (),
        ),
        st.integers(0, 10**6),
        st.sampled_from([None, "", "posts", "tags"]),
        st.booleans(),
    ),
    max_size=60,
)


@given(
    sectioned_entries,
    st.dictionaries(st.sampled_from(["", "posts", "tags"]), st.integers(0, 3)),
    st.integers(1, 7),
    st.integers(1000, 4000),
)
def test_sections_planned_alike_and_never_sharing_a_part(
    entries: list[Entry], fill: dict[str, int], part_size: int, part_bytes: int
) -> None:
    """The shortcut and the general loop agree with sections; every part a
    plan writes holds one section's pages, joining a section's open part or
    parts numbered after the store's highest."""
    batch = {entry.path: entry for entry in entries}
    # The open parts: section i's at i + 1 (when it has one), filled a little.
    names = sorted(fill)
    opened = {name: number for number, name in enumerate(names, 1)}
    sizes = {opened[name]: Fill(fill[name], fill[name] * 40, name) for name in names}
    last = len(names)
    settled = hreflang.settle(batch, {})
    args = (sizes, last, part_size, part_bytes, NOW, settled, opened)
    try:
        quick = layout.plan(batch, {}, *args)
    except ValueError:
        return
    general = layout.plan(batch, ELSEWHERE, *args)
    assert quick == general
    sections = {number: name for name, number in opened.items()}
    for change in quick.changes:
        wanted = batch[change.path].section or ""
        assert sections.setdefault(change.part, wanted) == wanted
        assert change.part == opened.get(wanted) or change.part > last
    for number, totals in quick.parts.items():
        assert totals.section == sections[number]
    assert quick.open == {
        **opened,
        **{
            name: max(n for n, s in sections.items() if s == name)
            for name in set(sections.values())
        },
    }


def test_a_store_without_sections_plans_as_it_always_did() -> None:
    """``open=None`` (a store that keeps no sections) reads no entry's
    section: every new path joins the highest part."""
    batch = {
        "/a": Entry("/a", T0, section="posts"),
        "/b": Entry("/b", T0, section="tags"),
    }
    plan = layout.plan(batch, {}, {2: Fill(1, 40)}, 2, 10, 10_000, NOW)
    assert [(c.path, c.part) for c in plan.changes] == [("/a", 2), ("/b", 2)]
    assert plan.open == {"": 2} and plan.parts[2].section == ""


def test_opened_parts_from_the_named_ones() -> None:
    assert layout.opened({}, 0) == {}
    assert layout.opened({}, 3) == {"": 3}
    assert layout.opened({2: "posts", 3: "tags", 5: "posts"}, 5) == {
        "posts": 5,
        "tags": 3,
        "": 4,
    }
    assert layout.opened({1: "posts", 2: "posts"}, 2) == {"posts": 2}


def test_a_run_holds_run_rows_or_about_run_bytes() -> None:
    """Plain fragments are read RUN at a time; large ones in shorter runs of
    about RUN_BYTES; never none, and an empty part's summary reads as RUN."""
    assert layout.run_rows(50_000, 50_000 * 350) == RUN
    assert layout.run_rows(3_000, 3_000 * 16_000) == RUN_BYTES // 16_000
    assert layout.run_rows(1, MAX_PART_BYTES) == 1
    assert layout.run_rows(0, 0) == RUN


@given(st.integers(1, MAX_URLS_PER_PART), st.integers(1, MAX_PART_BYTES))
def test_runs_are_bounded(urls: int, size: int) -> None:
    rows = layout.run_rows(urls, size)
    assert 1 <= rows <= RUN
    assert rows == 1 or rows * size <= RUN_BYTES * urls  # at most RUN_BYTES on average
