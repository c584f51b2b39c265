"""Honest lastmod and what a page's own markup adds: per-request noise keeps
lastmod still, the configured source gives it, Link headers count as tags, and
the page's own images reach the sitemap."""

from __future__ import annotations

import gzip
import itertools
import secrets
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

import pytest
from support.helpers import NS, validate
from support.sites import HTML, ROUTES, Site

from sitemap_middleware.model import UNDATED

PAGE = "/article"


def serve(body: str, **headers: str) -> None:
    """Make PAGE answer 200 with this HTML body and these headers."""
    fields = {
        "Content-Type": HTML,
        **{k.replace("_", "-"): v for k, v in headers.items()},
    }
    ROUTES[PAGE] = (200, fields, [body.encode()])


# Each render's own number: two renders never print the same time (a clock
# read could, within one second, one time in a thousand).
_RENDERS = itertools.count()


def noisy(words: str, head: str = "") -> str:
    """An article page with everything a template changes per request."""
    token, nonce = secrets.token_hex(16), secrets.token_urlsafe(12)
    return (
        f"<!doctype html><html><head><meta name=csrf-token content={token}>{head}"
        f"<script nonce={nonce}>var t={time.time()}</script></head><body>"
        f"<nav><a href=/>Home</a> <span>{secrets.token_hex(3)} online</span></nav>"
        f"<main data-request={secrets.token_hex(8)}><h1>Title</h1><p>{words}</p>"
        f"<a href=/more>More</a><form><input type=hidden name=csrf value={token}>"
        f"</form><p>Rendered at {time.strftime('%H:%M:%S')}.{next(_RENDERS)}</p>"
        f"</main></body></html>"
    )


def stored(site: Site) -> tuple[datetime | None, str | None, str]:
    entry = next(site.store.entries(1))
    return entry.lastmod, entry.fingerprint, site.store.part(1).version


@pytest.mark.slow
def test_noise_keeps_lastmod_and_a_real_change_moves_it_once(
    make: Callable[..., Site],
) -> None:
    """C3: 100 renders differing in CSRF tokens, nonces, request ids and a
    timestamp (ignored by a configured pattern) keep one lastmod and write
    nothing; a changed word moves lastmod once."""
    site = make({"recheck_interval": 0, "fingerprint_ignore": [r"Rendered at [\d:.]+"]})
    serve(noisy("First words."))
    site.get(PAGE)
    site.recorded()
    first = stored(site)
    for _ in range(100):
        serve(noisy("First words."))
        assert site.get(PAGE).status == 200
    site.recorded()
    assert stored(site) == first
    stats = site.middleware.stats()
    assert stats["seen"]["unchanged"] == 100 and stats["recorded"] == 1
    time.sleep(1.1)  # lastmod is to the second
    for _ in range(3):
        serve(noisy("Second words."))
        site.get(PAGE)
    site.recorded()
    lastmod, fingerprint, version = stored(site)
    assert fingerprint != first[1] and version != first[2]
    assert lastmod is not None and first[0] is not None and lastmod > first[0]
    assert site.middleware.stats()["recorded"] == 2


def test_without_the_pattern_a_timestamp_is_content(make: Callable[..., Site]) -> None:
    site = make({"recheck_interval": 0})
    serve(noisy("Words."))
    site.get(PAGE)
    site.recorded()
    before = stored(site)[1]
    time.sleep(0.01)
    serve(noisy("Words."))
    site.get(PAGE)
    site.recorded()
    assert stored(site)[1] != before


def test_lastmod_from_the_last_modified_header(make: Callable[..., Site]) -> None:
    site = make({"lastmod_source": "last-modified", "recheck_interval": 0})
    serve(noisy("a"), Last_Modified="Wed, 01 May 2024 10:00:00 GMT")
    site.get(PAGE)
    site.recorded()
    assert stored(site)[0] == datetime(2024, 5, 1, 10, tzinfo=timezone.utc)
    # An older date never moves it back; a future one is no date: the content
    # changed, so the time that was seen is the lastmod.
    serve(noisy("b"), Last_Modified="Mon, 01 Jan 2024 10:00:00 GMT")
    site.get(PAGE)
    site.recorded()
    assert stored(site)[0] == datetime(2024, 5, 1, 10, tzinfo=timezone.utc)
    serve(noisy("c"), Last_Modified="Fri, 01 Jan 2100 00:00:00 GMT")
    site.get(PAGE)
    site.recorded()
    lastmod = stored(site)[0]
    assert lastmod is not None
    assert abs(lastmod - datetime.now(timezone.utc)) < timedelta(seconds=5)


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        ("2024-03-02T01:02:03Z", datetime(2024, 3, 2, 1, 2, 3, tzinfo=timezone.utc)),
        (
            "2024-03-02T03:02:03+02:00",
            datetime(2024, 3, 2, 1, 2, 3, tzinfo=timezone.utc),
        ),
        ("2024-03-02", datetime(2024, 3, 2, tzinfo=timezone.utc)),  # a date: UTC
        # No zone: no instant; the content decides, and a page seen once
        # has not been seen to change: no date.
        ("2024-03-02T01:02:03", UNDATED),
        ("yesterday", UNDATED),
        ("1990-12-31T23:59:59Z", UNDATED),  # before the web
        ("2999-01-01T00:00:00Z", UNDATED),  # in the future
    ],
)
def test_lastmod_from_article_modified_time(
    make: Callable[..., Site], meta: str, expected: datetime
) -> None:
    site = make({"lastmod_source": "article"})
    serve(noisy("a", f'<meta property="article:modified_time" content="{meta}">'))
    site.get(PAGE)
    site.recorded()
    assert stored(site)[0] == expected


@pytest.mark.parametrize(
    ("link", "recorded"),
    [
        ('<http://localhost/about>; rel="canonical"', False),
        ("<https://evil.example/article>; rel=canonical", False),
        ('<http://localhost/article>; rel="canonical"', True),
        ('</style.css>; rel=preload; as=style, </article>; rel="canonical"', True),
        ('</style.css>; rel=preload, </other>; rel="alternate canonical"', False),
    ],
)
def test_link_header_canonical(
    make: Callable[..., Site], link: str, recorded: bool
) -> None:
    """P5: a canonical in the Link header counts as one in the head."""
    site = make()
    serve(noisy("a"), Link=link)
    site.get(PAGE)
    assert site.recorded() == ([PAGE] if recorded else [])
    if not recorded:
        assert site.middleware.stats()["skipped"]["canonical_other"] == 1


def test_the_pages_own_images_reach_the_sitemap(make: Callable[..., Site]) -> None:
    site = make()
    serve(
        "<html><body><header><img src=/logo.png></header><main>"
        "<img src=/img/a.png><img src='photos/b.jpg?v=3&amp;w=200'>"
        "<img src=https://cdn.evil.example/x.png><img src=data:image/gif;base64,R0>"
        "<img src=/img/a.png></main></body></html>"
    )
    site.get(PAGE)
    assert site.recorded() == [PAGE]
    xml = gzip.decompress(site.get("/sitemap-1.xml.gz").body)
    root = validate(xml)
    assert [e.text for e in root.iterfind(".//image:loc", NS)] == [
        "http://localhost/img/a.png",
        "http://localhost/photos/b.jpg",
    ]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("/shop/img/a.png", "/img/a.png"),  # fast path: a plain absolute path
        ("/shop/img/./b.png", "/img/b.png"),
        ("/shop/img/%7Ec.png?v=1", "/img/~c.png"),
        ("d.png", "/blog/d.png"),  # relative to the page
        ("https://www.example.com/shop/e.png", "/e.png"),
        ("/elsewhere/f.png", None),  # outside the base URL's prefix
        ("https://cdn.example.net/g.png", None),
    ],
)
def test_images_are_stored_as_paths_under_the_base_url(
    source: str, expected: str | None
) -> None:
    from sitemap_middleware.config import Config
    from sitemap_middleware.page.facts import read_content
    from sitemap_middleware.page.head import NOTHING

    config = Config.from_mapping({"base_url": "https://www.example.com/shop"})
    body = [f"<main><img src='{source}'></main>".encode()]
    facts = read_content(config, "/blog/post", body, [], NOTHING)
    assert facts.images == (() if expected is None else (expected,))
