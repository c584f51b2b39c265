"""Route metadata and volume bounds, on Flask and Starlette: the route template
stored with each page, per-route options from the config and the ``sitemap``
decorator, the ``skip()`` opt-out, the any-cookie option, the rate of new URLs
and the caps."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from support.helpers import NS, gunzip_once, locs, validate
from support.sites import BASE, HTML, Site, html

from sitemap_middleware import ConfigError, sitemap, skip
from sitemap_middleware.config import RouteOptions
from sitemap_middleware.routes import SKIP_KEY

Routed = Callable[..., Site]


def template(stack: str, flask_template: str) -> str:
    """A Flask route template as the stack spells it."""
    if stack == "wsgi":
        return flask_template
    spelled = re.sub(r"<path:(\w+)>", r"{\1:path}", flask_template)
    return re.sub(r"<(\w+)>", r"{\1}", spelled)


def stored(site: Site) -> dict[str, str | None]:
    """Stored path -> route template, after flushing."""
    return {path: entry.route for path, entry in site.entries().items()}


def served(site: Site) -> dict[str, dict[str, str]]:
    """Each <url> of the served sitemap: loc -> its fields but lastmod,
    every document validated."""
    assert site.middleware.flush(5.0)
    urls: dict[str, dict[str, str]] = {}
    for page_url in locs(validate(site.get("/sitemap.xml").body)):
        page = validate(gunzip_once(site.get(page_url[len("http://localhost") :]).body))
        for url in page.iterfind("sm:url", NS):
            fields = {child.tag.rpartition("}")[2]: child.text for child in url}
            fields.pop("lastmod", None)
            urls[fields.pop("loc")] = fields  # type: ignore[arg-type]
    return urls


def stat(site: Site, group: str, reason: str) -> int:
    counts: dict[str, int] = site.middleware.stats()[group]
    return counts.get(reason, 0)


def test_route_template_is_stored(stack: str, routed: Routed) -> None:
    """Each entry keeps the template of the route that served it, mounts and
    blueprints included."""
    site = routed()
    for path in ("/about", "/blog/hello", "/products/a/b", "/docs/intro"):
        assert site.get(path).status == 200
    assert stored(site) == {
        "/about": "/about",
        "/blog/hello": template(stack, "/blog/<slug>"),
        "/products/a/b": template(stack, "/products/<path:slug>"),
        "/docs/intro": template(stack, "/docs/<name>"),
    }


def test_route_options_reach_the_sitemap(stack: str, routed: Routed) -> None:
    """changefreq and priority come from the config's routes, then the
    decorator, then the top-level options."""
    site = routed(
        {
            "changefreq": "daily",
            "routes": {"/about": {"changefreq": "monthly", "priority": 0.3}},
        }
    )
    for path in ("/about", "/blog/hello", "/search"):
        site.get(path)
    assert served(site) == {
        "http://localhost/about": {"changefreq": "monthly", "priority": "0.3"},
        "http://localhost/blog/hello": {"changefreq": "weekly", "priority": "0.7"},
        "http://localhost/search": {"changefreq": "daily"},
    }


def test_config_beats_the_decorator_option_by_option(
    stack: str, routed: Routed
) -> None:
    """An option the config sets for a route wins; the decorator keeps the rest."""
    blog = template(stack, "/blog/<slug>")
    site = routed({"routes": {blog: {"priority": 0.2}}})
    site.get("/blog/hello")
    (fields,) = served(site).values()
    assert fields == {"changefreq": "weekly", "priority": "0.2"}


def test_excluded_routes_are_not_recorded(stack: str, routed: Routed) -> None:
    """exclude, in the config or the decorator, keeps a route's pages out; a
    config can also let a decorated route back in."""
    site = routed({"routes": {"/about": {"exclude": True}}})
    for path in ("/about", "/drafts/one", "/blog/hello"):
        assert site.get(path).status == 200
    assert list(stored(site)) == ["/blog/hello"]
    assert stat(site, "skipped", "route_excluded") == 2

    drafts = template(stack, "/drafts/<slug>")
    site = routed({"routes": {drafts: {"exclude": False}}})
    site.get("/drafts/one")
    assert list(stored(site)) == ["/drafts/one"]


def test_route_query_allow_list(stack: str, routed: Routed) -> None:
    """A route's query parameters are kept for that route only, on top of the
    global ones; each kept value is its own page."""
    site = routed({"query": ["lang"], "routes": {"/search": {"query": ["page"]}}})
    for path in (
        "/search?page=2&q=secret",
        "/search?page=3&lang=de",
        "/about?page=2&lang=de",
        "/blog/hello?page=2",
    ):
        assert site.get(path).status == 200
    assert sorted(stored(site)) == [
        "/about?lang=de",
        "/blog/hello",
        "/search?lang=de&page=3",
        "/search?page=2",
    ]


def test_page_kept_by_a_route_query_is_removed_by_its_route(
    stack: str, routed: Routed
) -> None:
    """A page stored with a route's parameter leaves when it answers 404."""
    preview = template(stack, "/preview/<slug>")
    site = routed({"routes": {preview: {"query": ["page"]}}})
    site.get("/preview/x?page=2")
    site.get("/preview/x?page=3")
    assert sorted(stored(site)) == ["/preview/x?page=2", "/preview/x?page=3"]
    site.state["status"] = 404  # at the stored spelling: ?status= would be dropped
    site.get("/preview/x?page=2")
    assert list(stored(site)) == ["/preview/x?page=3"]


def test_skip_leaves_the_response_alone_and_records_nothing(
    stack: str, routed: Routed
) -> None:
    """skip() keeps a response out of the sitemap without changing a byte of it,
    and neither records nor removes the page."""
    site = routed()
    reply = site.get("/preview/x?skip=1")
    assert reply.status == 200
    assert reply.body == html("x v1")
    assert reply.headers["content-type"] == HTML
    assert reply.headers["content-length"] == str(len(html("x v1")))
    assert stored(site) == {}
    assert stat(site, "skipped", "opted_out") == 1

    site.get("/preview/x")
    assert list(stored(site)) == ["/preview/x"]
    site.state["status"] = 404
    site.get("/preview/x?skip=1")
    assert list(stored(site)) == ["/preview/x"]  # not removed either
    assert stat(site, "skipped", "opted_out") == 2
    site.get("/preview/x")
    assert stored(site) == {}


def test_skip_takes_requests_environs_and_scopes() -> None:
    """skip() marks a werkzeug request's environ, a Starlette request's scope,
    or a raw environ or scope; anything else is a TypeError."""
    from starlette.requests import Request as StarletteRequest
    from werkzeug.test import EnvironBuilder
    from werkzeug.wrappers import Request as WerkzeugRequest

    environ = EnvironBuilder("/x").get_environ()
    skip(WerkzeugRequest(environ))
    assert environ[SKIP_KEY] is True
    scope: dict[str, Any] = {"type": "http", "headers": []}
    skip(StarletteRequest(scope))
    assert scope[SKIP_KEY] is True
    raw: dict[str, Any] = {}
    skip(raw)
    assert raw == {SKIP_KEY: True}
    with pytest.raises(TypeError, match="skip\\(\\) takes a request"):
        skip(42)


@pytest.mark.parametrize(
    ("cookie", "any_cookie", "recorded"),
    [
        ("_ga=GA1.2.345; cookieconsent_status=dismiss", False, True),
        ("_ga=GA1.2.345; cookieconsent_status=dismiss", True, False),
        ("session=abc", False, False),
        ("session=abc", True, False),
    ],
)
def test_any_cookie_option(
    make: Callable[..., Site], cookie: str, any_cookie: bool, recorded: bool
) -> None:
    """P2: analytics and consent cookies are no session by default; with
    ``session_cookies: "*"`` any cookie keeps the page out."""
    site = make({"session_cookies": "*"} if any_cookie else {})
    assert site.get("/about", {"Cookie": cookie}).status == 200
    assert site.recorded() == (["/about"] if recorded else [])
    assert stat(site, "skipped", "session") == (0 if recorded else 1)


def test_rate_of_new_urls(routed: Routed) -> None:
    """V3 (reduced): 200 new URLs against a rate of 50 a minute record about
    50 and count the rest; every response is a 200; known pages still update."""
    site = routed({"new_urls_per_minute": 50, "recheck_interval": 0})
    site.get("/about")
    before = site.entries()
    started = time.monotonic()
    statuses = {site.get(f"/products/p{n}").status for n in range(200)}
    products = [path for path in stored(site) if path.startswith("/products/")]
    elapsed = time.monotonic() - started
    assert statuses == {200}
    refilled = int(elapsed * 50 / 60) + 1
    assert 49 <= len(products) <= 49 + refilled
    assert len(products) + stat(site, "dropped", "rate") == 200

    site.state["version"] = 2
    assert site.get("/about").status == 200
    assert site.entries()["/about"].fingerprint != before["/about"].fingerprint


def test_known_pages_update_beyond_the_rate(routed: Routed) -> None:
    """A page this process wrote lately is no new URL: a dry bucket leaves
    its updates alone."""
    site = routed({"new_urls_per_minute": 3, "recheck_interval": 0})
    for path in ("/about", "/search", "/blog/a", "/blog/b", "/blog/c"):
        site.get(path)
    first = site.entries()
    assert list(first) == ["/about", "/search", "/blog/a"]
    site.state["version"] = 2
    for path in ("/about", "/search", "/blog/a"):
        site.get(path)
    second = site.entries()
    assert all(second[p].fingerprint != first[p].fingerprint for p in first)
    assert stat(site, "dropped", "rate") == 2


def test_global_cap(routed: Routed) -> None:
    """V1 (reduced) against max_urls: a catch-all route asked for 300 slugs
    stores up to the cap and counts the rest; known pages keep updating."""
    site = routed({"max_urls": 100, "new_urls_per_minute": None, "recheck_interval": 0})
    for path in ("/about", "/blog/a", "/docs/intro"):
        site.get(path)
    first = site.entries()
    statuses = {site.get(f"/products/{n:04x}").status for n in range(300)}
    assert statuses == {200}
    held = site.entries()
    assert len(held) == 100
    assert stat(site, "dropped", "cap") == 203
    site.state["version"] = 2
    for path in first:
        site.get(path)
    site.get("/blog/new")
    updated = site.entries()
    assert "/blog/new" not in updated
    assert all(updated[p].fingerprint != first[p].fingerprint for p in first)


def products_capped(
    stack: str, tmp_path: Any, max_urls: int
) -> tuple[str, dict[str, Any]]:
    """The template of the products route on ``stack``, and a config on a SQLite
    file that caps that route at ``max_urls`` (no rate limit, re-checked at once)."""
    products = template(stack, "/products/<path:slug>")
    return products, {
        "store": f"sqlite:///{tmp_path / 'sitemap.db'}",
        "routes": {products: {"max_urls": max_urls}},
        "new_urls_per_minute": None,
        "recheck_interval": 0,
    }


def test_route_cap(stack: str, routed: Routed, tmp_path: Any) -> None:
    """V1 (reduced) against a route's max_urls: 300 slugs, cap 100; other
    routes keep growing; the cap holds for the next process too."""
    products, config = products_capped(stack, tmp_path, 100)
    site = routed(config)
    site.get("/products/known")
    site.get("/about")
    site.entries()
    for n in range(300):
        assert site.get(f"/products/{n:04x}").status == 200
    site.get("/blog/after")
    held = stored(site)
    assert sum(route == products for route in held.values()) == 100
    assert "/blog/after" in held and "/products/known" in held
    assert stat(site, "dropped", "route_cap") == 201
    site.close()

    # A new process reads the route's stored paths: new slugs stay out, a
    # known one (which this process never served) still updates.
    site = routed(config)
    before = site.entries()["/products/known"]
    site.state["version"] = 2
    site.get("/products/known")
    site.get("/products/another")
    after = site.entries()
    assert "/products/another" not in after
    assert after["/products/known"].fingerprint != before.fingerprint
    assert stat(site, "dropped", "route_cap") == 1


def test_decorator_on_fastapi() -> None:
    """The decorator works on FastAPI views, above or below the route
    decorator, and the route template is FastAPI's path."""
    from fastapi import FastAPI
    from fastapi.responses import HTMLResponse

    from sitemap_middleware import ASGISitemapMiddleware

    app = FastAPI()

    @sitemap(priority=0.9, query=["page"])
    @app.get("/items/{item_id}", response_class=HTMLResponse)
    async def item(item_id: int) -> str:
        return html(f"Item {item_id}").decode()

    @app.get("/tags/{tag}", response_class=HTMLResponse)
    @sitemap(changefreq="yearly")
    async def tag(tag: str) -> str:
        return html(tag).decode()

    app.add_middleware(ASGISitemapMiddleware, config=BASE)  # type: ignore[arg-type]
    site = Site("asgi", app)
    try:
        site.get("/items/7?page=2&sort=x")
        site.get("/tags/red")
        assert stored(site) == {
            "/items/7?page=2": "/items/{item_id}",
            "/tags/red": "/tags/{tag}",
        }
        assert served(site) == {
            "http://localhost/items/7?page=2": {"priority": "0.9"},
            "http://localhost/tags/red": {"changefreq": "yearly"},
        }
    finally:
        site.close()


def test_decorator_on_a_flask_class_based_view() -> None:
    """On a class-based view the class carries the options."""
    from flask import Flask
    from flask.views import View

    from sitemap_middleware.flask import Sitemap

    @sitemap(priority=0.4)
    class Page(View):
        def dispatch_request(self) -> Any:
            return html("Page"), 200, {"Content-Type": HTML}

    app = Flask(__name__)
    app.config["SITEMAP"] = BASE
    app.add_url_rule("/page", view_func=Page.as_view("page"))
    Sitemap(app)
    site = Site("wsgi", app)
    try:
        site.get("/page")
        assert served(site) == {"http://localhost/page": {"priority": "0.4"}}
    finally:
        site.close()


def test_bare_wsgi_middleware_reads_the_route_from_the_environ() -> None:
    """Without the Flask extension, a WSGI app may name its route itself. A
    404 from no route at all still removes a page kept with a route's query
    parameter."""
    from werkzeug.test import Client

    from sitemap_middleware import SitemapMiddleware

    gone: set[str] = set()

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        if environ["QUERY_STRING"] in gone:
            start_response("404 Not Found", [("Content-Type", HTML)])
            return [html("Not found")]
        environ["sitemap_middleware.route"] = "/things/<id>"
        start_response("200 OK", [("Content-Type", HTML)])
        return [html("Thing")]

    config = {**BASE, "routes": {"/things/<id>": {"priority": 0.6, "query": ["v"]}}}
    middleware = SitemapMiddleware(app, config)
    client = Client(middleware)

    def get(path: str) -> None:
        response = client.get(path)
        response.get_data()
        response.close()

    try:
        get("/things/1?v=2")
        assert middleware.flush(5.0)
        (entry,) = middleware.store.entries(1)
        assert (entry.path, entry.route) == ("/things/1?v=2", "/things/<id>")
        assert b"<priority>0.6</priority>" in b"".join(middleware.store.fragments(1))
        gone.add("v=2")
        get("/things/1?v=2")
        assert middleware.flush(5.0)
        assert middleware.store.count() == 0
    finally:
        middleware.close()


def test_decorator_options_are_checked() -> None:
    """A bad option fails when the view is defined, like a bad config."""
    with pytest.raises(ConfigError, match=r"sitemap\(\)\.priority.*0\.0 to 1\.0"):
        sitemap(priority=3)
    with pytest.raises(ConfigError, match="looks like a credential"):
        sitemap(query=["token"])
    with pytest.raises(ConfigError, match=r"sitemap\(\)\.query.*list of strings"):
        sitemap(query="page")
    with pytest.raises(ConfigError, match="decorates functions and classes"):
        sitemap(priority=0.5)(None)

    def view() -> None: ...

    assert sitemap(max_urls=10)(view) is view
    assert view.sitemap_route == RouteOptions(max_urls=10)  # type: ignore[attr-defined]


def test_processes_together_respect_a_route_cap(
    stack: str, routed: Routed, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two middlewares on one SQLite file (two processes' worth): each reads
    the route's count from the store, so together they hold the cap, where
    each tracking only its own additions would store up to twice as many.
    Counts are re-read every COUNT_INTERVAL: 0 here, so the cap is exact."""
    from sitemap_middleware.recording import admission as limits

    monkeypatch.setattr(limits, "COUNT_INTERVAL", 0.0)
    products, config = products_capped(stack, tmp_path, 50)
    one, two = routed(config), routed(config)
    # Both have admitted a URL of the route before the other fills it.
    one.get("/products/first")
    one.entries()
    two.get("/products/second")
    two.entries()
    for n in range(80):
        assert one.get(f"/products/a{n:04x}").status == 200
    one.entries()
    for n in range(80):
        assert two.get(f"/products/b{n:04x}").status == 200
    held = stored(two)
    assert sum(route == products for route in held.values()) == 50
    assert stat(one, "dropped", "route_cap") == 32
    assert stat(two, "dropped", "route_cap") == 80
    # At the cap, a URL the other process stored still updates here.
    before = two.entries()["/products/a0000"]
    two.state["version"] = 2
    two.get("/products/a0000")
    assert two.entries()["/products/a0000"].fingerprint != before.fingerprint
    assert stat(two, "dropped", "route_cap") == 80
