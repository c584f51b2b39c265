"""Hostile pages (invariant 18): what a page says is read or ignored, never raised.

The readers (canonical, hreflang and Link hrefs, images, the modified time, a
head longer than its budget) are checked alone, then through the whole
middleware on both stacks: after each hostile page a good one is recorded,
``flush()`` succeeds and nothing is logged as a bug.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import pytest
from support import sites
from support.helpers import NS, gunzip_once, validate
from support.sites import HTML, Site, html

from sitemap_middleware.config import Config, RouteOptions
from sitemap_middleware.page.facts import _iso_datetime, read_content, read_head
from sitemap_middleware.page.head import HEAD_BUDGET
from sitemap_middleware.reasons import Skipped
from sitemap_middleware.routes import ATTRIBUTE, Routes, sitemap
from sitemap_middleware.sitemaps import MAX_URL_LENGTH

BASE_URL = "https://www.example.com"
CONFIG = Config.from_mapping({"base_url": BASE_URL, "lastmod_source": "article"})
NO_QUERY: frozenset[str] = frozenset()


def page(head: str = "", main: str = "") -> bytes:
    return (
        f"<!doctype html><html><head><title>t</title>{head}</head>"
        f"<body><main><p>words</p>{main}</main></body></html>"
    ).encode()


# -- the readers alone ---------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "0001-01-01T00:00:00+01:00",  # year 0 in UTC: datetime has none
        "9999-12-31T23:59:59-01:00",  # year 10000 in UTC
        "0001-01-01T00:00:00+23:59",
        "not a date",
        "2024-01-01T00:00:00",  # no zone: no instant
        "",
    ],
)
def test_modified_times_utc_cannot_hold_give_no_value(text: str) -> None:
    assert _iso_datetime(text) is None


def test_a_modified_time_is_read_in_utc() -> None:
    moment = _iso_datetime("2024-05-01T12:00:00+02:00")
    assert moment == datetime(2024, 5, 1, 10, tzinfo=timezone.utc)
    assert _iso_datetime("0001-01-01T01:00:00+01:00") == datetime(
        1, 1, 1, tzinfo=timezone.utc
    )


@pytest.mark.parametrize("value", ["Fri, 31 Dec 9999 23:59:59 -0100"])
def test_a_last_modified_utc_cannot_hold_gives_no_value(value: str) -> None:
    config = Config.from_mapping(
        {"base_url": BASE_URL, "lastmod_source": "last-modified"}
    )
    body = [page()]
    head, _ = read_head(config, "/a", NO_QUERY, body, [])
    facts = read_content(config, "/a", body, [("Last-Modified", value)], head)
    assert facts.lastmod is None


@pytest.mark.parametrize(
    "src",
    [
        "http://[::1",
        "http://[x",
        "https://www.example.com\uff0fimg.png",
        "https://www.example.com:99999/a.png",
        "/" + "a" * 3000,  # too long for an <image:loc>
        "/" + "a" * (MAX_URL_LENGTH - len(BASE_URL)),  # one too long
        "/x/../" + "a" * 3000,
        "https://www.example.com/" + "%61" * 2100,  # too long once decoded
    ],
)
def test_images_that_cannot_be_listed_are_dropped(src: str) -> None:
    body = [page(main=f'<img src="{src}"><img src="/ok.png">')]
    head, _ = read_head(CONFIG, "/a", NO_QUERY, body, [])
    assert read_content(CONFIG, "/a", body, [], head).images == ("/ok.png",)


def test_an_image_as_long_as_a_loc_may_be_is_kept() -> None:
    longest = "/" + "a" * (MAX_URL_LENGTH - len(BASE_URL) - 1)
    body = [
        page(main=f'<img src="{longest}"><img src="https://www.example.com{longest}">')
    ]
    head, _ = read_head(CONFIG, "/a", NO_QUERY, body, [])
    assert read_content(CONFIG, "/a", body, [], head).images == (longest,)


@pytest.mark.parametrize(
    ("head", "links", "reason"),
    [
        ('<link rel=canonical href="http://[x">', [], Skipped.CANONICAL_OTHER),
        (
            '<link rel=canonical href="https://www.example.com\uff0fa">',
            [],
            "canonical_other",
        ),
        ("", ["<http://[x>; rel=canonical"], Skipped.CANONICAL_OTHER),
        ("", ["<https://www.example.com:443/a>; rel=canonical"], None),
        ('<link rel=canonical href="https://www.example.com:443/a">', [], None),
        ('<link rel=canonical href="HTTPS://WWW.EXAMPLE.COM:443/a">', [], None),
        ('<link rel=canonical href="//www.example.com/a">', [], None),
        (
            '<link rel=canonical href="https://www.example.com:444/a">',
            [],
            "canonical_other",
        ),
        ('<link rel=alternate hreflang=de href="http://[x">', [], None),
        ("", ["<http://[x>; rel=alternate; hreflang=de"], None),
        ("<meta name=robots content='&#110;oindex'>", [], Skipped.NOINDEX),
        ("<script>" + "x;" * HEAD_BUDGET + "</script>", [], Skipped.HEAD_TOO_LONG),
        (
            "<script>"
            + "x;" * HEAD_BUDGET
            + "</script><meta name=robots content=noindex>",
            [],
            Skipped.HEAD_TOO_LONG,
        ),
    ],
)
def test_read_head(head: str, links: list[str], reason: str | None) -> None:
    found = read_head(
        CONFIG, "/a", NO_QUERY, [page(head)], [("Link", v) for v in links]
    )
    assert found[1] == reason


def test_the_route_carries_public_ids() -> None:
    config = Config.from_mapping(
        {"base_url": BASE_URL, "routes": {"/orders/<id>": {"public_ids": True}}}
    )
    routes = Routes(config)

    @sitemap(public_ids=True)
    def view() -> None: ...

    def plain() -> None: ...

    assert routes.resolve("/orders/<id>").public_ids is True
    assert routes.resolve("/p/<id>", view).public_ids is True
    assert routes.resolve("/p/<id>", plain).public_ids is False
    assert routes.unknown.public_ids is False
    # A removal without a route: a path stored under public_ids may go.
    assert routes.any.public_ids is True
    assert getattr(view, ATTRIBUTE) == RouteOptions(public_ids=True)


# -- through the whole middleware, both stacks ----------------------------------------

LONG_IMAGE = "/" + "i" * 3000
# path -> (extra headers, body, config overrides, what becomes of the page:
# "recorded", or the reason it is skipped for)
HOSTILE: dict[str, tuple[dict[str, str], bytes, dict[str, Any], str]] = {
    "/h/img-ipv6": ({}, page(main='<img src="http://[::1">'), {}, "recorded"),
    "/h/img-long": (
        {},
        page(main=f'<img src="{LONG_IMAGE}"><img src="/ok.png">'),
        {},
        "recorded",
    ),
    "/h/canonical-ipv6": (
        {},
        page('<link rel=canonical href="http://[x">'),
        {},
        Skipped.CANONICAL_OTHER,
    ),
    "/h/canonical-nfkc": (
        {},
        page('<link rel=canonical href="https://www.example.com\uff0fa">'),
        {},
        Skipped.CANONICAL_OTHER,
    ),
    "/h/hreflang": (
        {},
        page(
            '<link rel=alternate hreflang=de href="http://[x">'
            '<link rel=alternate hreflang=fr href="https://www.exa\u2100mple.com/">'
            '<link rel=alternate hreflang=en href="/h/hreflang">'
        ),
        {},
        "recorded",
    ),
    "/h/link-header": (
        {"Link": "<http://[x>; rel=canonical"},
        page(),
        {},
        Skipped.CANONICAL_OTHER,
    ),
    "/h/link-alternate": (
        {"Link": "<http://[x>; rel=alternate; hreflang=de"},
        page(),
        {},
        "recorded",
    ),
    "/h/article-year-0": (
        {},
        page(
            '<meta property="article:modified_time" '
            'content="0001-01-01T00:00:00+01:00">'
        ),
        {"lastmod_source": "article"},
        "recorded",
    ),
    "/h/last-modified-year-10000": (
        {"Last-Modified": "Fri, 31 Dec 9999 23:59:59 -0100"},
        page(),
        {"lastmod_source": "last-modified"},
        "recorded",
    ),
    "/h/noindex-reference": (
        {},
        page("<meta name=robots content='&#110;oindex'>"),
        {},
        Skipped.NOINDEX,
    ),
    "/h/noindex-after-a-long-head": (
        {},
        page(
            "<script>" + "var a = 1;\n" * 7000 + "</script>"
            "<meta name=robots content=noindex>"
        ),
        {},
        Skipped.HEAD_TOO_LONG,
    ),
    "/h/self-canonical-default-port": (
        {},
        page(
            '<link rel=canonical href="https://www.example.com:443/h/self-canonical-default-port">'
        ),
        {},
        "recorded",
    ),
}


@pytest.fixture
def bugs(caplog: pytest.LogCaptureFixture) -> Callable[[], list[logging.LogRecord]]:
    caplog.set_level(logging.WARNING, logger="sitemap_middleware")

    def logged() -> list[logging.LogRecord]:
        return [r for r in caplog.records if r.name.startswith("sitemap_middleware")]

    return logged


@pytest.mark.parametrize("path", HOSTILE)
def test_a_hostile_page_stops_nothing(
    path: str,
    make: Callable[..., Site],
    monkeypatch: pytest.MonkeyPatch,
    bugs: Callable[[], list[logging.LogRecord]],
) -> None:
    headers, body, overrides, outcome = HOSTILE[path]
    monkeypatch.setitem(
        sites.ROUTES, path, (200, {"Content-Type": HTML, **headers}, [body])
    )
    monkeypatch.setitem(
        sites.ROUTES, "/good", (200, {"Content-Type": HTML}, [html("G")])
    )
    site = make({"base_url": BASE_URL, "allowed_hosts": ["localhost"], **overrides})
    assert site.get(path).status == 200
    assert site.get("/good").status == 200
    recorded = site.recorded()  # flush() returned True
    assert "/good" in recorded
    stats = site.middleware.stats()
    assert not stats.get("errors"), stats
    assert not bugs()
    if outcome == "recorded":
        assert path in recorded
    else:
        assert path not in recorded
        assert stats["skipped"].get(outcome) == 1, stats
    # Every document served is valid, the long image left out of it.
    part = validate(gunzip_once(site.get("/sitemap-1.xml.gz").body))
    images = part.xpath("//image:loc/text()", namespaces=NS)
    if path == "/h/img-long":
        assert images == [BASE_URL + "/ok.png"]


def test_hostile_pages_in_one_batch(
    make: Callable[..., Site],
    monkeypatch: pytest.MonkeyPatch,
    bugs: Callable[[], list[logging.LogRecord]],
) -> None:
    """All of them back to back, then good pages: none is lost."""
    for path, (headers, body, _, _) in HOSTILE.items():
        monkeypatch.setitem(
            sites.ROUTES, path, (200, {"Content-Type": HTML, **headers}, [body])
        )
    good = [f"/good/{n}" for n in range(5)]
    for path in good:
        monkeypatch.setitem(
            sites.ROUTES, path, (200, {"Content-Type": HTML}, [html(path)])
        )
    site = make(
        {
            "base_url": BASE_URL,
            "allowed_hosts": ["localhost"],
            "lastmod_source": "article",
        }
    )
    for path in [*HOSTILE, *good]:
        site.get(path)
    recorded = site.recorded()
    assert set(good) <= set(recorded)
    validate(gunzip_once(site.get("/sitemap-1.xml.gz").body))
    assert not site.middleware.stats().get("errors")
    assert not bugs()


def test_a_route_declares_its_ids_public_through_the_middleware() -> None:
    """A UUID in a path is a secret, unless the route that served it says its
    identifiers are public (``routes`` option or ``@sitemap(public_ids=True)``)."""
    from flask import Flask

    from sitemap_middleware import sitemap
    from sitemap_middleware.flask import Sitemap

    app = Flask(__name__)
    app.config["SITEMAP"] = {
        "base_url": "http://localhost",
        "store": "memory://",
        "routes": {"/events/<uid>": {"public_ids": True}},
    }

    @app.get("/invite/<uid>")
    def invite(uid: str) -> str:
        return "<html><body><main>invite</main></body></html>"

    @app.get("/events/<uid>")
    def event(uid: str) -> str:
        return "<html><body><main>event</main></body></html>"

    @app.get("/talks/<uid>")
    @sitemap(public_ids=True)
    def talk(uid: str) -> str:
        return "<html><body><main>talk</main></body></html>"

    Sitemap(app)
    uid = "550e8400-e29b-41d4-a716-446655440000"
    client = app.test_client()
    for path in (f"/invite/{uid}", f"/events/{uid}", f"/talks/{uid}"):
        response = client.get(path)
        assert response.status_code == 200 and response.get_data()
    wrapped = app.extensions["sitemap"]
    assert wrapped.flush(), wrapped.stats()
    assert sorted(e.path for e in wrapped.store.entries(1)) == [
        f"/events/{uid}",
        f"/talks/{uid}",
    ], wrapped.stats()
    assert wrapped.stats()["skipped"] == {"secret": 1}
