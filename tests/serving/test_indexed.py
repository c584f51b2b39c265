"""The site map read by the store's index is the map arranged in memory: the
same sections, headings, sizes and links on every page, whatever the pages,
routes, titles and dates, in memory and on PostgreSQL; and a store that cannot
say every row's place is arranged as before."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Protocol

import pytest
import redis
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.services import require_postgres
from support.store_kinds import Fresh
from werkzeug.test import Client

from sitemap_middleware import Entry, SitemapMiddleware, Store, open_store
from sitemap_middleware.places import places, route_section
from sitemap_middleware.recording.sharing import PLACE_BATCH
from sitemap_middleware.serving.arrangement import Arrangement, Map, Part
from sitemap_middleware.serving.indexed import IndexedMap
from sitemap_middleware.serving.site_map import SiteMaps
from sitemap_middleware.stores import link_sites
from sitemap_middleware.stores.base import MIN_PART_BYTES
from sitemap_middleware.stores.contract import Mapped
from sitemap_middleware.stores.memory import MemoryStore
from sitemap_middleware.stores.sql.mapped import COLUMNS, INDEX_NAMES

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
_TITLES = ["", " ", "Part 2", "part 10", "Part 02", "b", "B", "ß", "SS", "x\ny", "٣"]
_TITLE = st.none() | st.sampled_from([*_TITLES, "a\0b"])
_PAGE = st.tuples(_PATH, _ROUTE, _TITLE, st.none() | st.integers(-2, 3), _TITLE)
# PostgreSQL's text holds no NUL: its store refuses such a title (StoreError).
_TEXT = st.none() | st.sampled_from(_TITLES)
_PG_PAGE = st.tuples(_PATH, _ROUTE, _TEXT, st.none() | st.integers(-2, 3), _TEXT)


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


class _MappedStore(Store, Mapped, Protocol):
    """A store that keeps the map's order with its pages."""


def _both(store: _MappedStore, newest: bool) -> tuple[Map, Map]:
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
    store.keep_places()
    store.upsert(_entries(pages))
    _same(*_both(store, newest))


def _changes(page: st.SearchStrategy[Any]) -> list[st.SearchStrategy[Any]]:
    """Pages written first, then some written (again), of ``page``."""
    return [
        st.lists(page, min_size=1, max_size=12, unique_by=lambda page: page[0]),
        st.lists(page, min_size=1, max_size=6, unique_by=lambda page: page[0]),
    ]


@settings(max_examples=40, deadline=None)
@given(*_changes(_PAGE))
def test_the_index_follows_changed_titles_routes_and_removals(
    first: list[tuple[str, str | None, str | None, int | None, str | None]],
    then: list[tuple[str, str | None, str | None, int | None, str | None]],
) -> None:
    """Pages written again (another title, route or date) and removed are
    placed again: the index still reads what the arrangement makes."""
    store = MemoryStore()
    store.keep_places()
    store.upsert(_entries(first))
    store.upsert(_entries(then))
    store.remove([first[0][0]])
    _same(*_both(store, newest=False))


@contextmanager
def _on_server(kind: str, **options: object) -> Iterator[_MappedStore]:
    """A store on a server, on tables or keys of its own, deleted after
    (one per example: hypothesis runs the examples of one test call)."""
    fresh = Fresh()
    try:
        with open_store(fresh.uri(kind, **options)) as store:
            assert isinstance(store, Mapped)
            store.keep_places()
            yield store
    finally:
        fresh.cleanup()


# PostgreSQL's examples take about 3 s a test; Redis' a fraction of it.
_STEP = 300  # rows a test's place_rows asks for (a hash of 512 is scanned whole)
_SERVERS = [pytest.param("postgres", marks=pytest.mark.slow), "redis"]


@pytest.mark.services
@pytest.mark.parametrize("kind", _SERVERS)
@settings(max_examples=40, deadline=None)
@given(
    st.lists(_PG_PAGE, max_size=16, unique_by=lambda page: page[0]),
    st.booleans(),
    st.integers(1, 4),
)
def test_a_server_s_index_reads_the_map_the_arrangement_makes(
    kind: str,
    pages: list[tuple[str, str | None, str | None, int | None, str | None]],
    newest: bool,
    part_size: int,
) -> None:
    """The rows' places as a server writes and orders them (PostgreSQL:
    bytea keys, paths collated "C"; Redis: members ranked by their bytes)
    make the map the arrangement makes."""
    with _on_server(kind, part_size=part_size) as store:
        store.upsert(_entries(pages))
        _same(*_both(store, newest))


@pytest.mark.services
@pytest.mark.parametrize("kind", _SERVERS)
@settings(max_examples=40, deadline=None)
@given(*_changes(_PG_PAGE), st.booleans())
# A page of a newest-first section written again with a later date.
@example(
    [
        ("/a/x", None, "x", 1, None),
        ("/a/y", None, "y", 2, None),
        ("/", None, "", 0, ""),
    ],
    [("/a/x", None, "x", 3, None)],
    True,
)
def test_a_server_s_index_follows_changed_titles_routes_and_removals(
    kind: str,
    first: list[tuple[str, str | None, str | None, int | None, str | None]],
    then: list[tuple[str, str | None, str | None, int | None, str | None]],
    newest: bool,
) -> None:
    """Rows a server writes again (PostgreSQL: by update, and through the
    copy of a batch of new paths; Redis: dates moved, titles changed alone)
    and removes are placed again."""
    with _on_server(kind) as store:
        store.upsert(_entries(first))
        store.upsert(_entries(then))
        store.remove([first[0][0]])
        _same(*_both(store, newest))


def test_a_file_an_earlier_release_wrote_is_placed_by_the_writer(
    tmp_path: Path,
) -> None:
    """A file without the place columns (as an earlier release made it) gets
    them when this release opens it to write; its rows have no place, and
    the map is arranged from every row until they are placed (the writer's
    ``place_rows``, a batch a round); a row an earlier release adds later
    has none, until it is placed in turn."""
    path = tmp_path / "s.sqlite3"
    uri = f"sqlite:///{path}"
    pages = [Entry(f"/blog/post-{n}", T0, title=f"Post {n}") for n in range(30)]
    pages.append(Entry("/about", T0, title="About"))
    with open_store(uri) as store:
        store.upsert(pages)
    _as_before_places(path)

    with open_store(uri) as store:
        assert isinstance(store, Mapped)
        assert store.map_counts() is None
        assert isinstance(SiteMaps(store).arrangement(), Arrangement)
        assert store.place_due  # asked by the map, for the writer
        assert store.place_rows(20) == 20 and store.place_due
        assert store.place_rows(20) == 11 and not store.place_due
        counts = store.map_counts()
        assert counts is not None
        assert sum(count.pages for count in counts) == 31
        _same(*_both(store, newest=False))
        # An earlier release's insert: a row without a place.
        store._query(
            "INSERT INTO sitemap_url (path, page, lastmod, fragment)"
            " VALUES ('/blog/zz', 1, 0, X'')"
        )
        store._query("UPDATE sitemap_page SET urls = urls + 1 WHERE page = 1")
        assert store.map_counts() is None and store.place_due
        arranged = SiteMaps(store).arrangement()
        assert isinstance(arranged, Arrangement)
        assert arranged.total == 32
        assert store.place_rows(20) == 1
        assert isinstance(SiteMaps(store).arrangement(), IndexedMap)


def test_a_store_that_keeps_no_places_writes_none_and_unplaces_what_it_changes(
    tmp_path: Path,
) -> None:
    """A store object whose map nobody reads writes rows without a place (no
    cost but NULLs), and a row it writes again loses the place another gave
    it: placed again, it has the place of what it holds now."""
    uri = f"sqlite:///{tmp_path / 's.sqlite3'}"
    with open_store(uri) as keeping, open_store(uri) as plain:
        assert isinstance(keeping, Mapped) and isinstance(plain, Mapped)
        keeping.keep_places()
        keeping.upsert([Entry(f"/a/{n}", T0, title=f"A {n}") for n in range(5)])
        assert keeping.map_counts() is not None
        plain.upsert([Entry("/b/1", T0, title="B")])
        plain.upsert([Entry("/a/3", T0, title="Zed", route="/a/<n>")])
        assert keeping.map_counts() is None
        assert keeping.place_rows(100) == 2
        _same(*_both(keeping, newest=False))
        titles = [link.title for link in keeping_map(keeping).links(slice(0, 6), "")]
        assert titles[-1] == "Zed"


def keeping_map(store: _MappedStore) -> Map:
    indexed = SiteMaps(store).arrangement()
    assert isinstance(indexed, IndexedMap)
    return indexed


@pytest.mark.services
def test_postgres_places_a_row_another_site_s_settling_moves(fresh: Fresh) -> None:
    """A page whose links another site's write completes, grown past the
    room left in its part, is written again as a new row of the next part
    (the settling's own insert, not a batch's copy): placed as any other."""
    de, fr = "https://example.de", "https://example.fr"
    uris = {de: fresh.postgres_uri(part_bytes=MIN_PART_BYTES), fr: fresh.postgres_uri()}
    stores = {base: open_store(uri) for base, uri in uris.items()}
    for each in stores.values():
        each.keep_places()  # type: ignore[attr-defined]
    opened = link_sites({base: (uris[base], stores[base]) for base in uris})
    try:
        pair = (("de", "/d/x"), ("fr", f"{fr}/x"))
        stores[de].upsert([Entry("/d/x", T0, "x", title="X", alternates=pair)])
        filled = 0
        while len(stores[de].parts()) == 1:  # its part full, to a short page
            filled += 1
            stores[de].upsert([Entry(f"/f/{filled}", T0, title=f"F {filled}")])
        pair = (("de", f"{de}/d/x"), ("fr", "/x"))
        stores[fr].upsert([Entry("/x", T0, "x", alternates=pair)])
        store = stores[de]
        assert isinstance(store, Mapped)
        assert "/d/x" not in {entry.path for entry in store.entries(1)}  # moved
        # Moved by the other site's store object, which keeps no places: the
        # row is placed by its own site's writer (the map arranged meanwhile).
        assert store.map_counts() is None and store.place_due
        assert store.place_rows(100) == 1
        _same(*_both(store, newest=False))
        _placed_as_computed(store.prefix)  # type: ignore[attr-defined]
    finally:
        for each in [*stores.values(), *opened]:
            each.close()


@pytest.mark.services
def test_postgres_tables_an_earlier_release_made_get_the_columns_when_opened(
    fresh: Fresh,
) -> None:
    """Tables without the place columns and their indexes (as an earlier
    release made them) get them when this release opens them; their rows
    get their places from ``place_rows``, and so does a row an earlier
    release adds later (the map is arranged from every row meanwhile)."""
    uri = fresh.postgres_uri()
    pages = [Entry(f"/blog/post-{n}", T0, title=f"Post {n}") for n in range(30)]
    pages.append(Entry("/about", T0, title="About"))
    pages.append(Entry("/shop/2", T0, route="/shop/<n>"))
    prefix = _written_before_places(uri, pages)
    with open_store(uri) as store:
        assert isinstance(store, Mapped)
        assert store.map_counts() is None  # opened (the tables upgraded) first
        assert all(_indexes(prefix))
        store.keep_places()
        assert store.place_rows(1000) == 32
        counts = store.map_counts()
        assert counts is not None
        assert _unplaced(prefix) == 0
        assert sum(count.pages for count in counts) == 32
        _same(*_both(store, newest=False))
        # An earlier release's insert: a row without a place.
        with _connect() as conn:
            conn.execute(
                f"INSERT INTO {prefix}url (path, seq, page, lastmod, fragment)"
                " VALUES ('/blog/zz', 1000, 1, 0, '')"
            )
            conn.execute(f"UPDATE {prefix}page SET urls = urls + 1 WHERE page = 1")
        assert store.map_counts() is None
        arranged = SiteMaps(store).arrangement()
        assert isinstance(arranged, Arrangement)
        assert arranged.total == 33
        assert store.place_rows(1000) == 1
        assert isinstance(SiteMaps(store).arrangement(), IndexedMap)
        assert _unplaced(prefix) == 0


@pytest.mark.services
def test_postgres_places_rows_without_a_place_a_batch_at_a_time(
    fresh: Fresh,
) -> None:
    """More rows than one placing transaction takes: every one gets the
    place places() gives its path, route and title."""
    uri = fresh.postgres_uri()
    routes = [None, "/p/<n>", "/<slug>"]
    pages = [
        Entry(f"/p/{n}", T0, route=routes[n % 3], title=f"Page {n}" if n % 2 else None)
        for n in range(2 * PLACE_BATCH + 7)
    ]
    prefix = _written_before_places(uri, pages)
    with open_store(uri) as store:
        assert isinstance(store, Mapped)
        store.keep_places()
        placed = [store.place_rows(PLACE_BATCH) for _ in range(3)]
        assert placed == [PLACE_BATCH, PLACE_BATCH, 7] and not store.place_due
        counts = store.map_counts()
        assert counts is not None
        assert sum(count.pages for count in counts) == len(pages)
    assert _placed_as_computed(prefix) == len(pages)


@pytest.mark.slow
@pytest.mark.services
def test_redis_places_what_a_store_object_that_keeps_none_wrote(fresh: Fresh) -> None:
    """Rows written without a place (an import, a worker of an earlier
    release) are found by the scan of ``place_rows`` a step at a time and
    placed; a row such an object writes again loses its place, one it
    removes takes its place along, and the next scan places what is new."""
    uri = fresh.redis_uri()
    routes = [None, "/p/<n>", "/<slug>"]
    pages = [
        Entry(f"/p/{n}", T0, route=routes[n % 3], title=f"Page {n}" if n % 2 else None)
        for n in range(2 * _STEP + 7)
    ]
    with open_store(uri) as plain, open_store(uri) as keeping:
        assert isinstance(keeping, Mapped)
        plain.upsert(pages)
        keeping.keep_places()
        assert keeping.map_counts() is None

        def placed() -> list[int]:
            due = iter(lambda: keeping.place_due, False)
            return [keeping.place_rows(_STEP) for _ in due]

        steps = placed()
        assert sum(steps) == len(pages) and steps[0] < len(pages)
        counts = keeping.map_counts()
        assert counts is not None
        assert sum(count.pages for count in counts) == len(pages)
        _same(*_both(keeping, newest=True))
        plain.upsert([Entry("/p/zz", T0), Entry("/p/1", T0 + timedelta(1), title="Z")])
        plain.remove(["/p/2", "/p/4"])
        assert keeping.map_counts() is None
        assert sum(placed()) == 2
        _same(*_both(keeping, newest=True))
        whole = keeping_map(keeping).whole("")
        titles = {link.title for section, _ in whole for link in section.links}
        assert "Z" in titles and "Page 1" not in titles and "Page 3" in titles
        # A worker of an earlier release removes a row: its place stays behind.
        with redis.Redis.from_url(uri.partition("?")[0]) as client:
            assert client.hdel(f"{keeping.prefix}url", "/p/3") == 1  # type: ignore[attr-defined]
        assert keeping.map_counts() is None
        assert sum(placed()) == 0
        _same(*_both(keeping, newest=False))


@pytest.mark.parametrize(
    "kind",
    [
        "memory",
        "sqlite",
        pytest.param("postgres", marks=pytest.mark.services),
        pytest.param("redis", marks=pytest.mark.services),
    ],
)
def test_a_page_whose_links_a_later_write_completes_is_placed_once(
    kind: str, fresh: Fresh, tmp_path: Path
) -> None:
    """A page naming another as its alternate is written again when that
    one comes (its links completed, read as a member of the write): it keeps
    one place, and the map counts each page once."""
    pair = (("en", "/en/x"), ("de", "/de/x"))
    with open_store(fresh.uri(kind, tmp_path)) as store:
        assert isinstance(store, Mapped)
        store.keep_places()
        store.upsert([Entry("/en/x", T0, "a", title="X", alternates=pair)])
        store.upsert([Entry("/de/x", T0, "b", title="Y", alternates=pair)])
        store.upsert([Entry("/de/x", T0 + timedelta(1), "c", title="Z")])
        counts = store.map_counts()
        assert counts is not None
        assert sum(count.pages for count in counts) == store.count() == 2
        _same(*_both(store, newest=True))


def test_a_map_of_configured_sections_is_arranged(tmp_path: Path) -> None:
    """Configured sections group the map by their parts: arranged, as before."""
    store = MemoryStore()
    store.upsert([Entry("/a", T0), Entry("/b", T0, section="news")])
    assert isinstance(SiteMaps(store).arrangement(), Arrangement)
    plain = MemoryStore()
    plain.keep_places()
    plain.upsert([Entry("/a", T0)])
    assert isinstance(SiteMaps(plain).arrangement(), IndexedMap)


def _connect() -> Any:
    import psycopg

    return psycopg.connect(require_postgres(), autocommit=True)


def _placed_as_computed(prefix: str) -> int:
    """Assert that every row's place is what places() gives its path, route
    and title; how many rows there are."""
    with _connect() as conn:
        rows = conn.execute(
            f"SELECT path, route, title, {', '.join(COLUMNS)} FROM {prefix}url"
        ).fetchall()
    paths, routes, titles = ([row[i] for row in rows] for i in range(3))
    assert [tuple(row[3:]) for row in rows] == places(paths, routes, titles)
    return len(rows)


def _unplaced(prefix: str) -> int:
    with _connect() as conn:
        found = conn.execute(f"SELECT count(*) FROM {prefix}url WHERE mapgroup IS NULL")
        return int(found.fetchone()[0])


def _written_before_places(uri: str, pages: list[Entry]) -> str:
    """``pages`` written to PostgreSQL tables then made as an earlier release
    made them; their prefix."""
    with open_store(uri) as store:
        store.upsert(pages)
        prefix: str = store.prefix  # type: ignore[attr-defined]
    _as_before_places_postgres(prefix)
    return prefix


def _as_before_places_postgres(prefix: str) -> None:
    """The pages table as the release before places made it: the place
    columns dropped, and their indexes with them."""
    assert all(_indexes(prefix))  # made with the tables
    with _connect() as conn:
        conn.execute(
            f"ALTER TABLE {prefix}url "
            + ", ".join(f"DROP COLUMN {name}" for name in COLUMNS)
        )
    assert not any(_indexes(prefix))


def _indexes(prefix: str) -> list[bool]:
    """Whether each of the map's indexes is there."""
    with _connect() as conn:
        return [
            conn.execute("SELECT to_regclass(%s)", (name.format(p=prefix),)).fetchone()
            != (None,)
            for name in INDEX_NAMES
        ]


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


def _page(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "text/html; charset=utf-8")])
    return [b"<html><head><title>A page</title></head><body>text</body></html>"]


@pytest.mark.parametrize(
    "kind", ["sqlite", pytest.param("redis", marks=pytest.mark.services)]
)
def test_a_middleware_serving_the_map_places_what_an_import_wrote(
    kind: str, fresh: Fresh, tmp_path: Path
) -> None:
    """Pages another store object wrote without places (an import): the
    first page of the map is arranged, the writer places them, and the map
    is read by the index from then on, the same links."""
    uri = fresh.uri(kind, tmp_path)
    with open_store(uri) as other:
        other.upsert(Entry(f"/blog/{n}", T0, title=f"Post {n}") for n in range(40))
    middleware = SitemapMiddleware(
        _page, {"base_url": BASE, "store": uri, "html_sitemap": "/site-map"}
    )
    try:
        store = middleware.store
        assert isinstance(store, Mapped) and store.placing
        first = Client(middleware).get("/site-map")
        assert first.status_code == 200
        maps = middleware.server.site_maps
        assert isinstance(maps.arrangement(latest=True), Arrangement)
        _served(middleware, "/a-new-page")  # placed as it is written
        assert middleware.flush()
        indexed = maps.arrangement(latest=True)
        assert isinstance(indexed, IndexedMap)
        assert indexed.total == 41
        again = Client(middleware).get("/site-map")
        assert _links(again.get_data()) == _links(first.get_data()) | {
            f"{BASE}/a-new-page"
        }
    finally:
        middleware.close()


def test_a_middleware_that_serves_no_map_keeps_no_places(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 's.sqlite3'}"
    middleware = SitemapMiddleware(_page, {"base_url": BASE, "store": uri})
    try:
        _served(middleware, "/a-page")
        assert middleware.flush()
        store = middleware.store
        assert isinstance(store, Mapped) and not store.placing
        assert store.count() == 1
        assert store.map_counts() is None  # its one page has no place
    finally:
        middleware.close()


def _served(middleware: SitemapMiddleware, path: str) -> None:
    reply = Client(middleware).get(path, base_url=BASE)
    reply.get_data()
    reply.close()  # sent in full: recorded


def _links(body: bytes) -> set[str]:
    return {
        href for href in re.findall(r'href="([^"]+)"', body.decode()) if "/" in href
    }
