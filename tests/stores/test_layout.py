"""The part planner's shortcut for a batch of new paths only: the plan the
general loop makes, record for record."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware import Entry
from sitemap_middleware.stores import layout
from sitemap_middleware.stores.layout import Fill, Row, Stored

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
    settled = layout.settle(batch, {})
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
