"""Adversarial input, on Flask (WSGI) and Starlette (ASGI): bad requests (hosts,
forwarded headers, bytes, lengths, spellings, secrets, dates, robots tags in user
content), hostile volume (made-up slugs and queries), privacy (authorization,
cookies, private responses, noindex, statuses, non-pages, excludes) and content
that flips. Each test checks what is stored (and, where it matters, the served
sitemap, validated against the schemas) and the counters that explain it.

Cases covered completely elsewhere (store and counters, both stacks):

- A flood of new URLs: tests/test_routes.py::test_rate_of_new_urls (200 new URLs
  at 50 a minute: stored + dropped.rate == 200, every response 200, a known page
  still updates) and tests/test_routes.py::test_known_pages_update_beyond_the_rate.
- Canonicals: tests/test_behaviour.py::test_recording_table (rows
  /canonical-self, a self canonical spelt differently, recorded;
  /canonical-other and /canonical-foreign, skipped.canonical_other) and
  tests/recording/test_lastmod.py::test_link_header_canonical (the same through the
  ``Link`` header, a foreign host included).
- Per-request noise:
  tests/recording/test_lastmod.py::test_noise_keeps_lastmod_and_a_real_change_moves_it_once;
  test_two_bodies_in_turn_move_lastmod_forward_only below adds alternating bodies.

Requests that no HTTP client would send (two Host headers, raw control bytes,
a 1 MB path) go straight to the wrapped app as a WSGI environ or an ASGI scope,
the way a server would build them (``Site.fetch``).
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

import pytest
from support.helpers import NS, gunzip_once, locs, parse, sitemap_urls, validate
from support.sites import HTML, JWT_PATH, ROUTES, Site, html
from werkzeug.datastructures import Headers

from sitemap_middleware import ConfigError
from sitemap_middleware.errors import StoreError

Make = Callable[..., Site]
ORIGIN = "http://localhost"


# -- helpers ------------------------------------------------------------------


def serve(
    path: str, body: bytes | None = None, status: int = 200, **headers: str
) -> None:
    """Make the apps answer ``path`` (decoded, as the app sees it)."""
    fields: Any = {"Content-Type": HTML}
    fields.update({k.replace("_", "-"): v for k, v in headers.items()})
    ROUTES[path] = (status, fields, [html(path) if body is None else body])


def stats(site: Site) -> dict[str, Any]:
    return site.middleware.stats()


def served(site: Site) -> list[str]:
    """Every <loc> of the served sitemap (documents validated), after a flush."""
    assert site.middleware.flush(5.0)
    return sitemap_urls(site)


def page_xml(site: Site) -> list[bytes]:
    """The raw XML of every served sitemap page."""
    assert site.middleware.flush(5.0)
    index = site.get("/sitemap.xml")
    if index.status == 404:
        return []
    return [
        gunzip_once(site.get(urlsplit(url).path).body)
        for url in locs(validate(index.body))
    ]


# -- bad input ------------------------------------------------------------------

HOSTILE_HOSTS = [
    [("Host", "evil.test")],
    [("Host", 'site.test"><x/>')],
    [("Host", "[::1]@attacker")],
    [("Host", "localhost:'<a href=\"//evil/?")],
    [("Host", "\xff\xfe.test")],  # not UTF-8 on the wire
    [("Host", "evil.test"), ("Host", "evil2.test")],
]


def test_foreign_malformed_and_duplicated_hosts_are_not_recorded(make: Make) -> None:
    """Foreign, malformed, duplicated and absolute-form hosts are not recorded
    under the default allowed_hosts (the host of base_url); with every host
    allowed, one /about is recorded and every <loc> is built from base_url."""
    site = make({"base_url": "https://www.example.com"})
    for fields in HOSTILE_HOSTS:
        site.fetch("/about", fields)
    # Absolute-form request line: the clients put the target's host in Host.
    site.get("http://evil.test/about")
    assert site.recorded() == []
    assert site.skipped() == {"host": 7}
    assert stats(site)["recorded"] == 0

    # Two Host lines: WSGI sees them joined (no host at all), ASGI the last.
    site = make({"base_url": "https://www.example.com"})
    site.fetch("/about", [("Host", "evil.test"), ("Host", "www.example.com")])
    if site.stack == "wsgi":
        assert site.recorded() == [] and site.skipped() == {"host": 1}
    else:
        assert site.recorded() == ["/about"] and site.skipped() == {}

    site = make({"base_url": "https://www.example.com", "allowed_hosts": ["*"]})
    for fields in HOSTILE_HOSTS:
        assert site.fetch("/about", fields) == 200
        assert site.recorded() == ["/about"]
    site.get("http://evil.test/about", {"X-Forwarded-Host": "evil2.test"})
    assert site.recorded() == ["/about"]
    assert site.skipped() == {}
    counts = stats(site)
    # One write; the other visits find the page digested lately.
    assert counts["recorded"] == 1 and counts["seen"] == {"fresh": 6}
    urls = served(site)
    assert urls == ["https://www.example.com/about"]
    for xml in page_xml(site):
        assert b"evil" not in xml and b"attacker" not in xml and b"<x/>" not in xml


def test_another_port_of_base_url_s_host_is_another_origin() -> None:
    """A Host naming base_url's host with another port names another origin,
    which an app that builds its canonical link from the request
    (url_for(_external=True)) writes into the page: such a request neither
    adds the page nor removes it (skipped.host). The default port, named or
    not, is base_url's own."""
    from flask import Flask, url_for

    from sitemap_middleware import SitemapMiddleware

    app = Flask(__name__)

    @app.route("/about")
    def about() -> str:
        canonical = url_for("about", _external=True)
        return (
            f'<!doctype html><title>About</title><link rel="canonical" '
            f'href="{canonical}"><main>About us.</main>'
        )

    config = {"base_url": "https://www.example.com", "recheck_interval": 0}
    middleware = SitemapMiddleware(app.wsgi_app, {**config, "store": "memory://"})
    app.wsgi_app = middleware  # type: ignore[method-assign]
    client = app.test_client()
    try:

        def get(host: str) -> list[str]:
            """The stored paths after a GET of /about for ``host``."""
            with client.get("/about", base_url=f"https://{host}") as response:
                assert b"About us" in response.get_data()
            assert middleware.flush(5)
            return [entry.path for entry in middleware.store.entries(1)]

        assert get("www.example.com:8443") == get("WWW.EXAMPLE.COM:80") == []
        assert get("www.example.com") == ["/about"]
        assert get("www.example.com:8443") == get("www.example.com:1") == ["/about"]
        assert get("www.example.com:443") == ["/about"]
        stats = middleware.stats()
        assert stats["skipped"] == {"host": 4}
        assert stats["recorded"] == 1 and stats["seen"] == {"unchanged": 1}
    finally:
        middleware.close()


def test_forwarded_headers_are_ignored(make: Make) -> None:
    """The project has no trusted-proxy option (no "trust" setting): every
    X-Forwarded-* and Forwarded header is ignored, for the host check and for
    <loc>; base_url always wins (docs/configuration.md, base_url)."""
    site = make({"base_url": "https://www.example.com"})
    forwarded = [
        ("X-Forwarded-Host", "evil.test"),
        ("X-Forwarded-Proto", "javascript"),
        ("X-Forwarded-Prefix", "/evil"),
        ("Forwarded", "host=evil.test;proto=javascript"),
        ("X-Forwarded-For", "evil.test, www.example.com"),
    ]
    assert site.fetch("/about", [("Host", "www.example.com"), *forwarded]) == 200
    # A foreign Host is not let in by a forwarded header naming the real one.
    site.fetch(
        "/a&b",
        [
            ("Host", "evil.test"),
            ("X-Forwarded-Host", "www.example.com"),
            ("Forwarded", "host=www.example.com"),
        ],
    )
    assert site.recorded() == ["/about"]
    assert site.skipped() == {"host": 1}
    assert stats(site)["recorded"] == 1
    assert served(site) == ["https://www.example.com/about"]


# Wire paths that must never be stored: control characters, overlong UTF-8, a
# lone surrogate, invalid UTF-8, a raw tab, latin-1 high bytes.
BAD_PATHS = ["/%00", "/a%0Bb", "/%1F", "/%7F", "/%C0%AF", "/%ED%A0%80", "/%FF",
             "/a\tb", "/caf%E9"]  # fmt: skip


def test_control_characters_and_invalid_utf8_are_refused(make: Make) -> None:
    """Control characters and bytes that are not UTF-8 are refused
    (skipped.bad_path); valid UTF-8 (raw or escaped) is stored escaped; no raw
    control character reaches any document, which validates."""
    site = make()
    for wire in BAD_PATHS:
        site.fetch(wire)  # a 200 or a 404 (a removal): refused either way
    serve("/café")
    site.fetch("/caf\xc3\xa9")  # raw UTF-8 bytes in PATH_INFO / raw_path
    site.fetch("/caf%c3%a9")  # escaped, lower-case hex: the same page
    serve("/about")
    site.fetch("/about")
    assert site.recorded() == ["/caf%C3%A9", "/about"]
    assert site.skipped() == {"bad_path": len(BAD_PATHS)}
    assert stats(site)["recorded"] == 2
    assert served(site) == [f"{ORIGIN}/caf%C3%A9", f"{ORIGIN}/about"]
    for xml in page_xml(site):
        assert not re.search(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", xml)
        assert xml.isascii()


def test_xml_metacharacters_are_escaped(make: Make) -> None:
    """XML metacharacters are escaped in the document, and each parsed <loc>
    equals base_url + the stored URL exactly."""
    site = make({"query": ["x", "y"]})
    for path in ("/a&b", "/a<b>", "/\"q'/", "/p"):
        serve(path)
    for wire in ("/a&b", "/a<b>", "/\"q'/", "/p?y=2&x=1&z=3"):
        assert site.fetch(wire) == 200
    stored = site.recorded()
    assert stored == ["/a&b", "/a%3Cb%3E", "/%22q'/", "/p?x=1&y=2"]
    assert stats(site)["recorded"] == 4 and site.skipped() == {}
    assert served(site) == [ORIGIN + path for path in stored]
    (xml,) = page_xml(site)
    assert b"/a&amp;b<" in xml and b"/p?x=1&amp;y=2<" in xml
    assert b"&apos;" in xml and b"<b>" not in xml


def _path_of(length: int) -> str:
    """A plain path of ``length`` characters: short words, nothing secret-like."""
    words = "/page-" + "/word" * (length // 5)
    return words[:length]


@pytest.mark.parametrize(
    ("absolute", "kept"), [(2046, True), (2047, True), (2048, False), (2049, False)]
)
def test_urls_longer_than_2047_characters_are_skipped(
    make: Make, absolute: int, kept: bool
) -> None:
    """At most 2,047 characters as an absolute URL (docs/recording.md); longer is
    skipped.too_long. Lengths are of the encoded URL."""
    site = make()
    path = _path_of(absolute - len(ORIGIN))
    assert len(ORIGIN + path) == absolute
    serve(path)
    assert site.fetch(path) == 200
    assert site.recorded() == ([path] if kept else [])
    assert stats(site)["recorded"] == int(kept)
    assert site.skipped() == ({} if kept else {"too_long": 1})
    if kept:
        (url,) = served(site)
        assert url == ORIGIN + path and len(url) == absolute


def test_the_encoded_length_counts_and_a_1_mb_path_is_skipped(make: Make) -> None:
    """A path of few characters whose UTF-8 escapes cross the limit is too
    long; one whose escapes end exactly at 2,047 is kept; a 1 MB path is
    skipped in bounded time."""
    site = make()
    euro = "\u20ac"  # 3 bytes, 9 characters escaped
    exact = "/" + euro * 225 + "x" * 5  # 16 + 1 + 2025 + 5 = 2047
    over = "/" + euro * 226  # 231 characters, 2051 as a URL
    huge = "/" + "x" * 1_000_000
    for path in (exact, over, huge):
        serve(path)
    started = time.perf_counter()
    for path in (exact, over, huge):
        assert site.fetch(path.encode().decode("latin-1")) == 200
    stored = site.recorded()
    assert time.perf_counter() - started < 5.0
    assert stored == ["/" + "%E2%82%AC" * 225 + "xxxxx"]
    assert len(ORIGIN + stored[0]) == 2047
    assert site.skipped() == {"too_long": 2}
    assert stats(site)["recorded"] == 1
    assert served(site) == [ORIGIN + stored[0]]


def test_equivalent_spellings_are_one_entry(make: Make) -> None:
    """Equivalent spellings give one entry: escaped unreserved characters,
    host case and default port (base_url is normalised too). A target with
    dot segments gives none: the app routed it as sent, which a browser never
    does (a catch-all route answers /docs/../anything). %2F stays apart from /
    where the server hands it over: on ASGI (raw_path). A WSGI PATH_INFO is
    decoded by the server, so /a%2Fb arrives as /a/b, which is the page the
    app serves too."""
    site = make({"base_url": "HTTP://LocalHost:80/", "recheck_interval": 0})
    for path in ("/A~B", "/a/./b/../c", "/a/c", "/x", "/a/b"):
        serve(path)
    for wire in ("/A%7eB", "/A~B", "/a/./b/../c", "/a/c"):
        assert site.fetch(wire) == 200
        assert site.middleware.flush(5.0)
    for host in ("LOCALHOST:80", "localhost", "LocalHost"):
        assert site.fetch("/x", [("Host", host)]) == 200
        assert site.middleware.flush(5.0)
    assert site.recorded() == ["/A~B", "/a/c", "/x"]
    counts = stats(site)
    # The other spellings digest to the same unchanged page.
    assert counts["recorded"] == 3 and counts["seen"] == {"unchanged": 3}
    assert site.skipped() == {"bad_path": 1}

    site.fetch("/a%2Fb")
    site.fetch("/a/b")
    two = ["/a%2Fb", "/a/b"] if site.stack == "asgi" else ["/a/b"]
    assert site.recorded() == ["/A~B", "/a/c", "/x", *two]
    assert stats(site)["recorded"] == 3 + len(two)
    assert served(site) == [ORIGIN + p for p in ["/A~B", "/a/c", "/x", *two]]


def test_unicode_spellings_stay_apart_and_are_escaped(make: Make) -> None:
    """NFC and NFD spellings of café are different byte sequences, hence two
    entries (no Unicode normalisation: RFC 3986 §6.2.2); an emoji path is
    escaped; an IDN base_url gives punycode in every <loc>; documents are
    ASCII with a UTF-8 declaration."""
    site = make({"base_url": "https://bücher.example"})
    nfc, nfd, emoji = "/caf\u00e9", "/cafe\u0301", "/\U0001f600/x"
    for path in (nfc, nfd, emoji):
        serve(path)
        wire = path.encode().decode("latin-1")
        assert site.fetch(wire, [("Host", "xn--bcher-kva.example")]) == 200
    # The Unicode spelling of the host is not how a client sends it.
    site.fetch(nfc.encode().decode("latin-1"), [("Host", "b\xc3\xbccher.example")])
    assert site.recorded() == ["/caf%C3%A9", "/cafe%CC%81", "/%F0%9F%98%80/x"]
    assert stats(site)["recorded"] == 3 and site.skipped() == {"host": 1}
    assert served(site) == [
        "https://xn--bcher-kva.example/caf%C3%A9",
        "https://xn--bcher-kva.example/cafe%CC%81",
        "https://xn--bcher-kva.example/%F0%9F%98%80/x",
    ]
    for xml in page_xml(site):
        assert xml.isascii()
    robots = site.get("/robots.txt", {"Host": "xn--bcher-kva.example"}).body
    assert b"Sitemap: https://xn--bcher-kva.example/sitemap.xml" in robots


SECRET_URLS = [
    # (page as the app sees it, request target, stored URL or None)
    # A credential in the query may open what the URL never shows without it.
    ("/reset", "/reset?token=abc", None),
    ("/p;jsessionid=1", "/p;jsessionid=1", "/p"),
    ("/p", "/p?utm_source=x&id=5&sig=s&X-Amz-Signature=y", None),
    ("/p", "/p?utm_source=x&id=5&signed=yes", "/p?id=5"),
    ("/invite/" + "8f14e45fceea167a5a36dedd4bea2543",) * 2 + (None,),
    (JWT_PATH, JWT_PATH, None),  # a JWT with claims: 47 characters
    # A short JWT: '{"alg":"HS256"}', empty claims, 26 characters.
    ("/verify/eyJhbGciOiJIUzI1NiJ9.e30.x",) * 2 + (None,),
]


@pytest.mark.parametrize(("page", "wire", "kept"), SECRET_URLS)
def test_secrets_in_urls_are_dropped_or_kept_out(
    make: Make, page: str, wire: str, kept: str | None
) -> None:
    """A page served to a URL with a credential parameter is not recorded,
    its name is refused in the config even allow-listed; matrix session ids
    are stripped; JWT and long-hex segments are not recorded
    (skipped.secret)."""
    with pytest.raises(ConfigError, match="token"):
        make({"query": ["id", "token"]})
    site = make({"query": ["id"]})
    serve(page)
    assert site.fetch(wire) == 200
    assert site.recorded() == ([kept] if kept else [])
    assert site.skipped() == ({} if kept else {"secret": 1})
    assert stats(site)["recorded"] == int(bool(kept))
    urls = served(site)
    assert urls == ([ORIGIN + kept] if kept else [])


ZONED_TIMES = [
    "2024-03-02T07:02:03+05:45",  # Nepal
    "2024-03-02T00:32:03.123456-00:30",  # microseconds, an odd negative offset
    "2024-03-31T01:59:59+00:00",  # just before the EU spring-forward
    "2024-03-31T03:00:00+02:00",  # just after it (the same instant + 1 s)
    "2024-10-27T02:30:00+01:00",  # in the repeated autumn hour
    "1969-07-20T20:17:40Z",  # before the web: no date
    "9999-12-31T23:59:59+14:00",  # far future: no date
    "2024-02-29T23:59:59.999999-12:00",  # leap day, end of day
]


def test_lastmod_is_a_zoned_w3c_datetime_never_in_the_future(make: Make) -> None:
    """Zoned times from the page (lastmod_source "article") come out as W3C
    datetimes to the second with an explicit zone, XSD-valid, equal to the
    page's instant; one in the future or before the web is no date: the page
    is listed without a lastmod."""
    site = make({"lastmod_source": "article"})
    for n, moment in enumerate(ZONED_TIMES):
        head = f'<meta property="article:modified_time" content="{moment}">'
        serve(f"/t{n}", html(f"t{n}", head))
        assert site.fetch(f"/t{n}") == 200
    assert site.recorded() == [f"/t{n}" for n in range(len(ZONED_TIMES))]
    assert stats(site)["recorded"] == len(ZONED_TIMES) and site.skipped() == {}
    served(site)  # validated
    render_time = datetime.now(timezone.utc)
    (xml,) = page_xml(site)
    written = {
        urlsplit(url.findtext("sm:loc", namespaces=NS)).path: url.findtext(
            "sm:lastmod", namespaces=NS
        )
        for url in parse(xml).iterfind("sm:url", NS)
    }
    for n, moment in enumerate(ZONED_TIMES):
        text = written[f"/t{n}"]
        given = datetime.fromisoformat(moment.replace("Z", "+00:00"))
        if given.year < 1991 or given > render_time:
            assert text is None, moment
            continue
        assert text is not None
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)", text)
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
        assert value <= render_time
        assert value == given.replace(microsecond=0)


ROBOTS_IGNORED = {
    # User content after </head>: it declares nothing.
    "/ugc": b"<html><head><title>t</title></head><body><p>comment:</p>"
    b'<meta name="robots" content="noindex"><link rel="canonical" href="/other">'
    b"</body></html>",
    # No </head>: the scan stops at <body>.
    "/no-end": b"<html><head><title>t</title><body><main>x</main>"
    b"<meta name=robots content=noindex>",
    # An unclosed comment in the head hides what follows.
    "/comment": b"<html><head><!-- <meta name=robots content=noindex>",
}
ROBOTS_HEEDED = {
    "/head-noindex": b"<html><head><meta name=robots content=noindex></head><body>x",
    "/head-canonical": b'<html><head><link rel="canonical" href="/other"></head>',
    # A 10 MB head: the scan reads its byte budget only, and a head it cannot
    # read to its end is not recorded (a noindex may follow).
    "/huge-head": b"<html><head>"
    + b"<meta name=x content=y>" * 450_000
    + b"<meta name=robots content=noindex>",
}


def test_robots_tags_in_user_content_change_nothing(make: Make) -> None:
    """Robots tags in the body are user content and change nothing; the same
    tags in the <head> keep the page out; malformed and huge heads are
    scanned within a bound, without an error."""
    site = make()
    for path, body in {**ROBOTS_IGNORED, **ROBOTS_HEEDED}.items():
        serve(path, body)
    started = time.perf_counter()
    for path in {**ROBOTS_IGNORED, **ROBOTS_HEEDED}:
        assert site.fetch(path) == 200
    assert site.recorded() == list(ROBOTS_IGNORED)
    assert time.perf_counter() - started < 5.0
    assert site.skipped() == {"noindex": 1, "canonical_other": 1, "head_too_long": 1}
    assert (
        stats(site)["recorded"] == len(ROBOTS_IGNORED) and stats(site)["errors"] == {}
    )
    assert served(site) == [ORIGIN + path for path in ROBOTS_IGNORED]


# -- hostile volumes --------------------------------------------------------------


@pytest.mark.slow
def test_made_up_slugs_stop_at_the_route_and_global_caps(
    stack: str, routed: Make
) -> None:
    """300 made-up slugs on a catch-all route with a route cap of 50 and 40 on
    a route under the global cap of 80: the store holds the caps, the counters
    account for every refused URL, known URLs keep updating. The slugs are
    random numbers (a UUID would be a secret link, never recorded)."""
    products = "/products/<path:slug>" if stack == "wsgi" else "/products/{slug:path}"
    site = routed(
        {
            "max_urls": 80,
            "routes": {products: {"max_urls": 50}},
            "new_urls_per_minute": None,
            "recheck_interval": 0,
        }
    )
    known = ["/about", "/blog/known", "/products/known"]
    for path in known:
        site.get(path)
    first = site.entries()
    statuses = {site.get(f"/products/{uuid.uuid4().int}").status for _ in range(300)}
    statuses |= {site.get(f"/blog/{uuid.uuid4().int}").status for _ in range(40)}
    assert statuses == {200}
    held = site.entries()
    assert len(held) == 80
    assert sum(e.route == products for e in held.values()) == 50
    dropped = stats(site)["dropped"]
    assert dropped == {"route_cap": 251, "cap": 12}
    assert stats(site)["recorded"] == 80
    # At both caps, the known URLs still update.
    site.state["version"] = 2
    for path in known:
        site.get(path)
    updated = site.entries()
    assert all(updated[p].fingerprint != first[p].fingerprint for p in known)
    assert stats(site)["recorded"] == 83
    assert sorted(served(site)) == sorted(ORIGIN + p for p in updated)


@pytest.mark.slow
def test_random_queries_are_one_page(make: Make) -> None:
    """500 /search?q=<random> are one page, /search: the first is written,
    the others pass as a page digested lately."""
    site = make()
    assert site.get(f"/search?q={uuid.uuid4()}").status == 200
    assert site.recorded() == ["/search"]
    for _ in range(499):
        assert site.get(f"/search?q={uuid.uuid4()}&page={uuid.uuid4()}").status == 200
    assert site.recorded() == ["/search"]
    counts = stats(site)
    # A dropped query is no part of the page: each is digested (one SHA-1)
    # and found unchanged.
    assert counts["recorded"] == 1 and counts["seen"] == {"unchanged": 499}
    assert counts["dropped"] == {} and site.skipped() == {}
    assert served(site) == [f"{ORIGIN}/search"]


# -- privacy ------------------------------------------------------------------------


def test_an_authorization_header_keeps_a_request_out(make: Make) -> None:
    """Any Authorization header keeps a request out: it neither records nor
    removes (a 404 behind auth leaves the public page alone)."""
    site = make()
    for value in ("Basic dXNlcjpwYXNz", "Bearer abc.def", "Digest x", ""):
        assert site.fetch("/about", [("Authorization", value)]) == 200
    assert site.recorded() == []
    assert site.skipped() == {"authorization": 4}
    site.get("/about")
    assert site.recorded() == ["/about"]
    ROUTES["/about"] = (404, {"Content-Type": HTML}, [b"no"])
    site.fetch("/about", [("authorization", "Bearer x")])
    assert site.recorded() == ["/about"]
    assert site.skipped() == {"authorization": 5}
    assert stats(site)["recorded"] == 1 and stats(site)["removed"] == 0


@pytest.mark.parametrize(
    ("config", "cookie", "recorded"),
    [
        ({}, "session=eyJ1c2VyIjoxfQ.Zx", False),  # Flask and Starlette's name
        ({}, "_ga=GA1.2.3; _gid=GA1.2.4", True),  # analytics: no session
        ({}, "_ga=GA1.2.3; theme=dark", False),  # any other cookie may be one
        ({"session_cookies": ["sessionid"]}, "sessionid=abc", False),  # custom
        ({"session_cookies": ["sessionid"]}, "session=abc", True),  # replaced
        ({"session_cookies": "*"}, "_ga=GA1.2.3", False),  # paranoid mode
    ],
)
def test_session_cookies_keep_a_request_out(
    make: Make, config: dict[str, Any], cookie: str, recorded: bool
) -> None:
    site = make(config)
    assert site.get("/about", {"Cookie": cookie}).status == 200
    assert site.recorded() == (["/about"] if recorded else [])
    assert site.skipped() == ({} if recorded else {"session": 1})
    assert stats(site)["recorded"] == int(recorded)


PRIVACY_MARKERS = [
    ({"Cache_Control": "private, max-age=60"}, "private"),
    ({"Cache_Control": "no-store"}, "private"),
    ({"Cache_Control": "public, No-Store"}, "private"),
    # Set-Cookie, Vary: Cookie and Vary: Authorization are the anonymous page
    # when the request carried no cookie (invariant 22): see
    # tests/watching/test_privacy.py.
    ({"Vary": "Accept-Encoding, *"}, "vary"),
]


@pytest.mark.parametrize(("headers", "reason"), PRIVACY_MARKERS)
def test_a_private_looking_response_is_not_recorded(
    make: Make, headers: dict[str, str], reason: str
) -> None:
    """A private-looking response is not recorded. A page recorded before that
    turns private STAYS listed: docs/recording.md removes on 301/308/404/410 and
    noindex only (no tombstone). Pinned as documented."""
    site = make({"recheck_interval": 0})
    serve("/x", **headers)
    site.get("/x")
    assert site.recorded() == []
    assert site.skipped() == {reason: 1}

    serve("/y")
    site.get("/y")
    assert site.recorded() == ["/y"]
    serve("/y", **headers)
    site.get("/y")
    assert site.recorded() == ["/y"]
    assert site.skipped() == {reason: 2}
    assert stats(site)["recorded"] == 1 and stats(site)["removed"] == 0
    assert served(site) == [f"{ORIGIN}/y"]


NOINDEX_HEADERS: list[list[tuple[str, str]]] = [
    [("X-Robots-Tag", "noindex")],
    [("X-Robots-Tag", "NoIndex, nofollow")],
    [("X-Robots-Tag", "none")],
    [("X-Robots-Tag", "googlebot: noindex")],
    [("X-Robots-Tag", "otherbot: nofollow"), ("X-Robots-Tag", "noindex")],
]
NOINDEX_METAS = [
    b'<meta name="robots" content="noindex">',
    b"<meta name=googlebot content=noindex>",
    b"<META CONTENT='NONE' NAME='Robots'>",
    b'<meta content="nofollow, NoIndex" name="googlebot">',
    b"<meta name = 'robots' content = 'noarchive,noindex' />",
]


@pytest.mark.parametrize(
    "variant",
    [*NOINDEX_HEADERS, *NOINDEX_METAS],
    ids=[f"header{n}" for n in range(len(NOINDEX_HEADERS))]
    + [f"meta{n}" for n in range(len(NOINDEX_METAS))],
)
def test_every_noindex_spelling_keeps_out_and_removes(make: Make, variant: Any) -> None:
    """Every noindex spelling keeps a new page out and removes a recorded one."""
    site = make({"recheck_interval": 0})
    serve("/x")
    site.get("/x")
    assert site.recorded() == ["/x"]
    if isinstance(variant, bytes):
        body = b"<html><head><title>x</title>" + variant + b"</head><body>x</body>"
        serve("/x", body)
        serve("/new", body)
        reason = {"noindex": 2}  # read from the head, then removed
    else:
        fields = Headers([("Content-Type", HTML), *variant])
        ROUTES["/x"] = ROUTES["/new"] = (200, fields, [html("x")])  # type: ignore[assignment]
        # Decided from the headers: /x removed, /new never stored (gone).
        reason = {"gone": 1}
    assert site.get("/x").status == 200
    assert site.get("/new").status == 200
    assert site.recorded() == []
    assert site.skipped() == reason
    assert stats(site)["removed"] == 1 and stats(site)["recorded"] == 1
    assert served(site) == []


@pytest.mark.slow
def test_removing_statuses_remove_and_a_200_puts_back(
    make: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    """301/308/404/410 remove a recorded page; 503, 429 and a failing store
    change nothing; a 200 again puts it back. The store forgets a removed
    URL, so the page comes back with the time it is seen again as lastmod
    (with "first-seen"; by default a page new to the store has none), even
    with the same content (the old lastmod is not kept when the hash is
    unchanged)."""
    site = make({"recheck_interval": 0, "lastmod_source": "first-seen"})
    for n, status in enumerate((301, 308, 404, 410), 1):
        serve("/x")
        site.get("/x")
        assert site.recorded() == ["/x"]
        serve("/x", status=status, Location="/about")
        assert site.get("/x").status == status
        assert site.recorded() == []
        assert stats(site)["removed"] == n and stats(site)["recorded"] == n

    serve("/x")
    site.get("/x")
    before = site.entries()["/x"]
    for status in (503, 429, 500):
        serve("/x", status=status, Retry_After="1")
        site.get("/x")
        assert site.entries() == {"/x": before}
    assert site.skipped() == {"status": 3}

    # A store that fails: the removal waits, the page stays listed meanwhile.
    def failing(paths: Any) -> int:
        raise StoreError("down")

    monkeypatch.setattr(site.store, "remove", failing)
    serve("/x", status=404)
    site.get("/x")
    assert not site.middleware.flush(2.0)
    assert [e.path for e in site.store.entries(1)] == ["/x"]
    assert stats(site)["errors"] == {"store": 1} and stats(site)["pending"] == 1
    monkeypatch.undo()
    assert site.recorded() == []
    assert stats(site)["removed"] == 5

    time.sleep(1.05)  # lastmod is to the second
    serve("/x")
    site.get("/x")
    again = site.entries()["/x"]
    assert again.fingerprint == before.fingerprint
    assert again.lastmod > before.lastmod
    assert stats(site)["recorded"] == 6
    assert served(site) == [f"{ORIGIN}/x"]


def test_non_page_responses_are_never_recorded(make: Make) -> None:
    """The middleware's own documents (however spelt), static files, JSON,
    downloads and event streams are never recorded; websockets are left alone."""
    site = make()
    serve("/static/app.css", b"body{}", Content_Type="text/css")
    serve("/static/page.html")
    serve("/x/../sitemap.xml")  # an app page the normaliser spells /sitemap.xml
    site.get("/about")
    assert site.recorded() == ["/about"]
    for path in ("/sitemap.xml", "/sitemap-1.xml.gz", "/robots.txt",
                 "/sitemap-9.xml.gz", "/static/app.css", "/static/page.html",
                 "/json", "/download", "/events"):  # fmt: skip
        site.get(path)
    # Another spelling of an own path is served by the middleware too.
    assert site.fetch("/%73itemap.xml") == 200
    assert site.fetch("/x/../sitemap.xml") == 200
    assert site.recorded() == ["/about"]
    assert site.skipped() == {
        "excluded": 2,
        "not_html": 2,
        "attachment": 1,
        "own_endpoint": 1,
    }
    if site.stack == "asgi":
        with site.websocket("/ws") as ws:
            ws.send_text("ping")
            assert ws.receive_text() == "ping"
        assert site.recorded() == ["/about"]
    assert stats(site)["recorded"] == 1
    assert served(site) == [f"{ORIGIN}/about"]


def test_default_and_user_excludes_and_include(make: Make) -> None:
    """The default excludes and user patterns are honoured; a strict
    mode is the ``include`` setting here (paths, not marked routes; a route's
    own ``exclude`` is in tests/test_routes.py)."""
    defaults = ["/admin", "/admin/users", "/account", "/login", "/login/x",
                "/api/v1/x", "/static/x", "/_debug", "/.well-known/x",
                "/cart"]  # fmt: skip
    user = ["/drafts/a", "/tmp-page"]
    public = ["/blog/a", "/about"]
    for path in (*defaults, *user, *public):
        serve(path)
    site = make({"exclude": ["/drafts/*", "/tmp-*"]})
    for path in (*defaults, *user, *public):
        site.get(path)  # Flask's own static route answers /static/x
    assert site.recorded() == public
    assert site.skipped() == {"excluded": len(defaults) + len(user)}
    assert stats(site)["recorded"] == 2

    site = make({"include": ["/blog/*"]})
    for path in (*defaults, *public):
        site.get(path)
    assert site.recorded() == ["/blog/a"]
    assert site.skipped() == {"excluded": len(defaults), "not_included": 1}
    assert stats(site)["recorded"] == 1
    assert served(site) == [f"{ORIGIN}/blog/a"]


# -- lastmod churn ---------------------------------------------------------------------


def test_two_bodies_in_turn_move_lastmod_forward_only(make: Make) -> None:
    """Per-request noise never moves lastmod (see the docstring); two bodies
    served in turn are two contents, so each flip is a write. The project
    keeps no ring of recent fingerprints (an optional remedy):
    lastmod follows the flips, but never moves backwards or into the future."""
    site = make({"recheck_interval": 0})

    def body(word: str, token: int) -> bytes:
        return (
            f"<html><head><meta name=csrf content={token}></head><body><main>"
            f"<p>{word}</p><input type=hidden name=csrf value={token}>"
            f"<script nonce={token}>x</script></main></body></html>"
        ).encode()

    lastmods = []
    token = 0
    for word in ("A", "B", "A", "B", "A", "B"):
        for _ in range(3):  # the same content with fresh noise
            token += 1
            serve("/ab", body(word, token))
            assert site.get("/ab").status == 200
            assert site.middleware.flush(5.0)
        lastmods.append(site.entries()["/ab"].lastmod)
    counts = stats(site)
    assert counts["recorded"] == 6 and counts["seen"] == {"unchanged": 12}
    assert lastmods == sorted(lastmods)
    assert lastmods[-1] <= datetime.now(timezone.utc)
    assert site.recorded() == ["/ab"]
    assert served(site) == [f"{ORIGIN}/ab"]


def test_a_request_in_the_other_scheme_or_host_removes_no_page() -> None:
    """An app that sends plain http to https (Django's SECURE_SSL_REDIRECT), a
    host to base_url's, or builds its canonical link from the request, answers
    such a request with the page itself: neither adds it nor removes it. A
    redirect to another page, or to the page on another site, still removes."""
    from flask import Flask, redirect, request, url_for

    from sitemap_middleware import SitemapMiddleware

    app = Flask(__name__)
    moved: dict[str, str] = {}  # path -> where it went, once it moves

    @app.before_request
    def canonical_host() -> Any:
        if request.path in moved:
            return redirect(moved[request.path], 301)
        if request.host == "example.com" or (moved and request.scheme == "http"):
            return redirect(f"https://www.example.com{request.path}", 301)
        return None

    @app.route("/<name>")
    def page(name: str) -> str:
        canonical = url_for("page", name=name, _external=True)
        return (
            f'<!doctype html><title>{name}</title><link rel="canonical" '
            f'href="{canonical}"><main>{name}.</main>'
        )

    config = {
        "base_url": "https://www.example.com",
        "allowed_hosts": ["www.example.com", "example.com"],
        "recheck_interval": 0,
        "store": "memory://",
    }
    middleware = SitemapMiddleware(app.wsgi_app, config)
    app.wsgi_app = middleware  # type: ignore[method-assign]
    client = app.test_client()
    try:

        def get(url: str) -> list[str]:
            """The stored paths after a GET of ``url`` (its body read)."""
            with client.get(url) as response:
                response.get_data()
            assert middleware.flush(5)
            return [entry.path for entry in middleware.store.entries(1)]

        every = ["/about", "/gone-abroad", "/old"]
        for path in every:
            get(f"https://www.example.com{path}")
        assert get("https://www.example.com/about") == every
        assert get("http://www.example.com/about") == every  # its canonical: http
        moved["/old"] = "/about"  # and plain http is sent to https from now on
        moved["/gone-abroad"] = "https://other.example.org/gone-abroad"
        assert get("http://www.example.com/about") == every  # 301 to https
        assert get("https://example.com/about") == every  # 301 to www
        assert get("https://www.example.com/old") == ["/about", "/gone-abroad"]
        assert get("https://www.example.com/gone-abroad") == ["/about"]
        stats = middleware.stats()
        assert stats["skipped"]["canonical_other"] == 1
        assert stats["skipped"]["status"] == 2
    finally:
        middleware.close()
