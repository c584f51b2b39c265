"""What gets recorded, on both stacks, from one table of requests."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.helpers import sitemap_urls
from support.sites import JWT_PATH, ROUTES, Site, make_site

# (method, path, request headers, stored path or None, counter that explains it)
TABLE = [
    ("GET", "/", {}, "/", "recorded"),
    ("GET", "/about", {}, "/about", "recorded"),
    ("GET", "/blog/café", {}, "/blog/caf%C3%A9", "recorded"),
    ("GET", "/blog/it's", {}, "/blog/it's", "recorded"),
    ("GET", "/a&b", {}, "/a&b", "recorded"),
    ("GET", "/search?q=secret&page=2", {}, "/search", "recorded"),
    ("GET", "/xhtml", {}, "/xhtml", "recorded"),
    ("GET", "/stream", {}, "/stream", "recorded"),
    ("GET", "/json", {}, None, "skipped:not_html"),
    ("GET", "/events", {}, None, "skipped:not_html"),
    ("GET", "/private", {}, None, "skipped:private"),
    ("GET", "/no-store", {}, None, "skipped:private"),
    # Set-Cookie to a request without an identifying cookie: the crawler's page;
    # to a query holding a credential (a magic link): maybe a signed-in one.
    ("GET", "/cookie", {}, "/cookie", "recorded"),
    ("GET", "/cookie?token=abc", {}, None, "skipped:set_cookie"),
    ("GET", "/vary", {}, "/vary", "recorded"),  # Vary: Cookie, no cookie sent
    ("GET", "/vary-any", {}, None, "skipped:vary"),
    ("GET", "/download", {}, None, "skipped:attachment"),
    ("GET", "/noindex", {}, None, "removed"),
    ("GET", "/bot-none", {}, None, "removed"),
    ("GET", "/old", {}, None, "removed"),
    ("GET", "/gone", {}, None, "removed"),
    ("GET", "/missing", {}, None, "removed"),
    ("GET", "/error", {}, None, "skipped:status"),
    ("GET", "/draft", {}, None, "skipped:noindex"),
    ("GET", "/canonical-self", {}, "/canonical-self", "recorded"),
    ("GET", "/canonical-other", {}, None, "skipped:canonical_other"),
    ("GET", "/canonical-foreign", {}, None, "skipped:canonical_other"),
    ("GET", "/p;jsessionid=1A2B", {}, "/p", "recorded"),
    ("GET", JWT_PATH, {}, None, "skipped:secret"),
    ("GET", "/admin/", {}, None, "skipped:excluded"),
    ("GET", "/api/posts", {}, None, "skipped:excluded"),
    ("GET", "/about", {"Cookie": "theme=dark; session=abc"}, None, "skipped:session"),
    ("GET", "/about", {"Cookie": "theme=dark"}, None, "skipped:session"),
    ("GET", "/about", {"Cookie": "_ga=GA1.2.3"}, "/about", "recorded"),
    ("GET", "/account", {}, None, "skipped:excluded"),
    ("GET", "/about", {"Authorization": "Bearer x"}, None, "skipped:authorization"),
    ("GET", "/about", {"Host": "evil.example"}, None, "skipped:host"),
    ("HEAD", "/about", {}, None, "skipped:method"),
    ("POST", "/about", {}, None, "skipped:method"),
]


def _count(stats: dict[str, object], name: str) -> int:
    group, _, reason = name.partition(":")
    value = stats[group]
    return value.get(reason, 0) if isinstance(value, dict) else int(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("method", "path", "headers", "stored", "counter"),
    TABLE,
    ids=[f"{row[0]} {row[1]} {row[2]}" for row in TABLE],
)
def test_recording_table(
    site: Site,
    method: str,
    path: str,
    headers: dict[str, str],
    stored: str | None,
    counter: str,
) -> None:
    """Each request is recorded under its canonical path, or not at all, and the
    counters say which rule decided."""
    reply = site.request(method, path, headers)
    expected_status = ROUTES.get(path.partition("?")[0], (404,))[0]
    assert reply.status == expected_status
    assert site.recorded() == ([stored] if stored else [])
    stats = site.middleware.stats()
    if counter != "removed":  # a removal of an unknown path removes nothing
        assert _count(stats, counter) == 1, stats
    if stored is None:
        assert stats["recorded"] == 0


def test_response_passes_through_unchanged(site: Site) -> None:
    """Recording never changes what the app sends: status, headers, bytes."""
    for path in ("/", "/stream", "/json", "/old", "/private"):
        status, headers, chunks = ROUTES[path]
        reply = site.get(path)
        assert reply.status == status
        assert reply.body == b"".join(chunks)
        for name, value in headers.items():
            assert reply.headers[name] == value


def test_removal_when_a_page_goes_away(make: Callable[..., Site]) -> None:
    """A recorded page that later answers 404, 410, 301 (to another page) or
    noindex leaves the store; a 5xx leaves it alone, and so does a 301 to
    itself (its way to itself: see test_adversarial)."""
    site = make()
    routes = dict(ROUTES)
    moved = {"/moved": (301, {"Location": "/about-us"}, [b""])}
    try:
        for answer in ("/missing", "/gone", "/moved", "/noindex", "/error", "/old"):
            ROUTES["/about"] = (
                ROUTES["/about"] if answer in ("/error", "/old") else routes["/about"]
            )
            site.get("/about")
            assert site.recorded() == ["/about"]
            ROUTES["/about"] = {**routes, **moved}.get(answer, (404, {}, [b""]))
            site.middleware.recorder._recent.clear()
            site.get("/about")
            expected = ["/about"] if answer in ("/error", "/old") else []
            assert site.recorded() == expected, answer
            ROUTES["/about"] = routes["/about"]
    finally:
        ROUTES.clear()
        ROUTES.update(routes)


def test_equivalent_spellings_give_one_entry(site: Site) -> None:
    """Percent-encoded unreserved characters and dropped queries land on one
    entry (dot segments: see test_urls)."""
    for path in ("/about", "/%61bout", "/about?utm_source=x", "/about?"):
        assert site.get(path).status == 200, path
    assert site.recorded() == ["/about"]


def test_host_header_never_reaches_a_loc(make: Callable[..., Site]) -> None:
    """With every host allowed, locs still come from base_url, never Host."""
    site = make({"allowed_hosts": ["*"], "base_url": "https://www.example.com"})
    site.get("/about", {"Host": "evil.example"})
    site.get("/", {"Host": "evil.example", "X-Forwarded-Host": "evil2.example"})
    assert sorted(site.recorded()) == ["/", "/about"]
    urls = sitemap_urls(site)
    assert sorted(urls) == ["https://www.example.com/", "https://www.example.com/about"]


def test_allowed_query_parameters_survive_in_order(make: Callable[..., Site]) -> None:
    """Allow-listed parameters are kept, sorted; the others are dropped."""
    site = make({"query": ["page", "lang"]})
    site.get("/search?q=x&page=2&lang=de&utm_source=y")
    assert site.recorded() == ["/search?lang=de&page=2"]


def test_known_page_is_not_digested_again(site: Site) -> None:
    """A page seen lately is let through untouched until the recheck interval."""
    site.get("/about")
    site.recorded()
    for _ in range(5):
        site.get("/about")
    stats = site.middleware.stats()
    assert stats["seen"]["fresh"] == 5
    assert stats["recorded"] == 1


def test_unchanged_page_keeps_its_lastmod(make: Callable[..., Site]) -> None:
    """Re-digesting an unchanged page writes nothing; a changed body moves lastmod."""
    site = make({"recheck_interval": 0})
    site.get("/about")
    site.recorded()
    first = next(site.store.entries(1))
    site.get("/about")
    site.recorded()
    assert site.middleware.stats()["seen"]["unchanged"] == 1
    assert next(site.store.entries(1)) == first
    routes = dict(ROUTES)
    try:
        ROUTES["/about"] = (200, {"Content-Type": "text/html"}, [b"<p>new</p>"])
        site.get("/about")
        site.recorded()
    finally:
        ROUTES.update(routes)
    changed = next(site.store.entries(1))
    assert changed.fingerprint != first.fingerprint
    assert changed.lastmod is not None and first.lastmod is not None
    assert changed.lastmod >= first.lastmod


def test_websocket_passes_through() -> None:
    """A websocket route works through the ASGI middleware and records nothing."""
    site = make_site("asgi", {"base_url": "http://localhost", "store": "memory://"})
    try:
        with site.websocket("/ws") as ws:
            ws.send_text("ping")
            assert ws.receive_text() == "ping"
        assert site.recorded() == []
    finally:
        site.close()
