"""The health report against what the test wrote: entries upserted with known
lastmods, visits written through ``store.visited``, the time injected; on every
store kind (a store that keeps no visits says so, and counts the rest).
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from sitemap_middleware import Entry, Health, SitemapMiddleware, Store, site_health
from sitemap_middleware.reporting.health import DAY, EXAMPLES, UNEXPLAINED
from sitemap_middleware.stores.contract import Decisions, Visit, Visits

BASE = "https://www.example.com"
# The report's time: now, to the second (a store takes no lastmod past now).
NOW = int(time.time())


def _ago(days: float) -> int:
    return int(NOW - days * DAY)


def _at(days: float) -> datetime:
    return datetime.fromtimestamp(_ago(days), timezone.utc)


def _report(store: Store, **kwargs: object) -> Health:
    return site_health(store, {"base_url": BASE}, now=NOW, **kwargs)  # type: ignore[arg-type]


def _visits(store: Store) -> Visits:
    assert isinstance(store, Visits)  # every store kind of the suite keeps them
    return store


def test_an_empty_store() -> None:
    from sitemap_middleware.stores.memory import MemoryStore

    health = _report(MemoryStore())
    assert health.sections == ()
    assert health.listed == 0
    assert health.unlisted == 0
    assert health.made == datetime.fromtimestamp(NOW, timezone.utc)


def test_listed_urls_and_the_lastmod_spread(store: Store) -> None:
    """Every kind: the lastmods fall in their group, a bound in the younger."""
    store.upsert(
        [
            Entry("/", _at(0)),
            Entry("/a", _at(7)),  # the week's bound: within 7 days
            Entry("/b", _at(7.01)),
            Entry("/c", _at(30)),
            Entry("/d", _at(31)),
            Entry("/e", _at(365)),
            Entry("/f", _at(366)),
            Entry("/g", datetime(1970, 1, 1, tzinfo=timezone.utc)),  # undated
        ]
    )
    health = _report(store)
    (section,) = health.sections
    assert (section.name, section.label, section.listed) == ("", "default", 8)
    spread = section.lastmods
    assert (spread.week, spread.month, spread.year, spread.older) == (2, 2, 2, 1)
    assert spread.undated == 1
    assert health.crawls_kept is isinstance(store, Visits)


def test_a_store_without_visits_says_crawl_data_is_not_kept(store: Store) -> None:
    store.upsert([Entry("/", _at(1)), Entry("/a", _at(1))])
    health = _report(store)
    if isinstance(store, Visits):
        assert health.crawls_kept
        return
    assert not health.crawls_kept
    (section,) = health.sections
    assert section.listed == 2
    assert health.unlisted == 0 and health.documents == ()


def test_fetched_within_7_and_30_days_at_their_edges(store: Store) -> None:
    visits = _visits(store)
    store.upsert([Entry(p, _at(1)) for p in ("/0", "/7", "/8", "/30", "/31", "/n")])
    visits.visited(
        [
            Visit("/0", "google", _ago(0), 200),
            Visit("/0", "bing", _ago(2), 200),
            Visit("/7", "google", _ago(7), 200),  # the edge: within 7 days
            Visit("/8", "bing", _ago(7) - 1, 200),  # a second past it
            Visit("/30", "google", _ago(30), 304),  # any answer is a fetch
            Visit("/31", "google", _ago(30) - 1, 200),
            Visit("/n", "", _ago(0), 200),  # served, but to no crawler
        ]
    )
    (section,) = _report(store).sections
    week, month = section.within(7), section.within(30)
    assert (week.urls, dict(week.engines)) == (2, {"google": 2, "bing": 1})
    assert (month.urls, dict(month.engines)) == (4, {"google": 3, "bing": 2})
    assert section.never_fetched == 1
    assert section.never_fetched_examples == ("/n",)


def test_stale_urls(store: Store) -> None:
    """Stale: last served before stale_after, or never served as far as kept."""
    visits = _visits(store)
    store.upsert([Entry(p, _at(1)) for p in ("/fresh", "/edge", "/old", "/never")])
    visits.visited(
        [
            Visit("/fresh", "", _ago(1), 200),
            Visit("/edge", "", _ago(30), 200),  # exactly 30 days: not yet
            Visit("/old", "", _ago(30) - 1, 200),
            Visit("/never", "google", _ago(0), 200),  # a crawler is no visitor
        ]
    )
    (section,) = _report(store).sections
    assert section.stale == 2
    assert sorted(section.stale_examples) == ["/never", "/old"]
    (section,) = _report(store, stale_after=DAY).sections
    assert section.stale == 3


def test_stale_after_comes_from_the_config(store: Store) -> None:
    visits = _visits(store)
    store.upsert([Entry("/", _at(1))])
    visits.visited([Visit("/", "", _ago(2), 200)])
    config = {"base_url": BASE, "stale_after": DAY}
    (section,) = site_health(store, config, now=NOW).sections
    assert section.stale == 1
    assert site_health(store, config, now=NOW).stale_after == DAY


def test_fetched_by_crawlers_but_not_listed_and_why(store: Store) -> None:
    visits = _visits(store)
    store.upsert([Entry("/listed", _at(1))])
    if isinstance(store, Decisions):
        store.note([("/noindexed", "noindex", _at(1))])
    visits.visited(
        [
            Visit("/listed", "google", _ago(1), 200),
            Visit("/admin/users", "google", _ago(3), 200),
            Visit("/admin/users", "bing", _ago(2), 200),
            Visit("/noindexed", "google", _ago(4), 200),
            Visit("/private", "google", _ago(5), 200),
            Visit("/missing", "google", _ago(1), 404),  # not a page
            Visit("/visitor-only", "", _ago(1), 200),  # no crawler
        ]
    )
    health = _report(store)
    assert health.unlisted == 3
    by_path = {u.path: u for u in health.unlisted_examples}
    assert list(by_path) == ["/admin/users", "/noindexed", "/private"]  # newest first
    admin = by_path["/admin/users"]
    assert admin.engines == ("bing", "google")
    assert admin.last_fetched == _at(2)
    assert (admin.source, admin.reason, admin.detail) == (
        "config",
        "excluded",
        "*/admin/*",
    )
    if isinstance(store, Decisions):
        noindexed = by_path["/noindexed"]
        assert (noindexed.source, noindexed.reason) == ("writer", "noindex")
    assert (by_path["/private"].source, by_path["/private"].reason) == ("", UNEXPLAINED)
    assert health.engines == ("bing", "google")


def test_the_sitemap_documents_last_fetch_per_engine(store: Store) -> None:
    visits = _visits(store)
    store.upsert([Entry("/", _at(1))])
    visits.visited(
        [
            Visit("/sitemap.xml", "google", _ago(1), 200),
            Visit("/sitemap-1.xml.gz", "google", _ago(1) + 60, 304),
            Visit("/robots.txt", "bing", _ago(3), 200),
            Visit("/sitemap.xml", "", _ago(0), 200),  # not a crawler's
        ]
    )
    health = _report(store)
    fetches = [(d.path, d.engine, d.status) for d in health.documents]
    assert fetches == [
        ("/sitemap-1.xml.gz", "google", 304),
        ("/sitemap.xml", "google", 200),
        ("/robots.txt", "bing", 200),
    ]
    assert health.unlisted == 0  # documents are no pages the sitemap lacks


def test_examples_are_capped_and_counts_are_not(store: Store) -> None:
    visits = _visits(store)
    many = 3 * EXAMPLES
    store.upsert([Entry(f"/p{i}", _at(1)) for i in range(many)])
    visits.visited(Visit(f"/u{i}", "google", _ago(1), 200) for i in range(many))
    health = _report(store)
    (section,) = health.sections
    assert section.never_fetched == section.stale == many
    assert (
        len(section.never_fetched_examples) == len(section.stale_examples) == EXAMPLES
    )
    assert health.unlisted == many
    assert len(health.unlisted_examples) == EXAMPLES


def test_sections_come_from_the_parts(store: Store) -> None:
    """Each part holds one section's pages: the report counts them by part."""
    config = {"base_url": BASE, "sections": {"posts": ["/blog/*"]}}
    store.upsert(
        [
            Entry("/", _at(1)),
            Entry("/blog/a", _at(1), section="posts"),
            Entry("/blog/b", _at(40), section="posts"),
        ]
    )
    health = site_health(store, config, now=NOW)
    assert [(s.label, s.listed) for s in health.sections] == [
        ("posts", 2),
        ("default", 1),
    ]


def test_a_middleware_gives_its_store_and_config() -> None:
    from sitemap_middleware.stores.memory import MemoryStore

    store = MemoryStore()
    store.upsert([Entry("/", _at(1))])
    store.visited([Visit("/", "", _ago(3), 200)])

    def app(environ: object, start_response: object) -> list[bytes]:
        raise AssertionError("not called")

    middleware = SitemapMiddleware(
        app, {"base_url": BASE, "store": store, "stale_after": 2 * DAY}
    )
    try:
        health = site_health(middleware, now=NOW)
    finally:
        middleware.close()
    (section,) = health.sections
    assert (section.listed, section.stale, health.stale_after) == (1, 1, 2 * DAY)


def test_now_defaults_to_the_clock() -> None:
    from sitemap_middleware.stores.memory import MemoryStore

    before = datetime.now(timezone.utc) - timedelta(seconds=1)
    assert site_health(MemoryStore()).made >= before


def test_an_app_is_not_its_middleware() -> None:
    """A user who passes the Flask app is told how to find its middleware."""
    import flask

    with pytest.raises(TypeError, match=r"got Flask .*get_sitemap\(app\)"):
        site_health(flask.Flask("app"))


def test_a_negative_stale_after_is_refused() -> None:
    from sitemap_middleware.stores.memory import MemoryStore

    with pytest.raises(ValueError, match="stale_after must be seconds >= 0"):
        site_health(MemoryStore(), stale_after=-1)


def test_routes_with_no_url_listed() -> None:
    """Known from the app's first page response on: the page routes of which
    no URL is listed, not the framework's, nor those the config excludes."""
    import flask

    from sitemap_middleware import sitemap
    from sitemap_middleware.flask import Sitemap, get_sitemap

    app = flask.Flask("routed")
    app.config["SITEMAP"] = {"base_url": BASE, "store": "memory://"}

    @app.get("/")
    def home() -> str:
        return "<title>Home</title>"

    @app.get("/blog/<slug>")
    def post(slug: str) -> str:
        return f"<title>{slug}</title>"

    @app.get("/admin/<int:user>")
    def admin(user: int) -> str:
        return "<title>Admin</title>"

    @app.get("/print")
    @sitemap(exclude=True)
    def printable() -> str:
        return "<title>Print</title>"

    Sitemap(app)
    middleware = get_sitemap(app)
    try:
        assert site_health(middleware, now=NOW).unrouted is None  # not known yet
        with app.test_client() as client:
            assert client.get("/", base_url=BASE).data
        assert middleware.flush()
        assert site_health(middleware, now=NOW).unrouted == ("/blog/<slug>",)
        middleware.store.upsert([Entry("/blog/a", _at(1), route="/blog/<slug>")])
        assert site_health(middleware, now=NOW).unrouted == ()
    finally:
        middleware.close()
