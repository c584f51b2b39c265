"""The site map read by the store's index is the map arranged in memory: the
same sections, headings, sizes and links on every page, whatever the pages,
routes, titles and dates; and a store that cannot say every row's place is
arranged as before."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sitemap_middleware import Entry, open_store
from sitemap_middleware.places import route_section
from sitemap_middleware.serving.arrangement import Arrangement, Map, Part
from sitemap_middleware.serving.indexed import IndexedMap
from sitemap_middleware.serving.site_map import SiteMaps
from sitemap_middleware.stores.contract import Mapped
from sitemap_middleware.stores.memory import MemoryStore

BASE = "https://example.com"
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)

_SEGMENT = st.sampled_from(
    ["a", "b", "A", "a1", "a10", "a2", "x-y", "%C3%A9", "blog", "page.html", "x_2"]
)
_PATH = st.builds(
    lambda segments, slash, query: "/" + "/".join(segments) + slash + query,
    st.lists(_SEGMENT, max_size=3),
    st.sampled_from(["", "", "/", "//"]),
    st.sampled_from(["", "", "?q=1", "?q=/a/b"]),
)
_ROUTE = st.sampled_from(
    [None, None, "/a/<id>", "/<slug>", "/b/{x}/c", "/plain", "/a/b/<x>", "/blog/<s>"]
)
_TITLE = st.none() | st.sampled_from(
    ["", " ", "Part 2", "part 10", "Part 02", "b", "B", "ß", "SS", "a\0b", "x\ny", "٣"]
)
_PAGE = st.tuples(_PATH, _ROUTE, _TITLE, st.none() | st.integers(-2, 3), _TITLE)


def _entries(
    pages: list[tuple[str, str | None, str | None, int | None, str | None]],
) -> list[Entry]:
    return [
        Entry(
            path,
            None if days is None else T0 + timedelta(days=days),
            # No route with a fixed segment serves the home page.
            route=None if _home(path) and route_section(route or "") else route,
            title=title,
            description=about,
        )
        for path, route, title, days, about in pages
    ]


def _home(path: str) -> bool:
    return path.partition("?")[0].rstrip("/") == ""


def _both(store: MemoryStore, newest: bool) -> tuple[Map, Map]:
    """The store's map arranged in memory, and read by its index."""
    infos = tuple(store.parts())

    def asked(path: str) -> bool:
        return newest and path != "/a"  # one section by title, the rest newest

    parts = [Part.read(info.version, store.entries(info.number)) for info in infos]
    arranged = Arrangement.of(infos, parts, asked, "Site", {"": "Everything"})
    counts = store.map_counts()
    assert counts is not None
    indexed = IndexedMap.of(infos, counts, store, asked, "Site", {"": "Everything"})
    return arranged, indexed


def _same(arranged: Map, indexed: Map) -> None:
    assert indexed.total == arranged.total
    assert indexed.sections == arranged.sections
    for per_page in (1, 3, 2000):
        pages = max(1, -(-arranged.total // per_page))
        for page in range(1, pages + 1):
            assert indexed.page(page, per_page, BASE) == arranged.page(
                page, per_page, BASE
            )
    for most in (None, 1, 2):
        assert indexed.whole(BASE, most) == arranged.whole(BASE, most)
    assert indexed.home_description() == arranged.home_description()


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_PAGE, max_size=16, unique_by=lambda page: page[0]),
    st.booleans(),
    st.integers(1, 4),
)
# A one-segment page beside a deeper one of its segment (it stays), and one
# alone (it joins the general section), own pages and equal titles.
@example(
    [
        ("/a", None, "b", 1, None),
        ("/a/b", None, "b", 1, None),
        ("/b", None, "B", None, "about b"),
        ("/", None, None, 2, "home"),
        ("/a?q=1", None, "b", 2, None),
    ],
    True,
    2,
)
def test_the_index_reads_the_map_the_arrangement_makes(
    pages: list[tuple[str, str | None, str | None, int | None, str | None]],
    newest: bool,
    part_size: int,
) -> None:
    store = MemoryStore(part_size=part_size)
    store.upsert(_entries(pages))
    _same(*_both(store, newest))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(_PAGE, min_size=1, max_size=12, unique_by=lambda page: page[0]),
    st.lists(_PAGE, min_size=1, max_size=6, unique_by=lambda page: page[0]),
)
def test_the_index_follows_changed_titles_routes_and_removals(
    first: list[tuple[str, str | None, str | None, int | None, str | None]],
    then: list[tuple[str, str | None, str | None, int | None, str | None]],
) -> None:
    """Pages written again (another title, route or date) and removed are
    placed again: the index still reads what the arrangement makes."""
    store = MemoryStore()
    store.upsert(_entries(first))
    store.upsert(_entries(then))
    store.remove([first[0][0]])
    _same(*_both(store, newest=False))


def test_a_file_an_earlier_release_wrote_is_placed_when_opened(tmp_path: Path) -> None:
    """A file without the place columns (as an earlier release made it) gets
    them, and every row its place, when this release opens it to write; a
    row an earlier release adds later has none, and the map is arranged
    from every row until the file is opened again."""
    path = tmp_path / "s.sqlite3"
    uri = f"sqlite:///{path}"
    pages = [Entry(f"/blog/post-{n}", T0, title=f"Post {n}") for n in range(30)]
    pages.append(Entry("/about", T0, title="About"))
    with open_store(uri) as store:
        store.upsert(pages)
    _as_before_places(path)

    with open_store(uri) as store:
        assert isinstance(store, Mapped)
        counts = store.map_counts()
        assert counts is not None
        assert sum(count.pages for count in counts) == 31
        _same(*_both(store, newest=False))  # type: ignore[arg-type]
        # An earlier release's insert: a row without a place.
        store._query(
            "INSERT INTO sitemap_url (path, page, lastmod, fragment)"
            " VALUES ('/blog/zz', 1, 0, X'')"
        )
        assert store.map_counts() is None
        arranged = SiteMaps(store).arrangement()
        assert isinstance(arranged, Arrangement)
        assert arranged.total == 32
    with open_store(uri) as store:
        assert isinstance(SiteMaps(store).arrangement(), IndexedMap)


def test_a_map_of_configured_sections_is_arranged(tmp_path: Path) -> None:
    """Configured sections group the map by their parts: arranged, as before."""
    store = MemoryStore()
    store.upsert([Entry("/a", T0), Entry("/b", T0, section="news")])
    assert isinstance(SiteMaps(store).arrangement(), Arrangement)
    plain = MemoryStore()
    plain.upsert([Entry("/a", T0)])
    assert isinstance(SiteMaps(plain).arrangement(), IndexedMap)


def _as_before_places(path: Path) -> None:
    """The file's pages table made again as the release before places made
    it: the same rows, without the place columns and their indexes."""
    conn = sqlite3.connect(path)
    ((made,),) = conn.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'sitemap_url'"
    ).fetchall()
    kept = [
        line.split("--")[0].rstrip()
        for line in made.splitlines()
        if "mapgroup" not in line
    ]
    kept = [line for line in kept if line]
    kept[-2] = kept[-2].rstrip(",")  # the last column before ")"
    old = ", ".join(
        row[1]
        for row in conn.execute("PRAGMA table_info(sitemap_url)")
        if not row[1].startswith("map")
    )
    conn.executescript(
        f"""
        BEGIN;
        ALTER TABLE sitemap_url RENAME TO placed;
        {chr(10).join(kept)};
        INSERT INTO sitemap_url SELECT {old} FROM placed;
        DROP TABLE placed;
        COMMIT;
        """
    )
    columns = {row[1] for row in conn.execute("PRAGMA table_info(sitemap_url)")}
    assert not any(name.startswith("map") for name in columns)
    conn.close()
