"""The site map for people (``html_sitemap``): grouping, titles and order by
:func:`site_map`, and the page served at the configured path on both stacks
(validators, HEAD, 405, escaping, pages, privacy as the XML's).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from support.helpers import gunzip_once, locs, parse_page, validate
from support.sites import HTML, ROUTES, Site, html
from werkzeug.test import Client

from sitemap_middleware import (
    ConfigError,
    Entry,
    SitemapMiddleware,
    open_store,
    site_map,
)
from sitemap_middleware.model import UNDATED
from sitemap_middleware.serving.site_map import PAGE_LINKS
from sitemap_middleware.serving.site_map_html import MAX_INDEX
from sitemap_middleware.stores.memory import MemoryStore

SITE_MAP = {"html_sitemap": "/site-map"}
BASE = "http://localhost"
WHEN = datetime(2026, 1, 2, tzinfo=timezone.utc)
LATER = datetime(2026, 1, 3, tzinfo=timezone.utc)


def _store(entries: Iterable[Entry]) -> Any:
    store = open_store("memory://")
    store.upsert(list(entries))
    return store


def _listing(store: Any, **options: Any) -> list[tuple[str, list[str]]]:
    return [
        (section.heading, [link.title for link in section.links])
        for section in site_map(store, BASE, **options).sections
    ]


def test_sections_by_route_else_first_segment_and_titles_sorted_naturally() -> None:
    """Routes with parameters make sections; a one-segment page joins the
    section its children name; the rest is the general section, home first.
    Titles sort case-insensitively with numbers in order; an untitled page
    gets a readable form of its path."""
    store = _store(
        [
            Entry("/about", WHEN, title="About us"),
            Entry("/", WHEN, title="Welcome"),
            Entry("/blog/part-10", WHEN, route="/blog/<slug>", title="Part 10"),
            Entry("/blog/part-2", WHEN, route="/blog/<slug>", title="part 2"),
            Entry("/blog/", WHEN, route="/blog/", title="The blog"),
            Entry("/blog/zebra", WHEN, route="/blog/<slug>", title="Zebra"),
            Entry("/docs/en/intro", WHEN, route="/docs/{lang}/{page}"),
            Entry("/docs/en/getting_started.html", WHEN, route="/docs/{lang}/{page}"),
            Entry("/contact", WHEN),
            Entry("/caf%C3%A9-menu", WHEN),
            Entry("/search?page=2", WHEN),
        ]
    )
    assert _listing(store) == [
        ("Pages", ["Welcome", "About us", "Café menu", "Contact", "Search (page=2)"]),
        ("Blog", ["The blog", "part 2", "Part 10", "Zebra"]),
        ("Docs", ["Getting started", "Intro"]),
    ]
    mapped = site_map(store, BASE)
    assert mapped.links == 11 and (mapped.page, mapped.pages) == (1, 1)
    first = mapped.sections[1].links[1]
    assert (first.url, first.path, first.lastmod) == (
        "http://localhost/blog/part-2",
        "/blog/part-2",
        WHEN,
    )
    assert [s.id for s in mapped.sections] == [
        "section-pages",
        "section-blog",
        "section-docs",
    ]


def test_names_made_from_paths_are_visible_text_only() -> None:
    """A page without a title is named from its path, a section from a path
    segment: what the path's escapes hold that is not shown as text (a
    right-to-left override that would show "gnp.exe" as "exe.png", zero-width
    spaces, C1 controls) is left out, as from a title."""
    store = _store(
        [
            Entry("/", WHEN, title="Home"),
            Entry("/%E2%80%AEgnp.exe", WHEN),
            Entry("/zero%E2%80%8Bwidth%C2%85", WHEN),
            Entry("/kept?q=%E2%80%AEx", WHEN),
            *(Entry(f"/%E2%80%AEdocs/{n}", WHEN) for n in range(3)),
        ]
    )
    assert _listing(store) == [
        ("Pages", ["Home", "Gnp.exe", "Kept (q=x)", "Zerowidth"]),
        ("Docs", ["0", "1", "2"]),
    ]


def test_site_map_from_a_middleware_uses_its_store_and_base_url() -> None:
    store = _store([Entry("/a", WHEN, title="A")])
    middleware = SitemapMiddleware(
        _app, {"base_url": "https://example.com/shop", "store": store}
    )
    try:
        mapped = site_map(middleware)
        assert [link.url for s in mapped.sections for link in s.links] == [
            "https://example.com/shop/a"
        ]
    finally:
        middleware.close()
    with pytest.raises(TypeError, match="base_url"):
        site_map(store)


def test_pages_of_the_map_split_sections_and_index_them() -> None:
    """Beyond PAGE_LINKS a section goes on, continued, on the next page; the
    index names the page each section starts on; a page past the end is a
    LookupError."""
    entries = [Entry("/", WHEN)]
    entries += [Entry(f"/a/{n}", WHEN, title=f"A {n}") for n in range(2500)]
    entries += [Entry(f"/b/{n}", WHEN, title=f"B {n}") for n in range(10)]
    store = _store(entries)
    one, two = site_map(store, BASE), site_map(store, BASE, page=2)
    assert (one.pages, two.pages, one.links) == (2, 2, 2511)
    assert [(i.heading, i.page, i.links) for i in one.index] == [
        ("Pages", 1, 1),
        ("A", 1, 2500),
        ("B", 2, 10),
    ]
    assert one.index == two.index
    assert sum(len(s.links) for s in one.sections) == PAGE_LINKS
    assert [(s.heading, s.continued, len(s.links)) for s in two.sections] == [
        ("A", True, 501),
        ("B", False, 10),
    ]
    # Numbers in numeric order across the cut: A 1998 ends page 1.
    assert one.sections[-1].links[-1].title == "A 1998"
    assert two.sections[0].links[0].title == "A 1999"
    for bad in (0, 3):
        with pytest.raises(LookupError):
            site_map(store, BASE, page=bad)
    assert site_map(_store([]), BASE).sections == ()


# -- the served page, on both stacks -------------------------------------------


def _seed(site: Site, *entries: Entry) -> None:
    site.store.upsert(list(entries))


def _served(make: Callable[..., Site], **config: Any) -> Site:
    site = make({**SITE_MAP, **config})
    _seed(
        site,
        Entry("/", WHEN, title="Home & away"),
        Entry("/blog/x", WHEN, title="<script>alert(1)</script>"),
        Entry("/blog/y", WHEN, title="Quote \" and ' marks"),
        Entry("/a&b", WHEN),
    )
    return site


def test_the_page_lists_exactly_what_the_sitemap_lists(
    make: Callable[..., Site],
) -> None:
    """The links of <main> are the sitemap's <loc>s, each once; the page is
    HTML with lang, landmarks and h1 then h2 headings."""
    site = _served(make)
    reply = site.get("/site-map")
    assert reply.status == 200
    assert reply.headers["content-type"] == "text/html; charset=utf-8"
    assert int(reply.headers["content-length"]) == len(reply.body)
    assert "x-robots-tag" not in reply.headers
    page = parse_page(reply.body)
    listed = locs(validate(gunzip_once(site.get("/sitemap-1.xml.gz").body)))
    assert sorted(href for href, _ in page.links["main"]) == sorted(listed)
    assert page.lang == "en"
    assert page.headings[0] == ("h1", "Site map")
    assert {tag for tag, _ in page.headings[1:]} == {"h2"}
    assert page.links["body"] == [("#main", "Skip to the list of pages")]
    assert [href for href, _ in page.links["nav"]] == [
        "#section-pages",
        "#section-blog",
    ]
    assert b"<script" not in reply.body  # no JavaScript, and titles are text


def test_every_title_and_url_is_escaped(make: Callable[..., Site]) -> None:
    site = _served(make)
    body = site.get("/site-map").body.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert """>Quote " and ' marks</a>""" in body  # text: quotes need no escape
    assert 'href="http://localhost/a&amp;b"' in body
    assert "Home &amp; away" in body
    titles = [t for _, t in parse_page(body.encode()).links["main"]]
    assert "<script>alert(1)</script>" in titles


def test_titles_are_isolated_from_the_text_around_them(
    make: Callable[..., Site],
) -> None:
    """A title in a right-to-left script sits in an element of its own
    direction (dir="auto"), as do section names: it never reorders the link
    count or the next title."""
    site = make(SITE_MAP)
    _seed(site, Entry("/a", WHEN, title="\u05e9\u05dc\u05d5\u05dd 12"))
    body = site.get("/site-map").body.decode()
    assert (
        '<a href="http://localhost/a" dir="auto">\u05e9\u05dc\u05d5\u05dd 12</a>'
        in body
    )
    assert re.search(r'<h2 id="[^"]+" dir="auto">', body)
    assert re.search(r'<li><a href="#[^"]+" dir="auto">', body)


def _visited(site: Site, *pages: tuple[str, str]) -> None:
    """Serve and visit each (path, title) page, then wait for the writer."""
    for path, title in pages:
        ROUTES[path] = (200, {"Content-Type": HTML}, [html(title)])
        assert site.get(path).status == 200
    assert site.middleware.flush(5.0)


def test_the_title_names_the_site_its_titles_repeat(make: Callable[..., Site]) -> None:
    """The writers learn the name the site's titles repeat: the page's
    <title> gives it after the page's own; the config's name goes first."""
    site = make(SITE_MAP)
    _visited(site, *((f"/{w}", f"{w.title()} | Acme") for w in ("a", "b", "c", "d")))
    page = parse_page(site.get("/site-map").body)
    assert page.title == "Site map – Acme"
    assert page.headings[0] == ("h1", "Site map")
    assert "a | Acme" not in _titles_of(site)  # the affix is out of the links too
    named = make({"html_sitemap": {"path": "/site-map", "site_name": "Acme Corp"}})
    assert parse_page(named.get("/site-map").body).title == "Site map – Acme Corp"
    assert site_map(named.middleware).site_name == "Acme Corp"


def _titles_of(site: Site) -> list[str]:
    return [t for _, t in parse_page(site.get("/site-map").body).links["main"]]


def test_newest_first_sections_show_their_dates(make: Callable[..., Site]) -> None:
    """A section named in newest_first lists its pages newest first with
    their dates (undated ones last, by title); the others go by title."""
    site = make({"html_sitemap": {"path": "/site-map", "newest_first": ["/blog"]}})
    _seed(
        site,
        Entry("/blog/", WHEN, title="Blog"),
        Entry("/blog/old", datetime(2023, 1, 5, tzinfo=timezone.utc), title="A old"),
        Entry("/blog/new", datetime(2025, 3, 9, tzinfo=timezone.utc), title="Z new"),
        Entry("/blog/undated", UNDATED, title="M undated"),
        Entry("/docs/b", LATER, title="B"),
        Entry("/docs/a", WHEN, title="A"),
    )
    mapped = site_map(site.middleware)
    blog, docs = (section for section in mapped.sections if section.heading != "Pages")
    assert (blog.newest, docs.newest) == (True, False)
    assert [link.title for link in blog.links] == [
        "Blog",
        "Z new",
        "A old",
        "M undated",
    ]
    assert [link.title for link in docs.links] == ["A", "B"]
    body = site.get("/site-map").body.decode()
    assert 'Z new</a> <time datetime="2025-03-09">2025-03-09</time></li>' in body
    assert "M undated</a></li>" in body
    assert "<time" not in body.split('id="section-docs"')[1]


def test_a_page_stored_without_a_title_is_titled_by_a_visit(
    make: Callable[..., Site],
) -> None:
    """Imported or seeded without a title, a page is named after its path
    until a visit reads its title."""
    site = make(SITE_MAP)
    _seed(site, Entry("/about", WHEN))
    assert _titles_of(site) == ["About"]  # from the path
    _visited(site, ("/about", "About the company"))
    deadline = time.monotonic() + 10
    while _titles_of(site) != ["About the company"]:
        assert time.monotonic() < deadline, _titles_of(site)
        time.sleep(0.01)


def test_validators_304_head_and_405(make: Callable[..., Site]) -> None:
    site = _served(make)
    first = site.get("/site-map")
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    assert first.headers["cache-control"] == "public, max-age=3600"
    assert site.get("/site-map", {"If-None-Match": etag}).status == 304
    # Alone, no 304: the page's Last-Modified may go back (validators.py).
    assert site.get("/site-map", {"If-Modified-Since": modified}).status == 200
    head = site.head("/site-map")
    assert head.status == 200 and head.body == b""
    assert head.headers["etag"] == etag
    assert head.headers["content-length"] == first.headers["content-length"]
    post = site.request("POST", "/site-map")
    assert post.status == 405 and post.headers["allow"] == "GET, HEAD"
    # A change of any part is a new version of the page, once arranged (the
    # first request after it starts that).
    _seed(site, Entry("/new", WHEN, title="New"))
    site.get("/site-map")
    deadline = time.monotonic() + 10
    while site.get("/site-map").headers["etag"] == etag:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert site.get("/site-map", {"If-None-Match": etag}).status == 200


def test_pages_are_query_numbers_with_prev_and_next(make: Callable[..., Site]) -> None:
    site = make(SITE_MAP)
    _seed(site, *(Entry(f"/p/{n}", WHEN) for n in range(PAGE_LINKS + 5)))
    one, two = site.get("/site-map"), site.get("/site-map?page=2")
    assert (one.status, two.status) == (200, 200)
    assert one.headers["etag"] != two.headers["etag"]
    pager_one = parse_page(one.body).links["nav"]
    pager_two = parse_page(two.body).links["nav"]
    assert ("http://localhost/site-map?page=2", "Next page") in pager_one
    assert ("http://localhost/site-map", "Previous page") in pager_two
    assert len(parse_page(two.body).links["main"]) == 5
    for bad in ("page=3", "page=0", "page=02", "page=x", "page=1&page=2"):
        assert site.get(f"/site-map?{bad}").status == 404, bad
    assert site.get("/site-map?page=1").body == one.body


@pytest.mark.parametrize("name", ["If-None-Match", "If-Modified-Since"])
def test_a_page_it_does_not_have_is_404_whatever_the_conditions(
    make: Callable[..., Site], name: str
) -> None:
    """A page past the last, or a number that is none, is looked up before
    the validators: a 404 to a conditional request too (never a 304 for a
    page that is not there), and to a HEAD with no body."""
    site = _served(make)
    value = (
        "*"
        if name == "If-None-Match"
        else site.get("/site-map").headers["last-modified"]
    )
    for query in ("page=2", "page=999", "page=0"):
        assert site.get(f"/site-map?{query}", {name: value}).status == 404, query
        asked = {name.lower(): value}.get
        head = site.middleware.server.serve("HEAD", "/site-map", asked, query)
        assert (head.status, head.body) == (404, b""), query


def test_every_option_that_changes_the_page_changes_its_etag(
    make: Callable[..., Site], tmp_path: Path
) -> None:
    """Each option of the page (and the sections' labels), read by another
    config on the same store, changes its bytes and so its ETag: a crawler
    revalidating after a deploy gets the new page."""
    store = f"sqlite:///{tmp_path}/s.sqlite3"
    page = {"path": "/site-map"}
    first = _served(make, store=store)
    _seed(first, Entry("/blog/z", LATER, title="A newer"))
    old = first.get("/site-map")
    for config in (
        {"html_sitemap": {**page, "lang": "de"}},
        {"html_sitemap": {**page, "title": "Pages"}},
        {"html_sitemap": {**page, "site_name": "Acme"}},
        {"html_sitemap": {**page, "newest_first": ["/blog"]}},
        {"section_labels": {"default": "Everything else"}},
    ):
        site = make({**SITE_MAP, "store": store, **config})
        new = site.get("/site-map", {"If-None-Match": old.headers["etag"]})
        assert new.status == 200 and new.body != old.body, config
        assert new.headers["etag"] != old.headers["etag"], config


def test_an_empty_store_says_so_and_keeps_no_copy(make: Callable[..., Site]) -> None:
    site = make(SITE_MAP)
    reply = site.get("/site-map")
    assert reply.status == 200
    assert reply.headers["cache-control"] == "no-store"
    assert b"No pages are listed yet." in reply.body


def test_a_page_of_many_small_sections_carries_a_bounded_index(
    make: Callable[..., Site],
) -> None:
    """A site of a few pages per user has a section per user: each page of
    the map names the sections it shows, not all of them, so that it stays
    about its links' size."""
    site = make(SITE_MAP)
    users = 3 * PAGE_LINKS // 2  # 3 pages of the map, a thousand sections each
    _seed(site, *(Entry(f"/u{n}/{k}", WHEN) for n in range(users) for k in "ab"))
    body = site.get("/site-map?page=2").body.decode()
    nav, _, main = body.partition('<main id="main"')
    assert f"{2 * users} pages in {users} sections; page 2 of 3" in nav
    assert nav.count("<li>") == main.count("<h2 ") > MAX_INDEX
    assert body.count("<li>") <= 2 * PAGE_LINKS  # the whole index: 5,000
    assert 'aria-label="Sections on this page"' in nav
    few = make(SITE_MAP)
    _seed(few, *(Entry(f"/u{n}/{k}", WHEN) for n in range(3) for k in "ab"))
    body = few.get("/site-map").body.decode()
    assert 'aria-label="Sections"' in body


def test_lang_and_title_are_configurable(make: Callable[..., Site]) -> None:
    site = _served(
        make,
        html_sitemap={"path": "/nettstedskart", "lang": "nb", "title": "Nettstedskart"},
    )
    page = parse_page(site.get("/nettstedskart").body)
    assert page.lang == "nb" and page.headings[0] == ("h1", "Nettstedskart")
    assert site.get("/site-map").status == 404  # the app's own answer


def test_the_page_is_never_recorded_nor_passed_to_the_app(
    make: Callable[..., Site],
) -> None:
    site = _served(make)
    before = site.recorded()
    site.get("/site-map")
    site.get("/site-map?page=1")
    assert site.recorded() == before
    assert "/site-map" not in before


def test_off_by_default(make: Callable[..., Site]) -> None:
    site = make()
    site.get("/")
    assert site.get("/site-map").status == 404  # the app's own 404 page


# -- invariant 21: a page stored at the path before it was the site map's -------


def _app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "text/html; charset=utf-8")])
    return [b"<html><head><title>t</title></head><body>app page</body></html>"]


def test_a_stored_page_at_the_path_goes_once_it_is_the_site_map(
    tmp_path: Path,
) -> None:
    config = {"base_url": BASE, "store": f"sqlite:///{tmp_path}/s.sqlite3"}
    first = SitemapMiddleware(_app, config)
    client = Client(first)
    for path in ("/", "/site-map"):
        reply = client.get(path)
        reply.get_data()  # sent in full
        reply.close()
        assert reply.status_code == 200
    assert first.flush()
    listed = {
        e.path for p in first.store.parts() for e in first.store.entries(p.number)
    }
    assert listed == {"/", "/site-map"}
    first.close()
    again = SitemapMiddleware(_app, {**config, **SITE_MAP})
    try:
        assert again.flush()
        store = again.store
        listed = {e.path for p in store.parts() for e in store.entries(p.number)}
        assert listed == {"/"}
        body = Client(again).get("/site-map").get_data()
        assert b"app page" not in body
        assert re.findall(rb'<main.*href="([^"]+)"', body, re.S) == [
            b"http://localhost/"
        ]
    finally:
        again.close()


# -- config -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("site-map", "must be a path such as '/site-map'"),
        ("/", "must be a path such as '/site-map'"),
        ("//x", "must be a path such as '/site-map'"),
        ("/site map", "must be a path such as '/site-map'"),
        ("/site-map?x=1", "must be a path such as '/site-map'"),
        ("/sitemap.xml", "must not be one of the sitemap's own paths"),
        ("/robots.txt", "must not be one of the sitemap's own paths"),
        ("/sitemap-2.xml.gz", "must not be one of the sitemap's own paths"),
        ("/a/../b", "dot segment"),
        (3, "must be a path such as"),
        ({"path": "/m", "lang": "english!"}, "'html_sitemap.lang' must be a language"),
        ({"path": "/m", "title": ""}, "'html_sitemap.title' must be a non-empty"),
        ({"path": "/m", "heading": "x"}, "unknown key 'heading' in 'html_sitemap'"),
        ({"path": "/m", "site_name": "A\nB"}, "'html_sitemap.site_name' must be"),
        ({"path": "/m", "newest_first": "/blog"}, "'html_sitemap.newest_first' must"),
        ({"path": "/m", "newest_first": ["blog"]}, "start with '/'"),
        (["/m"], "'html_sitemap' must be a path such as"),
    ],
)
def test_bad_html_sitemap_is_a_clear_error(value: object, message: str) -> None:
    from sitemap_middleware import Config

    with pytest.raises(ConfigError, match=re.escape(message)):
        Config.from_mapping({"base_url": BASE, "html_sitemap": value})


def test_html_sitemap_forms() -> None:
    from sitemap_middleware import Config

    default = Config.from_mapping({"base_url": BASE})
    assert default.html_sitemap is None
    plain = Config.from_mapping({"base_url": BASE, "html_sitemap": "/sitemap.html"})
    assert (plain.html_sitemap, plain.html_sitemap_lang) == ("/sitemap.html", "en")
    assert plain.html_sitemap_title == "Site map"


# -- the arrangement: once per store version, shared ---------------------------


class _Counted(MemoryStore):
    """A memory store that counts its ``entries()`` reads; while ``hold`` is
    set, each read waits for it to clear (``reading`` tells one started).
    Its map is arranged from those reads, not read by the index."""

    map_counts = None  # type: ignore[assignment]

    def __init__(self, part_size: int) -> None:
        super().__init__(part_size=part_size)
        self.reads: list[int] = []
        self.hold = threading.Event()
        self.reading = threading.Event()
        self.go = threading.Event()

    def entries(self, number: int) -> Iterator[Entry]:
        self.reads.append(number)
        if self.hold.is_set():
            self.reading.set()
            assert self.go.wait(10)
        yield from super().entries(number)


def _middleware(store: _Counted) -> SitemapMiddleware:
    middleware = SitemapMiddleware(_app, {"base_url": BASE, "store": store, **SITE_MAP})
    # The writer's first run checks the stored pages against the config, by
    # entries(): done now, those reads are not the site map's.
    assert middleware.flush()
    store.reads.clear()
    return middleware


def _get(middleware: SitemapMiddleware, target: str = "/site-map") -> Any:
    reply = Client(middleware).get(target)
    reply.get_data()
    return reply


def _titles(reply: Any) -> list[str]:
    return [title for _, title in parse_page(reply.get_data()).links["main"]]


def _arranged(middleware: SitemapMiddleware, shown: Callable[[list[str]], bool]) -> Any:
    """The first reply whose titles satisfy ``shown``: a change is arranged
    in the background, asked for by the first request after it."""
    deadline = time.monotonic() + 10
    while True:
        reply = _get(middleware)
        if shown(_titles(reply)) or time.monotonic() > deadline:
            return reply
        time.sleep(0.01)


def test_the_store_is_read_once_per_version_and_only_the_changed_part() -> None:
    """A second request, another page, HEAD and site_map() on the middleware
    read no entry again; a change is shown once arranged, having read only
    the part it changed."""
    store = _Counted(part_size=3)
    store.upsert([Entry(f"/p/{n}", WHEN, title=f"P {n}") for n in range(6)])
    middleware = _middleware(store)
    try:
        first = _get(middleware)
        assert sorted(store.reads) == [1, 2]
        assert _get(middleware).headers["etag"] == first.headers["etag"]
        Client(middleware).head("/site-map").close()
        mapped = site_map(middleware, page=1, per_page=2)
        assert (mapped.pages, mapped.links) == (3, 6)
        assert sorted(store.reads) == [1, 2]
        # Part 2 only (a title alone moves no version: a new content does).
        store.upsert([Entry("/p/5", LATER, "new", title="Changed")])
        changed = _arranged(middleware, lambda titles: "Changed" in titles)
        assert changed.headers["etag"] != first.headers["etag"]
        assert "P 5" not in _titles(changed)
        assert sorted(store.reads) == [1, 2, 2]
        store.remove(["/p/0", "/p/1", "/p/2"])  # part 1 goes
        gone = _arranged(middleware, lambda titles: "P 0" not in titles)
        assert _titles(gone) == ["Changed", "P 3", "P 4"]
        assert sorted(store.reads) == [1, 2, 2]
    finally:
        middleware.close()


def test_concurrent_requests_arrange_once() -> None:
    """Requests arriving together while nothing is arranged wait for one
    computation: each part is read once."""
    store = _Counted(part_size=50)
    store.upsert([Entry(f"/p/{n}", WHEN) for n in range(120)])
    middleware = _middleware(store)
    store.hold.set()
    replies: list[Any] = []
    try:

        def ask() -> None:
            replies.append(_get(middleware))

        threads = [threading.Thread(target=ask) for _ in range(8)]
        for thread in threads:
            thread.start()
        assert store.reading.wait(10)
        time.sleep(0.2)  # the others are at the lock by now
        store.go.set()
        for thread in threads:
            thread.join(10)
        assert [r.status_code for r in replies] == [200] * 8
        assert len({r.headers["etag"] for r in replies}) == 1
        assert sorted(store.reads) == [1, 2, 3]
    finally:
        middleware.close()


def test_a_change_is_arranged_off_the_requests_which_serve_the_previous() -> None:
    """No request waits for a change to be arranged, not even the first after
    it: each serves the previous map with its own validators (not a queue of
    workers behind one computation), one thread arranges, then the change."""
    store = _Counted(part_size=50)
    store.upsert([Entry("/a", WHEN, title="A")])
    middleware = _middleware(store)
    try:
        before = _get(middleware)
        store.upsert([Entry("/b", WHEN, title="B")])
        store.hold.set()
        first = _get(middleware)  # starts the arrangement, does not wait
        assert store.reading.wait(10)
        meanwhile = [_get(middleware) for _ in range(3)]
        for reply in (first, *meanwhile):
            assert reply.headers["etag"] == before.headers["etag"]
            assert _titles(reply) == ["A"]
        assert [t.name for t in threading.enumerate()].count("sitemap-site-map") == 1
        store.go.set()
        assert _titles(_arranged(middleware, lambda t: t == ["A", "B"])) == ["A", "B"]
        assert store.reads == [1, 1]
    finally:
        middleware.close()


def test_configured_sections_head_the_map_in_the_order_of_their_parts() -> None:
    """With sections, the map groups pages by the section their part holds,
    headed by a readable form of its name; the pages no section names are
    under "Pages"."""
    store = MemoryStore(part_size=2)
    store.upsert(
        [
            Entry("/", title="Home", section=""),
            Entry("/blog/b", title="B post", section="posts"),
            Entry("/tags/x", title="X", section="tags"),
            Entry("/blog/a", title="A post", section="posts"),
            Entry("/blog/c", title="C post", section="posts"),
            Entry("/about", title="About", section=""),
        ]
    )
    shown = site_map(store, "https://example.com")
    assert [(s.heading, [link.title for link in s.links]) for s in shown.sections] == [
        ("Pages", ["Home", "About"]),
        ("Posts", ["A post", "B post", "C post"]),
        ("Tags", ["X"]),
    ]
    assert len({s.id for s in shown.sections}) == 3
    # Without sections the same pages group by path, as before.
    plain = MemoryStore()
    plain.upsert(
        Entry(e.path, title=e.title)
        for p in store.parts()
        for e in store.entries(p.number)
    )
    assert [s.heading for s in site_map(plain, "https://example.com").sections] == [
        "Pages",
        "Blog",
        "Tags",
    ]


# -- the header, headings in words, descriptions ---------------------------------


def test_the_header_names_the_site_and_links_home(make: Callable[..., Site]) -> None:
    """The header's first line is the site's name (the config's, else the
    name its titles repeat, else its address), a link to its home page."""
    named = make({"html_sitemap": {"path": "/site-map", "site_name": "Acme & Co"}})
    _visited(named, ("/a", "A"))
    page = parse_page(named.get("/site-map").body)
    assert page.links["header"] == [(f"{BASE}/", "Acme & Co")]
    assert page.headings[0] == ("h1", "Site map")
    site = make(SITE_MAP)
    _visited(site, ("/a", "A"))
    page = parse_page(site.get("/site-map").body)
    assert page.links["header"] == [(f"{BASE}/", f"{BASE}/")]
    _visited(site, *((f"/{w}", f"{w.title()} | Acme") for w in ("b", "c", "d", "e")))
    page = parse_page(site.get("/site-map").body)
    assert page.links["header"] == [(f"{BASE}/", "Acme")]


def test_sections_are_headed_in_words(make: Callable[..., Site]) -> None:
    """A configured section is headed by its label, else by a readable form
    of its name; the pages no section names by the default's label, else
    "Pages"."""
    sections = {"blog-posts": ["/blog/*"], "legal_texts": ["/terms"], "docs": "/d/*"}
    labels = {"blog-posts": "From the blog", "default": "Everything else"}
    store = MemoryStore()
    store.upsert(
        [
            Entry("/", title="Home", section=""),
            Entry("/blog/a", title="A", section="blog-posts"),
            Entry("/terms", title="Terms", section="legal_texts"),
            Entry("/d/x", title="X", section="docs"),
        ]
    )
    site = make({**SITE_MAP, "store": store, "sections": sections})
    assert [s.heading for s in site_map(site.middleware).sections] == [
        "Pages",
        "Blog posts",
        "Legal texts",
        "Docs",
    ]
    labelled = make(
        {**SITE_MAP, "store": store, "sections": sections, "section_labels": labels}
    )
    page = parse_page(labelled.get("/site-map").body)
    assert [text for tag, text in page.headings if tag == "h2"] == [
        "Everything else",
        "From the blog",
        "Legal texts",
        "Docs",
    ]


@pytest.mark.parametrize(
    ("labels", "error"),
    [
        ({"posts": "Posts"}, "'section_labels' names 'posts', which the 'sections'"),
        ({"default": ""}, "'section_labels.default' must be a non-empty single line"),
        ({"default": "A\nB"}, "must be a non-empty single line"),
        (["Posts"], "'section_labels' must map a section name to its heading"),
    ],
)
def test_bad_section_labels_are_refused(labels: Any, error: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(error)):
        SitemapMiddleware(
            lambda environ, start: [],
            {"base_url": BASE, "store": "memory://", "section_labels": labels},
        )


def test_each_entry_shows_its_description() -> None:
    """A page's description is shown under its link, escaped and isolated;
    a section with descriptions lists its pages in one column."""
    from sitemap_middleware.model import PartInfo
    from sitemap_middleware.serving.arrangement import Arrangement, Part
    from sitemap_middleware.serving.site_map_html import render

    entries = [
        Entry("/", title="Home", description="Field notes <b>&</b> more"),
        Entry("/about", title="About"),
        Entry("/blog/a", route="/blog/<slug>", title="A", description="\u202eA post"),
    ]
    info = PartInfo(1, 3, UNDATED, "1.1", WHEN)
    arranged = Arrangement.of((info,), [Part.read(info.version, entries)])
    listing = arranged.page(1, 10, BASE)
    described = {
        link.path: link.description for s in listing.sections for link in s.links
    }
    assert described == {
        "/": "Field notes <b>&</b> more",
        "/about": None,
        "/blog/a": "\u202eA post",
    }
    body = render(listing, path="/site-map", site_name="Acme", home=f"{BASE}/")
    assert (
        '<span class="note" dir="auto">Field notes &lt;b&gt;&amp;&lt;/b&gt; more</span>'
        in body
    )
    assert body.count('<ul class="described">') == 2
