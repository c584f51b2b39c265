"""The middleware's own endpoints: /sitemap.xml, /sitemap-N.xml.gz, /robots.txt."""

from __future__ import annotations

import gzip
import time
import zlib
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.helpers import gunzip_once, locs, sitemap_urls, validate
from support.sites import HTML, ROUTES, Site

from sitemap_middleware.serving import validators
from sitemap_middleware.serving.server import Rendered
from sitemap_middleware.stores.memory import MemoryStore


def test_index_and_page(site: Site) -> None:
    """The index lists page 1; page 1 lists the pages, valid against the schemas."""
    site.visit("/", "/about", "/a&b", "/blog/it's", "/blog/café")
    index = site.get("/sitemap.xml")
    assert index.status == 200
    assert index.headers["content-type"] == "application/xml; charset=utf-8"
    assert index.headers["x-robots-tag"] == "noindex"
    assert locs(validate(index.body)) == ["http://localhost/sitemap-1.xml.gz"]
    page = site.get("/sitemap-1.xml.gz")
    assert page.headers["content-type"] == "application/gzip"
    assert "content-encoding" not in page.headers
    assert page.headers["x-robots-tag"] == "noindex"
    xml = gunzip_once(page.body)
    with pytest.raises(OSError):
        gzip.decompress(xml)  # gzip once, not twice
    assert b"/a&amp;b</loc>" in xml and b"/blog/it&apos;s</loc>" in xml
    assert locs(validate(xml)) == [
        "http://localhost/",
        "http://localhost/about",
        "http://localhost/a&b",
        "http://localhost/blog/it's",
        "http://localhost/blog/caf%C3%A9",
    ]


def test_validators_and_304(site: Site) -> None:
    """ETag and Last-Modified on every document; a matching If-None-Match gets
    304, If-Modified-Since alone the document (serving/validators.py)."""
    site.visit("/")
    for path in ("/sitemap.xml", "/sitemap-1.xml.gz"):
        first = site.get(path)
        etag, modified = first.headers["etag"], first.headers["last-modified"]
        assert first.headers["cache-control"] == "public, max-age=3600"
        again = site.get(path, {"If-None-Match": etag})
        assert (again.status, again.body) == (304, b"")
        assert again.headers["etag"] == etag
        assert site.get(path, {"If-None-Match": "*"}).status == 304
        both = {"If-None-Match": etag, "If-Modified-Since": modified}
        assert site.get(path, both).status == 304
        assert site.get(path, {"If-Modified-Since": modified}).status == 200
        assert site.get(path, {"If-None-Match": '"other"'}).status == 200


def test_a_part_that_empties_leaves_no_304_for_what_listed_it(
    make: Callable[..., Site],
) -> None:
    """A page removed empties its part, which leaves the index, the site map
    page and llms.txt: their Last-Modified (the latest change of the parts
    they list) goes back, so only their ETag may answer 304, and the old
    validators get the new document."""
    site = make(
        {
            "store": "memory://?part_size=1",
            "html_sitemap": "/site-map",
            "llms_txt": True,
        }
    )
    site.visit("/", "/about")
    before = {
        path: site.get(path) for path in ("/sitemap.xml", "/site-map", "/llms.txt")
    }
    assert b"/sitemap-2.xml.gz" in before["/sitemap.xml"].body
    ROUTES["/about"] = (410, {"Content-Type": HTML}, [b"gone"])
    assert site.get("/about").status == 410
    assert site.recorded() == ["/"]
    assert site.get("/sitemap-2.xml.gz").status == 404
    for path, old in before.items():
        deadline = time.monotonic() + 10
        while (now := site.get(path)).body == old.body:  # the map is arranged apart
            assert time.monotonic() < deadline, path
            time.sleep(0.01)
        for name, validator in (
            ("If-Modified-Since", "last-modified"),
            ("If-None-Match", "etag"),
        ):
            again = site.get(path, {name: old.headers[validator]})
            assert (again.status, again.body) == (200, now.body), (path, name)


def test_etag_changes_with_content(site: Site) -> None:
    """A new page changes the index and page ETags."""
    site.visit("/")
    before = [
        site.get(p).headers["etag"] for p in ("/sitemap.xml", "/sitemap-1.xml.gz")
    ]
    site.visit("/about")
    after = [site.get(p).headers["etag"] for p in ("/sitemap.xml", "/sitemap-1.xml.gz")]
    assert before[0] != after[0] and before[1] != after[1]


def test_another_release_has_other_etags(
    make: Callable[..., Site], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A release may render the same store and config otherwise: the package's
    version is in every ETag, so a client holding one from before an upgrade
    gets the new bytes, not a 304."""
    store = MemoryStore()
    paths = ("/sitemap.xml", "/sitemap-1.xml.gz")
    first = make({"store": store})
    first.visit("/")
    before = [first.get(p).headers["etag"] for p in paths]
    assert [make({"store": store}).get(p).headers["etag"] for p in paths] == before
    monkeypatch.setattr(validators, "release", lambda: "99.0")
    upgraded = make({"store": store})
    for path, etag in zip(paths, before, strict=True):
        again = upgraded.get(path, {"If-None-Match": etag})
        assert again.status == 200 and again.headers["etag"] != etag, path


def test_head_gets_headers_only(site: Site) -> None:
    """HEAD answers with the GET headers and no body."""
    site.visit("/")
    for path in ("/sitemap.xml", "/sitemap-1.xml.gz", "/robots.txt"):
        get, head = site.get(path), site.head(path)
        assert head.status == 200 and head.body == b""
        assert head.headers["content-length"] == str(len(get.body))
        assert head.headers.get("etag") == get.headers.get("etag")


@pytest.mark.parametrize(
    "path",
    [
        "/sitemap-2.xml.gz",  # looked up: no such part
        "/sitemap-01.xml.gz",  # no number: never looked up
        "/sitemap-0.xml.gz",
        "/sitemap-99999999999999999999.xml.gz",
    ],
)
def test_head_of_a_404_has_no_body(site: Site, path: str) -> None:
    """A HEAD's 404 has its GET's headers and no body, whether the number is
    none or no part's: the server hands the body over as it is (the test
    clients drop a HEAD's; wsgiref would send it)."""
    site.visit("/")
    server = site.middleware.server
    get = server.serve("GET", path, lambda name: None)
    head = server.serve("HEAD", path, lambda name: None)
    assert (get.status, head.status) == (404, 404)
    assert head.headers == get.headers and get.body and head.body == b""


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_other_methods_get_405(site: Site, method: str) -> None:
    """Only GET and HEAD are allowed on sitemap documents."""
    site.visit("/")
    for path in ("/sitemap.xml", "/sitemap-1.xml.gz"):
        reply = site.request(method, path)
        assert reply.status == 405
        assert reply.headers["allow"] == "GET, HEAD"


@pytest.mark.parametrize(
    "path",
    [
        "/sitemap-0.xml.gz",
        "/sitemap-01.xml.gz",
        "/sitemap--1.xml.gz",
        "/sitemap-abc.xml.gz",
        "/sitemap-2.xml.gz",
        "/sitemap-1.xml",
        "/sitemap-99999999999999999999.xml.gz",
        "/sitemap-1.xml.gz/extra",
    ],
)
def test_bad_page_numbers_get_404(site: Site, path: str) -> None:
    """Out-of-range and malformed page numbers are 404."""
    site.visit("/")
    assert site.get(path).status == 404


def test_empty_store(site: Site) -> None:
    """With nothing recorded there is no sitemap yet: 404 (an index with no
    entries would be schema-invalid), not cached; robots.txt still names it."""
    reply = site.get("/sitemap.xml")
    assert reply.status == 404
    assert reply.headers["cache-control"] == "no-store"
    assert site.get("/sitemap-1.xml.gz").status == 404
    assert (
        "Sitemap: http://localhost/sitemap.xml" in site.get("/robots.txt").body.decode()
    )


def test_pages_split_at_page_size(make: Callable[..., Site]) -> None:
    """Pages hold at most page_size URLs, first-seen order kept across pages."""
    site = make({"store": "memory://?part_size=2"})
    paths = ["/", "/about", "/a&b", "/search", "/xhtml"]
    site.visit(*paths)
    index = locs(validate(site.get("/sitemap.xml").body))
    assert index == [f"http://localhost/sitemap-{n}.xml.gz" for n in (1, 2, 3)]
    assert sitemap_urls(site) == [f"http://localhost{p}" for p in paths]


def test_robots_generated(site: Site) -> None:
    """An app without robots.txt gets a generated one that allows everything and
    names the sitemap from base_url."""
    reply = site.get("/robots.txt", {"Host": "evil.example"})
    assert reply.status == 200
    assert reply.headers["content-type"] == "text/plain; charset=utf-8"
    text = reply.body.decode()
    assert text.splitlines()[:2] == ["User-agent: *", "Disallow:"]
    assert "Disallow: /\n" not in text
    assert text.endswith("Sitemap: http://localhost/sitemap.xml\n")


def test_robots_extra_lines(make: Callable[..., Site]) -> None:
    """Configured lines go into the generated robots.txt."""
    site = make({"robots": {"lines": ["Disallow: /private/"]}})
    text = site.get("/robots.txt").body.decode()
    assert "Disallow: /private/\n" in text


def test_robots_generation_off(make: Callable[..., Site]) -> None:
    """With generation off, the app's 404 stands."""
    site = make({"robots": {"generate": False}})
    assert site.get("/robots.txt").status == 404


def test_app_robots_kept_and_extended(make: Callable[..., Site]) -> None:
    """The app's own robots.txt is kept, with the Sitemap line added once."""
    own = b"User-agent: *\nDisallow: /private/"
    site = make(robots=own)
    reply = site.get("/robots.txt")
    assert reply.status == 200
    assert reply.body == own + b"\n\nSitemap: http://localhost/sitemap.xml\n"
    assert reply.headers["content-length"] == str(len(reply.body))
    assert site.head("/robots.txt").headers["content-length"] == str(len(reply.body))


@pytest.mark.parametrize(
    "own",
    [
        b"User-agent: *\nDisallow:\nSitemap: http://localhost/sitemap.xml\n",
        # A byte order mark before the line that names it.
        b"\xef\xbb\xbfSitemap: http://localhost/sitemap.xml\nUser-agent: *\n",
    ],
)
def test_app_robots_with_sitemap_line_untouched(
    make: Callable[..., Site], own: bytes
) -> None:
    """An app robots.txt that already names the sitemap is passed as is."""
    site = make(robots=own)
    assert site.get("/robots.txt").body == own


def test_base_url_prefix(make: Callable[..., Site]) -> None:
    """A base_url with a path prefix puts the prefix in every loc and link."""
    site = make({"base_url": "https://example.com/shop/"})
    site.get("/about", {"Host": "example.com"})
    site.recorded()
    assert locs(validate(site.get("/sitemap.xml").body)) == [
        "https://example.com/shop/sitemap-1.xml.gz"
    ]
    assert sitemap_urls(site, prefix="/shop") == ["https://example.com/shop/about"]
    assert "Sitemap: https://example.com/shop/sitemap.xml" in (
        site.get("/robots.txt").body.decode()
    )


def test_deterministic_gzip(site: Site) -> None:
    """The same page gives the same bytes every time (one gzip member, mtime 0)."""
    site.visit("/")
    body = site.get("/sitemap-1.xml.gz").body
    decompressor = zlib.decompressobj(31)
    decompressor.decompress(body)
    assert decompressor.eof and decompressor.unused_data == b""
    site.middleware.server._cache.clear()
    assert site.get("/sitemap-1.xml.gz").body == body


def test_the_cache_holds_the_newest_version_of_each_document(site: Site) -> None:
    """A part that changes is held once, as its newest version: the older
    bytes are no request's any more (each reads the part's version first)."""
    cache = site.middleware.server._cache
    for path in ("/", "/about", "/blog/café", "/blog/it's", "/xhtml"):
        site.visit(path)
        assert site.get("/sitemap-1.xml.gz").status == 200
        assert site.get("/sitemap.xml").status == 200
    # The index and the one part: one body each, the last served.
    assert len(cache) == 2
    body = site.get("/sitemap-1.xml.gz").body
    assert cache.last("part", 1) == body
    assert cache.size == sum(len(b) for b in (body, site.get("/sitemap.xml").body))


@given(
    puts=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 5), st.integers(0, 400)),
        max_size=40,
    )
)
def test_rendered_keeps_one_version_per_document_within_its_bound(
    puts: list[tuple[int, int, int]],
) -> None:
    """Whatever is put: one body per document, the last put; at most the
    bound in bytes (but for a newest body larger than it alone)."""
    rendered = Rendered(1000)
    last: dict[tuple[object, ...], tuple[tuple[object, ...], bytes]] = {}
    for number, version, size in puts:
        key = ("part", number, version)
        body = bytes([version]) * size
        rendered.put(key, body)
        last[key[:2]] = (key, body)
        assert rendered.get(key) == body
        assert rendered.size <= 1000 or len(rendered) == 1
    for (_, number), (_key, body) in last.items():
        held = rendered.last("part", number)
        assert held is None or held == body  # evicted, or the last one put
        if held is not None:
            older = ("part", number, -1)
            assert rendered.get(older) is None
    assert rendered.size == sum(
        len(b) for (_, n), (_, b) in last.items() if rendered.last("part", n) == b
    )
